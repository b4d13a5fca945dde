"""Streams (issue 19): the streaming sink against Spark's Parquet file sink, fieldshift's own cost per
micro-batch against a no-op sink's, and ``fieldshift.capture`` against a plain pyarrow loop.

Run briefly (the machine is shared): ``python benchmarks/bench_streams.py`` prints the numbers, or
through pytest with the other benchmarks (``make bench``). ``FIELDSHIFT_BENCH_SCALE=small`` shrinks it.

- sink throughput: Parquet files of 100,000 rows land in a directory; ``readStream.parquet`` with
  ``maxFilesPerTrigger=1`` (100k-row micro-batches) into Spark's own ``parquet`` file sink and into the
  ``fieldshift`` sink, ``availableNow``, local[2]; rows/s from the query's wall time.
- per 10k-row micro-batch (issue 35): steady-state ``triggerExecution`` of Spark's Parquet sink, a Python sink that
  writes nothing (``python_noop_sink.py``: what Spark spends on any Python sink) and the fieldshift sink.
- cost per micro-batch: 1,000-row micro-batches into the fieldshift sink with stopwatches around the
  executors' ``write`` and the driver's ``commit`` (benchmarks/timed_sink.py) — p50/p99 — beside Spark's
  ``triggerExecution`` per batch for the same stream into the ``noop`` sink.
- capture: 1,000 small newline-delimited JSON files in 20 schema variants; ``fieldshift.capture`` against
  a loop that reads each file with pyarrow and writes it as Parquet (no evolution, no catalog).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.json as pj
import pyarrow.parquet as pq
import pytest

import fieldshift as fs

pytestmark = [pytest.mark.bench, pytest.mark.slow, pytest.mark.spark]

SMALL = os.environ.get("FIELDSHIFT_BENCH_SCALE", "full").strip().lower() == "small"
BATCH_ROWS = 100_000
BATCHES = 4 if SMALL else 10
SMALL_BATCHES = 15 if SMALL else 40
SINK_BATCHES = 8 if SMALL else 20  # 10,000-row micro-batches per query (issue 35's per-batch comparison)
JSON_FILES = 200 if SMALL else 1000
DDL = "id long, col1 int, name string, price double"


def _land(folder: Path, batches: int, rows: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(19)
    words = np.array([f"name-{i:05d}" for i in range(2048)], dtype=object)
    for b in range(batches):
        ids = np.arange(b * rows, (b + 1) * rows)
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()),
                                 "col1": pa.array(rng.integers(0, 1 << 30, rows), pa.int32()),
                                 "name": pa.array(words[rng.integers(0, len(words), rows)], pa.string()),
                                 "price": pa.array(rng.random(rows) * 100, pa.float64())}),
                       folder / f"part-{b:05}.parquet")


def _query(spark: Any, source: Path, fmt: str, target: Path, checkpoint: Path, **options: str) -> tuple[float, Any]:
    df = spark.readStream.format("parquet").schema(DDL).option("maxFilesPerTrigger", 1).load(str(source))
    writer = df.writeStream.format(fmt).option("checkpointLocation", str(checkpoint))
    for k, v in options.items():
        writer = writer.option(k, v)
    start = time.perf_counter()
    q = writer.trigger(availableNow=True).start(str(target)) if fmt != "noop" else \
        writer.trigger(availableNow=True).start()
    q.awaitTermination()
    return time.perf_counter() - start, q


def _batch_seconds(q: Any) -> list[float]:
    """Each micro-batch's ``triggerExecution`` time of a finished query, in seconds, in order."""
    return [p["durationMs"]["triggerExecution"] / 1000 for p in q.recentProgress
            if p.get("numInputRows") and "triggerExecution" in p.get("durationMs", {})]


