"""Integer -> string with numba: faster than Arrow's cast per core, and parallel over chunks.

The output's validity bitmap is the input's own buffer (no copy, even for slices): the output array
keeps the input's bit offset within its first byte, and its offsets buffer starts with that many
empty padding rows. Data and offsets come from Arrow's memory pool. Numba is imported, and the code
compiled (or loaded from its cache), only when the kernel first runs.
"""

from __future__ import annotations

import functools
from types import ModuleType

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.kernels._buffers import primitive_view, validity_view
from fieldshift.kernels.outcome import CastOutcome
from fieldshift.kernels.registry import INT_TO_STRING, kernel
from fieldshift.kernels.threads import run_parallel, split_range
from fieldshift.kernels.warm import numba_ready

__all__ = ["INT_TO_STRING", "int_to_string", "serves_int_to_string"]

_MIN_CHUNK = 32_768  # rows per thread below which a second thread costs more than it saves
_INT32_MAX = 2**31 - 1
_ARROW_BELOW = 1_024  # rows: below this Arrow's cast wins on call overhead (bench_kernels.py)

# Narrow types are widened (cheaply) so only three specialisations need compiling.
_COMPUTE_DTYPE = {
    pa.int8(): np.int32, pa.int16(): np.int32, pa.int32(): np.int32,
    pa.uint8(): np.int32, pa.uint16(): np.int32, pa.uint32(): np.int64,
    pa.int64(): np.int64, pa.uint64(): np.uint64,
}
_ALWAYS_NARROW = frozenset(t for t in _COMPUTE_DTYPE if t.bit_width <= 32)


@functools.cache
def _nb() -> ModuleType:
    """The numba code, imported (so compiled or loaded from cache) only when a kernel first runs."""
    from fieldshift.kernels import _nb_format

    return _nb_format


def serves_int_to_string(source: pa.DataType, target: pa.DataType) -> bool:
    return source in _COMPUTE_DTYPE and (pa.types.is_string(target) or pa.types.is_large_string(target))


def _values(arr: pa.Array) -> np.ndarray:
    vals = primitive_view(arr, arr.type.to_pandas_dtype())
    dtype = _COMPUTE_DTYPE[arr.type]
    return vals if vals.dtype == dtype else vals.astype(dtype)


def _is_narrow(values: pa.Array, limit: int) -> bool:
    """True when every magnitude fits the faster narrow path (always for types of 32 bits or less)."""
    if values.type in _ALWAYS_NARROW:
        return True
    low, high = pc.min_max(values).values()  # one cheap pass: far less than the wide path costs
    return low.as_py() >= -limit and high.as_py() <= limit


@kernel(INT_TO_STRING)
def int_to_string(values: pa.Array, target: pa.DataType) -> CastOutcome:
    """Decimal text of each integer (as Arrow's cast writes it); nulls stay null, nothing fails."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    n = len(values)
    if n == 0 or values.null_count == n:
        return CastOutcome(pa.nulls(n, type=target))
    if n < _ARROW_BELOW or not numba_ready():  # the same text: Arrow costs less on few rows, and
        return CastOutcome(pc.cast(values, target))  # answers while numba compiles (kernels.warm)
    nb = _nb()
    vals = _values(values)
    valid, voff, has_nulls = validity_view(values)
    shift = values.offset % 8 if has_nulls else 0
    validity = values.buffers()[0].slice(values.offset // 8) if has_nulls else None

    narrow = _is_narrow(values, nb.NARROW_LIMIT)
    chunks = split_range(n, _MIN_CHUNK)
    sizes = run_parallel(nb.chunk_bytes, [(vals, valid, voff, has_nulls, lo, hi) for lo, hi in chunks])
    total = int(sum(sizes))
    large = pa.types.is_large_string(target)
    if not large and total > _INT32_MAX:
        return CastOutcome(pc.cast(values, target))  # Arrow reports the overflow its own way
    odt = np.int64 if large else np.int32
    off_buf = pa.allocate_buffer((shift + n + 1) * np.dtype(odt).itemsize)
    data_buf = pa.allocate_buffer(max(total, 1))
    offsets = np.frombuffer(off_buf, dtype=odt)
    out = np.frombuffer(data_buf, dtype=np.uint8)
    if shift:
        nb.fill_prefix(offsets, shift)
    bases = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    last = len(chunks) - 1
    run_parallel(nb.chunk_write, [
        (vals, valid, voff, has_nulls, lo, hi, int(base), int(size), offsets, shift, out, k == last, narrow)
        for k, ((lo, hi), base, size) in enumerate(zip(chunks, bases, sizes, strict=True))
    ])
    arr = pa.Array.from_buffers(target, n, [validity, off_buf, data_buf], null_count=values.null_count,
                                offset=shift)
    return CastOutcome(arr)
