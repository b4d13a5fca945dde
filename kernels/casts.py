"""Primitive casts: Arrow compute for widening, and checked casts that report a per-row failure mask.

Arrow's safe cast raises on the first bad value and gives no mask, yet explicit-null mode and
quarantine need to know exactly which rows failed. ``checked_cast`` casts the whole array at once
and, only when that raises, bisects to the failing rows, so the common all-good case costs one cast.
Which kernel serves a cast (these, or a faster one) is for :mod:`fieldshift.kernels.cast_choice` to decide.
"""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.kernels.outcome import CAST_ERRORS, CastOutcome
from fieldshift.kernels.registry import ARROW_CAST, CHECKED_CAST, kernel

__all__ = ["arrow_can_cast", "arrow_cast", "bounded_checked_cast", "checked_cast"]

_SMALLEST_BISECT = 32


@kernel(ARROW_CAST)
def arrow_cast(values: pa.Array, target: pa.DataType) -> CastOutcome:
    """A widening cast: one Arrow compute call.

    Integer -> float casts a policy allows (Hudi's long -> double) round by design, as Java's do;
    Arrow's safe mode would refuse a value beyond 2^53, so those run unchecked.
    """
    try:
        return CastOutcome(pc.cast(values, target, safe=True))
    except pa.ArrowInvalid:
        if pa.types.is_integer(values.type) and pa.types.is_floating(target):
            return CastOutcome(pc.cast(values, target, safe=False))
        raise


@kernel(CHECKED_CAST)
def checked_cast(values: pa.Array, target: pa.DataType) -> CastOutcome:
    """A cast that may fail per value: failing rows become null and are marked in ``failed``."""
    return _checked(values, target, None)


def _checked(values: pa.Array, target: pa.DataType, budget: list[int] | None) -> CastOutcome:
    """One safe cast; if it fails, the failing rows found by bisection (raises ``_OverBudget`` when the
    casts ``budget`` allows run out)."""
    try:
        return CastOutcome(_cast(values, target))
    except CAST_ERRORS:
        pass
    failed = np.zeros(len(values), dtype=bool)
    pieces: list[pa.Array] = []
    _bisect(values, target, 0, len(values), failed, pieces, budget)
    return CastOutcome(pa.concat_arrays(pieces), failed)


def _cast(values: pa.Array, target: pa.DataType) -> pa.Array:
    """A safe Arrow cast; integers reach a narrow decimal through decimal(20, 0), which Arrow needs."""
    if pa.types.is_integer(values.type) and pa.types.is_decimal(target) and target.precision - target.scale < 20:
        values = pc.cast(values, pa.decimal128(20, 0), safe=True)
    return pc.cast(values, target, safe=True)


class _OverBudget(Exception):
    pass


def bounded_checked_cast(values: pa.Array, target: pa.DataType, max_casts: int) -> CastOutcome | None:
    """``checked_cast``, or None once finding the failing rows would take more than ``max_casts`` casts
    (a few failing rows cost about 2·log2(n) casts each; a caller with a faster way gives up early)."""
    try:
        return _checked(values, target, [max_casts])
    except _OverBudget:
        return None


def _bisect(values: pa.Array, target: pa.DataType, lo: int, hi: int, failed: np.ndarray,
            pieces: list[pa.Array], budget: list[int] | None = None) -> None:
    if budget is not None:
        budget[0] -= 1
        if budget[0] < 0:
            raise _OverBudget
    try:
        pieces.append(_cast(values.slice(lo, hi - lo), target))
        return
    except CAST_ERRORS:
        pass
    if hi - lo == 1:
        failed[lo] = True
        pieces.append(pa.nulls(1, type=target))
    elif hi - lo <= _SMALLEST_BISECT:
        for i in range(lo, hi):
            _bisect(values, target, i, i + 1, failed, pieces, budget)
    else:
        mid = (lo + hi) // 2
        _bisect(values, target, lo, mid, failed, pieces, budget)
        _bisect(values, target, mid, hi, failed, pieces, budget)


@functools.lru_cache(maxsize=4096)
def arrow_can_cast(source: pa.DataType, target: pa.DataType) -> bool:
    """Does Arrow have a cast kernel for this pair? Probed once per pair on an empty array, since no
    rule table keeps up with Arrow's (float16 -> decimal and string_view -> date32 have none)."""
    try:
        _cast(pa.array([], source), target)
    except pa.ArrowNotImplementedError:
        return False
    except (pa.ArrowInvalid, OverflowError, TypeError, ValueError):
        return True  # a kernel exists; an empty array cannot fail on values
    return True
