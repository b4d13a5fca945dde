"""Checked numeric and temporal casts whose failures are a range test: a mask in a few numpy passes.

``casts.checked_cast`` finds failing rows by bisecting with Arrow casts, which is fine for one bad
value and slow for many. For these casts Arrow's safe cast is already cheap per value, so the
fast path stays one ``pc.cast(safe=True)``; only when it raises is the failure mask computed
directly from the values (the same rule Arrow applies), the failing rows nulled, and the rest cast
safely again (so a row the mask missed would still be caught by the bisecting fallback, never
silently wrapped):

- integer -> narrower integer (or signed <-> unsigned): value outside the target's range;
- integer -> float: |value| above 2**24 (float32) or 2**53 (float64), as Arrow checks it;
- float -> integer: NaN, infinity, a fractional part, or outside the target's range;
- timestamp/date -> timestamp of a finer unit: the scaled value leaves int64; to a coarser unit:
  the value is not a whole number of the coarser unit (Arrow refuses to truncate).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.kernels._buffers import packed_validity, primitive_view, validity_view
from fieldshift.kernels.casts import checked_cast
from fieldshift.kernels.outcome import CAST_ERRORS, CastOutcome
from fieldshift.kernels.registry import RANGE_CHECKED, kernel
from fieldshift.kernels.warm import numba_ready

__all__ = ["RANGE_CHECKED", "range_checked_cast", "serves_range_checked"]

_INT64_MAX = 2**63 - 1
_UNIT_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_MANTISSA = {16: 11, 32: 24, 64: 53}
T = pa.types


def _ticks_per_second(t: pa.DataType) -> tuple[int, int] | None:
    """(numerator, denominator) of t's ticks per second (date32 counts days), or None."""
    if T.is_timestamp(t):
        return _UNIT_PER_SECOND[t.unit], 1
    if T.is_date32(t):
        return 1, 86_400
    if T.is_date64(t):
        return 1_000, 1
    return None


def serves_range_checked(source: pa.DataType, target: pa.DataType) -> bool:
    if T.is_integer(source):
        return T.is_integer(target) or target in (pa.float32(), pa.float64())
    if source in (pa.float32(), pa.float64()):
        return T.is_integer(target)
    return T.is_timestamp(target) and _ticks_per_second(source) is not None


def _int_range(t: pa.DataType) -> tuple[int, int]:
    bits = t.bit_width
    if T.is_signed_integer(t):
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return 0, 2**bits - 1


def _outside(v: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """v < lo or v > hi, skipping a bound the dtype cannot cross (and never overflowing it)."""
    info = np.iinfo(v.dtype)
    bad = np.zeros(len(v), dtype=bool)
    if lo > info.min:
        bad |= v < v.dtype.type(lo) if lo <= info.max else True
    if hi < info.max:
        bad |= v > v.dtype.type(hi) if hi >= info.min else True
    return bad


def _failures(values: pa.Array, target: pa.DataType) -> np.ndarray:
    """Rows (nulls included, fixed by the caller) that Arrow's safe cast refuses."""
    source = values.type
    if T.is_integer(source):
        v = primitive_view(values, source.to_pandas_dtype())
        if T.is_integer(target):
            return _outside(v, *_int_range(target))
        limit = 2 ** _MANTISSA[target.bit_width]
        return _outside(v, -limit, limit)
    if T.is_floating(source):
        v = primitive_view(values, source.to_pandas_dtype())
        lo, hi = _int_range(target)
        with np.errstate(invalid="ignore"):
            ok = (v >= float(lo)) & (v < float(hi + 1)) & (np.trunc(v) == v)  # powers of two: exact
        return ~ok
    num, den = _ticks_per_second(source)  # type: ignore[misc]
    tnum, _ = _ticks_per_second(target)  # type: ignore[misc]
    v = primitive_view(values, np.int32 if T.is_date32(source) else np.int64)
    # target ticks = v * tnum * den / num
    up, down = tnum * den, num
    g = np.gcd(up, down)
    up, down = up // g, down // g
    bad = np.zeros(len(v), dtype=bool)
    if down > 1:
        bad |= (v % down) != 0
    if up > 1:
        bound = _INT64_MAX // up
        bad |= (v > bound) | (v < -bound)
    return bad


def _null_where(values: pa.Array, failed: np.ndarray) -> pa.Array:
    """``values`` with the failed rows null (the data buffer is shared)."""
    keep = ~failed
    if values.null_count:
        keep &= pc.is_valid(values).to_numpy(zero_copy_only=False)
    bitmap = pa.py_buffer(np.packbits(keep, bitorder="little"))
    buffers = values.buffers()
    data = buffers[1]
    width = values.type.bit_width // 8
    if values.offset:
        data = data.slice(values.offset * width)
    return pa.Array.from_buffers(values.type, len(values), [bitmap, data],
                                 null_count=len(values) - int(keep.sum()))


def _narrow(values: pa.Array, target: pa.DataType) -> CastOutcome:
    """Integer narrowing that failed Arrow's check: values, mask and validity in one numba pass and
    one bitmap pass, instead of a numpy range test, a masked copy and a second Arrow cast."""
    from fieldshift.kernels import _nb_narrow

    source = values.type
    v = primitive_view(values, source.to_pandas_dtype())
    info = np.iinfo(v.dtype)
    lo, hi = _int_range(target)
    lo, hi = v.dtype.type(max(lo, int(info.min))), v.dtype.type(min(hi, int(info.max)))
    valid, voff, has_nulls = validity_view(values)
    n = len(values)
    shift = values.offset % 8 if has_nulls else 0
    dtype = np.dtype(target.to_pandas_dtype())
    buf = pa.allocate_buffer((shift + n) * dtype.itemsize)
    failed = np.empty(n, dtype=bool)
    bad = _nb_narrow.narrow_ints(v, lo, hi, valid, voff, has_nulls, np.frombuffer(buf, dtype=dtype)[shift:], failed)
    bitmap = packed_validity(valid, voff, has_nulls, failed, shift)
    out = pa.Array.from_buffers(target, n, [bitmap, buf], null_count=values.null_count + bad, offset=shift)
    return CastOutcome(out, failed if bad else None)


@kernel(RANGE_CHECKED)
def range_checked_cast(values: pa.Array, target: pa.DataType) -> CastOutcome:
    """A checked cast whose failing rows are found by a range test (see the module notes)."""
    try:
        return CastOutcome(pc.cast(values, target, safe=True))
    except CAST_ERRORS:
        pass
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if T.is_integer(values.type) and T.is_integer(target) and numba_ready():
        return _narrow(values, target)
    failed = _failures(values, target)
    if values.null_count:
        failed &= pc.is_valid(values).to_numpy(zero_copy_only=False)
    masked = _null_where(values, failed)
    try:
        out = pc.cast(masked, target, safe=True)
    except CAST_ERRORS:  # a failure the range test did not predict: bisect what is left
        rest = checked_cast(masked, target)
        out = rest.values
        if rest.failed is not None:
            failed |= rest.failed
    return CastOutcome(out, failed if failed.any() else None)
