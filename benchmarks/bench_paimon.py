"""Issue 32, Paimon: a full scan of a primary-key table of 3 sorted runs per bucket through ``fs.open_table``
against a scan of the same rows compacted (one run per bucket), in the same run; target ≤ 1.5×.

The tables (3,000,000 rows; 600,000 with ``FIELDSHIFT_BENCH_SCALE=small``; ``k bigint`` primary key,
``a int``, ``b string``, ``f double``; 4 buckets) are written file by file in Paimon's layout
(``tests/open_tables/paimon_tables.py``): pypaimon pins an older pyarrow and its writer is row-oriented Python.
Two shapes:

- ``interleaved``: each run holds every third key of its bucket, so the runs overlap in key range and
  every key has one version: the merge must sort the runs together to find that out;
- ``updates``: run 1 holds every key, runs 2 and 3 each rewrite a different third of them; the
  compacted table holds the merged result (the same rows a reader returns).

Run: ``.venv/bin/python benchmarks/bench_paimon.py`` (prints the numbers and writes ``paimon.md``), or
through pytest with ``-m ""`` (pytest-benchmark timings).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fieldshift as fs
from tests.open_tables.paimon_tables import DataFile, PaimonBuilder

pytestmark = [pytest.mark.bench, pytest.mark.slow]

SMALL = os.environ.get("FIELDSHIFT_BENCH_SCALE", "full").strip().lower() == "small"
ROWS = 600_000 if SMALL else 3_000_000
BUCKETS = 4
FIELDS = [{"id": 0, "name": "k", "type": "BIGINT NOT NULL"}, {"id": 1, "name": "a", "type": "INT"},
          {"id": 2, "name": "b", "type": "STRING"}, {"id": 3, "name": "f", "type": "DOUBLE"}]


def _rows(keys: np.ndarray, version: int) -> pa.Table:
    keys = np.sort(keys)
    return pa.table({"k": pa.array(keys, pa.int64()), "a": ((keys + version) % 1000).astype(np.int32),
                     "b": pa.array(np.char.mod("s%d", (keys + version) % 100)), "f": keys * 1.0 + version})


def build(root: Path, shape: str, runs: int) -> Path:
    """A table of ``shape`` in ``runs`` sorted runs per bucket (1: compacted, at the top level)."""
    shutil.rmtree(root, ignore_errors=True)
    b = PaimonBuilder(root, "db.t", primary_keys=["k"], options={"bucket": str(BUCKETS)})
    b.schema(FIELDS)
    keys = np.arange(ROWS, dtype=np.int64)
    bucket, third = keys % BUCKETS, (keys // BUCKETS) % 3
    for r in range(runs):
        files = []
        for bk in range(BUCKETS):
            mine = bucket == bk
            if shape == "interleaved":
                rows = _rows(keys[mine & (third == r)] if runs > 1 else keys[mine], 0)
            elif runs > 1:  # run 0 writes every key, run r rewrites third r
                rows = _rows(keys[mine], 0) if r == 0 else _rows(keys[mine & (third == r)], r)
            else:  # the merged result: third t carries version t
                rows = pa.concat_tables([_rows(keys[mine & (third == t)], t) for t in range(3)]).sort_by("k")
            files.append(DataFile(rows, bucket=bk, level=5 if runs == 1 else 0))
        b.commit(files)
    return root


@pytest.fixture(scope="module")
def tables() -> Iterator[dict[str, Path]]:
    with tempfile.TemporaryDirectory() as tmp:
        out = {}
        for shape in ("interleaved", "updates"):
            out[f"{shape}-runs"] = build(Path(tmp) / f"{shape}-runs", shape, 3)
            out[f"{shape}-compacted"] = build(Path(tmp) / f"{shape}-compacted", shape, 1)
        yield out


def scan(path: Path) -> pa.Table:
    return fs.open_table(path, format="paimon", name="db.t").to_arrow()


@pytest.mark.parametrize("which", ["interleaved-runs", "interleaved-compacted", "updates-runs", "updates-compacted"])
def test_paimon_scan(benchmark: Callable[..., object], tables: dict[str, Path], which: str) -> None:
    got = benchmark(scan, tables[which])
    assert got.num_rows == ROWS  # type: ignore[attr-defined]


def _best(fn: Callable[[], object], repeat: int = 7) -> tuple[float, float, float]:
    """Wall time (min, median) and CPU time (min) of ``fn``: on a shared machine the CPU time of the
    process (all its threads) is the steadier measure of the work done."""
    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(times), statistics.median(times), min(cpu)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for shape in ("interleaved", "updates"):
            runs = build(Path(tmp) / f"{shape}-runs", shape, 3)
            compacted = build(Path(tmp) / f"{shape}-compacted", shape, 1)
            a, b = scan(runs), scan(compacted)
            assert a.sort_by("k").equals(b.sort_by("k")), shape
            r, c = _best(lambda p=runs: scan(p)), _best(lambda p=compacted: scan(p))
            target = "≤ 1.5×" if shape == "interleaved" else "(reads 5/3 of the rows)"
            rows.append(f"| {shape} | {r[1] * 1000:.0f} ms ({r[2] * 1000:.0f} ms CPU) | {c[1] * 1000:.0f} ms "
                        f"({c[2] * 1000:.0f} ms CPU) | {r[1] / c[1]:.2f}× | {r[0] / c[0]:.2f}× | {r[2] / c[2]:.2f}× "
                        f"| {target} |")
            print(rows[-1], flush=True)
        load = os.getloadavg()[0]
    lines = ["## Issue 32: Paimon primary-key tables (`bench_paimon.py`)", "",
             f"Run by hand (`.venv/bin/python benchmarks/bench_paimon.py`, which writes `paimon.md`). {ROWS:,} rows, "
             f"{BUCKETS} buckets, `fs.open_table(...).to_arrow()` of 3 sorted runs per bucket against the same rows "
             "compacted into one run per bucket; 7 reads each: median and fastest wall time, and the process's CPU "
             "time (all threads; steadier on a shared machine). `interleaved`: each run holds every third key, so "
             "the same rows in 3 overlapping runs; `updates`: run 1 holds every key and runs 2 and 3 each rewrite "
             f"a third (5/3 of the rows are read and merged). 1-minute load average at the end: {load:.1f} on "
             f"{os.cpu_count()} cores.", "",
             "| shape | 3 runs (median) | compacted (median) | median ÷ median | min ÷ min | CPU ÷ CPU | target |",
             "|---|---|---|---|---|---|---|", *rows]
    Path(__file__).with_name("paimon.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
