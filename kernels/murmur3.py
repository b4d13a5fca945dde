"""Iceberg's value hash: MurmurHash3 x86 32-bit (seed 0) of each value's Iceberg byte form.

The spec's Appendix B: integers, dates (days), times and timestamps (microseconds; nanosecond values
floor to microseconds) hash as 8-byte little-endian longs, so int -> long widening keeps every hash;
strings hash their UTF-8 bytes, binary and fixed their bytes, decimals the shortest big-endian
two's-complement bytes of the unscaled value, UUIDs their 16 bytes. ``bucket`` is Iceberg's
``bucket[N]``: ``(hash & Integer.MAX_VALUE) % N``. Float, double and boolean have no bucket in Iceberg
and are refused, as are Arrow types with no Iceberg counterpart that could be hashed identically
(uint64, whose values above 2**63 have no long form).
"""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["NUMPY_MAX_BYTES", "NUMPY_MAX_ROWS", "UnhashableTypeError", "bucket", "hash_int64", "hash_var_numpy",
           "iceberg_hash"]

_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)
_N1 = np.uint32(0xE6546B64)
_F1 = np.uint32(0x85EBCA6B)
_F2 = np.uint32(0xC2B2AE35)
_MICROS_PER_UNIT = {"s": 1_000_000, "ms": 1_000, "us": 1}


class UnhashableTypeError(TypeError):
    """An Arrow type Iceberg's hash does not define (float, double, boolean, uint64, nested)."""


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix(h: np.ndarray, k: np.ndarray) -> np.ndarray:
    k = _rotl(k * _C1, 15) * _C2
    h = _rotl(h ^ k, 13)
    return h * np.uint32(5) + _N1


def hash_int64(values: np.ndarray) -> np.ndarray:
    """Murmur3 of each int64 as 8 little-endian bytes (vectorised, no compilation)."""
    v = np.ascontiguousarray(values, dtype=np.int64).view(np.uint64)
    with np.errstate(over="ignore"):
        h = _mix(np.zeros(len(v), dtype=np.uint32), (v & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        h = _mix(h, (v >> np.uint64(32)).astype(np.uint32))
        h ^= np.uint32(8)
        h ^= h >> np.uint32(16)
        h *= _F1
        h ^= h >> np.uint32(13)
        h *= _F2
        h ^= h >> np.uint32(16)
    return h.view(np.int32)


def _as_longs(arr: pa.Array) -> np.ndarray:
    """The long an Iceberg hash sees for each value of an integer or temporal array (nulls as 0)."""
    t = arr.type
    if pa.types.is_date32(t):
        arr = arr.cast(pa.int32())
    elif pa.types.is_date64(t):
        arr = pc.divide(arr.cast(pa.int64()), 86_400_000)  # whole days: date64 holds midnight in ms
    elif pa.types.is_time32(t) or pa.types.is_time64(t) or pa.types.is_timestamp(t):
        raw = arr.cast(pa.int64() if not pa.types.is_time32(t) else pa.int32()).cast(pa.int64())
        if t.unit == "ns":
            raw = _floor_div(raw, 1000)
        else:
            raw = pc.multiply(raw, _MICROS_PER_UNIT[t.unit])
        arr = raw
    elif pa.types.is_uint64(t):
        raise UnhashableTypeError("uint64 has no Iceberg type to hash as (values above 2**63 have no long "
                                  "form); cast the column to int64 or use identity/truncate")
    elif not pa.types.is_integer(t):
        raise UnhashableTypeError(f"Iceberg defines no hash for {t}")
    return arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)


def _floor_div(arr: pa.Array, divisor: int) -> pa.Array:
    values = arr.fill_null(0).to_numpy(zero_copy_only=False)
    return pa.array(np.floor_divide(values, divisor), mask=arr.is_null().to_numpy(zero_copy_only=False))


NUMPY_MAX_ROWS = 1 << 18
"""Up to this many values of at most ``NUMPY_MAX_BYTES`` bytes are hashed with numpy while the numba kernel is
not loaded: importing numba and loading the cached kernel costs a fresh process more than numpy takes for
that many short keys; larger columns load the kernel (faster per value)."""
NUMPY_MAX_BYTES = 64


def _hash_var(arr: pa.Array) -> np.ndarray:
    # the kernel reads 64-bit offsets: widen a string/binary array's offsets, not a copy of its bytes
    wide = np.int32 if pa.types.is_string(arr.type) or pa.types.is_binary(arr.type) else np.int64
    _, offsets_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=wide)[arr.offset:arr.offset + len(arr) + 1].astype(np.int64, copy=False)
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    if len(arr) <= NUMPY_MAX_ROWS and "fieldshift.kernels._nb_murmur3" not in sys.modules:
        lengths = np.diff(offsets)
        if lengths.max(initial=0) <= NUMPY_MAX_BYTES:
            return hash_var_numpy(offsets, data)
    from fieldshift.kernels._nb_murmur3 import hash_var_values

    out = np.empty(len(arr), dtype=np.int32)
    hash_var_values(offsets, data, out)
    return out


