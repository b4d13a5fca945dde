"""The streaming sink on keyed tables: ``operation=upsert`` across a schema drift, replayed batches and
killed Python workers, equal by key to a plain-Python model; insert-only appends refuse known keys."""

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

pytestmark = pytest.mark.spark


def _land(folder: Path, name: str, table: pa.Table, at: int) -> None:
    """Drop a Parquet file atomically, its modification time giving the order Spark's file source takes."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.tmp"
    pq.write_table(table, tmp)
    os.utime(tmp, (1_700_000_000 + at, 1_700_000_000 + at))
    os.replace(tmp, folder / name)


def _file(i: int, drifted: bool) -> pa.Table:
    """File ``i``: 20 distinct keys overlapping the files before it; drifted files hold longs and a note."""
    ids = [(i * 7 + j * 3) % 50 for j in range(20)]
    v = [i * 1000 + j + (2**33 if drifted else 0) for j in range(20)]
    cols: dict[str, Any] = {"id": pa.array(ids, pa.int64()), "v": pa.array(v, pa.int64() if drifted else pa.int32())}
    if drifted:
        cols["note"] = pa.array([f"f{i}" if j % 2 else None for j in range(20)])
    return pa.table(cols)


def _model(files: list[tuple[int, bool]]) -> dict[int, tuple[int, str | None]]:
    rows: dict[int, tuple[int, str | None]] = {}
    for i, drifted in files:  # each micro-batch replaces the rows of its keys
        for r in _file(i, drifted).to_pylist():
            rows[r["id"]] = (r["v"], r.get("note"))
    return rows


def _by_key(location: Path) -> dict[int, tuple[int, str | None]]:
    got = fs.Table.open(location).to_arrow().to_pylist()
    assert len(got) == len({r["id"] for r in got})
    return {r["id"]: (r["v"], r.get("note")) for r in got}


def _stream(spark: Any, src: Path, ddl: str, target: Path, ckpt: Path, **options: str) -> Any:
    df = spark.readStream.format("parquet").schema(ddl).option("maxFilesPerTrigger", 1).load(str(src))
    writer = df.writeStream.format("fieldshift").option("checkpointLocation", str(ckpt))
    for k, v in options.items():
        writer = writer.option(k, v)
    return writer


def _run(writer: Any, target: Path) -> None:
    q = writer.trigger(availableNow=True).start(str(target))
    q.awaitTermination(300)
    assert q.exception() is None, q.exception()


def _stream_snapshots(location: Path) -> list[Any]:
    try:
        return [s for s in fs.Table.open(location).history() if s.summary.get("writer") == "spark-stream"]
    except fs.TableError:
        return []


def _python_workers() -> list[int]:
    """Pids of the Python workers ``pyspark.daemon`` forks (they write tasks and run the commits)."""
    def daemon(pid: str) -> bool:
        try:
            return b"pyspark.daemon" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return False

    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and daemon(pid):
            try:
                parent = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
            except (OSError, IndexError):
                continue
            if daemon(parent):
                out.append(int(pid))
    return out


def test_upsert_stream_across_drift_replays_and_killed_workers_equals_the_model(spark: Any, tmp_path: Path) -> None:
    src, target, ckpt = tmp_path / "in", tmp_path / "t", tmp_path / "ckpt"
    fs.Table.create(target, pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int32())]),
                    identifier_fields=["id"], buckets=2)
    first = [(i, False) for i in range(6)]
    for i, d in first:
        _land(src, f"part-{i:02}.parquet", _file(i, d), i)
    _run(_stream(spark, src, "id long, v int", target, ckpt, operation="upsert"), target)
    assert _by_key(target) == _model(first)
    assert [s.summary["batch"] for s in _stream_snapshots(target)] == list(range(6))
    assert {s.operation for s in _stream_snapshots(target)} == {"upsert"}

    # Spark never learnt that batches 4 and 5 committed: it replays both; replaying 4 after 5 would undo 5
    before = fs.Table.open(target).history()
    for b in (4, 5):
        (ckpt / "commits" / str(b)).unlink()
        (ckpt / "commits" / f".{b}.crc").unlink(missing_ok=True)
    _run(_stream(spark, src, "id long, v int", target, ckpt, operation="upsert"), target)
    assert fs.Table.open(target).history() == before and _by_key(target) == _model(first)

    # the upstream schema drifts (v long, a new note column); the restarted query evolves the table,
    # and its Python workers are killed mid-stream
    drifted = [(i, True) for i in range(6, 14)]
    for i, d in drifted:
        _land(src, f"part-{i:02}.parquet", _file(i, d), i)
    ddl = "id long, v long, note string"
    q = _stream(spark, src, ddl, target, ckpt, operation="upsert").trigger(processingTime="100 milliseconds") \
        .start(str(target))
    deadline = time.time() + 180
    while time.time() < deadline and len(_stream_snapshots(target)) < 8:
        time.sleep(0.1)
    killed = 0
    for pid in _python_workers():
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            pass
    time.sleep(1)
    q.stop()
    assert killed
    _run(_stream(spark, src, ddl, target, ckpt, operation="upsert"), target)  # the restart drains the rest
    t = fs.Table.open(target)
    assert t.schema.find("v").type == pa.int64() and t.schema.names == ["id", "v", "note"]
    assert _by_key(target) == _model(first + drifted)
    batches = [s.summary["batch"] for s in _stream_snapshots(target)]
    assert batches == list(range(len(first + drifted)))  # each batch committed once, in order
    t.vacuum(older_than=0)
    assert {p.name for p in (target / "data").rglob("*.parquet")} == {Path(f.path).name for f in t.scan().files()}


def test_insert_only_stream_refuses_known_keys_and_upsert_needs_a_key(spark: Any, tmp_path: Path) -> None:
    src, target, ckpt = tmp_path / "in", tmp_path / "t", tmp_path / "ckpt"
    t = fs.Table.create(target, pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int32())]),
                        identifier_fields=["id"])
    for i in range(2):
        _land(src, f"part-{i}.parquet", pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64()),
                                                  "v": pa.array([i] * 10, pa.int32())}), i)
    _run(_stream(spark, src, "id long, v int", target, ckpt), target)
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(20))
    assert {s.operation for s in _stream_snapshots(target)} == {"append"}
    _land(src, "part-2.parquet", pa.table({"id": pa.array([20, 5], pa.int64()), "v": pa.array([2, 2], pa.int32())}), 2)
    head = t.current_snapshot.snapshot_id
    with pytest.raises(Exception, match=r"DuplicateKeyError.*id=5"):
        _run(_stream(spark, src, "id long, v int", target, ckpt), target)
    assert t.current_snapshot.snapshot_id == head
    assert {p.name for p in (target / "data").rglob("*.parquet")} == {Path(f.path).name for f in t.scan().files()}

    plain = fs.Table.create(tmp_path / "plain", pa.schema([("id", pa.int64()), ("v", pa.int32())]))
    with pytest.raises(Exception, match=r"NotKeyedError.*upsert"):
        _run(_stream(spark, src, "id long, v int", plain.location, tmp_path / "c2", operation="upsert"),
             plain.location)
    assert len(plain.history()) == 1


def test_partial_upsert_stream_keeps_the_columns_it_does_not_carry(spark: Any, tmp_path: Path) -> None:
    """Option ``partial`` on the sink: each micro-batch is ``Table.upsert(partial=True)`` (compared on a twin)."""
    src, ckpt = tmp_path / "in", tmp_path / "ckpt"
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.string()), ("b", pa.int64())])
    twins = [fs.Table.create(tmp_path / n, schema, identifier_fields=["id"], buckets=2) for n in ("t", "local")]
    for t in twins:
        t.upsert(pa.table({"id": list(range(6)), "a": [f"a{i}" for i in range(6)], "b": list(range(6))}, schema=schema))
    batches = [pa.table({"id": [1, 2, 9], "a": ["x", None, "new"]}), pa.table({"id": [2, 3], "a": ["y", "z"]})]
    for i, b in enumerate(batches):
        _land(src, f"part-{i}.parquet", b, i)
        twins[1].upsert(b, partial=True)
    _run(_stream(spark, src, "id long, a string", twins[0].location, ckpt, operation="upsert", partial="true"),
         twins[0].location)
    assert len(_stream_snapshots(twins[0].location)) == 2
    got, want = (sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) for t in twins)
    assert got == want and got[2] == {"id": 2, "a": "y", "b": 2}
