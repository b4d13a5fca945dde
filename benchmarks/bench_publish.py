"""Issue 33: what publishing on commit (Iceberg metadata caught up after every commit) costs.

On a table of 1,000 snapshots and 1,000 files (500 of each with ``FIELDSHIFT_BENCH_SCALE=small``), already
published: a one-row append with publishing on against the same append with it off (target: ≤ 20 ms more),
and a 1,000,000-row append (target: ≤ 10% more). Each is the median of several runs; publishing is
toggled on the same table (``set_publish``), the two interleaved, so both sides see the same history
and the same machine load.

Run: ``.venv/bin/python benchmarks/bench_publish.py`` (prints the numbers and writes ``publish.md``), or
through pytest with ``-m ""``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from fieldshift.table import Table

pytestmark = [pytest.mark.bench, pytest.mark.slow]

SMALL = os.environ.get("FIELDSHIFT_BENCH_SCALE", "full").strip().lower() == "small"
SNAPSHOTS = 500 if SMALL else 1_000
BIG = 1_000_000


def history(root: Path, snapshots: int = SNAPSHOTS) -> Table:
    """A table of ``snapshots`` one-row appends (one file each), published."""
    t = Table.create(root / "t", pa.schema([("id", pa.int64()), ("name", pa.string()), ("x", pa.float64())]))
    for i in range(snapshots):
        t.append(pa.table({"id": [i], "name": [f"n{i}"], "x": [i * 0.5]}))
    t.publish()
    return t


def _median(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(t: Table, runs: int = 15, big_runs: int = 5) -> dict[str, float]:
    """Medians of appends with publishing off and on, interleaved (the shared machine's noise hits both)."""
    one = pa.table({"id": [1], "name": ["one"], "x": [1.0]})
    rng = np.random.default_rng(0)
    big = pa.table({"id": np.arange(BIG, dtype=np.int64), "name": pa.array([f"r{i % 1000}" for i in range(BIG)]),
                    "x": rng.random(BIG)})
    times: dict[str, list[float]] = {k: [] for k in ("one_off", "one_on", "big_off", "big_on")}
    for kind, data, n in (("one", one, runs), ("big", big, big_runs)):
        for _ in range(n):
            for label, fmt in (("off", None), ("on", "iceberg")):
                t.set_publish(fmt)  # turning it on catches up the snapshot committed while off: not timed
                times[f"{kind}_{label}"].append(_median(lambda d=data: t.append(d), 1))
    return {k: statistics.median(v) for k, v in times.items()}


def report(numbers: dict[str, float], snapshots: int) -> str:
    one = (numbers["one_on"] - numbers["one_off"]) * 1000
    big = numbers["big_on"] / numbers["big_off"] - 1
    return "\n".join([
        f"Publishing on commit, table of {snapshots} snapshots / {snapshots} files (median of runs):",
        "",
        "| commit | publishing off | publishing on | added | target |",
        "|---|---|---|---|---|",
        f"| one-row append | {numbers['one_off'] * 1000:.1f} ms | {numbers['one_on'] * 1000:.1f} ms | {one:+.1f} ms "
        "| ≤ 20 ms |",
        f"| 1,000,000-row append | {numbers['big_off']:.2f} s | {numbers['big_on']:.2f} s | {big:+.1%} | ≤ 10% |",
        "",
        f"Load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (a shared machine's "
        "load inflates both sides).",
        "",
    ])


def test_publish_on_commit_cost(tmp_path: Path) -> None:
    t = history(tmp_path, 200)
    print(report(measure(t, runs=5, big_runs=1), 200))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        table = history(Path(tmp))
        print(f"history built in {time.perf_counter() - start:.0f} s", file=sys.stderr)
        text = report(measure(table), SNAPSHOTS)
    print(text)
    (Path(__file__).parent / "publish.md").write_text(text)
