"""``spark.readStream.format("fieldshift")``: appended rows file by file, in the query's schema by id,
across schema changes committed while it runs, with rate limits, restarts, skipped and refused snapshots."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs

pytestmark = pytest.mark.spark


def _rows(start: int, n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "name": [f"n{i}" for i in range(start, start + n)],
                     "small": pa.array([i % 100 for i in range(start, start + n)], pa.int32()),
                     "gone": [f"g{i}" for i in range(start, start + n)]})


def _table(tmp_path: Path) -> fs.Table:
    return fs.Table.create(tmp_path / "src", _rows(0, 0).schema)


def _drain(spark: Any, src: fs.Table, sink: Path, ckpt: Path, **options: str) -> Any:
    """Run the source into a fieldshift table with availableNow; returns the finished query."""
    reader = spark.readStream.format("fieldshift")
    for k, v in options.items():
        reader = reader.option(k, v)
    q = (reader.load(str(src.location)).writeStream.format("fieldshift")
         .option("checkpointLocation", str(ckpt)).trigger(availableNow=True).start(str(sink)))
    try:
        q.awaitTermination(300)
    except Exception as e:  # the query's failure, as PySpark raises it
        raise RuntimeError(str(e)) from None
    return q


def _sink_ids(sink: Path) -> list[int]:
    return sorted(fs.Table.open(sink).to_arrow().column("id").to_pylist())


def test_reads_appends_after_start_with_rate_limit_and_restarts(spark: Any, tmp_path: Path) -> None:
    src = _table(tmp_path)
    src.append(_rows(0, 10))
    for i in range(1, 5):
        src.append(_rows(i * 10, 10))  # snapshots 2..5, one file each
    q = _drain(spark, src, tmp_path / "sink", tmp_path / "ck", startingSnapshotId="2", maxFilesPerTrigger="1")
    assert _sink_ids(tmp_path / "sink") == list(range(10, 50))  # snapshot 1 is before the start
    assert sum(1 for p in q.recentProgress if p["numInputRows"]) == 4  # one file per micro-batch
    src.append(_rows(50, 5))
    src.update_schema().add_column("later", pa.string()).commit()  # a schema snapshot: no rows, passed over
    src.append(_rows(55, 5))
    _drain(spark, src, tmp_path / "sink", tmp_path / "ck", startingSnapshotId="2", maxFilesPerTrigger="1")
    assert _sink_ids(tmp_path / "sink") == list(range(10, 60))  # the offset survived: nothing twice


def test_max_rows_per_trigger(spark: Any, tmp_path: Path) -> None:
    src = _table(tmp_path)
    for i in range(6):
        src.append(_rows(i * 10, 10))
    q = _drain(spark, src, tmp_path / "sink", tmp_path / "ck", startingSnapshotId="1", maxRowsPerTrigger="25")
    assert _sink_ids(tmp_path / "sink") == list(range(60))
    assert [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]] == [20, 20, 20]


def test_schema_changes_while_running_do_not_stop_the_query(spark: Any, tmp_path: Path) -> None:
    src = _table(tmp_path)
    src.append(_rows(0, 3))
    q = (spark.readStream.format("fieldshift").load(str(src.location)).writeStream.format("memory")
         .queryName("drift").trigger(processingTime="200 milliseconds").start())
    try:
        def wait_for(n: int) -> list[dict[str, Any]]:
            deadline = time.time() + 120
            while time.time() < deadline:
                got = [r.asDict() for r in spark.sql("SELECT * FROM drift").collect()]
                if len(got) >= n:
                    return sorted(got, key=lambda r: r["id"])
                assert q.exception() is None, q.exception()
                time.sleep(0.2)
            raise AssertionError(f"the query emitted fewer than {n} rows")

        deadline = time.time() + 120
        while q.lastProgress is None and time.time() < deadline:  # the first trigger fixes the start
            time.sleep(0.2)
        src.append(_rows(100, 2))
        assert [r["id"] for r in wait_for(2)] == [100, 101]
        (src.update_schema().rename_column("name", "full_name").add_column("extra", pa.string())
         .update_column("small", pa.int64()).drop_column("gone").commit())
        src.append(pa.table({"id": pa.array([200, 201], pa.int64()), "full_name": ["r200", "r201"],
                             "small": pa.array([7, 8], pa.int64()), "extra": ["e", "e"]}))
        rows = wait_for(4)
        assert list(rows[0]) == ["id", "name", "small", "gone"]  # the schema the query started with
        assert rows[2:] == [{"id": 200, "name": "r200", "small": 7, "gone": None},
                            {"id": 201, "name": "r201", "small": 8, "gone": None}]
        src.append(pa.table({"id": pa.array([300], pa.int64()), "full_name": ["big"],
                             "small": pa.array([2**40], pa.int64()), "extra": ["e"]}))
        deadline = time.time() + 120
        while q.exception() is None and time.time() < deadline:
            time.sleep(0.2)
        assert q.exception() is not None and "restart the query" in str(q.exception())  # 2**40 is no int
    finally:
        q.stop()
    # restarted: the query now reads the current schema, 2**40 included
    restarted = (spark.readStream.format("fieldshift").option("startingSnapshotId", "1").load(str(src.location))
                 .writeStream.format("memory").queryName("drift2").trigger(availableNow=True).start())
    restarted.awaitTermination(300)
    got = {r["id"]: r.asDict() for r in spark.sql("SELECT * FROM drift2").collect()}
    assert got[300] == {"id": 300, "full_name": "big", "small": 2**40, "extra": "e"}
    assert got[0]["full_name"] == "n0" and got[0]["extra"] is None and len(got) == 8


def test_overwrite_fails_unless_skipped_and_expired_offset(spark: Any, tmp_path: Path) -> None:
    src = _table(tmp_path)
    src.append(_rows(0, 5))
    src.overwrite(_rows(100, 5))
    src.append(_rows(200, 5))
    with pytest.raises(RuntimeError, match="skipChangeCommits"):
        _drain(spark, src, tmp_path / "sink", tmp_path / "ck", startingSnapshotId="1")
    assert _sink_ids(tmp_path / "sink") == list(range(5))  # the rows before the overwrite were emitted
    _drain(spark, src, tmp_path / "sink2", tmp_path / "ck2", startingSnapshotId="1", skipChangeCommits="true")
    assert _sink_ids(tmp_path / "sink2") == [*range(5), *range(200, 205)]

    src.append(_rows(300, 5))
    assert src.expire_snapshots(older_than=0, retain_last=1).expired_snapshots == (0, 1, 2, 3)  # ck2 was at 3
    with pytest.raises(RuntimeError, match="new checkpointLocation"):
        _drain(spark, src, tmp_path / "sink2", tmp_path / "ck2", startingSnapshotId="1", skipChangeCommits="true")


def test_source_to_sink_stopped_mid_way_exactly_once(spark: Any, tmp_path: Path) -> None:
    src = _table(tmp_path)
    for i in range(30):
        src.append(_rows(i * 100, 100))
    sink, ckpt = tmp_path / "sink", tmp_path / "ck"
    q = (spark.readStream.format("fieldshift").option("startingSnapshotId", "1").option("maxFilesPerTrigger", "2")
         .load(str(src.location)).writeStream.format("fieldshift").option("checkpointLocation", str(ckpt))
         .trigger(processingTime="100 milliseconds").start(str(sink)))
    deadline = time.time() + 120
    while time.time() < deadline and not (sink / "fieldshift.db").exists():
        time.sleep(0.1)
    time.sleep(1)
    q.stop()  # mid-stream
    _drain(spark, src, sink, ckpt, startingSnapshotId="1", maxFilesPerTrigger="4")
    ids = fs.Table.open(sink).to_arrow().column("id").to_pylist()
    assert sorted(ids) == list(range(3000))  # none lost, none twice
