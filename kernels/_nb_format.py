"""Numba code for integer -> decimal text (imported only when such a kernel first runs).

Two passes over a chunk of rows: ``chunk_bytes`` sums the text lengths, then ``chunk_write`` writes
offsets and digits from the chunk's known base, so chunks run on separate threads without
synchronising.

Both passes go through blocks of ``_BLOCK`` rows in two steps. A branch-free loop turns each value
of the block into digit words (eight ASCII digits in one uint64, made with SWAR multiplies) and a
length; LLVM vectorises that loop (AVX-512 or AVX2 where the CPU has them). A scalar loop then walks
the block's rows backwards and stores each row's words so that they end where its text ends: the
zero padding in front lands on bytes of earlier rows, which are written afterwards. Rows close to the
chunk's start, where padding would reach into another chunk, take a plain digit loop.

Magnitudes are uint64 (INT64_MIN and UINT64_MAX need no special case). Below 2**32 ("narrow")
division by 10**8 is an exact multiply-shift; wider magnitudes divide through float64 and correct
the quotient by one step, which vectorises where a 64-bit integer division would not.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fieldshift.kernels._nb_util import bit_length, is_valid, store_le

__all__ = ["NARROW_LIMIT", "chunk_bytes", "chunk_write", "fill_prefix"]

NARROW_LIMIT = 2**32 - 1
"""Largest magnitude the narrow (multiply-shift) words handle."""

_BLOCK = 256
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U8 = np.uint64(8)
_U10 = np.uint64(10)
_U16 = np.uint64(16)
_U48 = np.uint64(48)
_U100 = np.uint64(100)
_U1E4 = np.uint64(10**4)
_U1E8 = np.uint64(10**8)
_FINV1E8 = 1e-8
_DIV1E8_MUL = np.uint64(2882303762)  # ceil(2**58 / 10**8): exact u // 10**8 for u < 2**32
_DIV1E8_SHIFT = np.uint64(58)
_DIV1E4_MUL = np.uint64(3518437209)  # ceil(2**45 / 10**4): exact x // 10**4 for x < 10**8
_DIV1E4_SHIFT = np.uint64(45)
_DIV100_MUL = np.uint64(5243)  # exact x // 100 for x < 10**4: (x * 5243) >> 19
_LANES_7F = np.uint64(0x0000007F0000007F)
_LANES_0F = np.uint64(0x000F000F000F000F)
_ASCII_ZEROS = np.uint64(0x3030303030303030)
_SPREAD = np.uint64(0x0101010101010101)
_BIT_OF_LANE = np.uint64(0x8040201008040201)
_LANES_7F7F = np.uint64(0x7F7F7F7F7F7F7F7F)
_LANES_8080 = np.uint64(0x8080808080808080)
_NARROW_HEADROOM = np.uint64(16)  # bytes before a row's end its stores may touch (11 used)
_WIDE_HEADROOM = np.uint64(24)  # (21 used)
_POW10 = np.array([10**k for k in range(20)] + [2**64 - 1], dtype=np.uint64)


@njit(cache=True, nogil=True, inline="always")
def _magnitude(v):
    """(|v| as uint64, 1 if v < 0 else 0) for any integer type, without branches."""
    neg = np.uint64(v < 0)
    m = _U0 - neg
    return (np.uint64(v) ^ m) - m, neg


@njit(cache=True, nogil=True, inline="always")
def _swar8(x):
    """The eight digits of ``x < 10**8``, zero-padded, as ASCII bytes in a little-endian uint64."""
    hi = (x * _DIV1E4_MUL) >> _DIV1E4_SHIFT
    v = hi | ((x - hi * _U1E4) << np.uint64(32))  # two 32-bit lanes of four digits
    q = ((v * np.uint64(10486)) >> np.uint64(20)) & _LANES_7F  # lane // 100
    v = q | ((v - q * _U100) << _U16)  # four 16-bit lanes of two digits
    q = ((v * np.uint64(103)) >> np.uint64(10)) & _LANES_0F  # lane // 10
    v = q | ((v - q * _U10) << _U8)  # eight byte lanes of one digit
    return v | _ASCII_ZEROS


@njit(cache=True, nogil=True, inline="always")
def _swar4(x):
    """The four digits of ``x < 10**4``, zero-padded, as ASCII bytes in the low half of a uint64."""
    hi = (x * _DIV100_MUL) >> np.uint64(19)
    v = hi | ((x - hi * _U100) << _U16)
    q = ((v * np.uint64(103)) >> np.uint64(10)) & _LANES_0F
    v = q | ((v - q * _U10) << _U8)
    return v | np.uint64(0x30303030)


@njit(cache=True, nogil=True, inline="always")
def _digits(u):
    """Decimal digits of any uint64 (1 for 0)."""
    t = (bit_length(u | _U1) * np.uint64(1233)) >> np.uint64(12)  # floor(log10(2) * bits)
    return t + np.uint64((u | _U1) >= _POW10[t])


@njit(cache=True, nogil=True, inline="always")
def _div1e8(u):
    """(u // 10**8, u % 10**8) for any uint64, through float64 plus one correction step."""
    q = np.uint64(np.float64(u) * _FINV1E8)  # off by at most one
    r = np.int64(u - q * _U1E8)  # wraps below zero when q is one too big
    low = r < 0
    q = q - np.uint64(low)
    r = r + (np.int64(100_000_000) if low else np.int64(0))
    high = r >= 100_000_000
    return q + np.uint64(high), np.uint64(r - (np.int64(100_000_000) if high else np.int64(0)))


@njit(cache=True, nogil=True, inline="always")
def _validity_lanes(valid, bit0, m, ok):
    """``ok[j]`` = 1 if row ``bit0 + j`` of the bitmap is valid else 0, for ``j < m``, eight a step."""
    last = len(valid) - 1
    for g in range((m + 7) // 8):
        pos = bit0 + 8 * g
        at = pos >> 3
        byte = np.uint64(valid[at]) >> np.uint64(pos & 7)
        if pos & 7 and at < last:
            byte |= np.uint64(valid[at + 1]) << np.uint64(8 - (pos & 7))
        lanes = ((byte & np.uint64(0xFF)) * _SPREAD) & _BIT_OF_LANE  # lane b keeps bit b
        store_le(ok, np.uint64(8 * g), ((lanes + _LANES_7F7F) & _LANES_8080) >> np.uint64(7))


@njit(cache=True, nogil=True)
def _narrow_words(blk, ok, low, high, meta):
    """Digit words and ``digits | negative << 8`` (0 where ``ok`` is 0) of each value of ``blk``
    (magnitudes < 2**32)."""
    for j in range(len(blk)):
        u, neg = _magnitude(blk[np.uint64(j)])
        q = (u * _DIV1E8_MUL) >> _DIV1E8_SHIFT  # < 43
        low[np.uint64(j)] = _swar8(u - q * _U1E8)
        t = (q * np.uint64(103)) >> np.uint64(10)
        high[np.uint64(j)] = t | ((q - t * _U10) << _U8) | np.uint64(0x3030)
        meta[np.uint64(j)] = (_digits(u) | (neg << _U8)) & (_U0 - np.uint64(ok[np.uint64(j)]))


@njit(cache=True, nogil=True)
def _wide_words(blk, ok, low, mid, high, meta):
    """Like ``_narrow_words`` for any magnitude: 8 + 8 + 4 digits."""
    for j in range(len(blk)):
        u, neg = _magnitude(blk[np.uint64(j)])
        q, r = _div1e8(u)
        q2, r2 = _div1e8(q)  # q2 < 1845
        low[np.uint64(j)] = _swar8(r)
        mid[np.uint64(j)] = _swar8(r2)
        high[np.uint64(j)] = _swar4(q2)
        meta[np.uint64(j)] = (_digits(u) | (neg << _U8)) & (_U0 - np.uint64(ok[np.uint64(j)]))


@njit(cache=True, nogil=True)
def _block_lengths(blk, ok):
    """Text bytes of the values of ``blk`` whose ``ok`` is 1."""
    total = _U0
    for j in range(len(blk)):
        u, neg = _magnitude(blk[np.uint64(j)])
        total += (_digits(u) + neg) * np.uint64(ok[np.uint64(j)])
    return total


@njit(cache=True, nogil=True)
def chunk_bytes(vals, valid, voff, has_nulls, lo, hi):
    """Bytes the text of rows ``[lo, hi)`` takes (nulls take none)."""
    ok = np.ones(_BLOCK + 8, np.uint8)
    total = _U0
    for block_lo in range(lo, hi, _BLOCK):
        block_hi = min(hi, block_lo + _BLOCK)
        m = block_hi - block_lo
        if has_nulls:
            _validity_lanes(valid, voff + block_lo, m, ok)
        total += _block_lengths(vals[block_lo:block_hi], ok[:m])
    return np.int64(total)


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
def chunk_write(vals, valid, voff, has_nulls, lo, hi, base, size, offsets, shift, out, last, narrow):
    """Write offsets ``shift+lo .. shift+hi-1`` (and ``shift+hi`` when ``last``) and the digits."""
    low = np.empty(_BLOCK, np.uint64)
    mid = np.empty(_BLOCK, np.uint64)
    high = np.empty(_BLOCK, np.uint64)
    meta = np.empty(_BLOCK, np.uint64)
    ok = np.ones(_BLOCK + 8, np.uint8)
    floor = np.uint64(base) + (_NARROW_HEADROOM if narrow else _WIDE_HEADROOM)
    widest = np.uint64(11 if narrow else 21)
    end = np.uint64(base + size)
    if last:
        offsets[shift + hi] = end
    block_hi = hi
    while block_hi > lo:
        block_lo = max(lo, block_hi - _BLOCK)
        m = block_hi - block_lo
        if has_nulls:
            _validity_lanes(valid, voff + block_lo, m, ok)
        if narrow:
            _narrow_words(vals[block_lo:block_hi], ok[:m], low[:m], high[:m], meta[:m])
        else:
            _wide_words(vals[block_lo:block_hi], ok[:m], low[:m], mid[:m], high[:m], meta[:m])
        if end >= floor + np.uint64(m) * widest:  # no row of the block comes near the chunk's start
            end = _store_block(out, offsets, shift + block_lo, m, end, low, mid, high, meta, narrow)
        else:
            end = _write_block_exact(vals, valid, voff, has_nulls, block_lo, block_hi, offsets, shift, out, end)
        block_hi = block_lo


@njit(cache=True, nogil=True, inline="always")
def _store_block(out, offsets, first, m, end, low, mid, high, meta, narrow):
    """Store the words of ``m`` rows backwards from ``end``; returns where the first row starts.

    A null row has ``meta`` 0: its stores land on earlier rows' bytes and it takes no text."""
    for j in range(m - 1, -1, -1):
        k = np.uint64(j)
        info = meta[k]
        digits = info & np.uint64(0xFF)
        store_le(out, end - _U8, low[k])
        if narrow:
            store_le(out, end - _U10, np.uint16(high[k]))
        else:
            store_le(out, end - _U16, mid[k])
            store_le(out, end - np.uint64(20), np.uint32(high[k]))
        out[end - digits - _U1] = 45  # '-'; lands on an earlier row's byte when not negative
        end -= digits + (info >> _U8)
        offsets[np.uint64(first + j)] = end
    return end


@njit(cache=True, nogil=True)
def _write_block_exact(vals, valid, voff, has_nulls, lo, hi, offsets, shift, out, end):
    """Rows near the chunk's start: digits written one by one, nothing before a row's own text."""
    for i in range(hi - 1, lo - 1, -1):
        if not has_nulls or is_valid(valid, voff + i):
            u, neg = _magnitude(vals[i])
            _write_exact(out, end, u)
            end -= _digits(u) + neg
            if neg:
                out[end] = 45
        offsets[shift + i] = end
    return end


@njit(cache=True, nogil=True)
def fill_prefix(offsets, shift):
    """Offsets of the ``shift`` padding rows before row 0 (all empty, at 0)."""
    for i in range(shift):
        offsets[i] = 0
