"""Constant columns (defaults, partition values, nulls), built once per (scalar, length) and reused.

The cache is keyed by the scalar object itself (plans hold their scalars for their lifetime), never
by scalar equality, where 0.0 == -0.0 and one default would read as the other. It holds arrays, so
it is bounded by bytes, not by entries.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

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
    return pa.repeat(value, length)
