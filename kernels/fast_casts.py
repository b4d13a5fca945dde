"""Specialised cast kernels, chosen at plan time where a benchmark shows they beat Arrow compute or
where Arrow has no kernel that reports which rows failed (``benchmarks/bench_kernels.py``).

Measured on 2,000,000 values with 5% nulls (ns per value, 1 thread; see the benchmark file):

- int -> string: numba SWAR formatter, ~2-2.5x faster than ``pc.cast``, and parallel;
- string -> int / date32 / timestamp: numba parsers, faster than ``pc.cast`` and with a mask;
- string -> float / decimal: Arrow's cast, with a numba validator only when it raises (mask);
- integer/float narrowing, int -> float, timestamp units: Arrow's safe cast, with a numpy range
  test only when it raises (mask) instead of bisecting.
"""

from __future__ import annotations

import pyarrow as pa

from fieldshift.kernels.checked import RANGE_CHECKED, serves_range_checked
from fieldshift.kernels.numba_format import INT_TO_STRING, serves_int_to_string
from fieldshift.kernels.numba_parse import (
    STRING_TO_DATE32,
    STRING_TO_DECIMAL,
    STRING_TO_FLOAT,
    STRING_TO_INT,
    STRING_TO_TIMESTAMP,
    is_text,
)

__all__ = ["fast_kernel_for"]

T = pa.types


def fast_kernel_for(source: pa.DataType, target: pa.DataType, checked: bool) -> str | None:
    """The key of a faster (or mask-reporting) kernel for this cast, or None to use Arrow compute."""
    if serves_int_to_string(source, target):
        return INT_TO_STRING
    if is_text(source):
        if T.is_integer(target):
            return STRING_TO_INT
        if T.is_date32(target):
            return STRING_TO_DATE32
        if T.is_timestamp(target):
            return STRING_TO_TIMESTAMP
        if checked and target in (pa.float32(), pa.float64()):
            return STRING_TO_FLOAT
        if checked and T.is_decimal(target):
            return STRING_TO_DECIMAL
        return None
    if checked and serves_range_checked(source, target):
        return RANGE_CHECKED
    return None
