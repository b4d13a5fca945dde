"""Constant columns (defaults, partition values, nulls), built once per (value, length) and reused."""

from __future__ import annotations

from functools import lru_cache

import pyarrow as pa

from fieldshift.kernels.registry import kernel
from fieldshift.kernels.valid_nulls import null_array

__all__ = ["constant_array"]


@kernel("constant")
def constant_array(value: pa.Scalar, length: int) -> pa.Array:
    """An array of ``length`` copies of ``value``; arrays are immutable, so repeats share one."""
    return _cached(value, length)


@lru_cache(maxsize=256)
def _cached(value: pa.Scalar, length: int) -> pa.Array:
    if not value.is_valid:  # a null struct's required children hold placeholders (Parquet needs them)
        return null_array(value.type, length)
    if length == 0:
        return pa.array([], type=value.type)
    return pa.repeat(value, length)
