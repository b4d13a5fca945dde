"""``df.write.format("fieldshift")``: on-write evolution, one commit per job, nothing from a failed job."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from conftest import assert_same

import fieldshift as fs

pytestmark = pytest.mark.spark


def _files_on_disk(t: fs.Table) -> set[str]:
    return {str(p.relative_to(t.location)) for p in t.location.rglob("*.parquet")} | {
        str(p.relative_to(t.location)) for p in t.location.rglob(".*.tmp")}


def test_append_with_evolution_commits_once(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int32()), ("name", pa.string())]))
    t.append(pa.table({"id": pa.array([-1], pa.int32()), "name": ["old"]}))
    snapshots = len(t.history())
    df = (spark.range(0, 3000, 1, 3)
          .select(F.col("id"), F.concat(F.lit("n"), F.col("id").cast("string")).alias("name"),
                  (F.col("id") % 7).cast("double").alias("score")))
    df.write.format("fieldshift").mode("append").save(str(t.location))

    t = fs.Table.open(t.location)
    history = t.history()
    assert len(history) == snapshots + 1  # one commit: the schema change and the files together
    assert history[-1].operation == "append" and history[-1].summary["rows"] == 3000
    assert t.schema.find("id").type == pa.int64() and t.schema.names == ["id", "name", "score"]
    assert len(t.scan().files()) == 1 + 3  # one file per task
    got = t.scan().to_arrow()
    assert got.num_rows == 3001 and sorted(got.column("id").to_pylist()) == [-1, *range(3000)]
    old = got.filter(pa.compute.equal(got["id"], -1)).to_pylist()
    assert old == [{"id": -1, "name": "old", "score": None}]
    # and it reads back through Spark as the engine reads it
    assert_same(spark.read.format("fieldshift").load(str(t.location)), got, t.schema)


def test_overwrite_and_quarantine(spark: Any, tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("k", pa.string()), ("col1", pa.int64())]))
    t.append(pa.table({"k": ["gone"], "col1": [1]}))
    df = spark.createDataFrame([("r1", "12"), ("r2", "text"), ("r3", None)], "k string, col1 string")
    with pytest.raises(Exception, match="col1"):  # fail mode: a string column cannot become a long
        df.write.format("fieldshift").mode("overwrite").save(str(t.location))
    assert len(fs.Table.open(t.location).history()) == 2
    (df.write.format("fieldshift").mode("overwrite").option("on_incompatible", "quarantine")
     .save(str(t.location)))
    t = fs.Table.open(t.location)
    assert t.history()[-1].operation == "overwrite"
    kept = sorted(t.scan().to_arrow().to_pylist(), key=repr)
    assert kept == [{"k": "r3", "col1": None}]  # a String where the table has a Long: quarantined, whatever the text
    (q,) = t.quarantine(grouped=True)
    assert sorted(q.column("k").to_pylist()) == ["r1", "r2"]
    assert "col1" in q.column("_fieldshift_reason")[0].as_py()
    # time travel still sees the rows the overwrite replaced
    assert t.scan(snapshot_id=1).to_arrow().to_pylist() == [{"k": "gone", "col1": 1}]


def test_failed_job_commits_nothing_and_leaves_no_files(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    t.append(pa.table({"id": [0], "v": ["zero"]}))
    before_history, before_files = len(t.history()), _files_on_disk(t)
    before_refs = t.catalog.all_paths(t.table_id)

    @F.udf("string")
    def explode_on_one_partition(i):  # no type hints: Spark would try to read them as a pandas UDF
        if i == 1500:
            raise ValueError("boom in one partition")
        return f"v{i}"

    # 4 partitions; the other three write their files before (or while) the third one fails
    df = spark.range(0, 2000, 1, 4).select(F.col("id"), explode_on_one_partition("id").alias("v"),
                                            F.lit(1.5).alias("new_column"))
    with pytest.raises(Exception, match="boom in one partition"):
        df.write.format("fieldshift").mode("append").save(str(t.location))
    t = fs.Table.open(t.location)
    assert len(t.history()) == before_history
    assert t.schema.names == ["id", "v"]  # the evolution was not committed either
    assert t.catalog.all_paths(t.table_id) == before_refs
    # Files of the tasks that finished were deleted by the abort; a task Spark cancelled while it was
    # writing may still leave one, unreferenced, which vacuum removes like any crashed writer's file.
    leftovers = _files_on_disk(t) - before_files
    assert not leftovers & t.catalog.all_paths(t.table_id)
    assert set(t.vacuum(older_than=dt.timedelta(0))) == leftovers
    assert _files_on_disk(t) == before_files
    assert t.scan().to_arrow().to_pylist() == [{"id": 0, "v": "zero"}]


def test_write_creates_a_table_and_refuses_evolution_when_told(spark: Any, tmp_path: Path) -> None:
    loc = tmp_path / "new"
    df = spark.createDataFrame([(1, "a"), (2, None)], "id int, s string")
    df.write.format("fieldshift").mode("append").save(str(loc))
    t = fs.Table.open(loc)
    assert [f.name for f in t.schema.fields] == ["id", "s"]
    assert all(f.nullable for f in t.schema.fields)
    assert sorted(t.scan().to_arrow().to_pylist(), key=repr) == [{"id": 1, "s": "a"}, {"id": 2, "s": None}]
    wider = spark.createDataFrame([(3, "c", 1.0)], "id int, s string, extra double")
    with pytest.raises(Exception, match="evolve=True"):
        wider.write.format("fieldshift").mode("append").option("evolve", "false").save(str(loc))
    assert len(fs.Table.open(loc).history()) == 2
