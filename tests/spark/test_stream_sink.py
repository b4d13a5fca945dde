"""``df.writeStream.format("fieldshift")``: one commit per micro-batch, exactly once across restarts,
replays and killed Python workers, with the table evolving on the first batch of a drifted stream."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.table.catalog.stream_log import stream_batches

pytestmark = pytest.mark.spark


def _land(folder: Path, name: str, table: pa.Table) -> None:
    """Drop a Parquet file into the stream's input directory atomically (Spark's file source may list it)."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.tmp"
    pq.write_table(table, tmp)
    os.replace(tmp, folder / name)


def _ids(start: int, n: int, col1: pa.DataType | None = None) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "col1": pa.array(range(start, start + n), pa.int64()).cast(col1 or pa.int32())})


def _run(spark: Any, source: Path, ddl: str, target: Path, checkpoint: Path, **options: str) -> None:
    df = spark.readStream.format("parquet").schema(ddl).option("maxFilesPerTrigger", 1).load(str(source))
    writer = df.writeStream.format("fieldshift").option("checkpointLocation", str(checkpoint))
    for k, v in options.items():
        writer = writer.option(k, v)
    q = writer.trigger(availableNow=True).start(str(target))
    q.awaitTermination(300)
    assert q.exception() is None, q.exception()


def _committed(target: Path) -> int:
    """How many micro-batches the sink has committed to ``target`` so far (0 before the table exists)."""
    try:
        return len(_stream_snapshots(fs.Table.open(target)))
    except fs.TableError:
        return 0


def _stream_snapshots(t: fs.Table) -> list[Any]:
    return [s for s in t.history() if s.summary.get("writer") == "spark-stream"]


def test_micro_batches_commit_once_and_restart_continues(spark: Any, tmp_path: Path) -> None:
    src, target, ckpt = tmp_path / "in", tmp_path / "t", tmp_path / "ckpt"
    for i in range(3):
        _land(src, f"part-{i}.parquet", _ids(i * 100, 100))
    _run(spark, src, "id long, col1 int", target, ckpt)
    t = fs.Table.open(target)
    assert len(_stream_snapshots(t)) == 3  # maxFilesPerTrigger 1: one micro-batch, one snapshot per file
    assert [s.summary["batch"] for s in _stream_snapshots(t)] == [0, 1, 2]
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(300))

    _land(src, "part-3.parquet", _ids(300, 50))
    _run(spark, src, "id long, col1 int", target, ckpt)  # restarted: only the new file
    t = fs.Table.open(target)
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(350))
    stream = _stream_snapshots(t)[0].summary["stream"]
    assert stream.startswith("query:") and sorted(stream_batches(t.catalog, t.table_id, stream)) == [0, 1, 2, 3]


def test_replayed_batch_commits_nothing(spark: Any, tmp_path: Path) -> None:
    """A crash after the sink's commit but before Spark's commit log: Spark replays the batch on restart."""
    src, target, ckpt = tmp_path / "in", tmp_path / "t", tmp_path / "ckpt"
    for i in range(2):
        _land(src, f"part-{i}.parquet", _ids(i * 10, 10))
    _run(spark, src, "id long, col1 int", target, ckpt)
    before = fs.Table.open(target).history()
    (ckpt / "commits" / "1").unlink()  # Spark never learnt that batch 1 was committed
    (ckpt / "commits" / ".1.crc").unlink(missing_ok=True)
    _run(spark, src, "id long, col1 int", target, ckpt)
    t = fs.Table.open(target)
    assert t.history() == before  # batch 1 replayed: no new snapshot
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(20))
    on_disk = {p.name for p in (target / "data").glob("*.parquet")}
    assert on_disk == {Path(f.path).name for f in t.scan().files()}  # the replay's files were deleted


