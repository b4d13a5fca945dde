"""Turn a pytest-benchmark JSON into ``benchmarks/README.md`` (medians, ratios, targets) and ``chart.png``.

Usage: ``python benchmarks/report.py benchmarks/results.json``. Every number and ratio comes from the
JSON of this run (each benchmark names its ``role`` in ``extra_info``); nothing is hard-coded but the
issue's targets themselves. Benchmarks from other files (kernels, Spark, ...) get their own sections.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import curves  # benchmarks/curves.py (this directory is on sys.path when report.py runs)
from report_objstore import object_store_section

HERE = Path(__file__).parent
OWN_FILES = {"bench_w1.py", "bench_scale.py", "bench_curves.py", "bench_object_store.py"}


# ------------------------------------------------------------------------------------------------
# loading
# ------------------------------------------------------------------------------------------------
class Results:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.benchmarks: list[dict[str, Any]] = data.get("benchmarks", [])
        self.by_role: dict[str, dict[str, Any]] = {}
        self.series: dict[str, dict[str, dict[Any, dict[str, Any]]]] = defaultdict(lambda: defaultdict(dict))
        for b in self.benchmarks:
            info = b.get("extra_info", {})
            role = info.get("role")
            if role is None:
                continue
            if "series" in info and "op" not in info and _file_of(b) in OWN_FILES:  # cold rows: curves only
                self.series[info["series"]][info["impl"]][info["x"]] = b
            else:
                self.by_role[role] = b

    def median(self, role: str) -> float | None:
        b = self.by_role.get(role)
        return None if b is None else b["stats"]["median"]

    def stat(self, role: str, key: str) -> float | None:
        b = self.by_role.get(role)
        return None if b is None else b["stats"][key]

    def per(self, role: str, key: str = "median") -> float | None:
        """A statistic (median by default) divided by the benchmark's ``per`` (e.g. seconds per batch)."""
        b = self.by_role.get(role)
        if b is None:
            return None
        return b["stats"][key] / b["extra_info"].get("per", 1)

    def info(self, role: str, key: str) -> Any:
        b = self.by_role.get(role)
        return None if b is None else b["extra_info"].get(key)

    def files(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for b in self.benchmarks:
            out[_file_of(b)].append(b)
        return out


def _file_of(b: dict[str, Any]) -> str:
    full = b.get("fullname", b.get("name", "?"))
    return Path(full.split("::", 1)[0]).name


# ------------------------------------------------------------------------------------------------
# formatting
# ------------------------------------------------------------------------------------------------
def fmt_t(sec: float | None) -> str:
    if sec is None:
        return "n/a"
    if sec < 1e-3:
        return f"{sec * 1e6:.1f} µs"
    if sec < 1:
        return f"{sec * 1e3:.1f} ms"
    return f"{sec:.2f} s"


def fmt_x(r: float | None) -> str:
    return "n/a" if r is None else f"{r:.2f}×"


def fmt_mb(n: float | None) -> str:
    return "n/a" if n is None else f"{n / 1e6:,.0f} MB"


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def table(head: list[str], rows: Iterable[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return [*lines, ""]


def status(ok: bool | None) -> str:
    return "n/a" if ok is None else ("**met**" if ok else "**missed**")


# ------------------------------------------------------------------------------------------------
# targets
# ------------------------------------------------------------------------------------------------
def targets(r: Results, other_files: list[str]) -> list[list[str]]:
    rows: list[list[str]] = []

    def add(name: str, value: float | None, shown: Callable[[float], str], goal: str,
            check: Callable[[float], bool], from_min: float | None = None) -> None:
        rows.append([name, "n/a" if value is None else shown(value), goal,
                     status(None if value is None else check(value)),
                     "" if from_min is None else f"{shown(from_min)} ({'met' if check(from_min) else 'missed'})"])

    def mins(a: str, b: str) -> float | None:
        return ratio(r.stat(a, "min"), r.stat(b, "min"))

    fs_w1, plain_w1 = r.median("w1.fieldshift"), r.median("w1.plain")
    add("W1 in memory vs plain pyarrow (plain ÷ fieldshift)", ratio(plain_w1, fs_w1), fmt_x, "≥ 6×",
        lambda v: v >= 6, mins("w1.plain", "w1.fieldshift"))
    add("W1 subset vs PyIceberg (PyIceberg ÷ fieldshift)", ratio(r.median("subset.pyiceberg"),
        r.median("subset.fieldshift")), fmt_x, "≥ 4×", lambda v: v >= 4, mins("subset.pyiceberg", "subset.fieldshift"))
    add("W1 vs 1-core copy of the changed bytes (fieldshift ÷ copy)", ratio(fs_w1, r.median("w1.copy_1core")),
        fmt_x, "≤ 2.5×", lambda v: v <= 2.5, mins("w1.fieldshift", "w1.copy_1core"))
    add("moonshot: W1 vs 2-core copy (fieldshift ÷ copy)", ratio(fs_w1, r.median("w1.copy_2core")), fmt_x,
        "≤ 2×", lambda v: v <= 2, mins("w1.fieldshift", "w1.copy_2core"))
    add("pass-through, per batch", r.per("passthrough.fieldshift"), fmt_t, "≤ 20 µs", lambda v: v <= 20e-6,
        r.per("passthrough.fieldshift", "min"))
    add("fixed cost per batch (W1 on 16-row batches)", r.per("fixed.fieldshift"), fmt_t, "≤ 100 µs",
        lambda v: v <= 100e-6, r.per("fixed.fieldshift", "min"))
    add("sliced input in proportion (8,192-row slices ÷ standalone 8,192-row batches)",
        ratio(r.per("slices.fieldshift.sliced"), r.per("slices.fieldshift.standalone")), fmt_x,
        "≈ 1× (≤ 1.25× here)", lambda v: v <= 1.25, mins("slices.fieldshift.sliced", "slices.fieldshift.standalone"))
    read, ours = r.median("e2e.pyarrow_read"), r.median("e2e.fieldshift")
    overhead = None if read is None or ours is None else ours / read - 1
    e2e_min = mins("e2e.fieldshift", "e2e.pyarrow_read")
    add("end to end: evolution's addition to pyarrow's read", overhead, lambda v: f"{v * 100:+.1f}%", "≤ +5%",
        lambda v: v <= 0.05, None if e2e_min is None else e2e_min - 1)
    add("end to end: `fs.read_parquet` ÷ pyarrow's read alone", ratio(r.median("e2e.fieldshift_read"), read),
        fmt_x, "≤ 1.02× (by the mins)", lambda v: v <= 1.02, mins("e2e.fieldshift_read", "e2e.pyarrow_read"))
    add("end to end vs polars (polars ÷ read+fieldshift)", ratio(r.median("e2e.polars"), ours), fmt_x,
        "> 1× (faster)", lambda v: v > 1, mins("e2e.polars", "e2e.fieldshift"))
    add("end to end vs DuckDB (DuckDB ÷ read+fieldshift)", ratio(r.median("e2e.duckdb"), ours), fmt_x,
        "> 1× (faster)", lambda v: v > 1, mins("e2e.duckdb", "e2e.fieldshift"))
    add("planning a 1,000-column nested schema, cold", r.median("plan.1000.cold"), fmt_t, "≤ 5 ms",
        lambda v: v <= 5e-3, r.stat("plan.1000.cold", "min"))
    add("planning a 1,000-column nested schema, cold from its Arrow schema", r.median("plan.1000.cold_from_arrow"),
        fmt_t, "≤ 5 ms", lambda v: v <= 5e-3, r.stat("plan.1000.cold_from_arrow", "min"))
    add("planning a 1,000-column nested schema, cached", r.median("plan.1000.cached"), fmt_t, "~0 (≤ 50 µs here)",
        lambda v: v <= 50e-6, r.stat("plan.1000.cached", "min"))
    add("planning a 1,000-column nested schema, cached, given its Arrow schema",
        r.median("plan.1000.cached_from_arrow"), fmt_t, "~0 (≤ 50 µs here)", lambda v: v <= 50e-6,
        r.stat("plan.1000.cached_from_arrow", "min"))
    kernels = kernel_ns_per_value(r)
    for case in sorted(c for c in kernels if c.startswith("int") and c.endswith("->string")):
        med, lo = kernels[case]
        add(f"kernel {case}, 1 thread (`bench_kernels.py`), ns per value", med, lambda v: f"{v:.1f} ns",
            "≤ 10 ns per value per core", lambda v: v <= 10, lo)
    if not any(c.endswith("->string") for c in kernels):
        where = ", ".join(f"`{f}`" for f in other_files) or "no kernel benchmarks in this run"
        rows.append(["kernels: int→string", f"see {where}", "≤ 10 ns per value per core", "n/a", ""])
    widen = kernel_gb_per_s(r)
    for case in sorted(widen):
        med, best = widen[case]
        add(f"kernel {case} widening, 1 thread (`bench_kernels.py`), output GB/s", med, lambda v: f"{v:.1f} GB/s",
            "≥ 8 GB/s per core, validity reused", lambda v: v >= 8, best)
    if not widen:
        rows.append(["kernels: widening ≥ 8 GB/s per core, validity reused",
                     "no kernel benchmarks in this run", "≥ 8 GB/s", "n/a", ""])
    return rows


def kernel_gb_per_s(r: Results) -> dict[str, tuple[float, float]]:
    """bench_kernels.py's single-thread widening kernels: case -> (median, best) output GB/s."""
    out: dict[str, tuple[float, float]] = {}
    for b in r.files().get("bench_kernels.py", []):
        info = b.get("extra_info", {})
        if info.get("impl") == "fieldshift-1t" and "gb_per_s" in info:
            bytes_out = info["gb_per_s"] * b["stats"]["median"]
            out[info["case"]] = (info["gb_per_s"], bytes_out / b["stats"]["min"])
    return out


def kernel_ns_per_value(r: Results) -> dict[str, tuple[float, float]]:
    """bench_kernels.py's single-thread fieldshift kernels: case -> (median, min) ns per value."""
    out: dict[str, tuple[float, float]] = {}
    for b in r.files().get("bench_kernels.py", []):
        info = b.get("extra_info", {})
        if info.get("impl") == "fieldshift-1t" and info.get("values") and info.get("case"):
            n = info["values"]
            out[info["case"]] = (b["stats"]["median"] / n * 1e9, b["stats"]["min"] / n * 1e9)
    return out


# ------------------------------------------------------------------------------------------------
# sections
# ------------------------------------------------------------------------------------------------
def header(r: Results) -> list[str]:
    m = r.data.get("machine_info", {})
    c = r.data.get("commit_info", {})
    loads = [b["extra_info"]["load_avg_1m"] for b in r.benchmarks if "load_avg_1m" in b.get("extra_info", {})]
    any_info = next((b["extra_info"] for b in r.benchmarks if "scale" in b.get("extra_info", {})), {})
    lines = [
        "# fieldshift benchmarks",
        "",
        "Generated by `make bench` (`benchmarks/report.py` from `benchmarks/results.json`); every ratio below is",
        "computed from this one run. Medians; lower is faster.",
        "",
        f"- run: {r.data.get('datetime', '?')}, commit {str(c.get('id', '?'))[:10]}"
        f"{' (dirty tree)' if c.get('dirty') else ''}",
        f"- machine: {m.get('cpu', {}).get('brand_raw', m.get('processor', '?'))}, "
        f"{m.get('cpu', {}).get('count', '?')} cores, Python {m.get('python_version', '?')}",
        f"- scale: {any_info.get('scale', '?')}; threads: {any_info.get('threads', '?')} (Arrow, polars, DuckDB, "
        f"fieldshift kernels: {any_info.get('fieldshift_threads', '?')}); Arrow pool {any_info.get('pool', '?')}, "
        f"MIMALLOC_PURGE_DELAY={any_info.get('mimalloc_purge_delay', '?')}",
    ]
    if loads:
        busy = max(loads) > 2
        lines.append(f"- 1-minute load average during the run: {min(loads):.1f}–{max(loads):.1f} on "
                     f"{m.get('cpu', {}).get('count', '?')} cores"
                     + (". Other processes shared the machine, so the numbers are noisy; compare within a row, "
                        "not across runs." if busy else " (a quiet machine)."))
    lines += [
        "",
        "W1 is issue 7's workload: 2,000,000 rows (200,000 with `FIELDSHIFT_BENCH_SCALE=small`), 5% nulls at",
        "every level, batches of 131,072 rows; 42 file columns (int/float/string/long, 4 structs, a list, a",
        "map) evolved into 44 read columns (widening, int→string, renames, drops, new struct children, new",
        "columns with defaults, reversed order). Peers run on the same batches in the same process.",
        "",
    ]
    return lines


def w1_section(r: Results) -> list[str]:
    plain, plain_min = r.median("w1.plain"), r.stat("w1.plain", "min")
    copy1 = r.median("w1.copy_1core")
    batches = r.info("w1.fieldshift", "batches")
    rows = []
    for role, label in [
        ("w1.fieldshift", "fieldshift (`plan.apply` per batch)"),
        ("w1.fieldshift_table", "fieldshift (`plan.apply(table)`)"),
        ("w1.plain", "plain per-column pyarrow"),
        ("w1.plain_threads", "plain pyarrow, batches on a thread pool"),
        ("w1.copy_1core", "numpy copy of the changed bytes, 1 core"),
        ("w1.copy_2core", "numpy copy of the changed bytes, 2 cores"),
    ]:
        m, lo = r.median(role), r.stat(role, "min")
        per_batch = m / batches if m is not None and batches and not role.startswith("w1.copy") else None
        rows.append([label, fmt_t(m), fmt_t(per_batch), fmt_x(ratio(plain, m)), fmt_x(ratio(m, copy1)), fmt_t(lo),
                     fmt_x(ratio(plain_min, lo))])
    lines = ["## W1 in memory", ""]
    lines += table(["implementation", "median", "per batch", "plain ÷ this", "this ÷ 1-core copy", "min",
                    "plain ÷ this (mins)"], rows)
    must = r.info("w1.copy_1core", "bytes")
    if must is not None:
        lines += [
            "Changed bytes: the output buffers that alias no input buffer (compared by address), per column the",
            f"least that fieldshift or plain wrote: **{fmt_mb(must)}** (fieldshift wrote "
            f"{fmt_mb(r.info('w1.copy_1core', 'fieldshift_new_bytes'))} new, plain "
            f"{fmt_mb(r.info('w1.copy_1core', 'plain_new_bytes'))}; "
            f"input {fmt_mb(r.info('w1.copy_1core', 'input_bytes'))}).",
            "The copy limit copies that many bytes into already-faulted pages.",
            "",
        ]
    bound = ratio(plain, r.median("w1.copy_2core"))
    if bound is not None:
        lines += [
            "No implementation writes those bytes faster than the 2-core copy, so plain ÷ 2-core copy",
            f"({fmt_x(bound)}) is the most any implementation can gain over plain pyarrow on this machine.",
            "",
        ]
    return lines


def subset_section(r: Results) -> list[str]:
    ice, plain = r.median("subset.pyiceberg"), r.median("subset.plain")
    ice_min = r.stat("subset.pyiceberg", "min")
    rows = [[label, fmt_t(r.median(role)), fmt_x(ratio(ice, r.median(role))), fmt_x(ratio(plain, r.median(role))),
             fmt_t(r.stat(role, "min")), fmt_x(ratio(ice_min, r.stat(role, "min")))]
            for role, label in [("subset.fieldshift", "fieldshift"),
                                ("subset.pyiceberg", "PyIceberg `_to_requested_schema`"),
                                ("subset.plain", "plain per-column pyarrow")]]
    return ["## W1 subset PyIceberg supports (without c10, c11: no int→string)", "",
            *table(["implementation", "median", "PyIceberg ÷ this", "plain ÷ this", "min", "PyIceberg ÷ this (mins)"],
                   rows)]


def per_batch_section(r: Results) -> list[str]:
    impls = ["fieldshift", "fieldshift_nodes", "plain", "pyiceberg"]
    rows = []
    for prefix, label in [("passthrough", "pass-through (identity plan)"), ("rename", "rename only"),
                          ("fixed", "fixed cost: W1 on 16-row batches (PyIceberg: its subset)")]:
        rows.append([label, *(fmt_t(r.per(f"{prefix}.{i}")) for i in impls)])
    lines = ["## Per-batch costs (per 42/44-column W1 batch)", "",
             "*fieldshift, nodes only*: the same plan with the tiny-batch program off (batches of up to 256 rows",
             "otherwise run as one compiled program, `planner/tiny_batches.py`).", ""]
    lines += table(["case", "fieldshift", "fieldshift, nodes only", "plain pyarrow", "PyIceberg"], rows)
    srows = []
    for impl in ["fieldshift", "plain"]:
        s, a = r.per(f"slices.{impl}.sliced"), r.per(f"slices.{impl}.standalone")
        srows.append([impl, fmt_t(s), fmt_t(a), fmt_x(ratio(s, a))])
    lines += ["Slices: W1 on 8,192-row batches that are slices of one 131,072-row batch, vs standalone ones:", ""]
    lines += table(["implementation", "sliced, per batch", "standalone, per batch", "sliced ÷ standalone"], srows)
    return lines


def planning_section(r: Results) -> list[str]:
    cases = ["cold", "cached", "cold_from_arrow", "cached_from_arrow"]
    rows = [[label, *(fmt_t(r.median(f"plan.{key}.{c}")) for c in cases)]
            for key, label in [("w1", "W1 (42 → 44 columns)"), ("1000", "1,000-column nested schema")]]
    return ["## Planning (separate from applying)", "",
            "cold: plan cache cleared before each call. *from Arrow*: the file schema passed as the data's",
            "Arrow schema (what `evolve()` and a Parquet footer give), so it is converted and fingerprinted too.",
            "",
            *table(["schema", "cold", "cached", "cold, from Arrow", "cached, from Arrow"], rows)]


def e2e_section(r: Results) -> list[str]:
    read, read_min = r.median("e2e.pyarrow_read"), r.stat("e2e.pyarrow_read", "min")
    ours = r.median("e2e.fieldshift")
    rows = []
    for role, label in [("e2e.pyarrow_read", "pyarrow `read_table` alone"),
                        ("e2e.fieldshift", "pyarrow read + fieldshift `evolve`"),
                        ("e2e.fieldshift_read", "`fs.read_parquet` (unread columns never decoded)"),
                        ("e2e.plain", "pyarrow read + plain per-column pyarrow"),
                        ("e2e.polars", "polars `scan_parquet().select(...)`"),
                        ("e2e.duckdb", "DuckDB SQL → Arrow table")]:
        m, lo = r.median(role), r.stat(role, "min")
        over = None if m is None or read is None else m / read - 1
        over_min = None if lo is None or read_min is None else lo / read_min - 1
        rows.append([label, fmt_t(m), "n/a" if over is None else f"{over * 100:+.1f}%", fmt_x(ratio(m, ours)),
                     fmt_t(lo), "n/a" if over_min is None else f"{over_min * 100:+.1f}%"])
    size = r.info("e2e.pyarrow_read", "parquet_bytes")
    return [f"## End to end from Parquet ({fmt_mb(size)} file, row groups of 131,072, 2 threads)", "",
            "The minimum is shown too: with other processes on the machine it is the less noisy estimate.", "",
            *table(["implementation", "median", "vs pyarrow read alone", "this ÷ read+fieldshift", "min",
                    "min vs read alone (min)"], rows)]


def series_section(r: Results) -> list[str]:
    lines = ["## Scale series", ""]
    meta = {
        "rows": ("rows (one batch: int32→int64, rename, string pass-through, default)", lambda x: f"{x:,}",
                 "per row", 1e9, "ns"),
        "columns": ("columns (10,000 rows: widening, renames, pass-through, +10% default columns)",
                    lambda x: f"{x:,}", "per column", 1e6, "µs"),
        "depth": ("nesting depth (131,072 rows, struct of struct…, evolved at the innermost level)", str,
                  "÷ its depth-1 time", None, ""),
    }
    meta_t = dict[str, tuple[str, Callable[[Any], str], str, float | None, str]]
    checked: meta_t = meta
    for series, (title, show, unit, scale, uname) in checked.items():
        data = r.series.get(series)
        if not data:
            continue
        xs = sorted({x for impl in data.values() for x in impl})
        rows = []
        first = data.get("fieldshift", {}).get(xs[0])
        for x in xs:
            f = data.get("fieldshift", {}).get(x)
            p = data.get("plain", {}).get(x)
            fm = f["stats"]["median"] if f else None
            pm = p["stats"]["median"] if p else None
            if scale is None:
                last = fmt_x(ratio(fm, first["stats"]["median"] if first else None))
            else:
                last = "n/a" if fm is None else f"{fm / x * scale:,.2f} {uname}"
            rows.append([show(x), fmt_t(fm), fmt_t(pm), fmt_x(ratio(pm, fm)), last])
        lines += [f"### {title}", ""]
        lines += table([series, "fieldshift", "plain pyarrow", "plain ÷ fieldshift", f"fieldshift {unit}"], rows)
    return lines


def spark_section(r: Results) -> list[str]:
    """Issue 6's targets: each route's throughput against Spark's native field-id read, same run."""
    native = r.median("spark.native")
    if native is None:
        return []
    native_min = r.stat("spark.native", "min")
    routes = [("spark.read", "`fieldshift.spark.read` (auto: native scans)", "≥ 1.0×", 1.0),
              ("spark.datasource", "`fieldshift` data source", "≥ 0.8×", 0.8),
              ("spark.datasource_floor", "a data source yielding ready-made batches (Spark's own cost)", "", None),
              ("spark.read_arrow_files", "`read(route=\"arrow\")`: mapInArrow over the file list", "", None),
              ("spark.map_in_arrow", "Spark reads by name, `fieldshift.spark.evolve` in mapInArrow", "", None)]
    rows = []
    for role, label, goal, need in routes:
        med = r.median(role)
        if med is None:
            continue
        x, x_min = native / med, ratio(native_min, r.stat(role, "min"))
        ok = None if need is None else x >= need
        rows.append([label, fmt_t(med), fmt_x(x), goal or "—", "" if need is None else status(ok),
                     "" if x_min is None else fmt_x(x_min)])
    lines = ["## Issue 6: Spark routes vs Spark's native field-id Parquet read", "",
             f"`bench_spark.py`: {r.info('spark.native', 'rows') or 0:,} rows in files of three schema versions, "
             f"`noop` sink, local[2]; native read {fmt_t(native)} (median). Throughput ratio = native ÷ route.", ""]
    lines += table(["route", "median", "× native throughput", "goal", "status", "from minimums"], rows)
    return lines


def other_sections(r: Results) -> list[str]:
    lines: list[str] = []
    for fname, benches in sorted(r.files().items()):
        if fname in OWN_FILES:
            continue
        lines += [f"## `{fname}`", ""]
        rows = []
        for b in benches:
            st = b["stats"]
            info = b.get("extra_info", {})
            shown = ", ".join(f"{k}={_short(v)}" for k, v in info.items()
                              if k not in ("load_avg_1m", "pool", "mimalloc_purge_delay", "scale"))
            rows.append([f"`{b['name']}`", b.get("group") or "", fmt_t(st["median"]), fmt_t(st["min"]),
                         str(st.get("rounds", "")), shown])
        lines += table(["benchmark", "group", "median", "min", "rounds", "extra info"], rows)
    return lines


def _short(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    text = str(v)
    return text if len(text) <= 40 else text[:37] + "…"


# ------------------------------------------------------------------------------------------------
# chart
# ------------------------------------------------------------------------------------------------
def chart(r: Results, path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("W1 in memory", [("w1.fieldshift", "fieldshift"), ("w1.plain", "plain pyarrow"),
                          ("w1.plain_threads", "plain, thread pool"), ("w1.copy_1core", "copy limit, 1 core"),
                          ("w1.copy_2core", "copy limit, 2 cores")]),
        ("W1 subset (PyIceberg's part)", [("subset.fieldshift", "fieldshift"), ("subset.pyiceberg", "PyIceberg"),
                                          ("subset.plain", "plain pyarrow")]),
        ("W1 end to end from Parquet", [("e2e.pyarrow_read", "pyarrow read alone"),
                                        ("e2e.fieldshift", "read + fieldshift"), ("e2e.plain", "read + plain"),
                                        ("e2e.polars", "polars"), ("e2e.duckdb", "DuckDB")]),
    ]
    panels = [(t, [(lbl, r.median(role), role) for role, lbl in items if r.median(role) is not None])
              for t, items in panels]
    panels = [(t, items) for t, items in panels if items]
    if not panels:
        return False
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 2.2 + 1.2 * sum(len(i) for _, i in panels) / 2))
    if len(panels) == 1:
        axes = [axes]
    for ax, (title, items) in zip(axes, panels, strict=True):
        labels = [lbl for lbl, _, _ in items]
        values = [m * 1e3 for _, m, _ in items]
        colors = ["#2b7bba" if "fieldshift" in role else ("#999999" if "copy" in role else "#e08a3c")
                  for _, _, role in items]
        bars = ax.barh(labels, values, color=colors)
        ax.invert_yaxis()
        ax.set_title(title, fontsize=10, loc="left")
        ax.set_xlabel("median, ms (lower is faster); black tick: fastest round", fontsize=8)
        ax.tick_params(labelsize=8)
        top = max(values)
        for bar, v in zip(bars, values, strict=True):
            ax.text(bar.get_width() + top * 0.01, bar.get_y() + bar.get_height() / 2, f"{v:,.1f}", va="center",
                    fontsize=7)
        lows = [r.stat(role, "min") for _, _, role in items]
        ax.scatter([lo * 1e3 for lo in lows if lo is not None],
                   [bar.get_y() + bar.get_height() / 2 for bar, lo in zip(bars, lows, strict=True) if lo is not None],
                   marker="|", s=120, color="black", zorder=3)
        ax.set_xlim(0, top * 1.15)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


# ------------------------------------------------------------------------------------------------
def build(results_path: Path, out_dir: Path = HERE) -> str:
    r = Results(json.loads(results_path.read_text()))
    others = sorted(f for f in r.files() if f not in OWN_FILES)
    lines = header(r)
    has_chart = chart(r, out_dir / "chart.png")
    if has_chart:
        lines += ["![W1: fieldshift against its peers](chart.png)", ""]
    lines += ["## Issue 7 targets", ""]
    lines += ["Status is judged on medians; the last column repeats the check on each side's fastest round,",
              "which is less sensitive to other processes on the machine.", ""]
    lines += table(["target", "measured (medians)", "goal", "status", "from minimums"], targets(r, others))
    lines += w1_section(r) + subset_section(r) + per_batch_section(r) + planning_section(r)
    lines += e2e_section(r) + series_section(r) + spark_section(r) + object_store_section(r) + other_sections(r)
    first_call = out_dir / "first_call.md"  # written by benchmarks/first_call.py (its own processes)
    if first_call.exists():
        lines += ["", first_call.read_text().rstrip()]
    # written by hand after runs of bench_keys / bench_streams / bench_catalogs / bench_speed (their notes), and
    # by benchmarks/kernel_ratios.py --write: kept across `make bench`, which rewrites the rest
    for name in ("keys.md", "streams.md", "catalogs.md", "issue17b.md", "kernel_ratios.md", "speed.md"):
        if (out_dir / name).exists():
            lines += ["", (out_dir / name).read_text().rstrip()]
    curve_lines = curves.section(r.data, out_dir)  # issue 17's scale curves, when this run has them
    if curve_lines:
        (out_dir / "curves.md").write_text("\n".join(curve_lines).rstrip() + "\n")
    if (out_dir / "curves.md").exists():
        lines += ["", (out_dir / "curves.md").read_text().rstrip()]
    partitions = out_dir / "partitions.md"  # written by benchmarks/bench_partitions.py (run by hand)
    if partitions.exists():
        lines += ["", partitions.read_text().rstrip()]
    for name in ("ducklake.md", "iceberg.md", "delta.md", "paimon.md"):  # bench_<format>.py, each
        if (out_dir / name).exists():  # (each run by hand)
            lines += ["", (out_dir / name).read_text().rstrip()]
    text = "\n".join(lines).rstrip() + "\n"
    (out_dir / "README.md").write_text(text)
    return text


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python benchmarks/report.py benchmarks/results.json", file=sys.stderr)
        return 2
    build(Path(argv[1]))
    print(f"wrote {HERE / 'README.md'} and {HERE / 'chart.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
