"""Partitioned tables in Spark: tasks split rows by the spec; reads prune partitions on the driver.

Pruning is shown the hard way: after writing, the files of every partition a filter rules out are
deleted from disk, so a read that opened any of them would fail; the rows are compared with the
engine's (read before the deletion).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import rows

import fieldshift as fs
from fieldshift.spark import read
from fieldshift.table.partitions.partition_write import source_column

pytestmark = pytest.mark.spark
BASE = dt.datetime(2024, 3, 1)


def _frame(spark: Any, n: int = 600) -> Any:
    from pyspark.sql import functions as F

    return (spark.range(0, n, 1, 3)
            .select(F.col("id"),
                    (F.lit(BASE) + F.make_interval(hours=F.col("id") % 96)).cast("timestamp_ntz").alias("ts"),
                    F.when(F.col("id") % 11 == 0, None).otherwise(
                        F.element_at(F.array(F.lit("eu"), F.lit("us"), F.lit("ap")), (F.col("id") % 3 + 1).cast("int"))
                    ).alias("region"),
                    F.when(F.col("id") % 13 == 0, F.lit(float("nan"))).otherwise(F.col("id") / 7).alias("score")))


def _check_files(t: fs.Table) -> None:
    specs = {s.spec_id: s for s in t.specs()}
    schemas = t.schemas_by_id()
    for f in t.scan().live_files():
        data = pq.read_table(t.location / f.path)
        for field, value in zip(specs[f.spec_id].fields, f.partition, strict=True):
            assert set(field.transform.values(source_column(schemas[f.schema_id], data, field.source_id))) == {value}


def test_tasks_split_rows_by_the_spec_and_reads_prune(spark: Any, tmp_path: Path) -> None:
    loc = str(tmp_path / "t")
    _frame(spark).write.format("fieldshift").option("partition_by", "days(ts), region").mode("append").save(loc)
    t = fs.Table.open(loc)
    assert t.spec.describe(t.schema) == "day(ts) AS ts_day, region"
    assert [s.operation for s in t.history()] == ["create", "append"]
    _check_files(t)
    t.update_spec().replace_field("ts_day", "hours(ts)").commit()
    _frame(spark, 300).write.format("fieldshift").mode("append").save(loc)  # an existing table's current spec
    t = fs.Table.open(loc)
    _check_files(t)
    assert {f.spec_id for f in t.scan().files()} == {0, 1}
    hour = BASE + dt.timedelta(hours=13)
    flt = [("ts", ">=", hour), ("ts", "<", hour + dt.timedelta(hours=1)), ("region", "==", "us")]
    keep = {f.path for f in t.scan(filter=flt).files()}
    engine = t.scan(filter=flt).to_arrow()
    filters = [("score", ">", 10.0), ("region", "!=", "eu"), ("region", "not in", ["us"]), ("ts", "is_null"),
               ("region", "is_null"), ("id", "in", [3, 4, 500])]
    others = [(f, t.scan(filter=[f]).to_arrow()) for f in filters]
    for f, want in others:  # fieldshift.spark.read(filter=...) keeps exactly the engine's rows (nulls, NaN)
        got = read(spark, loc, filter=[f]).toArrow()
        assert rows(got) == rows(want.cast(got.schema)), f
    everything = t.scan().live_files()
    assert 0 < len(keep) < len(everything) / 10
    for f in everything:
        if f.path not in keep:
            (t.location / f.path).unlink()
    got = read(spark, loc, filter=flt).toArrow()
    assert rows(got) == rows(engine.cast(got.schema)) and engine.num_rows > 0
    df = (spark.read.format("fieldshift").load(loc)
          .where(f"ts >= TIMESTAMP_NTZ '{hour}' AND ts < TIMESTAMP_NTZ '{hour + dt.timedelta(hours=1)}' "
                 "AND region = 'us'"))
    got = df.toArrow()
    assert rows(got) == rows(engine.cast(got.schema))
    with pytest.raises(Exception, match=r"missing|does not exist"):  # without the filter the deleted files are needed
        read(spark, loc).toArrow()


def test_an_evolving_spark_write_cannot_retype_a_partition_source(spark: Any, tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int32())]), partition_by=["truncate(10, id)"])
    df = spark.createDataFrame([("x",)], "id string")
    with pytest.raises(Exception, match="partition field 'id_trunc_10'"):
        df.write.format("fieldshift").option("policy", "onehouse-widen-to-string").mode("append").save(str(t.location))
    assert len(t.history()) == 1
