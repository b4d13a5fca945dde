"""Issue 34: delete 1% of an unkeyed table whose matching rows sit in 5% of its files, then a full scan —
fieldshift against delta-rs on the same rows, in the same run.

The table: 10,000,000 rows (1,000,000 with ``FIELDSHIFT_BENCH_SCALE=small``) in 100 files, one per day
(``id long, day date, v int, s string``; ``v = id % 100``), appended day by day so each file holds one date.
The delete ``day >= D3 and day <= D7 and v < 20`` matches 20% of the rows of 5 files: 1% of the table.
fieldshift (``Table.delete(filter=...)``: statistics prune to the 5 files, deletion vectors record the rows)
against delta-rs' ``DeltaTable.delete(predicate)`` (it rewrites the 5 files), each on a fresh copy of its
table; then each side's full scan of its table after the delete (``Table.to_arrow()`` against
``DeltaTable.to_pyarrow_table()``). Targets: each ≤ 1.2×.

Run: ``.venv/bin/python benchmarks/bench_row_changes.py`` (prints the numbers and writes ``row_changes.md``), or
through pytest with ``-m ""`` (pytest-benchmark timings).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
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

import fieldshift as fs

pytestmark = [pytest.mark.bench, pytest.mark.slow]

SMALL = os.environ.get("FIELDSHIFT_BENCH_SCALE", "full").strip().lower() == "small"
ROWS = 1_000_000 if SMALL else 10_000_000
FILES = 100
START = dt.date(2024, 1, 1)
OURS = "day >= '2024-01-03' and day <= '2024-01-07' and v < 20"
THEIRS = "day >= '2024-01-03'::date and day <= '2024-01-07'::date and v < 20"
DELETED = ROWS // FILES  # 20% of the rows of 5 files: 1% of the table


def _day(i: int) -> pa.Table:
    per = ROWS // FILES
    ids = np.arange(i * per, (i + 1) * per, dtype=np.int64)
    return pa.table({"id": ids, "day": pa.array([START + dt.timedelta(days=i)] * per, pa.date32()),
                     "v": (ids % 100).astype(np.int32), "s": pa.array(np.char.mod("s%d", ids % 1000))})


def build(root: Path) -> tuple[Path, Path]:
    """Both tables, file for file (fieldshift's and delta-rs'); returns their directories."""
    from deltalake import write_deltalake

    ours, theirs = root / "fieldshift", root / "delta"
    t = fs.Table.create(ours, _day(0).schema)
    for i in range(FILES):
        rows = _day(i)
        t.append(rows)
        write_deltalake(str(theirs), rows, mode="append")
    return ours, theirs


def fieldshift_delete(path: Path) -> int:
    return fs.Table.open(path).delete(filter=OURS).rows_deleted or 0


def delta_rs_delete(path: Path) -> int:
    from deltalake import DeltaTable

    return int(DeltaTable(str(path)).delete(THEIRS)["num_deleted_rows"])


def fieldshift_scan(path: Path) -> pa.Table:
    return fs.Table.open(path).to_arrow()


def delta_rs_scan(path: Path) -> pa.Table:
    from deltalake import DeltaTable

    return DeltaTable(str(path)).to_pyarrow_table()


@pytest.fixture(scope="module")
def tables() -> Iterator[tuple[Path, Path, Path]]:
    pytest.importorskip("deltalake")
    with tempfile.TemporaryDirectory(prefix="fieldshift-bench-rows-") as d:
        ours, theirs = build(Path(d))
        yield ours, theirs, Path(d)


def _fresh(source: Path, work: Path) -> Path:
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, work)
    return work


@pytest.mark.parametrize("side", ["fieldshift", "delta-rs"])
def test_delete_one_percent(benchmark: Any, tables: tuple[Path, Path, Path], side: str) -> None:
    ours, theirs, root = tables
    source, run = (ours, fieldshift_delete) if side == "fieldshift" else (theirs, delta_rs_delete)
    work = root / f"work-{side}"
    benchmark.group = "delete 1% (clustered in 5% of files)"
    out = benchmark.pedantic(run, args=(work,), setup=lambda: _fresh(source, work), rounds=3, iterations=1)
    assert out == DELETED


@pytest.mark.parametrize("side", ["fieldshift", "delta-rs"])
def test_scan_after_the_delete(benchmark: Any, tables: tuple[Path, Path, Path], side: str) -> None:
    ours, theirs, root = tables
    source, delete, scan = (ours, fieldshift_delete, fieldshift_scan) if side == "fieldshift" else \
        (theirs, delta_rs_delete, delta_rs_scan)
    work = _fresh(source, root / f"scan-{side}")
    delete(work)
    benchmark.group = "full scan after the delete"
    out = benchmark.pedantic(scan, args=(work,), rounds=3, iterations=1, warmup_rounds=1)
    assert out.num_rows == ROWS - DELETED


def _timed(fn: Callable[[Path], Any], source: Path, work: Path, rounds: int, fresh: bool) -> float:
    times = []
    for _ in range(rounds):
        if fresh:
            _fresh(source, work)
        began = time.perf_counter()
        fn(work)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    """Build both tables, time each side alternately, write ``benchmarks/row_changes.md``."""
    with tempfile.TemporaryDirectory(prefix="fieldshift-bench-rows-") as d:
        root = Path(d)
        began = time.perf_counter()
        ours, theirs = build(root)
        built = time.perf_counter() - began
        a, b = _fresh(ours, root / "a"), _fresh(theirs, root / "b")
        assert fieldshift_delete(a) == delta_rs_delete(b) == DELETED
        assert fieldshift_scan(a).sort_by("id").equals(delta_rs_scan(b).select(["id", "day", "v", "s"]).sort_by("id")
                                                      .cast(fieldshift_scan(a).schema))
        runs: dict[str, list[float]] = {k: [] for k in ("fs delete", "delta delete", "fs scan", "delta scan")}
        for _ in range(3):  # alternate, so both sides see the same load
            runs["fs delete"].append(_timed(fieldshift_delete, ours, root / "a", 3, True))
            runs["delta delete"].append(_timed(delta_rs_delete, theirs, root / "b", 3, True))
            _fresh(ours, root / "a")
            _fresh(theirs, root / "b")
            fieldshift_delete(root / "a")
            delta_rs_delete(root / "b")
            runs["fs scan"].append(_timed(fieldshift_scan, ours, root / "a", 3, False))
            runs["delta scan"].append(_timed(delta_rs_scan, theirs, root / "b", 3, False))
    load = os.getloadavg()[0]
    m = {k: statistics.median(v) for k, v in runs.items()}
    lines = ["## Issue 34: delete by filter and the scan after it (`bench_row_changes.py`)", "",
             f"{ROWS:,} rows in {FILES} files (one date each); the delete matches 1% of the rows, in 5% of the files. "
             "Each side timed 3 times in each of 3 alternating rounds (a delete on a fresh copy each time); medians "
             f"of the rounds' medians. 1-minute load average at the end: {load:.1f} on {os.cpu_count()} cores. "
             f"Building both tables took {built:.0f} s.", "",
             "| case | fieldshift | delta-rs | fieldshift ÷ delta-rs | target |", "|---|---|---|---|---|",
             f"| delete 1% (`Table.delete(filter=...)` vs `DeltaTable.delete`) | {m['fs delete'] * 1000:.0f} ms | "
             f"{m['delta delete'] * 1000:.0f} ms | {m['fs delete'] / m['delta delete']:.2f}× | ≤ 1.2× |",
             f"| full scan after it (`to_arrow()` vs `to_pyarrow_table()`) | {m['fs scan'] * 1000:.0f} ms | "
             f"{m['delta scan'] * 1000:.0f} ms | {m['fs scan'] / m['delta scan']:.2f}× | ≤ 1.2× |"]
    (Path(__file__).parent / "row_changes.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
