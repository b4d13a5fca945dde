"""Numba code for integer -> decimal text (imported only when such a kernel first runs).

Two passes over a chunk of rows: count the bytes (``chunk_bytes``), then write offsets and digits
(``chunk_write``) from a known base, so chunks run on separate threads without synchronising.

All magnitudes are uint64 (INT64_MIN and UINT64_MAX need no special case). Digit counts come from
the bit length (no branches), and eight digits at a time are made with SWAR arithmetic in one
uint64 and stored with one unaligned write. ``chunk_write`` walks its rows backwards and writes
digits in zero-padded groups of eight: the padding lands on bytes of earlier rows of the same chunk,
which are written afterwards. Rows too close to the chunk's start take a plain digit loop.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fieldshift.kernels._nb_util import at as _at
from fieldshift.kernels._nb_util import bit_length, is_valid, store_le

_PAIRS16 = np.frombuffer(b"".join(f"{i:02d}".encode() for i in range(100)), dtype="<u2").copy()  # "00".."99"
_POW10 = np.array([10**k for k in range(20)] + [2**64 - 1], dtype=np.uint64)
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U8 = np.uint64(8)
_U10 = np.uint64(10)
_U16 = np.uint64(16)
_U48 = np.uint64(48)
_U100 = np.uint64(100)
_U1E4 = np.uint64(10**4)
_U1E8 = np.uint64(10**8)
_U1E10 = np.uint64(10**10)
_U1E16 = np.uint64(10**16)
_HEADROOM = np.uint64(24)
_LANES_7F = np.uint64(0x0000007F0000007F)
_LANES_0F = np.uint64(0x000F000F000F000F)
_ASCII_ZEROS = np.uint64(0x3030303030303030)


@njit(cache=True, nogil=True, inline="always")
def _magnitude(v):
    """(|v| as uint64, 1 if v < 0 else 0) for any integer type, without branches."""
    neg = np.uint64(v < 0)
    m = _U0 - neg
    return (np.uint64(v) ^ m) - m, neg


@njit(cache=True, nogil=True, inline="always")
def _digits(u):
    """Number of decimal digits of the uint64 ``u`` (1 for 0)."""
    t = (bit_length(u | _U1) * np.uint64(1233)) >> np.uint64(12)  # floor(log10(2) * bits)
    return t + np.uint64((u | _U1) >= _POW10[t])


@njit(cache=True, nogil=True, inline="always")
def _swar8(x):
    """The eight digits of ``x < 10**8``, zero-padded, as ASCII bytes in a little-endian uint64."""
    hi = x // _U1E4
    v = hi | ((x - hi * _U1E4) << np.uint64(32))  # two 32-bit lanes of four digits
    q = ((v * np.uint64(10486)) >> np.uint64(20)) & _LANES_7F  # lane // 100
    v = q | ((v - q * _U100) << _U16)  # four 16-bit lanes of two digits
    q = ((v * np.uint64(103)) >> np.uint64(10)) & _LANES_0F  # lane // 10
    v = q | ((v - q * _U10) << _U8)  # eight byte lanes of one digit
    return v | _ASCII_ZEROS


@njit(cache=True, nogil=True, inline="always")
def _write_exact(out, end, u):
    """The digits of ``u`` (no padding) ending just before ``end``."""
    p = end
    while True:
        q = u // _U10
        p -= _U1
        out[p] = np.uint8(u - q * _U10 + _U48)
        u = q
        if u == _U0:
            break


@njit(cache=True, nogil=True)
def chunk_bytes(vals, valid, voff, has_nulls, lo, hi):
    """Bytes the text of rows ``[lo, hi)`` takes (nulls take none)."""
    total = _U0
    if has_nulls:
        for i in range(lo, hi):
            if is_valid(valid, voff + i):
                u, neg = _magnitude(vals[i])
                total += _digits(u) + neg
    else:
        for i in range(lo, hi):
            u, neg = _magnitude(vals[i])
            total += _digits(u) + neg
    return np.int64(total)


@njit(cache=True, nogil=True)
def chunk_write(vals, valid, voff, has_nulls, lo, hi, base, size, offsets, shift, out, last):
    """Write offsets ``shift+lo .. shift+hi-1`` (and ``shift+hi`` when ``last``) and the digits."""
    floor = np.uint64(base) + _HEADROOM
    end = np.uint64(base + size)
    if last:
        offsets[shift + hi] = end
    for i in range(hi - 1, lo - 1, -1):
        if has_nulls and not is_valid(valid, voff + i):
            offsets[shift + i] = end
            continue
        u, neg = _magnitude(vals[i])
        start = end - (_digits(u) + neg)
        offsets[shift + i] = start
        if end >= floor:
            if u < _U1E8:
                store_le(out, end - _U8, _swar8(u))
            elif u < _U1E10:  # the common 32-bit case: two more digits, from the pair table
                q = u // _U1E8
                store_le(out, end - _U8, _swar8(u - q * _U1E8))
                store_le(out, end - np.uint64(10), _at(_PAIRS16, q))
            elif u < _U1E16:
                q = u // _U1E8
                store_le(out, end - _U8, _swar8(u - q * _U1E8))
                store_le(out, end - _U16, _swar8(q))
            else:
                q = u // _U1E8
                q2 = q // _U1E8
                store_le(out, end - _U8, _swar8(u - q * _U1E8))
                store_le(out, end - _U16, _swar8(q - q2 * _U1E8))
                store_le(out, end - _HEADROOM, _swar8(q2))
            first = out[start]
            out[start] = 45 if neg else first  # '-' (a select, not a branch)
        else:
            _write_exact(out, end, u)
            if neg:
                out[start] = 45
        end = start


@njit(cache=True, nogil=True)
def fill_prefix(offsets, shift):
    """Offsets of the ``shift`` padding rows before row 0 (all empty, at 0)."""
    for i in range(shift):
        offsets[i] = 0
