"""The "Object storage" section of ``benchmarks/README.md``: ``bench_object_store.py``'s roles
(``objstore.local`` and ``objstore.s3``), side by side. Kept apart from report.py, which is long enough."""

from __future__ import annotations

from typing import Any

__all__ = ["object_store_section"]


def _ms(v: float | None) -> str:
    return "n/a" if v is None else (f"{v:.0f} ms" if v >= 100 else f"{v:.1f} ms")


def object_store_section(r: Any) -> list[str]:
    """Append per call, scan and compaction of the same table in a local directory and on moto's S3 server."""
    local, s3 = r.by_role.get("objstore.local"), r.by_role.get("objstore.s3")
    if local is None and s3 is None:
        return []

    def info(b: dict[str, Any] | None, key: str) -> float | None:
        return None if b is None else b["extra_info"].get(key)

    def scan(b: dict[str, Any] | None) -> float | None:
        return None if b is None else b["stats"]["median"] * 1000

    rows = [("append, per call", info(local, "append_ms_each"), info(s3, "append_ms_each")),
            ("scan of the whole table (`Table.open(...).to_arrow()`, median)", scan(local), scan(s3)),
            ("compaction (`compact()`, once)", info(local, "compact_ms"), info(s3, "compact_ms"))]
    some = local or s3 or {}
    appends, per = some["extra_info"].get("appends"), some["extra_info"].get("rows_per_append")
    lines = ["## Object storage (issue 16, `bench_object_store.py`)", "",
             f"The same table ({appends} appends of {per:,} rows, SQLite catalog) in a local directory and on moto's "
             "S3-compatible server on loopback (in-process Python: this measures fieldshift's per-object overhead — "
             "one PUT per data file, a LIST and GETs per scan — plus moto's, not a real store's latency).", "",
             "| measurement | local directory | S3 (moto) | S3 ÷ local |", "|---|---|---|---|"]
    for label, a, b in rows:
        x = f"{b / a:.1f}×" if a and b else "n/a"
        lines.append(f"| {label} | {_ms(a)} | {_ms(b)} | {x} |")
    return [*lines, ""]
