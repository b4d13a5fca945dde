"""pypaimon as a peer: writes Paimon test tables and reads them back, in its own virtualenv.

pypaimon pins an older pyarrow than fieldshift's, so it never runs in fieldshift's environment: ``make
test-conformance`` creates ``.venv-paimon`` with it, and the tests run this script there through a
subprocess (``python paimon_peer.py PLAN.json``). The plan is a list of steps; data goes in and out as
Parquet files, so nothing here imports fieldshift.

Steps: ``create`` (table, schema_from: a Parquet file whose schema is the table's, primary_keys,
partition_keys, options), ``write`` (table, data: a Parquet file; cast to the table's current schema),
``alter`` (table, changes: [op, ...] with op one of ["add", name, TYPE], ["rename", old, new],
["drop", name], ["retype", name, TYPE], ["set", key, value]), ``delete_rows`` (table, row_ids: deleted
through deletion vectors), ``read`` (table, snapshot or None, out: a Parquet file of pypaimon's rows),
``snapshot`` (table, out: a JSON file with the latest snapshot id), ``tag`` (table, name, snapshot or None:
the latest), ``branch`` (table, name, tag or None); ``read`` also takes a ``tag``, and a table named
``db.t$branch_b`` is branch ``b``.
"""

from __future__ import annotations

import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq
from pypaimon import CatalogFactory, Schema
from pypaimon.schema.data_types import AtomicType
from pypaimon.schema.schema_change import SchemaChange


def _change(op: list) -> SchemaChange:
    kind = op[0]
    if kind == "add":
        return SchemaChange.add_column(op[1], AtomicType(op[2]))
    if kind == "rename":
        return SchemaChange.rename_column(op[1], op[2])
    if kind == "drop":
        return SchemaChange.drop_column(op[1])
    if kind == "retype":
        return SchemaChange.update_column_type(op[1], AtomicType(op[2]))
    if kind == "set":
        return SchemaChange.set_option(op[1], op[2])
    raise ValueError(f"unknown change {op!r}")


def run(plan: dict) -> None:
    catalog = CatalogFactory.create({"warehouse": plan["warehouse"]})
    for step in plan["steps"]:
        op = step["op"]
        if op == "create":
            try:
                catalog.create_database(step["table"].split(".")[0], True)
            except Exception:  # the database exists already
                pass
            schema = Schema.from_pyarrow_schema(pq.read_schema(step["schema_from"]),
                                                partition_keys=step.get("partition_keys"),
                                                primary_keys=step.get("primary_keys"),
                                                options=step.get("options") or {})
            catalog.create_table(step["table"], schema, False)
        elif op == "write":
            table = catalog.get_table(step["table"])
            data = pq.read_table(step["data"])
            target = table.table_schema  # the current schema, as pypaimon's writer expects it
            from pypaimon.schema.data_types import PyarrowFieldParser

            arrow_schema = PyarrowFieldParser.from_paimon_schema(target.fields)
            data = data.select(arrow_schema.names).cast(arrow_schema)
            builder = table.new_batch_write_builder()
            write, commit = builder.new_write(), builder.new_commit()
            write.write_arrow(data)
            commit.commit(write.prepare_commit())
            write.close()
            commit.close()
        elif op == "alter":
            catalog.alter_table(step["table"], [_change(c) for c in step["changes"]], False)
        elif op == "read":
            table = catalog.get_table(step["table"])
            if step.get("snapshot") is not None:
                table = table.copy({"scan.snapshot-id": str(step["snapshot"])})
            if step.get("tag") is not None:
                table = table.copy({"scan.tag-name": str(step["tag"])})
            builder = table.new_read_builder()
            rows = builder.new_read().to_arrow(builder.new_scan().plan().splits())
            if rows is None:
                from pypaimon.schema.data_types import PyarrowFieldParser

                rows = pa.Table.from_pylist([], PyarrowFieldParser.from_paimon_schema(table.table_schema.fields))
            pq.write_table(rows, step["out"])
        elif op == "delete_rows":  # by _ROW_ID: deletion vectors (row tracking + data evolution tables)
            table = catalog.get_table(step["table"])
            builder = table.new_batch_write_builder()
            messages = builder.new_update().delete_by_row_id(step["row_ids"])
            commit = builder.new_commit()
            commit.commit(messages)
            commit.close()
        elif op == "tag":
            catalog.create_tag(step["table"], step["name"], step.get("snapshot"))
        elif op == "branch":
            catalog.create_branch(step["table"], step["name"], step.get("tag"))
        elif op == "snapshot":
            table = catalog.get_table(step["table"])
            latest = table.snapshot_manager().get_latest_snapshot()
            with open(step["out"], "w") as f:
                json.dump({"snapshot": None if latest is None else latest.id}, f)
        else:
            raise ValueError(f"unknown step {op!r}")


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        run(json.load(f))