def test_drifted_stream_evolves_on_first_batch_and_quarantines(spark: Any, tmp_path: Path) -> None:
    """Onehouse: col1 Int, then Long (the table widens), then String (quarantined, or the query fails)."""
    src, target, ckpt = tmp_path / "in", tmp_path / "t", tmp_path / "ckpt"
    _land(src, "a.parquet", _ids(0, 5, pa.int32()))
    _run(spark, src, "id long, col1 int", target, ckpt)
    assert fs.Table.open(target).schema.find("col1").type == pa.int32()

    _land(src, "b.parquet", _ids(5, 5, pa.int64()).append_column("extra", pa.array(["x"] * 5)))
    _run(spark, src, "id long, col1 long, extra string", target, ckpt)  # restarted with a drifted schema
    t = fs.Table.open(target)
    assert t.schema.find("col1").type == pa.int64() and t.schema.names == ["id", "col1", "extra"]
    assert sorted(r["id"] for r in t.to_arrow().to_pylist()) == list(range(10))

    strings = pa.table({"id": pa.array([10, 11], pa.int64()), "col1": ["twelve", None]})
    _land(src, "c.parquet", strings)
    with pytest.raises(Exception, match="col1"):
        _run(spark, src, "id long, col1 string", target, ckpt)  # fail (the default): nothing committed
    assert fs.Table.open(target).to_arrow().num_rows == 10
    _run(spark, src, "id long, col1 string", target, ckpt, on_incompatible="quarantine")
    t = fs.Table.open(target)
    assert sorted(t.to_arrow().column("id").to_pylist()) == [*range(10), 11]  # a null string fits col1
    q = t.quarantine()
    assert q.num_rows == 1 and '"twelve"' in q.column("_fieldshift_row")[0].as_py()
    assert "col1" in q.column("_fieldshift_reason")[0].as_py()


def test_empty_micro_batch_records_its_id(spark: Any, tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
    ckpt = tmp_path / "ckpt"
    q = (spark.readStream.format("rate").option("rowsPerSecond", 1).load().limit(0).selectExpr("value AS id")
         .writeStream.format("fieldshift").option("checkpointLocation", str(ckpt))
         .trigger(processingTime="500 milliseconds").start(str(t.location)))
    deadline = time.time() + 120
    while time.time() < deadline and not _committed(t.location):
        time.sleep(0.5)
    q.stop()
    snaps = _stream_snapshots(fs.Table.open(t.location))
    assert snaps and all(s.summary["rows"] == 0 for s in snaps)
    assert fs.Table.open(t.location).schema.names == ["id"]


def test_sink_refuses_missing_checkpoint_and_upsert(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    _land(src, "a.parquet", _ids(0, 3))
    df = spark.readStream.format("parquet").schema("id long, col1 int").load(str(src))
    with pytest.raises(Exception, match="upsert"):
        q = (df.writeStream.format("fieldshift").option("checkpointLocation", str(tmp_path / "c"))
             .option("operation", "upsert").trigger(availableNow=True).start(str(tmp_path / "t")))
        q.awaitTermination(120)
        raise AssertionError(str(q.exception()))
    assert not (tmp_path / "t" / "data").exists() or not list((tmp_path / "t" / "data").glob("*.parquet"))


def _is_daemon(pid: str) -> bool:
    try:
        return b"pyspark.daemon" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False


def _python_workers() -> list[int]:
    """Pids of PySpark's Python worker processes: the children ``pyspark.daemon`` forks for tasks."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and _is_daemon(pid):
            try:
                parent = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
            except (OSError, IndexError):
                continue
            if _is_daemon(parent):
                out.append(int(pid))
    return out


def test_killed_python_workers_then_restart_exactly_once(spark: Any, tmp_path: Path) -> None:
    src, target, ckpt = tmp_path / "in", tmp_path / "t", tmp_path / "ckpt"
    n_files = 12
    for i in range(n_files):
        _land(src, f"part-{i:02}.parquet", _ids(i * 1000, 1000))
    df = spark.readStream.format("parquet").schema("id long, col1 int").option("maxFilesPerTrigger", 1).load(str(src))
    q = (df.writeStream.format("fieldshift").option("checkpointLocation", str(ckpt))
         .trigger(processingTime="100 milliseconds").start(str(target)))
    deadline = time.time() + 120
    while time.time() < deadline and _committed(target) < 3:
        time.sleep(0.2)
    killed = 0
    for pid in _python_workers():  # the Python workers writing and committing batches, mid-stream
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    time.sleep(1)
    q.stop()
    assert killed
    _run(spark, src, "id long, col1 int", target, ckpt)  # restart drains the rest
    t = fs.Table.open(target)
    ids = t.to_arrow().column("id").to_pylist()
    assert len(ids) == len(set(ids)) == n_files * 1000  # no loss, no duplicates
    batches = [s.summary["batch"] for s in _stream_snapshots(t)]
    assert len(batches) == len(set(batches))
