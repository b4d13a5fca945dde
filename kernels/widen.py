"""Exact numeric widening with numpy into Arrow-pool buffers, the input's validity reused as is.

Arrow's safe integer cast checks every value for overflow even where none can happen; numpy's
conversion loop does not, so integer widening writes faster than Arrow's cast (float widening ties),
and costs less per call on small batches (benchmarks/bench_kernels.py measures both).
Outputs are allocated from Arrow's pool: numpy's own allocator re-faults pages on every batch.
"""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa

from fieldshift.kernels.outcome import CastOutcome
from fieldshift.kernels.registry import NUMPY_WIDEN, kernel

__all__ = ["NUMPY_WIDEN", "numpy_widen", "serves_numpy_widen"]

_NUMERIC = (pa.types.is_integer, pa.types.is_floating)


def serves_numpy_widen(source: pa.DataType, target: pa.DataType) -> bool:
    """True when every ``source`` value has an exact ``target`` value (so nothing can fail or round)."""
    if not (any(is_(source) for is_ in _NUMERIC) and any(is_(target) for is_ in _NUMERIC)):
        return False
    if pa.types.is_float16(source) or pa.types.is_float16(target) or source == target:
        return False
    return np.can_cast(_dtype(source), _dtype(target), casting="safe") and _exact(source, target)


@functools.lru_cache(maxsize=64)
def _dtype(t: pa.DataType) -> np.dtype:
    return np.dtype(t.to_pandas_dtype())


def _exact(source: pa.DataType, target: pa.DataType) -> bool:
    """numpy calls int64 -> float64 'safe'; it rounds above 2**53, so only narrower integers qualify."""
    if pa.types.is_integer(source) and pa.types.is_floating(target):
        mantissa = 24 if pa.types.is_float32(target) else 53
        return source.bit_width < mantissa
    return True


@kernel(NUMPY_WIDEN)
def numpy_widen(values: pa.Array, target: pa.DataType) -> CastOutcome:
    """``values`` widened to ``target`` (a type ``serves_numpy_widen`` accepted); nothing fails."""
    n = len(values)
    nulls = values.null_count
    offset = values.offset
    validity, data = values.buffers()[:2]  # fetched once: each call wraps every buffer anew
    shift = offset % 8 if nulls else 0  # keep the validity bitmap's bit alignment
    dtype = _dtype(target)
    buf = pa.allocate_buffer((shift + n) * dtype.itemsize)
    out = np.frombuffer(buf, dtype=dtype)[shift:]
    if data is None:  # an all-null array may come without a values buffer
        out[:] = 0
    elif n:
        source = _dtype(values.type)
        np.copyto(out, np.frombuffer(data, dtype=source, count=offset + n)[offset:], casting="safe")
    return CastOutcome(pa.Array.from_buffers(target, n, [validity.slice(offset // 8) if nulls else None, buf],
                                             null_count=nulls, offset=shift))
