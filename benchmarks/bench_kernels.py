"""Micro-benchmarks: each fast kernel against the equivalent ``pyarrow.compute.cast``.

2,000,000 values with 5% nulls per case. ``fieldshift-1t`` / ``fieldshift-2t`` run the kernel
with ``fieldshift.kernels.set_threads(1 | 2)``; ``arrow`` is ``pc.cast`` (Arrow uses its own pool).
Where the input holds unparsable or out-of-range values (``*-bad``), Arrow's cast raises, so its
row is timed on the same input with the bad rows already null: the speed it would need to match.
Every result carries ``extra_info["ns_per_value"]`` (median ns per input value), widenings also
``gb_per_s`` (output bytes per second; the input's validity bitmap is reused, not written)::

    .venv/bin/python -m pytest benchmarks/bench_kernels.py --benchmark-enable -p no:cacheprovider -m ""

(``-m ""`` because ``benchmarks/conftest.py`` marks every benchmark ``slow``.)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache

os.environ.setdefault("MIMALLOC_PURGE_DELAY", "-1")

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from fieldshift.kernels import get_kernel, get_threads, set_threads
from fieldshift.kernels.fast_casts import fast_kernel_for

N = 2_000_000
NULL_RATE = 0.05
BAD_RATE = 0.01
SEED = 20240607


def _rng(salt: int) -> np.random.Generator:
    return np.random.default_rng(SEED + salt)


def _nulls(salt: int) -> np.ndarray:
    return _rng(salt + 1000).random(N) < NULL_RATE


def _ints(dtype: type, lo: int, hi: int, salt: int) -> pa.Array:
    return pa.array(_rng(salt).integers(lo, hi, N, dtype=dtype), mask=_nulls(salt))


def _spoil(text: pa.Array, salt: int) -> tuple[pa.Array, pa.Array]:
    """(text with BAD_RATE of the rows made unparsable, the same rows nulled instead)."""
    bad = pa.array(_rng(salt + 2000).random(N) < BAD_RATE)
    spoiled = pc.if_else(bad, pc.binary_join_element_wise(text, pa.scalar("?"), ""), text)
    return spoiled, pc.if_else(bad, pa.scalar(None, text.type), text)


@cache
def case(name: str) -> tuple[pa.Array, pa.DataType, pa.Array]:
    """(input, target, input Arrow can cast) for a named case."""
    if name == "int32->string":
        arr = _ints(np.int32, -(2**31), 2**31 - 1, 1)
        return arr, pa.string(), arr
    if name == "int64->string":
        arr = _ints(np.int64, -(2**63), 2**63 - 1, 2)
        return arr, pa.string(), arr
    if name == "int64(small)->string":
        arr = _ints(np.int64, -100_000, 100_000, 3)
        return arr, pa.string(), arr
    if name == "string->int64":
        text = pc.cast(_ints(np.int64, -(2**63), 2**63 - 1, 4), pa.string())
        return text, pa.int64(), text
    if name == "string->int32":
        text = pc.cast(_ints(np.int32, -(2**31), 2**31 - 1, 5), pa.string())
        return text, pa.int32(), text
    if name == "string->int64-bad":
        text = pc.cast(_ints(np.int64, -(10**12), 10**12, 6), pa.string())
        spoiled, nulled = _spoil(text, 6)
        return spoiled, pa.int64(), nulled
    if name == "string->float64":
        text = pc.cast(pa.array(_rng(7).standard_normal(N) * 1e3, mask=_nulls(7)), pa.string())
        return text, pa.float64(), text
    if name == "string->float64-bad":
        text = pc.cast(pa.array(_rng(8).standard_normal(N) * 1e3, mask=_nulls(8)), pa.string())
        spoiled, nulled = _spoil(text, 8)
        return spoiled, pa.float64(), nulled
    if name == "string->date32":
        days = _ints(np.int32, -30_000, 30_000, 9).cast(pa.date32())
        text = pc.cast(days, pa.string())
        return text, pa.date32(), text
    if name == "string->timestamp[us]":
        micros = _ints(np.int64, -(2**60) // 1000, 2**60 // 1000, 10).cast(pa.timestamp("us"))
        text = pc.strftime(micros, "%Y-%m-%dT%H:%M:%S")  # with the .ffffff fraction
        return text, pa.timestamp("us"), text
    if name == "string->decimal(12,2)":
        cents = _rng(11).integers(-(10**11), 10**11, N)
        whole = pc.cast(pa.array(np.abs(cents) // 100), pa.string())
        frac = pc.utf8_lpad(pc.cast(pa.array(np.abs(cents) % 100), pa.string()), 2, "0")
        text = pc.binary_join_element_wise(pa.array(np.where(cents < 0, "-", "")), whole, frac, ".")
        text = pc.replace_substring_regex(text, r"^(-?)\.", r"\1")  # "-" . whole . frac -> "-whole.frac"
        text = pc.if_else(pa.array(_nulls(11)), pa.scalar(None, pa.string()), text)
        return text, pa.decimal128(12, 2), text
    if name == "int64->int32(checked)":
        arr = _ints(np.int64, -(2**31), 2**31 - 1, 12)
        return arr, pa.int32(), arr
    if name == "int64->int32(checked)-bad":
        arr = _ints(np.int64, -(2**31), 2**31 - 1, 13)
        over = _rng(13).random(N) < BAD_RATE
        values = np.where(over, 2**40, arr.fill_null(0).to_numpy())  # int64 (to_numpy of nulls gives floats)
        spoiled = pa.array(values, mask=_nulls(13))
        return spoiled, pa.int32(), pa.array(values, mask=_nulls(13) | over)
    if name == "float64->int64(checked)":
        arr = pa.array(np.round(_rng(14).standard_normal(N) * 1e6), mask=_nulls(14))
        return arr, pa.int64(), arr
    if name in WIDENINGS:
        source, target = WIDENINGS[name]
        info = np.iinfo(source.to_pandas_dtype()) if pa.types.is_integer(source) else None
        raw = _ints(source.to_pandas_dtype(), int(info.min), int(info.max), 15) if info else \
            pa.array(_rng(15).standard_normal(N).astype(np.float32), mask=_nulls(15))
        return raw, target, raw
    raise KeyError(name)


# exact widenings: ``extra_info["gb_per_s"]`` is output bytes written per second (validity is reused)
WIDENINGS = {"int32->int64": (pa.int32(), pa.int64()), "int16->int64": (pa.int16(), pa.int64()),
             "float32->float64": (pa.float32(), pa.float64()), "int32->float64": (pa.int32(), pa.float64())}


CASES = [
    ("int32->string", False), ("int64->string", False), ("int64(small)->string", False),
    ("string->int64", True), ("string->int32", True), ("string->int64-bad", True),
    ("string->float64", True), ("string->float64-bad", True), ("string->date32", True),
    ("string->timestamp[us]", True), ("string->decimal(12,2)", True),
    ("int64->int32(checked)", True), ("int64->int32(checked)-bad", True), ("float64->int64(checked)", True),
    *((name, False) for name in WIDENINGS),
]
IMPLS = ["fieldshift-1t", "fieldshift-2t", "arrow"]


def _runner(impl: str, name: str, checked: bool) -> Callable[[], object]:
    values, target, castable = case(name)
    if impl == "arrow":
        return lambda: pc.cast(castable, target, safe=True)
    key = fast_kernel_for(values.type, target, checked)
    assert key is not None, f"no fast kernel for {name}"
    fn = get_kernel(key)
    fn(values.slice(0, 1000), target)  # compile (or load from numba's cache) outside the timing
    return lambda: fn(values, target)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(("name", "checked"), CASES, ids=[c[0] for c in CASES])
def test_kernel(benchmark, name: str, checked: bool, impl: str) -> None:  # type: ignore[no-untyped-def]
    run = _runner(impl, name, checked)
    before = get_threads()
    set_threads(2 if impl == "fieldshift-2t" else 1)
    try:
        benchmark.group = name
        benchmark.extra_info.update(case=name, impl=impl, values=N, null_rate=NULL_RATE)
        benchmark.pedantic(run, rounds=7, iterations=1, warmup_rounds=1)
    finally:
        set_threads(before)
    stats = getattr(benchmark, "stats", None)
    if stats is not None:
        benchmark.extra_info["ns_per_value"] = round(stats.stats.median / N * 1e9, 2)
        if name in WIDENINGS:
            width = WIDENINGS[name][1].bit_width // 8
            benchmark.extra_info["gb_per_s"] = round(N * width / stats.stats.median / 1e9, 2)


# -- first call: import, numba compile (cold cache) or cache load ---------------------------------------
_FIRST_CALL = r"""
import json, sys, time
t0 = time.perf_counter()
import fieldshift
import pyarrow as pa
import pyarrow.compute as pc
t1 = time.perf_counter()
from fieldshift.kernels import int_to_string, string_to_date32, string_to_decimal, string_to_float, \
    string_to_int, string_to_timestamp
