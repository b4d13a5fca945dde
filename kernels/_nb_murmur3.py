"""Numba code for MurmurHash3 x86 32-bit (seed 0) over variable-length and decimal values.

Imported lazily by :mod:`fieldshift.kernels.murmur3`, whose fixed-width hashes need no compilation. The
entry points release the GIL (``nogil``), so callers may hash row ranges on several threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["hash_decimal_values", "hash_var_values"]

_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)
_M5 = np.uint32(5)
_N1 = np.uint32(0xE6546B64)
_F1 = np.uint32(0x85EBCA6B)
_F2 = np.uint32(0xC2B2AE35)


@njit(cache=True, inline="always")
def _rotl(x: np.uint32, r: int) -> np.uint32:
    return np.uint32((x << np.uint32(r)) | (x >> np.uint32(32 - r)))


@njit(cache=True)
def _murmur(data: np.ndarray, start: int, end: int, step: int) -> np.int32:
    """Hash bytes ``data[start], data[start+step], ...`` (``step`` -1 reads little-endian memory big-endian)."""
    n = (end - start) // step
    h = np.uint32(0)
    blocks = n // 4
    pos = start
    for _ in range(blocks):
        k = (np.uint32(data[pos]) | (np.uint32(data[pos + step]) << np.uint32(8))
             | (np.uint32(data[pos + 2 * step]) << np.uint32(16)) | (np.uint32(data[pos + 3 * step]) << np.uint32(24)))
        k = np.uint32(k * _C1)
        k = _rotl(k, 15)
        k = np.uint32(k * _C2)
        h ^= k
        h = _rotl(h, 13)
        h = np.uint32(h * _M5 + _N1)
        pos += 4 * step
    tail = n & 3
    if tail:
        k = np.uint32(0)
        for j in range(tail - 1, -1, -1):
            k = np.uint32((k << np.uint32(8)) | np.uint32(data[pos + j * step]))
        k = np.uint32(k * _C1)
        k = _rotl(k, 15)
        k = np.uint32(k * _C2)
        h ^= k
    h ^= np.uint32(n)
    h ^= h >> np.uint32(16)
    h = np.uint32(h * _F1)
    h ^= h >> np.uint32(13)
    h = np.uint32(h * _F2)
    h ^= h >> np.uint32(16)
    return np.int32(h)


@njit(cache=True, nogil=True)
def hash_var_values(offsets: np.ndarray, data: np.ndarray, out: np.ndarray) -> None:
    """Row ``i`` is ``data[offsets[i]:offsets[i+1]]`` (string, binary)."""
    for i in range(out.shape[0]):
        out[i] = _murmur(data, offsets[i], offsets[i + 1], 1)


@njit(cache=True, nogil=True)
def hash_decimal_values(data: np.ndarray, width: int, out: np.ndarray) -> None:
    """Row ``i`` is a little-endian two's-complement integer of ``width`` bytes; Iceberg hashes its
    shortest big-endian two's-complement form (Java's ``BigInteger.toByteArray``)."""
    for i in range(out.shape[0]):
        base = i * width
        top = base + width - 1  # the most significant byte
        low = base
        while top > low:  # drop a sign byte whose next byte carries the same sign bit
            b, nxt = data[top], data[top - 1]
            if (b == 0 and nxt < 128) or (b == 255 and nxt >= 128):
                top -= 1
            else:
                break
        out[i] = _murmur(data, top, low - 1, -1)
