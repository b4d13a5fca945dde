"""Issue 17's scale curves from a pytest-benchmark JSON: one log-log chart per axis and a Markdown section.

``python benchmarks/curves.py results.json`` writes ``curve_<axis>.png`` and ``curves.md`` next to
this file; ``report.py`` does the same from ``make bench``'s results and appends ``curves.md`` to
the README. Points come from ``bench_curves.py`` (extra_info ``curve``/``op``/``impl``/``x``) and
from ``bench_scale.py``'s row and depth series. Every number is from the JSON; only the issue's
targets are written here.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
NO_CLIFF = 1.5

Curves = dict[str, dict[tuple[str, str], dict[int, dict[str, Any]]]]

AXES = {
    "columns": ("columns (10 → 10,000)", "column"),
    "versions": ("schema versions (1 → 1,000; one 10-row file per version)", "version"),
    "files": ("data files (1 → 100,000; 100 rows each, one schema id)", "file"),
    "rows": ("batch rows (1,000 → 10M; int widening, rename, default)", "row"),
    "depth": ("nesting depth (131,072 rows, evolved at the innermost struct)", "level"),
}


def collect(data: dict[str, Any]) -> Curves:
    """axis -> (op, impl) -> x -> benchmark."""
    out: Curves = defaultdict(lambda: defaultdict(dict))
    for b in data.get("benchmarks", []):
        info = b.get("extra_info", {})
        if "curve" in info:
            out[info["curve"]][(info["op"], info["impl"])][int(info["x"])] = b
        elif info.get("series") in ("rows", "depth"):
            out[info["series"]][(info.get("op", "apply"), info["impl"])][int(info["x"])] = b
    return out


def _t(sec: float | None) -> str:
    if sec is None:
        return "—"
    if sec < 1e-3:
        return f"{sec * 1e6:.0f} µs"
    if sec < 1:
        return f"{sec * 1e3:.1f} ms"
    return f"{sec:.2f} s"


def per_unit_ratio(points: dict[int, dict[str, Any]], stat: str = "median") -> tuple[float, int, int] | None:
    """(cost per unit at the largest size ÷ cost per unit at a tenth of it, largest, tenth)."""
    if not points:
        return None
    top = max(points)
    tenth = top // 10
    if tenth not in points:
        smaller = [x for x in points if x < top]
        if not smaller:
            return None
        tenth = max(smaller)
    a, b = points[top]["stats"][stat], points[tenth]["stats"][stat]
    return (a / top) / (b / tenth), top, tenth


def _median(curves: Curves, axis: str, op: str, impl: str, x: int) -> float | None:
    b = curves.get(axis, {}).get((op, impl), {}).get(x)
    return None if b is None else b["stats"]["median"]


def chart(curves: Curves, axis: str, path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = curves.get(axis)
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    colors = plt.get_cmap("tab20").colors  # more curves than the default cycle's ten colours
    for n, ((op, impl), points) in enumerate(sorted(series.items())):
        xs = sorted(points)
        ys = [points[x]["stats"]["median"] for x in xs]
        ax.plot(xs, ys, marker="o", markersize=3, linestyle="-" if impl == "fieldshift" else "--",
                color=colors[(2 * n) % 20 if n < 10 else (2 * n + 1) % 20], label=f"{op} · {impl}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(AXES[axis][0], fontsize=9)
    ax.set_ylabel("median seconds (log)", fontsize=9)
    ax.set_title(f"cost against {axis}: fieldshift (solid) and peers (dashed)", fontsize=10, loc="left")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def axis_table(curves: Curves, axis: str) -> list[str]:
    series = curves[axis]
    xs = sorted({x for points in series.values() for x in points})
    unit = AXES[axis][1]
    head = ["operation", "impl", *(f"{x:,}" for x in xs), f"per {unit}: largest ÷ a tenth", "no cliff (≤ 1.5×)",
            "same, from fastest rounds"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for (op, impl), points in sorted(series.items(), key=lambda kv: (kv[0][0], kv[0][1] != "fieldshift", kv[0][1])):
        r = per_unit_ratio(points)
        shown = "—" if r is None else f"{r[0]:.2f}× ({r[1]:,} vs {r[2]:,})"
        ok = "—" if r is None else ("yes" if r[0] <= NO_CLIFF else "**no**")
        lo = per_unit_ratio(points, "min")
        from_min = "—" if lo is None else f"{lo[0]:.2f}× ({'yes' if lo[0] <= NO_CLIFF else '**no**'})"
        lines.append("| " + " | ".join([op, impl, *(_t(points[x]["stats"]["median"]) if x in points else "—"
                                                     for x in xs), shown, ok, from_min]) + " |")
    return [*lines, ""]


def targets(curves: Curves) -> list[list[str]]:
    rows: list[list[str]] = []

    def add(name: str, value: float | None, goal: str, check: Callable[[float], bool],
            shown: Callable[[float], str] = _t) -> None:
        rows.append([name, "not measured" if value is None else shown(value), goal,
                     "n/a" if value is None else ("**met**" if check(value) else "**missed**")])

    cols = max(curves.get("columns", {}).get(("plan", "fieldshift"), {0: None}), default=0)
    add(f"{cols:,}-column table: schema update of 100 columns (builder, apply)",
        _median(curves, "columns", "update 100 (apply)", "fieldshift", cols), "≤ 100 ms", lambda v: v <= 0.1)
    add(f"{cols:,}-column table: the same update committed (catalog checks and rows)",
        _median(curves, "columns", "update 100 (commit)", "fieldshift", cols), "≤ 100 ms", lambda v: v <= 0.1)
    add(f"{cols:,}-column table: open and scan 2 rows", _median(curves, "columns", "scan", "fieldshift", cols),
        "≤ 0.5 s", lambda v: v <= 0.5)
    add(f"{cols:,}-column table: … pyarrow's own read of its one file",
        _median(curves, "columns", "scan", "pyarrow", cols), "(the floor)", lambda v: True)
    add(f"{cols:,} columns: cold plan", _median(curves, "columns", "plan", "fieldshift", cols), "≤ 50 ms",
        lambda v: v <= 0.05)
    calls = curves.get("columns", {}).get(("update_column × columns/2", "fieldshift"), {})
    r = per_unit_ratio(calls)
    add(f"{cols // 2:,} update_column calls: per call, largest ÷ a tenth", None if r is None else r[0],
        "linear (≤ 1.5×)", lambda v: v <= NO_CLIFF, lambda v: f"{v:.2f}× ({_t(calls[max(calls)]['stats']['median'])})")
    files = max(curves.get("files", {}).get(("plan", "fieldshift"), {0: None}), default=0)
    add(f"{files:,} data files: plan a filtered scan, cold (file list and bounds from the catalog)",
        _median(curves, "files", "plan_cold", "fieldshift", files), "≤ 1 s", lambda v: v <= 1.0)
    add(f"{files:,} data files: plan a filtered scan, warm (the snapshot's files cached by an earlier scan)",
        _median(curves, "files", "plan", "fieldshift", files), "≤ 1 s", lambda v: v <= 1.0)
    point, one = (_median(curves, "files", "point_read", "fieldshift", files),
                  _median(curves, "files", "point_read", "fieldshift", 1))
    add(f"{files:,} data files: pruned point read (warm), beyond reading its one file (the 1-file table's read)",
        None if point is None or one is None else point - one, "≤ 50 ms", lambda v: v <= 0.05)
    versions = curves.get("versions", {})
    for op in ("plan", "read"):
        r = per_unit_ratio(versions.get((op, "fieldshift"), {}))
        add(f"schema versions: {op}, per version, largest ÷ a tenth", None if r is None else r[0],
            "not quadratic (≤ 1.5×)", lambda v: v <= NO_CLIFF, lambda v: f"{v:.2f}×")
    return rows


def section(data: dict[str, Any], out_dir: Path = HERE) -> list[str]:
    curves = collect(data)
    if not any(a in curves for a in ("columns", "versions", "files")):
        return []
    loads = [b["extra_info"]["load_avg_1m"] for b in data.get("benchmarks", [])
             if "curve" in b.get("extra_info", {}) and "load_avg_1m" in b["extra_info"]]
    lines = ["## Scale curves (issue 17)", "",
             f"`bench_curves.py` (+ `bench_scale.py`'s row and depth series), run {data.get('datetime', '?')[:16]}; "
             "medians. " + (f"1-minute load average during these benchmarks: {min(loads):.1f}–{max(loads):.1f} on 2 "
                            "cores" + (" (other jobs shared the machine), so absolute times are inflated; "
                                       "ratios within a run hold better." if max(loads) > 2 else ", a quiet machine.")
                            if loads else ""),
             "The *no cliff* rule: past its fixed cost, the cost per unit at the largest size is at most 1.5× the",
             "cost per unit at a tenth of it (a curve whose small sizes are fixed cost comes out well below 1×).",
             "", "| target | measured | goal | status |", "|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in targets(curves)]
    lines.append("")
    notes = out_dir / "curves_notes.md"  # what bounds each missed target, measured by hand (kept across runs)
    if notes.exists():
        lines += [notes.read_text().rstrip(), ""]
    for axis in AXES:
        if axis not in curves:
            continue
        png = out_dir / f"curve_{axis}.png"
        lines += [f"### {AXES[axis][0]}", ""]
        if chart(curves, axis, png):
            lines += [f"![{axis}]({png.name})", ""]
        lines += axis_table(curves, axis)
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python benchmarks/curves.py results.json", file=sys.stderr)
        return 2
    lines = section(json.loads(Path(argv[1]).read_text()))
    (HERE / "curves.md").write_text("\n".join(lines).rstrip() + "\n")
    print(f"wrote {HERE / 'curves.md'} and the curve_*.png charts")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
