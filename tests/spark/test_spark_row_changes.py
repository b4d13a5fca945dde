"""Deletes and updates from Spark (``fieldshift.spark.delete`` / ``update``), and every Spark read route honouring
the deletion vectors a delete or update leaves (never Spark's native Parquet scan for such a file)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any
from unittest import mock

import pyarrow as pa
import pytest

import fieldshift as fs
import fieldshift.spark as fss
from fieldshift.table.keyed.merge import group_files, resolved

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("day", pa.date32())])


def _table(loc: Path, **kwargs: Any) -> fs.Table:
    t = fs.Table.create(loc, SCHEMA, **kwargs)
    for i in range(3):
        ids = list(range(i * 10, i * 10 + 10))
        t.append(pa.table({"id": ids, "v": [f"v{n}" for n in ids], "day": [dt.date(2024, 1, 1 + i)] * 10},
                          schema=SCHEMA))
    return t


def _spark_ids(spark: Any, loc: Path, **kwargs: Any) -> list[int]:
    return sorted(r["id"] for r in fss.read(spark, str(loc), **kwargs).collect())


def test_every_read_route_honours_deletion_vectors(spark: Any, tmp_path: Path) -> None:
    t = _table(tmp_path / "t")
    t.delete(filter="id in (1, 12, 13)")
    want = sorted(t.to_arrow().column("id").to_pylist())
    assert len(want) == 27
    plan = fss.plan_read(t)
    assert len(plan.deleted_files) == 2 and len(plan.native_files) == 1  # the untouched file stays native
    assert "deleted rows" in plan.explain()
    assert _spark_ids(spark, t.location) == want
    assert _spark_ids(spark, t.location, route="arrow") == want
    assert _spark_ids(spark, t.location, via="datasource", route="arrow") == want
    assert _spark_ids(spark, t.location, filter="id < 15") == [i for i in want if i < 15]
    fss.register(spark)
    got = spark.read.format("fieldshift").load(str(t.location)).collect()
    assert sorted(r["id"] for r in got) == want


def test_spark_update_and_delete(spark: Any, tmp_path: Path) -> None:
    t = _table(tmp_path / "t", partition_by=["day"])
    r = fss.update(spark, str(t.location), set={"v": "new", "day": dt.date(2030, 1, 1)}, where="id < 3 or id = 25")
    assert r.rows_updated == 4
    rows = {x["id"]: x for x in t.to_arrow().to_pylist()}
    assert len(rows) == 30 and all(rows[i]["v"] == "new" and rows[i]["day"] == dt.date(2030, 1, 1)
                                   for i in (0, 1, 2, 25))
    assert rows[3]["v"] == "v3"
    assert fss.update(spark, str(t.location), set={"v": fs.col("id")}, where="id = 7").rows_updated == 1
    assert t.scan(filter="id = 7").to_arrow()["v"][0].as_py() == "7"
    head = t.current_snapshot.snapshot_id
    with pytest.raises(fs.CastValueError):
        fss.update(spark, str(t.location), set={"id": "x"}, where="id = 7")
    assert t.current_snapshot.snapshot_id == head
    d = fss.delete(spark, str(t.location), where=fs.col("v") == "new")
    assert d.rows_deleted == 4
    assert _spark_ids(spark, t.location) == sorted(t.to_arrow().column("id").to_pylist())
    assert len(_spark_ids(spark, t.location)) == 26


def test_spark_update_of_a_keyed_table(spark: Any, tmp_path: Path) -> None:
    """Executors update a keyed table (one task per merge group: Table.update never runs on the driver) and
    the answer is Table.update's on a twin, with one commit whose files are resolved (no merge on read)."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("pre", pa.int64()), ("v", pa.string())])
    twins = [fs.Table.create(tmp_path / n, schema, identifier_fields=["id"], precombine="pre", buckets=3)
             for n in ("k", "local")]
    for t in twins:
        t.upsert(pa.table({"id": list(range(12)), "pre": [1] * 12, "v": [f"v{i}" for i in range(12)]}, schema=schema))
        t.upsert(pa.table({"id": [2, 5], "pre": [3, 0], "v": ["b", "e"]}, schema=schema))  # 5 keeps its old row
    t, local = twins
    with mock.patch.object(fs.Table, "update", side_effect=AssertionError("ran on the driver")):
        got = fss.update(spark, str(t.location), set={"v": "z", "pre": 4}, where="v in ('b', 'v5', 'v7') or id = 9")
    want = local.update({"v": "z", "pre": 4}, where="v in ('b', 'v5', 'v7') or id = 9")
    assert got.rows_updated == want.rows_updated == 4
    assert sorted(t.to_arrow().to_pylist(), key=repr) == sorted(local.to_arrow().to_pylist(), key=repr)
    assert len(t.history()) == 4  # create, two upserts, one update
    scan = t.scan()
    assert all(resolved(scan, g) for g in group_files(scan.files()))
    assert sorted(r["v"] for r in fss.read(spark, str(t.location)).collect()).count("z") == 4
    head = t.current_snapshot.snapshot_id
    with pytest.raises(fs.PrecombineLoweredError):  # raised in a task, re-raised as itself
        fss.update(spark, str(t.location), set={"pre": 0}, where="id = 2")
    with pytest.raises(fs.RowChangeError, match="key"):
        fss.update(spark, str(t.location), set={"id": 0}, where="id = 2")
    assert t.current_snapshot.snapshot_id == head
    assert fss.update(spark, str(t.location), set={"v": "q"}, where="id = 99").rows_updated == 0
