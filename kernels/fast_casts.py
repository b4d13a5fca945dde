"""Specialised cast kernels, chosen at plan time where a benchmark shows they beat Arrow compute or
where Arrow has no kernel that reports which rows failed (``benchmarks/bench_kernels.py``).

CPU ns per value on one core, 2,000,000 values with 5% nulls (ours vs ``pc.cast``, Arrow 26):

- int -> string: numba SWAR formatter vectorised over blocks, int32 3.8 vs 25.3, int64 6.9 vs 29.7
  (full range), 4.7 vs 19.7 (|v| < 10**5); parallel over chunks;
- string -> int64 12.1 vs 17.0, int32 10.8 vs 14.9, date32 9.6 vs 11.0, timestamp[us] 16.2 vs
  21.8: numba parsers with a failure mask (Arrow raises and gives none);
- string -> float / decimal: Arrow's cast behind a numba validator that masks the bad rows (for
  floats the validator runs only after Arrow raised; decimals are validated first only when some
  text is long enough for Arrow's silent wrap);
- exact numeric widening (int32 -> int64, float32 -> float64, int32 -> float64, ...): numpy into
  Arrow-pool buffers (Arrow checks integer overflow that cannot happen; numpy does not);
- integer/float narrowing, int -> float, timestamp units: Arrow's safe cast (same speed), with a
  range test only when it raises, instead of bisecting (integer narrowing: one numba pass).
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
from fieldshift.kernels.widen import NUMPY_WIDEN, serves_numpy_widen

__all__ = ["fast_kernel_for"]

T = pa.types


def fast_kernel_for(source: pa.DataType, target: pa.DataType, checked: bool) -> str | None:
    """The key of a faster (or mask-reporting) kernel for this cast, or None to use Arrow compute."""
    if serves_numpy_widen(source, target):
        return NUMPY_WIDEN
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