_GATHER_INDICES = 1 << 20


def hash_var_numpy(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Murmur3 of each ``data[offsets[i]:offsets[i+1]]`` with numpy only, one pass per distinct length: the
    bytes of the values of one length as rows of a zero-padded matrix read as little-endian words (the
    padding makes the last word murmur3's tail). For short values: it gathers ``n * length`` bytes."""
    lengths = np.diff(offsets)
    out = np.empty(len(lengths), dtype=np.uint32)
    distinct = np.unique(lengths)
    for length in distinct.tolist():
        rows = np.flatnonzero(lengths == length) if len(distinct) > 1 else np.arange(len(lengths))
        width = -(-length // 4) * 4
        padded = np.zeros((len(rows), width), dtype=np.uint8)
        if length and len(distinct) == 1:  # one length: the values lie back to back
            padded[:, :length] = data[offsets[0]:offsets[-1]].reshape(len(rows), length)
        elif length:
            step = max(1, _GATHER_INDICES // length)  # the gather's index matrix stays under 8 MiB
            span = np.arange(length)
            for lo in range(0, len(rows), step):
                padded[lo:lo + step, :length] = data[offsets[rows[lo:lo + step]][:, None] + span]
        words = padded.view("<u4")
        h = np.zeros(len(rows), dtype=np.uint32)
        with np.errstate(over="ignore"):
            for b in range(length // 4):
                h = _mix(h, words[:, b])
            if length & 3:
                h ^= _rotl(words[:, length // 4] * _C1, 15) * _C2
            out[rows] = _fmix(h, length)
    return out.view(np.int32)


def _fmix(h: np.ndarray, length: int) -> np.ndarray:
    h = h ^ np.uint32(length)
    h ^= h >> np.uint32(16)
    h *= _F1
    h ^= h >> np.uint32(13)
    h *= _F2
    h ^= h >> np.uint32(16)
    return h


def _hash_fixed(arr: pa.Array, width: int, decimal: bool) -> np.ndarray:
    from fieldshift.kernels._nb_murmur3 import hash_decimal_values, hash_var_values

    data_buf = arr.buffers()[1]
    data = np.frombuffer(data_buf, dtype=np.uint8)[arr.offset * width:(arr.offset + len(arr)) * width]
    out = np.empty(len(arr), dtype=np.int32)
    if decimal:
        hash_decimal_values(np.ascontiguousarray(data), width, out)
    else:
        hash_var_values(np.arange(0, (len(arr) + 1) * width, width, dtype=np.int64), data, out)
    return out


def iceberg_hash(values: pa.Array | pa.ChunkedArray) -> pa.Int32Array:
    """Iceberg's 32-bit hash of every value (null stays null); raises :class:`UnhashableTypeError`."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    t = values.type
    if pa.types.is_dictionary(t):
        values = values.cast(t.value_type)
        t = values.type
    if isinstance(t, pa.BaseExtensionType):  # e.g. arrow.uuid: hash the storage bytes
        values = values.storage
        t = values.type
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        hashed = _hash_var(values)
    elif pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        hashed = _hash_var(values.cast(pa.large_binary()))
    elif pa.types.is_fixed_size_binary(t):
        hashed = _hash_fixed(values, t.byte_width, decimal=False)
    elif pa.types.is_decimal(t):
        if pa.types.is_decimal32(t) or pa.types.is_decimal64(t):
            values = values.cast(pa.decimal128(t.precision, t.scale))
            t = values.type
        hashed = _hash_fixed(values, t.byte_width, decimal=True)
    elif pa.types.is_boolean(t) or pa.types.is_floating(t) or pa.types.is_nested(t) or pa.types.is_null(t):
        raise UnhashableTypeError(f"Iceberg defines no bucket hash for {t}")
    else:
        hashed = hash_int64(_as_longs(values))
    mask = values.is_null().to_numpy(zero_copy_only=False) if values.null_count else None
    return pa.array(hashed, type=pa.int32(), mask=mask)


def bucket(values: pa.Array | pa.ChunkedArray, num_buckets: int) -> pa.Int32Array:
    """Iceberg's ``bucket[N]``: ``(hash & 0x7FFFFFFF) % N`` per value; null stays null."""
    if isinstance(num_buckets, bool) or not isinstance(num_buckets, int) or num_buckets <= 0:
        raise ValueError(f"the number of buckets must be a positive int, not {num_buckets!r}")
    hashed = iceberg_hash(values)
    positive = hashed.to_numpy(zero_copy_only=False).astype(np.int64) if not hashed.null_count else \
        hashed.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    result = (positive & 0x7FFFFFFF) % num_buckets
    mask = hashed.is_null().to_numpy(zero_copy_only=False) if hashed.null_count else None
    return pa.array(result.astype(np.int32), type=pa.int32(), mask=mask)
