"""Constant columns (defaults, partition values, nulls), built once per (scalar, length) and reused.

The cache is keyed by the scalar object itself (plans hold their scalars for their lifetime), never
by scalar equality, where 0.0 == -0.0 and one default would read as the other. It holds arrays, so
it is bounded by bytes, not by entries.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import pyarrow as pa

from fieldshift.kernels.valid_nulls import null_array

__all__ = ["CONSTANT_CACHE_BYTES", "clear_constant_cache", "constant_array"]

CONSTANT_CACHE_BYTES = 64 * 1024 * 1024
_CACHE: OrderedDict[tuple[int, int], tuple[pa.Scalar, pa.Array]] = OrderedDict()
_LOCK = threading.Lock()
_held = 0


def constant_array(value: pa.Scalar, length: int) -> pa.Array:
    """An array of ``length`` copies of ``value``; arrays are immutable, so repeats share one."""
    global _held
    key = (id(value), length)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0] is value:  # the entry holds the scalar: its id is not reused
            _CACHE.move_to_end(key)
            return hit[1]
    arr = _build(value, length)
    size = arr.nbytes
    if size > CONSTANT_CACHE_BYTES // 4:
        return arr
    with _LOCK:
        old = _CACHE.pop(key, None)
        if old is not None:
            _held -= old[1].nbytes
        _CACHE[key] = (value, arr)
        _held += size
        while _held > CONSTANT_CACHE_BYTES and _CACHE:
            _, (_, dropped) = _CACHE.popitem(last=False)
            _held -= dropped.nbytes
    return arr


def clear_constant_cache() -> None:
    global _held
    with _LOCK:
        _CACHE.clear()
        _held = 0


def _build(value: pa.Scalar, length: int) -> pa.Array:
    if not value.is_valid:  # a null struct's required children hold placeholders (Parquet needs them)
        return null_array(value.type, length)
    if length == 0:
        return pa.array([], type=value.type)
    pattern = _BIT_PATTERNS.get(getattr(value.type, "bit_width", 0) if _fixed_width(value.type) else 0)
    if pattern is None:
        return pa.repeat(value, length)
    # the scalar's own bytes repeated into a buffer from Arrow's pool: pa.repeat writes it element by element
    # into fresh memory, several times slower for long columns; copying the bit pattern keeps -0.0 and NaNs exact
    one = np.frombuffer(pa.array([value], value.type).buffers()[1], dtype=pattern, count=1)
    buf = pa.allocate_buffer(length * one.itemsize)
    np.frombuffer(buf, dtype=pattern).fill(one[0])
    return pa.Array.from_buffers(value.type, length, [None, buf], null_count=0)


_BIT_PATTERNS = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _fixed_width(t: pa.DataType) -> bool:
    """Integers, floats and temporal types: one fixed-width value per row, no children, no dictionary."""
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t)