def sink_throughput(spark: Any, root: Path, rounds: int = 2) -> dict[str, Any]:
    """Whole queries (start to end, the first batch's Python worker start included) and steady state (the
    micro-batches after each query's first, from Spark's own progress reports); a first round warms both."""
    src = root / "in"
    _land(src, BATCHES, BATCH_ROWS)
    rows = BATCHES * BATCH_ROWS
    times: dict[str, list[float]] = {"parquet": [], "fieldshift": []}
    steady: dict[str, list[float]] = {"parquet": [], "fieldshift": []}
    for r in range(-1, rounds):  # round -1 warms the JVM and the Python workers; it is not counted
        for fmt in ("parquet", "fieldshift"):
            out, ck = root / f"{fmt}-{r}", root / f"{fmt}-{r}-ck"
            sec, q = _query(spark, src, fmt, out, ck)
            if r >= 0:
                times[fmt].append(sec)
                steady[fmt] += _batch_seconds(q)[1:]
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(ck, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    per_batch = {k: statistics.median(v) for k, v in steady.items()}
    return {"rows": rows, "batch_rows": BATCH_ROWS, "parquet_s": med["parquet"], "fieldshift_s": med["fieldshift"],
            "parquet_rows_per_s": rows / med["parquet"], "fieldshift_rows_per_s": rows / med["fieldshift"],
            "ratio": med["parquet"] / med["fieldshift"], "rounds": rounds,
            "steady_parquet_batch_s": per_batch["parquet"], "steady_fieldshift_batch_s": per_batch["fieldshift"],
            "steady_ratio": per_batch["parquet"] / per_batch["fieldshift"]}


def sink_per_batch(spark: Any, root: Path, batch_rows: int = 10_000, batches: int = SINK_BATCHES,
                   rounds: int = 3) -> dict[str, Any]:
    """Issue 35: steady-state time per ``batch_rows``-row micro-batch (Spark's ``triggerExecution``, each query's
    first batch left out) of Spark's Parquet file sink, a Python sink that writes nothing (Spark's own cost of
    any Python data source sink: the floor) and the fieldshift sink; queries interleaved, after a warm-up round."""
    import python_noop_sink
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(python_noop_sink)  # the Python workers do not have benchmarks/ on their path
    spark.dataSource.register(python_noop_sink.PythonNoopSink)
    src = root / f"in-{batch_rows}"
    _land(src, batches, batch_rows)
    formats = {"parquet": "parquet", "python_noop": python_noop_sink.FORMAT, "fieldshift": "fieldshift"}
    steady: dict[str, list[float]] = {k: [] for k in formats}
    for r in range(-1, rounds):  # round -1 warms the JVM and the Python workers; it is not counted
        for key, fmt in formats.items():
            out, ck = root / f"{key}-{r}", root / f"{key}-{r}-ck"
            _, q = _query(spark, src, fmt, out, ck)
            if r >= 0:
                steady[key] += _batch_seconds(q)[1:]
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(ck, ignore_errors=True)
    per_batch = {k: statistics.median(v) for k, v in steady.items()}
    return {"batch_rows": batch_rows, "batches": batches, "rounds": rounds,
            **{f"{k}_batch_s": v for k, v in per_batch.items()},
            "ratio": per_batch["fieldshift"] / per_batch["parquet"],  # time ÷ the Parquet sink's (issue 35: <= 1.0)
            "floor_ratio": per_batch["python_noop"] / per_batch["parquet"],
            "over_floor": per_batch["fieldshift"] / per_batch["python_noop"], "load_avg_1m": os.getloadavg()[0]}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def per_batch_cost(spark: Any, root: Path) -> dict[str, Any]:
    import timed_sink
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(timed_sink)  # the Python workers do not have benchmarks/ on their path
    spark.dataSource.register(timed_sink.TimedSource)
    src = root / "small"
    _land(src, SMALL_BATCHES, 1_000)
    timings = root / "timings.jsonl"
    _, q = _query(spark, src, timed_sink.FORMAT, root / "timed", root / "timed-ck", timings=str(timings))
    records = [json.loads(line) for line in timings.read_text().splitlines()]
    writes = [r["s"] for r in records if r["kind"] == "flush"]
    waits = [r["s"] for r in records if r["kind"] == "write"]
    commits = [r["s"] for r in records if r["kind"] == "commit"]
    planned = [r for r in records if r["kind"] == "plan"]  # the driver's planning, one per micro-batch
    commits = [c + p["s"] for c, p in zip(commits, planned, strict=False)] if len(planned) >= len(commits) else commits
    ours = [p["durationMs"]["triggerExecution"] / 1e3 for p in q.recentProgress if p["numInputRows"]]
    _, nq = _query(spark, src, "noop", root / "noop", root / "noop-ck")
    noop = [p["durationMs"]["triggerExecution"] / 1e3 for p in nq.recentProgress if p["numInputRows"]]
    per_batch = [c + w for c, w in zip(commits, writes, strict=False)]  # one task per 1,000-row batch
    cpu = [c["cpu"] + w["cpu"] + (p["cpu"] if p else 0.0) for c, w, p in
           zip([r for r in records if r["kind"] == "commit"], [r for r in records if r["kind"] == "flush"],
               planned + [None] * len(records), strict=False)]
    return {"batches": len(commits), "batch_rows": 1_000,
            "fieldshift_cpu_p50": _pct(cpu, 0.5), "fieldshift_cpu_p99": _pct(cpu, 0.99),
            "write_p50": _pct(writes, 0.5), "write_p99": _pct(writes, 0.99),
            "write_wall_p50": _pct(waits, 0.5), "write_wall_p99": _pct(waits, 0.99),
            "commit_p50": _pct(commits, 0.5), "commit_p99": _pct(commits, 0.99),
            "fieldshift_p50": _pct(per_batch, 0.5), "fieldshift_p99": _pct(per_batch, 0.99),
            "trigger_fieldshift_p50": _pct(ours, 0.5), "trigger_fieldshift_p99": _pct(ours, 0.99),
            "trigger_noop_p50": _pct(noop, 0.5), "trigger_noop_p99": _pct(noop, 0.99)}


def _variant(i: int, n: int) -> list[dict[str, Any]]:
    v = i % 20
    out = []
    for j in range(n):
        r: dict[str, Any] = {"id": i * 1000 + j, "v": v, "name": f"n{j}"}
        if v % 2:
            r[f"extra{v % 5}"] = f"x{j}"
        if v % 3 == 0:
            r["score"] = j + 0.5 if v >= 10 else j
        if v % 4 == 0:
            r["nested"] = {"a": j, **({"b": "y"} if v >= 8 else {})}
        out.append(r)
    return out


def capture_throughput(root: Path, files: int = JSON_FILES, rows: int = 20) -> dict[str, Any]:
    land = root / "land"
    land.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (land / f"f{i:05}.json").write_text("".join(json.dumps(r) + "\n" for r in _variant(i, rows)))
    total = files * rows
    warm = root / "warm"  # first-use imports and JIT outside the timings, for both sides
    warm.mkdir()
    for i in range(3):
        (warm / f"w{i}.json").write_text("".join(json.dumps(r) + "\n" for r in _variant(i * 4, 2)))
        pq.write_table(pj.read_json(warm / f"w{i}.json"), root / f"warm{i}.parquet")
    fs.capture(warm, root / "warm_table")
    start = time.perf_counter()
    plain_out = root / "plain"
    plain_out.mkdir()
    for path in sorted(land.glob("*.json")):
        pq.write_table(pj.read_json(path), plain_out / f"{path.stem}.parquet")
    plain = time.perf_counter() - start
    start = time.perf_counter()
    result = fs.capture(land, root / "captured")
    ours = time.perf_counter() - start
    assert result.rows == total
    return {"files": files, "rows": total, "variants": 20, "plain_s": plain, "capture_s": ours,
            "plain_rows_per_s": total / plain, "capture_rows_per_s": total / ours, "ratio": plain / ours,
            "schema_changes": len(result.schema_changes), "commits": result.commits}


# ------------------------------------------------------------------------------------------------
# pytest entry points (make bench) and a direct run
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def spark() -> Any:
    from fieldshift.spark import session

    s = session(master="local[2]", **{"spark.driver.memory": "2g", "spark.sql.shuffle.partitions": "2"})
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def test_sink_throughput(benchmark: Any, spark: Any, tmp_path: Path) -> None:
    info = benchmark.pedantic(lambda: sink_throughput(spark, tmp_path / "run", rounds=1), rounds=1, iterations=1)
    benchmark.extra_info.update(info or {})


def test_sink_per_10k_batch(benchmark: Any, spark: Any, tmp_path: Path) -> None:
    info = benchmark.pedantic(lambda: sink_per_batch(spark, tmp_path), rounds=1, iterations=1)
    benchmark.extra_info.update(info or {})


def test_per_batch_cost(benchmark: Any, spark: Any, tmp_path: Path) -> None:
    info = benchmark.pedantic(lambda: per_batch_cost(spark, tmp_path), rounds=1, iterations=1)
    benchmark.extra_info.update(info or {})


def test_capture_throughput(benchmark: Any, tmp_path: Path) -> None:
    info = benchmark.pedantic(lambda: capture_throughput(tmp_path), rounds=1, iterations=1)
    benchmark.extra_info.update(info or {})


def main() -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    root = Path(tempfile.mkdtemp(prefix="fs-bench-streams-"))
    try:
        print("capture:", json.dumps(capture_throughput(root / "capture"), indent=1))
        from fieldshift.spark import session

        spark = session(master="local[2]", **{"spark.driver.memory": "2g", "spark.sql.shuffle.partitions": "2"})
        spark.sparkContext.setLogLevel("ERROR")
        print("per batch:", json.dumps(per_batch_cost(spark, root / "cost"), indent=1))
        print("sink:", json.dumps(sink_throughput(spark, root / "sink"), indent=1))
        print("sink per 10k batch:", json.dumps(sink_per_batch(spark, root / "sink10k"), indent=1))
        print("load average:", os.getloadavg())
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
