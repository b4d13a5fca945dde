"""``OpenTable.explain()``: what a scan of another format's table reads, without reading rows — snapshot,
schema, files kept and pruned, deletes, and each file layout's plan (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fieldshift as fs
from tests.open_tables.iceberg_tables import IcebergBuilder

pytest.importorskip("pyiceberg", reason="Iceberg reads need pyiceberg (the dev and iceberg extras)")
pytest.importorskip("fastavro", reason="the hand-written tables' manifests need fastavro (the dev extra)")

SCHEMA = {"type": "struct", "fields": [
    {"id": 1, "name": "id", "type": "long", "required": True},
    {"id": 2, "name": "cat", "type": "string", "required": False},
    {"id": 3, "name": "n", "type": "int", "required": False},
]}
BY_CAT = [{"source-id": 2, "field-id": 1000, "name": "cat", "transform": "identity"}]


def evolved_table(tmp_path: Path) -> tuple[IcebergBuilder, int, int]:
    b = IcebergBuilder(tmp_path / "t", SCHEMA, spec=BY_CAT)
    old = b.data([{"id": 1, "cat": "a", "n": 10}, {"id": 2, "cat": "a", "n": 20}], ("a",))
    other = b.data([{"id": 3, "cat": "b", "n": 30}], ("b",))
    s1 = b.commit([old, other])
    wider = json.loads(json.dumps(SCHEMA))
    wider["fields"][2]["type"] = "long"
    b.evolve(wider)
    new = b.data([{"id": 4, "cat": "a", "n": 2**40}], ("a",))
    deletes = b.position_deletes([(old, 0)], ("a",))
    s2 = b.commit([new, deletes], operation="overwrite")
    return b, s1, s2


def test_explain_names_kept_and_pruned_files_deletes_and_plans(tmp_path: Path) -> None:
    b, s1, s2 = evolved_table(tmp_path)
    t = fs.open_table(b.metadata_path)
    e = t.explain(filter=("cat", "==", "a"))
    scan = t.scan(filter=("cat", "==", "a"))
    assert e.snapshot.snapshot_id == s2 == scan.snapshot_id
    assert e.schema.schema_id == t.schema.schema_id
    assert sorted(f.path for f in e.kept) == sorted(f.path for f in scan.files())
    assert len(e.kept) == 2 and len(e.pruned) == 1  # the cat = 'b' file is pruned by its partition
    by_rows = {f.record_count: f for f in e.kept}
    assert by_rows[2].position_delete_files == 1 and by_rows[1].position_delete_files == 0
    # the file written as int is cast to long; the new one is read as it is
    assert "n: widen int -> long" in by_rows[2].plan and by_rows[1].plan.startswith("identity")
    assert by_rows[2].plan != by_rows[1].plan
    text = str(e)
    assert f"snapshot {s2}" in text and "2 kept, 1 pruned" in text and "1 position delete file(s)" in text
    assert "pruned: " in text
    # time travel: the first snapshot, before the promotion and the deletes
    old = t.explain(snapshot_id=s1)
    assert old.snapshot.snapshot_id == s1 and len(old.kept) == 2 and not old.pruned
    assert all(f.position_delete_files == 0 for f in old.kept)


def test_explain_reads_no_rows_and_matches_columns(tmp_path: Path) -> None:
    b, _, _ = evolved_table(tmp_path)
    e = fs.open_table(b.metadata_path).explain(columns=["n"])
    assert e.columns == ("n",)
    assert all(f.plan.count("\n") == 1 for f in e.kept)  # one read column: one plan line each
