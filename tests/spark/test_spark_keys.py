"""Keyed tables on Spark: reads merge per bucket on the executors; upserts, deletes and appends from Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from conftest import assert_same

import fieldshift as fs
from fieldshift.spark import read

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int32(), nullable=False), ("pre", pa.int64()), ("x", pa.string())])


def _keyed(tmp_path: Path) -> fs.Table:
    t = fs.Table.create(tmp_path / "k", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=3)
    t.upsert(pa.table({"id": pa.array(range(20), pa.int32()), "pre": [1] * 20, "x": [f"v{i}" for i in range(20)]}))
    t.upsert(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "pre": [2, 0, 2], "x": ["new", "lost", "new"],
                       "n": pa.array([2**40, 1, 2], pa.int64())}))  # a new schema: n added, keys cast down
    t.delete([4, 5])
    return t


def test_reads_merge_like_the_engine(spark: Any, tmp_path: Path) -> None:
    t = _keyed(tmp_path)
    expected = t.to_arrow()
    assert expected.num_rows == 18 and set(expected.column("x").to_pylist()) >= {"new", "v2"}
    assert_same(spark.read.format("fieldshift").load(str(t.location)), expected, t.schema)
    assert_same(read(spark, t.location), expected, t.schema, exact_nullability=False)
    old = t.scan(snapshot_id=1).to_arrow()
    assert_same(read(spark, t.location, snapshot_id=1), old, t.schemas_by_id()[0], exact_nullability=False)
    narrow = t.scan(columns=["x"]).to_arrow()
    assert_same(read(spark, t.location, columns=["x"]), narrow, t.schema.select(["x"]), exact_nullability=False)
    filtered = spark.read.format("fieldshift").load(str(t.location)).where("x = 'v1'")
    assert filtered.count() == 0  # the older version of key 1 never comes back
    t.compact()  # every bucket one file: the native and pyarrow routes read it without a merge
    assert_same(read(spark, t.location), expected, t.schema, exact_nullability=False)


def test_spark_upserts_deletes_and_insert_only_appends(spark: Any, tmp_path: Path) -> None:
    t = _keyed(tmp_path)
    want = {r["id"]: r for r in t.to_arrow().to_pylist()}
    df = spark.createDataFrame([(1, 9, "spark", 7), (30, 0, "fresh", None), (30, 1, "fresher", None)],
                               "id int, pre long, x string, n long")
    df.write.format("fieldshift").mode("append").option("operation", "upsert").save(str(t.location))
    want[1] = {"id": 1, "pre": 9, "x": "spark", "n": 7}
    want[30] = {"id": 30, "pre": 1, "x": "fresher", "n": None}
    spark.createDataFrame([(2,), (3,)], "id int").write.format("fieldshift").mode("append") \
        .option("operation", "delete").save(str(t.location))
    del want[2], want[3]
    got = {r["id"]: r for r in fs.Table.open(t.location).to_arrow().to_pylist()}
    assert got == want
    head = fs.Table.open(t.location).current_snapshot.snapshot_id
    with pytest.raises(Exception, match="already in the table"):
        spark.createDataFrame([(1, 0, "dup", None)], "id int, pre long, x string, n long").write \
            .format("fieldshift").mode("append").save(str(t.location))
    assert fs.Table.open(t.location).current_snapshot.snapshot_id == head
    spark.createDataFrame([(40, 0, "new", None)], "id int, pre long, x string, n long").write \
        .format("fieldshift").mode("append").save(str(t.location))
    assert fs.Table.open(t.location).scan().count() == len(want) + 1