ints = pa.array(range(-3000, 3000), pa.int32())
text = pc.cast(ints, pa.string())
cases = {
    "int32->string": lambda: int_to_string(ints, pa.string()),
    "int64->string": lambda: int_to_string(ints.cast(pa.int64()), pa.string()),
    "string->int64": lambda: string_to_int(text, pa.int64()),
    "string->float64": lambda: string_to_float(text, pa.float64()),
    "string->decimal": lambda: string_to_decimal(text, pa.decimal128(12, 2)),
    "string->date32": lambda: string_to_date32(pa.array(["2024-01-02"] * 2000), pa.date32()),
    "string->timestamp": lambda: string_to_timestamp(pa.array(["2024-01-02 03:04:05"] * 2000), pa.timestamp("us")),
}
seconds = {}
for name, call in cases.items():
    t = time.perf_counter()
    call()
    seconds[name] = time.perf_counter() - t
print(json.dumps({"import_s": t1 - t0, "first_calls_s": seconds}))
"""


@pytest.mark.parametrize("cache", ["cold", "cached"])
def test_first_call(benchmark, cache: str, tmp_path_factory: pytest.TempPathFactory) -> None:  # type: ignore[no-untyped-def]
    """A fresh interpreter: ``import fieldshift``, then each numba kernel's first call (compiling it
    into an empty ``NUMBA_CACHE_DIR`` when cold, loading it from there when cached)."""
    import json
    import subprocess
    import sys

    warm_dir = tmp_path_factory.mktemp("numba-cache")
    env = dict(os.environ)

    def once(cache_dir: str) -> dict[str, object]:
        done = subprocess.run([sys.executable, "-c", _FIRST_CALL], env={**env, "NUMBA_CACHE_DIR": cache_dir},
                              check=True, capture_output=True, text=True)
        return json.loads(done.stdout)

    if cache == "cached":
        once(str(warm_dir))
    seen: dict[str, object] = {}

    def call() -> None:
        where = str(tmp_path_factory.mktemp("numba-cold")) if cache == "cold" else str(warm_dir)
        seen.update(once(where))

    benchmark.group = "first call"
    benchmark.pedantic(call, rounds=3 if cache == "cold" else 5, iterations=1, warmup_rounds=0)
    calls = seen["first_calls_s"]
    assert isinstance(calls, dict)
    benchmark.extra_info.update(case=f"first call ({cache})", import_ms=round(1e3 * float(seen["import_s"]), 1),
                                all_first_calls_s=round(sum(calls.values()), 2),
                                **{k: round(v, 3) for k, v in calls.items()})
