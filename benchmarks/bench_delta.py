"""Issue 32, Delta: a full scan of a deltalake-written table of 3 schema versions through ``fs.open_table``
against delta-rs' own read into Arrow, in the same run.

The table (10,000,000 rows; 1,000,000 with ``FIELDSHIFT_BENCH_SCALE=small``), a third of the rows written
under each version: version 0 ``id long, a int, b string, f float``; version 1 adds ``c double``
(``schema_mode="merge"``); version 2 adds ``d string``. Files of older versions lack the newer columns,
which both readers fill with nulls. ``fs.open_table(path).to_arrow()`` vs delta-rs'
``DeltaTable(path).to_pyarrow_table()`` (right on a table without column mapping); target: ≤ 1.0×.

Run: ``.venv/bin/python benchmarks/bench_delta.py`` (prints the numbers and writes ``delta.md``), or
through pytest with ``-m ""`` (pytest-benchmark timings).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from workloads import timed

import fieldshift as fs

pytestmark = [pytest.mark.bench, pytest.mark.slow]

SMALL = os.environ.get("FIELDSHIFT_BENCH_SCALE", "full").strip().lower() == "small"
ROWS = 1_000_000 if SMALL else 10_000_000


def three_versions(path: Path, rows: int = ROWS) -> str:
    """The 3-schema-version table, written by deltalake; returns its directory."""
    from deltalake import write_deltalake

    per = rows // 3
    for i in range(3):
        ids = np.arange(i * per, (i + 1) * per, dtype=np.int64)
        cols: dict[str, Any] = {"id": ids, "a": (ids % 1000).astype(np.int32),
                                "b": pa.array(np.char.mod("s%d", ids % 100)), "f": (ids % 7).astype(np.float32)}
        if i >= 1:
            cols["c"] = ids.astype(np.float64)
        if i >= 2:
            cols["d"] = pa.array(np.char.mod("d%d", ids % 10))
        write_deltalake(str(path), pa.table(cols), mode="append", schema_mode="merge" if i else None)
    return str(path)


def fieldshift_scan(path: str) -> pa.Table:
    with fs.open_table(path, format="delta") as t:
        return t.to_arrow()


def delta_rs_scan(path: str) -> pa.Table:
    from deltalake import DeltaTable

    return DeltaTable(path).to_pyarrow_table()


@pytest.fixture(scope="module")
def table() -> Iterator[str]:
    pytest.importorskip("deltalake")
    with tempfile.TemporaryDirectory(prefix="fieldshift-bench-delta-") as d:
        yield three_versions(Path(d) / "versions")


@pytest.mark.parametrize("reader", [fieldshift_scan, delta_rs_scan], ids=["fieldshift", "delta-rs"])
def test_full_scan_of_three_schema_versions(benchmark: Any, table: str, reader: Callable) -> None:
    benchmark.group = "delta full scan"
    out = benchmark.pedantic(reader, args=(table,), rounds=3, iterations=1, warmup_rounds=1)
    assert out.num_rows == ROWS // 3 * 3



def main() -> None:
    """Build the table, time each reader alternately, write ``benchmarks/delta.md``."""
    with tempfile.TemporaryDirectory(prefix="fieldshift-bench-delta-") as d:
        began = time.perf_counter()
        path = three_versions(Path(d) / "versions")
        built = time.perf_counter() - began
        ours, theirs = fieldshift_scan(path), delta_rs_scan(path)
        assert ours.sort_by("id").equals(theirs.select(ours.column_names).sort_by("id").cast(ours.schema))
        files = len(list(Path(path).glob("*.parquet")))
        runs: dict[str, list[tuple[float, float]]] = {"fieldshift": [], "delta-rs": []}
        for _ in range(3):  # alternate, so both sides see the same load
            runs["fieldshift"].append(timed(fieldshift_scan, path, 3))
            runs["delta-rs"].append(timed(delta_rs_scan, path, 3))
    load = os.getloadavg()[0]

    def med(r: list[tuple[float, float]]) -> tuple[float, float]:
        return statistics.median(m for m, _ in r), min(lo for _, lo in r)

    (f, f_min), (p, p_min) = med(runs["fieldshift"]), med(runs["delta-rs"])
    lines = ["## Issue 32: Delta tables (`bench_delta.py`)", "",
             "Run by hand (`.venv/bin/python benchmarks/bench_delta.py`, which writes `delta.md`). The table written "
             "by deltalake (write_deltalake, schema_mode=\"merge\"); each reader timed 3 times in each of 3 "
             "alternating rounds; medians of the rounds' medians, and the fastest single read. 1-minute load "
             f"average at the end: {load:.1f} on {os.cpu_count()} cores. Building the table took {built:.0f} s.", "",
             "| case | fieldshift | delta-rs `to_pyarrow_table()` | fieldshift ÷ delta-rs | min ÷ min | target |",
             "|---|---|---|---|---|---|",
             f"| full scan, {ROWS:,} rows in 3 schema versions ({files} files; two added columns) "
             f"| {f * 1000:.0f} ms | {p * 1000:.0f} ms | {f / p:.2f}× | {f_min / p_min:.2f}× | ≤ 1.0× |"]
    (Path(__file__).parent / "delta.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
