"""Every pair a fast kernel serves against Arrow's safe cast, and each failure path against its clean one.

For each (source, target) pair ``fast_kernel_for`` routes to a kernel, on 1 thread: Arrow's
``pc.cast(safe=True)`` on clean input, the kernel on the same clean input, and the kernel on input
with 1% bad values (unparsable text or out-of-range numbers; pairs that cannot fail have none).
Times are the minimum of interleaved rounds (the machine is shared), in ns per value::

    .venv/bin/python benchmarks/kernel_ratios.py [--rows 400000] [--rounds 9]

Targets (issue 17): Arrow ÷ kernel ≥ 1.0 on clean input; bad ÷ clean ≤ 1.5.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("MIMALLOC_PURGE_DELAY", "-1")

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.kernels import get_kernel, set_threads
from fieldshift.kernels.fast_casts import fast_kernel_for
from fieldshift.kernels.warm import warm_up

INTS = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]
BAD_RATE = 0.01


def _ints(t: pa.DataType, n: int, rng: np.random.Generator) -> np.ndarray:
    info = np.iinfo(t.to_pandas_dtype())
    return rng.integers(int(info.min), int(info.max), n, dtype=t.to_pandas_dtype(), endpoint=True)


def _nulls(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.random(n) < 0.05


def _spoil_text(text: pa.Array, bad: np.ndarray) -> pa.Array:
    return pc.if_else(pa.array(bad), pc.binary_join_element_wise(text, pa.scalar("?"), ""), text)


def pairs(n: int) -> list[tuple[str, pa.Array, pa.DataType, pa.Array | None]]:
    """(label, clean input, target, input with bad values or None) for every pair served."""
    rng = np.random.default_rng(17)
    bad = rng.random(n) < BAD_RATE
    nulls = _nulls(n, rng)
    out: list[tuple[str, pa.Array, pa.DataType, pa.Array | None]] = []
    for s in INTS:  # int -> string (never fails)
        out.append((f"{s}->string", pa.array(_ints(s, n, rng), mask=nulls), pa.string(), None))
    for t in INTS:  # string -> int
        text = pc.cast(pa.array(_ints(t, n, rng), mask=nulls), pa.string())
        out.append((f"string->{t}", text, t, _spoil_text(text, bad)))
    floats = pc.cast(pa.array(rng.standard_normal(n) * 1e3, mask=nulls), pa.string())
    for t in (pa.float32(), pa.float64()):
        out.append((f"string->{t}", floats, t, _spoil_text(floats, bad)))
    days = pc.cast(pa.array(rng.integers(-30_000, 30_000, n, dtype=np.int32), mask=nulls).cast(pa.date32()),
                   pa.string())
    out.append(("string->date32", days, pa.date32(), _spoil_text(days, bad)))
    micros = pa.array(rng.integers(-(2**50), 2**50, n), mask=nulls).cast(pa.timestamp("us"))
    stamps = pc.strftime(micros, "%Y-%m-%dT%H:%M:%S")
    for unit in ("s", "ms", "us", "ns"):
        scaled = stamps if unit != "s" else pc.strftime(micros.cast(pa.timestamp("s"), safe=False),
                                                        "%Y-%m-%dT%H:%M:%S")
        if unit == "ns":
            scaled = pc.strftime(pa.array(rng.integers(-(2**62), 2**62, n), mask=nulls).cast(pa.timestamp("ns")),
                                 "%Y-%m-%dT%H:%M:%S")
        if unit in ("s", "us", "ns"):  # Arrow refuses to truncate a .ffffff fraction to ms
            out.append((f"string->timestamp[{unit}]", scaled, pa.timestamp(unit), _spoil_text(scaled, bad)))
    cents = rng.integers(-(10**11), 10**11, n)
    dec = pc.cast(pa.array(cents, mask=nulls).cast(pa.decimal128(20, 0)), pa.string())
    dec = pc.binary_join_element_wise(dec, pa.scalar(".25"), "")
    for t in (pa.decimal128(14, 2), pa.decimal128(38, 10)):
        out.append((f"string->{t}", dec, t, _spoil_text(dec, bad)))
    for s in INTS:  # integer narrowing and sign changes (checked), exact widenings (numpy)
        for t in INTS:
            if s == t:
                continue
            values = pa.array(_ints(s, n, rng), mask=nulls)
            key = fast_kernel_for(s, t, True)
            if key is None:
                continue
            tinfo, raw = np.iinfo(t.to_pandas_dtype()), values.fill_null(0).to_numpy()
            fits = (raw >= max(tinfo.min, np.iinfo(raw.dtype).min)) & (raw <= min(tinfo.max, np.iinfo(raw.dtype).max))
            if not fits.all():  # clean: in range; bad: 1% out of range
                clean_raw = np.where(fits, raw, raw.dtype.type(0))
                spoiled = np.where(bad & ~nulls, raw, clean_raw)
                out.append((f"{s}->{t} (checked)", pa.array(clean_raw, mask=nulls), t,
                            pa.array(spoiled, mask=nulls)))
            else:
                out.append((f"{s}->{t}", values, t, None))
    for s, t in ((pa.float32(), pa.float64()), (pa.int32(), pa.float64())):
        values = pa.array(_ints(pa.int32(), n, rng), mask=nulls).cast(s, safe=False)
        out.append((f"{s}->{t}", values, t, None))
    return out


def _best(fns: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    best = {k: float("inf") for k in fns}
    for f in fns.values():
        f()
    for _ in range(rounds):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=400_000)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--only", default="", help="only pairs whose label contains this text")
    ap.add_argument("--write", action="store_true", help="also write benchmarks/kernel_ratios.md (report.py adds it)")
    args = ap.parse_args()
    warm_up()
    set_threads(1)
    pa.set_cpu_count(1)
    lines = ["## Every kernel pair against Arrow's cast (`python benchmarks/kernel_ratios.py --write`)", "",
             f"Load {os.getloadavg()[0]:.1f} at the start, {args.rows:,} values with 5% nulls, 1 thread, ns per value "
             f"(minimum of {args.rounds} interleaved rounds). Targets: Arrow ÷ kernel ≥ 1.0×; bad ÷ clean ≤ 1.5×.", "",
             "| pair | kernel | Arrow | kernel, clean | Arrow ÷ kernel | kernel, 1% bad | bad ÷ clean |",
             "|---|---|---|---|---|---|---|"]
    print("\n".join(lines))
    for label, clean, target, spoiled in pairs(args.rows):
        key = fast_kernel_for(clean.type, target, True)
        if key is None or args.only not in label:
            continue
        kernel = get_kernel(key)
        fns: dict[str, Callable[[], object]] = {"arrow": lambda c=clean, t=target: pc.cast(c, t, safe=True),
                                               "clean": lambda c=clean, t=target, k=kernel: k(c, t)}
        if spoiled is not None:
            fns["bad"] = lambda s=spoiled, t=target, k=kernel: k(s, t)
        ns = {k: v / args.rows * 1e9 for k, v in _best(fns, args.rounds).items()}
        bad = f"{ns['bad']:.2f} | {ns['bad'] / ns['clean']:.2f}×" if "bad" in ns else "n/a | n/a"
        speed = ns["arrow"] / ns["clean"]
        lines.append(f"| {label} | `{key}` | {ns['arrow']:.2f} | {ns['clean']:.2f} | {speed:.2f}× | {bad} |")
        print(lines[-1], flush=True)
    if args.write:
        (Path(__file__).parent / "kernel_ratios.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
