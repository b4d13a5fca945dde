"""``fieldshift create --key``, ``upsert``, ``delete --where``, ``compact`` and ``expire`` on real tables."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa

import fieldshift as fs
from tests.cli.test_cli import cli, invoke, json_lines

V1 = [{"rowId": f"row_{i}", "partitionId": "part_0", "preComb": 0, "name": n, "versionId": "v_0", "intToLong": 0}
      for i, n in ((1, "bob"), (2, "john"), (3, "tom"))]
V2 = [{"rowId": k, "partitionId": "part_0", "preComb": 5, "name": n, "versionId": v, "intToLong": x,
       "newField": "newField_1"} for k, n, v, x in (("row_2", "john", "v_3", 3), ("row_5", "maroon", "v_2", 2),
                                                    ("row_9", "michael", "v_2", 2))]


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_hudi_trips_with_keys_on_the_command_line(tmp_path: Path) -> None:
    _jsonl(tmp_path / "v1.json", V1)
    _jsonl(tmp_path / "v2.json", [{**r, "intToLong": r["intToLong"] * 2**32} for r in V2])
    created = cli(tmp_path, "create", "trips", "--schema", "rowId string NOT NULL, partitionId string NOT NULL, "
                  "preComb bigint, name string, versionId string, intToLong int", "--key", "rowId,partitionId",
                  "--precombine", "preComb", "--buckets", "2")
    assert created.code == 0, created
    table = fs.Table.open(tmp_path / "trips")
    assert table.keys is not None and table.keys.buckets == 2 and table.keys.precombine_name == "preComb"
    assert invoke(tmp_path, "upsert", "trips", "v1.json").code == 0
    upserted = cli(tmp_path, "upsert", "trips", "v2.json")
    assert upserted.code == 0 and re.search(r"rows upserted\s*│\s*3", upserted.out), upserted
    assert "add newField string" in upserted.out
    rows = {r["rowId"]: r for r in json_lines(invoke(tmp_path, "read", "trips", "--format", "json").out)}
    assert sorted(rows) == ["row_1", "row_2", "row_3", "row_5", "row_9"]
    assert rows["row_2"]["versionId"] == "v_3" and rows["row_2"]["intToLong"] == 3 * 2**32

    deleted = invoke(tmp_path, "delete", "trips", "--where", "name = 'tom'")
    assert deleted.code == 0 and "deleted 1 row(s)" in deleted.out, deleted
    none = invoke(tmp_path, "delete", "trips", "--where", "name = 'nobody'")
    assert none.code == 0 and "nothing was deleted" in none.out
    assert len(json_lines(invoke(tmp_path, "read", "trips", "--format", "json").out)) == 4
    keep = invoke(tmp_path, "delete", "trips", "--where", "name = 'nobody' or rowId like 'zz%'",
                  "--where", "not (preComb >= 0)")  # the whole grammar; flags ANDed
    assert keep.code == 0 and "nothing was deleted" in keep.out, keep

    compacted = invoke(tmp_path, "compact", "trips")
    assert compacted.code == 0 and "compacted" in compacted.out, compacted
    assert "nothing to compact" in invoke(tmp_path, "compact", "trips").out
    live = fs.Table.open(tmp_path / "trips").scan().live_files()
    assert len(live) <= 2 and {f.schema_id for f in live} == {1}

    expired = invoke(tmp_path, "expire", "trips", "--older-than", "0", "--retain-last", "2")
    assert expired.code == 0 and "expired" in expired.out and "deleted" in expired.out, expired
    table = fs.Table.open(tmp_path / "trips")
    assert len(table.history()) == 2
    assert {p.name for p in (tmp_path / "trips" / "data").iterdir()} == \
        {Path(f.path).name for s in table.history() for f in table.scan(snapshot_id=s.snapshot_id).live_files()}
    assert len(json_lines(invoke(tmp_path, "read", "trips", "--format", "json").out)) == 4


def test_keyed_commands_refuse_clearly(tmp_path: Path) -> None:
    fs.Table.create(tmp_path / "plain", pa.schema([("id", pa.int32())]))
    _jsonl(tmp_path / "rows.json", [{"id": 1}])
    refused = invoke(tmp_path, "upsert", "plain", "rows.json")
    assert refused.code == 1 and "no primary key" in refused.err, refused
    deleted = invoke(tmp_path, "delete", "plain", "--where", "id = 1")  # any table deletes by filter (issue 34)
    assert deleted.code == 0 and "no row matched" in deleted.out, deleted
    bad_key = invoke(tmp_path, "create", "k", "--schema", "id int, x double", "--key", "id")
    assert bad_key.code == 1 and "nullable" in bad_key.err, bad_key
    fs.Table.create(tmp_path / "k2", pa.schema([pa.field("id", pa.int32(), nullable=False)]),
                    identifier_fields=["id"])
    _jsonl(tmp_path / "dup.json", [{"id": 1}, {"id": 1}])
    dup = invoke(tmp_path, "append", "k2", "dup.json")
    assert dup.code == 1 and "id=1" in dup.err and "upsert" in dup.err, dup
    assert invoke(tmp_path, "upsert", "k2", "dup.json").code == 0
    assert invoke(tmp_path, "expire", "k2", "--older-than", "1").out.startswith("no snapshot")
