"""``df.write.format("fieldshift").option("operation", "upsert" | "delete")``: keyed writes from Spark.

Executors write bucket files (see ``keyed.KeyedWrites``); the driver commits them in one snapshot of
operation ``upsert`` or ``delete``. An upsert evolves the table on write exactly as an append does
(its write plan decided once on the driver); a delete takes the key columns of its rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from fieldshift.errors import TableError
from fieldshift.spark._arrow import spark_arrow_schema
from fieldshift.spark.batch_writer import FieldshiftCommitMessage, FieldshiftWriter
from fieldshift.spark.errors_bridge import one_line_errors
from fieldshift.spark.keyed import OPERATIONS, KeyedWrites
from fieldshift.table.files import remove_files
from fieldshift.table.storage import TableStorage, open_storage
from fieldshift.table.table import Table
from fieldshift.table.write_commit import check_new_keys, resolve_written

__all__ = ["KeyedWriter", "writer_for"]


def _location(options: Any) -> str:
    path = options.get("path")
    if not path:
        raise ValueError("give the table's location: df.write.format('fieldshift').save(location)")
    return str(path)


def writer_for(options: Any, schema: Any, overwrite: bool) -> FieldshiftWriter:
    """The writer for ``options``' ``operation``: the plain writer for appends to unkeyed tables."""
    operation = str(options.get("operation", "append")).lower()
    if operation not in OPERATIONS:
        raise ValueError(f"operation must be one of {list(OPERATIONS)}, not {operation!r}")
    try:
        table = Table.open(_location(options), catalog=options.get("catalog"), name=options.get("table"))
    except TableError:
        table = None
    if operation == "append" and (table is None or table.keys is None):
        return FieldshiftWriter(options, schema, overwrite)
    return KeyedWriter(options, schema, overwrite, operation, table)


class KeyedWriter(FieldshiftWriter):
    """Upserts, deletes and (insert-only) appends of keyed tables: bucket files on executors, one commit."""

    def __init__(self, options: Any, schema: Any, overwrite: bool, operation: str, table: Table | None) -> None:
        self.keyed = KeyedWrites.of(operation, table)
        assert table is not None
        if overwrite:
            raise TableError(f"operation={operation!r} on a keyed table cannot be combined with "
                             "mode('overwrite'); use mode('append')")
        self.base_schema = table.schemas_by_id()[table.current_snapshot.schema_id]
        if operation != "delete":
            super().__init__(options, schema, overwrite)
            return
        # a delete takes the key columns of its rows: no write plan, no evolution
        self.location, self.catalog, self.name = _location(options), options.get("catalog"), options.get("table")
        self.overwrite, self.policy, self.new_schema = False, table.policy, None
        self.incoming = spark_arrow_schema(schema)
        self.table_location = str(table.location)
        self.base_snapshot_id = table.current_snapshot.snapshot_id

    def _flush(self, batches: Sequence[pa.RecordBatch], location: TableStorage,
               message: FieldshiftCommitMessage) -> None:
        data = pa.Table.from_batches(batches, schema=self.incoming)
        if self.keyed.operation != "delete":
            self.keyed.write_planned(location, self.plan, data, message)
            return
        written: list[str] = []
        try:
            files = self.keyed.files(location, self.base_schema, data, written)
        except BaseException:
            remove_files(location, written)
            raise
        message.files.extend(files)
        message.rows += sum(f.record_count for f in files)

    def commit(self, messages: list[FieldshiftCommitMessage | None]) -> None:
        done = [m for m in messages if m is not None]
        files = [f for m in done for f in m.files]
        quarantine = [q for m in done for q in m.quarantine]
        upsert = self.keyed.operation != "delete"
        try:
            table = Table.open(self.location, catalog=self.catalog, name=self.name)
            if self.keyed.operation == "append":  # insert-only: no key twice, none the table holds
                vectors = check_new_keys(table, self.base_snapshot_id, files)
            elif upsert and self.plan.evolved:  # the lookup reads the table in the schema of its files
                vectors = None
            else:  # the rows they supersede, as Table.upsert/delete record them
                schema = self.plan.schema if upsert else self.base_schema
                vectors = resolve_written(table, self.base_snapshot_id, schema, files, self.keyed.operation)
            table.catalog.commit(
                table.table_id, self.base_snapshot_id, operation=self.keyed.operation,
                exclusive=self.keyed.operation == "append",
                schema=self.plan.schema if upsert and self.plan.evolved else None,
                write_schema_id=(self.plan.schema if upsert else self.base_schema).schema_id, add_files=files,
                quarantine=quarantine, vectors=vectors,
                summary={"rows": sum(m.rows for m in done), "quarantined": sum(n for _, n in quarantine),
                         "changes": list(self.plan.changes) if upsert else [], "writer": "spark"})
        except BaseException:
            remove_files(open_storage(self.table_location), [f.path for f in files] + [p for p, _ in quarantine])
            raise


one_line_errors(KeyedWriter)
