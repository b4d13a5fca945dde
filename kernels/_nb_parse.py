"""Numba code for text -> number/date/timestamp with a per-row failure mask (imported lazily).

Each ``parse_*_chunk`` reads rows ``[lo, hi)`` of a string array (``offsets`` for those rows
inclusive of the end, ``data`` the whole data buffer), writes row ``i``'s value to ``out[shift+i]``
and sets ``failed[i]`` for a non-null row whose text is not accepted. Null and failed rows get 0.
The accepted syntax is exactly Arrow's cast (checked in the tests against ``pyarrow.compute.cast``).

``check_*_chunk`` only validate the syntax (and, for decimals, that the value fits) so that Arrow
can convert the valid rows itself; those validators lean towards accepting: a row they pass that
Arrow still rejects is found afterwards by the slow bisecting path, never silently wrong.
"""

from __future__ import annotations

from datetime import date

import numpy as np
from numba import njit

from fieldshift.kernels._nb_util import at as _at
from fieldshift.kernels._nb_util import digit_run_end, is_valid, load_u64, store_le

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U4 = np.uint64(4)
_U8 = np.uint64(8)
_U9 = np.uint64(9)
_U10 = np.uint64(10)
_U12 = np.uint64(12)
_U15 = np.uint64(15)
_U16 = np.uint64(16)
_U1970 = np.uint64(1970)
_U32 = np.uint64(32)
_U48 = np.uint64(48)
_U1E8 = np.uint64(10**8)
_POW10 = np.array([10**k for k in range(20)], dtype=np.uint64)
_M_F0 = np.uint64(0xF0F0F0F0F0F0F0F0)
_M_06 = np.uint64(0x0606060606060606)
_M_33 = np.uint64(0x3333333333333333)
_M_30 = np.uint64(0x3030303030303030)
_M_0F = np.uint64(0x0F0F0F0F0F0F0F0F)
_M_00FF = np.uint64(0x00FF00FF00FF00FF)
_M_0000FFFF = np.uint64(0x0000FFFF0000FFFF)
_UMAX_DIV10 = np.uint64((2**64 - 1) // 10)
_UMAX_MOD10 = np.uint64((2**64 - 1) % 10)
_EPOCH = date(1970, 1, 1).toordinal()
# days from 1970-01-01 to January 1st of year y (0..9999, as Arrow accepts), and of 10000
_YEAR_START = np.array([date(1, 1, 1).toordinal() - 366 - _EPOCH]  # year 0 (a leap year)
                       + [date(y, 1, 1).toordinal() - _EPOCH for y in range(1, 10000)]
                       + [date(9999, 12, 31).toordinal() + 1 - _EPOCH], dtype=np.int64)
# days before month m (1..12) at index m-1 of a common year, and at index 13+m-1 of a leap year
_COMMON = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
_LEAP = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
_MONTH_START = np.array(list(np.cumsum([0, *_COMMON])) + list(np.cumsum([0, *_LEAP])), dtype=np.int64)
_DASHES_MASK = np.uint64(0xFF0000FF00000000)
_DASHES = np.uint64(0x2D00002D00000000)  # '-' at bytes 4 and 7
_DASHES_AS_ZEROS = np.uint64(0x3000003000000000)
_HIGH_TWO = np.uint64(0xFFFF000000000000)
_COLONS_MASK = np.uint64(0x0000FF0000FF0000)
_COLONS = np.uint64(0x00003A00003A0000)  # ':' at bytes 2 and 5
_COLONS_AS_ZEROS = np.uint64(0x0000300000300000)
_LOW_SIX_ZEROS = np.uint64(0x0000303030303030)
_INT64_MAX = np.int64(2**63 - 1)


# -- integers -------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, inline="always")
def _eight_digits(w):
    """Are all eight bytes of ``w`` ASCII digits?"""
    return ((w & _M_F0) | (((w + _M_06) & _M_F0) >> _U4)) == _M_33


@njit(cache=True, nogil=True, inline="always")
def _value8(w):
    """The number written by eight ASCII digits (first digit in the lowest byte)."""
    w = ((w & _M_0F) * np.uint64(2561)) >> _U8
    w = ((w & _M_00FF) * np.uint64(6553601)) >> _U16
    return ((w & _M_0000FFFF) * np.uint64(42949672960001)) >> _U32


@njit(cache=True, nogil=True, inline="always")
def _hex_value(c):
    if 48 <= c <= 57:
        return np.int64(c) - 48
    if 97 <= c <= 102:
        return np.int64(c) - 87
    if 65 <= c <= 70:
        return np.int64(c) - 55
    return np.int64(-1)


@njit(cache=True, nogil=True)
def _parse_hex(data, s, e, hex_digits):
    """(ok, bits) of 1..hex_digits hex digits."""
    nd = e - s
    if nd == 0 or nd > hex_digits:
        return False, _U0
    acc = _U0
    for k in range(s, e):
        h = _hex_value(_at(data, k))
        if h < 0:
            return False, _U0
        acc = (acc << _U4) | np.uint64(h)
    return True, acc


@njit(cache=True, nogil=True, inline="always")
def _parse_digits(data, s, e):
    """(ok, value) of the ASCII digits ``data[s:e]`` (s < e); not ok if not digits or > 2**64-1.

    Eight digits at a time (SWAR); the last 1..7 are read as the tail of an 8-byte word ending at
    ``e`` with the bytes before them replaced by '0', so short numbers take no per-digit loop.
    """
    while s < e and _at(data, s) == 48:  # leading zeros
        s += 1
    nd = e - s
    if nd > 20:
        return False, _U0
    stop = e - 1 if nd == 20 else e  # a 20th digit is added with an overflow check
    acc = _U0
    while stop - s >= 8:
        w = load_u64(data, s)
        if not _eight_digits(w):
            return False, _U0
        acc = acc * _U1E8 + _value8(w)
        s += 8
    r = stop - s
    if r > 0:
        if stop >= 8:
            w = load_u64(data, stop - 8)
            low = (_U1 << np.uint64((8 - r) * 8)) - _U1
            w = (w & ~low) | (_M_30 & low)
            if not _eight_digits(w):
                return False, _U0
            acc = acc * _POW10[r] + _value8(w)
        else:
            for k in range(s, stop):
                d = np.uint64(_at(data, k)) - _U48
                if d > _U9:
                    return False, _U0
                acc = acc * _U10 + d
    if nd == 20:
        d = np.uint64(_at(data, stop)) - _U48
        if d > _U9 or acc > _UMAX_DIV10 or (acc == _UMAX_DIV10 and d > _UMAX_MOD10):
            return False, _U0
        acc = acc * _U10 + d
    return True, acc


@njit(cache=True, nogil=True, inline="always")
def _parse_int(data, s, e, signed, hex_digits, max_pos, max_neg):
    """(ok, two's-complement bits as uint64) of one integer in Arrow's syntax.

    Decimal: an optional '-' (signed types only), then digits, leading zeros allowed. Hex: '0x' or
    '0X' then 1..bits/4 hex digits, read as the type's bit pattern. Nothing else (no '+', spaces).
    """
    if s >= e:
        return False, _U0
    first = _at(data, s)
    if first == 48 and e - s >= 2 and (_at(data, s + 1) | 32) == 120:  # 0x / 0X
        return _parse_hex(data, s + 2, e, hex_digits)
    neg = first == 45
    s += np.int64(neg)
    if s >= e or (neg and not signed):
        return False, _U0
    ok, acc = _parse_digits(data, s, e)
    limit = max_neg if neg else max_pos
    m = _U0 - np.uint64(neg)
    return ok and acc <= limit, (acc ^ m) - m


@njit(cache=True, nogil=True)
def parse_int_chunk(offsets, data, valid, voff, has_nulls, lo, hi, signed, hex_digits, max_pos, max_neg,
                    out, width, shift, failed):
    """``out`` is the output buffer as bytes; values are ``width`` bytes wide (1, 2, 4 or 8)."""
    bad = 0
    for i in range(lo, hi):
        bits = _U0
        if not has_nulls or is_valid(valid, voff + i):
            ok, bits = _parse_int(data, np.int64(_at(offsets, i)), np.int64(_at(offsets, i + 1)), signed,
                                  hex_digits, max_pos, max_neg)
            if not ok:
                bits = _U0
                failed[np.uint64(i)] = True
                bad += 1
        k = (shift + i) * width
        if width == 8:
            store_le(out, k, bits)
        elif width == 4:
            store_le(out, k, np.uint32(bits))
        elif width == 2:
            store_le(out, k, np.uint16(bits))
        else:
            out[np.uint64(k)] = np.uint8(bits)
    return bad


# -- floats (validation only; Arrow converts) -----------------------------------------------------
@njit(cache=True, nogil=True, inline="always")
def _lower(c):
    return c | 32 if 65 <= c <= 90 else c


@njit(cache=True, nogil=True)
def _matches_word(data, s, e, word):
    """Does ``_at(data, s:e)`` equal ``word`` (lower-case ASCII) ignoring ASCII case?"""
    if e - s != len(word):
        return False
    for k in range(e - s):
        if _lower(_at(data, s + k)) != word[k]:
            return False
    return True


_INF = np.frombuffer(b"inf", dtype=np.uint8).copy()
_INFINITY = np.frombuffer(b"infinity", dtype=np.uint8).copy()
_NAN = np.frombuffer(b"nan", dtype=np.uint8).copy()


@njit(cache=True, nogil=True)
def _valid_float(data, s, e):
    """Arrow's float syntax: [+-] then inf | infinity | nan[(chars)] (any case) or a decimal number
    ``digits[.digits]`` with at least one digit and an optional ``e[+-]digits`` exponent."""
    if s < e and (_at(data, s) == 43 or _at(data, s) == 45):
        s += 1
    if s >= e:
        return False
    c = _at(data, s)
    if c == 105 or c == 73 or c == 110 or c == 78:  # i I n N
        if _matches_word(data, s, e, _INF) or _matches_word(data, s, e, _INFINITY):
            return True
        if e - s >= 3 and _matches_word(data, s, s + 3, _NAN):
            if e - s == 3:
                return True
            if _at(data, s + 3) != 40 or _at(data, e - 1) != 41:  # nan(chars)
                return False
            for k in range(s + 4, e - 1):
                ch = _at(data, k)
                if not (48 <= ch <= 57 or 65 <= ch <= 90 or 97 <= ch <= 122 or ch == 95):
                    return False
            return True
        return False
    q = digit_run_end(data, s, e)
    digits = q - s
    s = q
    if s < e and _at(data, s) == 46:  # '.'
        q = digit_run_end(data, s + 1, e)
        digits += q - s - 1
        s = q
    if digits == 0:
        return False
    if s < e and (_at(data, s) | 32) == 101:  # e / E
        s += 1
        if s < e and (_at(data, s) == 43 or _at(data, s) == 45):
            s += 1
        if s >= e:
            return False
        s = digit_run_end(data, s, e)
    return s == e


@njit(cache=True, nogil=True)
def check_float_chunk(offsets, data, valid, voff, has_nulls, lo, hi, failed):
    bad = 0
    for i in range(lo, hi):
        if has_nulls and not is_valid(valid, voff + i):
            continue
        if not _valid_float(data, _at(offsets, i), _at(offsets, i + 1)):
            failed[np.uint64(i)] = True
            bad += 1
    return bad


# -- decimals (validation only; Arrow converts) ---------------------------------------------------
@njit(cache=True, nogil=True)
def _valid_decimal(data, s, e, precision, scale):
    """Arrow's decimal syntax ``[+-]digits[.digits][e[+-]digits]``, and the value fits
    ``decimal(precision, scale)`` without losing digits (zero with any exponent is left to Arrow)."""
    if s < e and (_at(data, s) == 43 or _at(data, s) == 45):
        s += 1
    if s >= e:
        return False
    int_start = s
    int_end = digit_run_end(data, s, e)
    frac_start = frac_end = int_end
    s = int_end
    if s < e and _at(data, s) == 46:  # '.'
        frac_start = s + 1
        frac_end = digit_run_end(data, frac_start, e)
        s = frac_end
    if int_end == int_start and frac_end == frac_start:
        return False
    exp = 0
    if s < e and (_at(data, s) | 32) == 101:  # e / E
        s += 1
        eneg = False
        if s < e and (_at(data, s) == 43 or _at(data, s) == 45):
            eneg = _at(data, s) == 45
            s += 1
        if s >= e:
            return False
        while s < e and 48 <= _at(data, s) <= 57:
            if exp < 100_000:
                exp = exp * 10 + np.int64(_at(data, s)) - 48
            s += 1
        if eneg:
            exp = -exp
    if s != e:
        return False
    # the digit at int_end - 1 - j has weight 10**(j + exp); at frac_start + j, 10**(-1 - j + exp)
    k = int_start
    while k < int_end and _at(data, k) == 48:
        k += 1
    if k < int_end:
        top = int_end - 1 - k + exp
    else:
        k = frac_start
        while k < frac_end and _at(data, k) == 48:
            k += 1
        if k == frac_end:
            return True  # zero
        top = -1 - (k - frac_start) + exp
    k = frac_end - 1
    while k >= frac_start and _at(data, k) == 48:
        k -= 1
    if k >= frac_start:
        low = -1 - (k - frac_start) + exp
    else:
        k = int_end - 1
        while _at(data, k) == 48:  # stops: there is a nonzero digit
            k -= 1
        low = int_end - 1 - k + exp
    return low >= -scale and top < precision - scale


@njit(cache=True, nogil=True)
def check_decimal_chunk(offsets, data, valid, voff, has_nulls, lo, hi, precision, scale, failed):
    bad = 0
    for i in range(lo, hi):
        if has_nulls and not is_valid(valid, voff + i):
            continue
        if not _valid_decimal(data, _at(offsets, i), _at(offsets, i + 1), precision, scale):
            failed[np.uint64(i)] = True
            bad += 1
    return bad


# -- dates and timestamps -------------------------------------------------------------------------
@njit(cache=True, nogil=True, inline="always")
def _two(data, k):
    a = np.int64(_at(data, k)) - 48
    b = np.int64(_at(data, k + 1)) - 48
    if a < 0 or a > 9 or b < 0 or b > 9:
        return np.int64(-1)
    return a * 10 + b


@njit(cache=True, nogil=True, inline="always")
def _nibble(w, byte):
    return (w >> np.uint64(8 * byte)) & _U15


@njit(cache=True, nogil=True, inline="always")
def _parse_date(data, s, e):
    """(ok, days since 1970-01-01) of ``YYYY-MM-DD`` at ``s`` (year 0000..9999, a real day).

    Two overlapping 8-byte loads cover the ten characters; tables give the days; the checks are
    combined without branches (random dates would mispredict them).
    """
    if e - s < 10:
        return False, np.int64(0)
    w = load_u64(data, s)  # YYYY-MM-
    w2 = load_u64(data, s + 2)  # YY-MM-DD
    digits = (w & ~_DASHES_MASK) | _DASHES_AS_ZEROS
    dd = (w2 & _HIGH_TWO) | _LOW_SIX_ZEROS
    ok = ((w & _DASHES_MASK) == _DASHES) & _eight_digits(digits) & _eight_digits(dd)
    y = (_nibble(w, 0) * np.uint64(1000) + _nibble(w, 1) * np.uint64(100) + _nibble(w, 2) * _U10
         + _nibble(w, 3))
    m = _nibble(w, 5) * _U10 + _nibble(w, 6)
    d = np.int64(_nibble(w2, 6) * _U10 + _nibble(w2, 7))
    ok &= (m >= _U1) & (m <= _U12) & (d >= 1)
    y = y if ok else _U1970
    m = m if ok else _U1
    start = _at(_YEAR_START, y)
    k = (13 if _at(_YEAR_START, y + _U1) - start == 366 else 0) + m
    first = _at(_MONTH_START, k - _U1)
    ok &= d <= _at(_MONTH_START, k) - first
    return ok, start + first + d - 1


@njit(cache=True, nogil=True)
def parse_date_chunk(offsets, data, valid, voff, has_nulls, lo, hi, out, shift, failed):
    bad = 0
    for i in range(lo, hi):
        if has_nulls and not is_valid(valid, voff + i):
            out[np.uint64(shift + i)] = 0
            continue
        s = _at(offsets, i)
        e = _at(offsets, i + 1)
        ok, days = _parse_date(data, s, e)
        if ok and e - s != 10:
            ok = False
        out[np.uint64(shift + i)] = days if ok else 0
        if not ok:
            failed[np.uint64(i)] = True
            bad += 1
    return bad


@njit(cache=True, nogil=True)
def _parse_zone(data, s, e):
    """(ok, offset seconds) of ``Z`` | ``±hh`` | ``±hhmm`` | ``±hh:mm``."""
    n = e - s
    if n == 1 and _at(data, s) == 90:
        return True, np.int64(0)
    if n < 3 or not (_at(data, s) == 43 or _at(data, s) == 45):
        return False, np.int64(0)
    sign = 1 if _at(data, s) == 43 else -1
    hh = _two(data, s + 1)
    mm = np.int64(0)
    if n == 3:
        pass
    elif n == 5:
        mm = _two(data, s + 3)
    elif n == 6 and _at(data, s + 3) == 58:
        mm = _two(data, s + 4)
    else:
        return False, np.int64(0)
    if hh < 0 or hh > 23 or mm < 0 or mm > 59:
        return False, np.int64(0)
    return True, sign * (hh * 3600 + mm * 60)


@njit(cache=True, nogil=True, inline="always")
def _short_digits(data, p, q):
    """(ok, value) of 1..9 ASCII digits ``data[p:q]`` with at least 8 bytes before ``q``."""
    nd = q - p
    w = load_u64(data, q - 8)
    if nd < 8:
        low = (_U1 << np.uint64((8 - nd) * 8)) - _U1
        w = (w & ~low) | (_M_30 & low)
    ok = _eight_digits(w)
    v = np.int64(_value8(w))
    if nd == 9:
        d = np.int64(_at(data, p)) - 48
        ok &= (d >= 0) & (d <= 9)
        v += d * 100_000_000
    return ok, v


@njit(cache=True, nogil=True, inline="always")
def _hms(data, p):
    """(ok, seconds) of ``hh:mm:ss`` at ``p`` (eight bytes known to be there), in one load."""
    w = load_u64(data, p)
    ok = ((w & _COLONS_MASK) == _COLONS) & _eight_digits((w & ~_COLONS_MASK) | _COLONS_AS_ZEROS)
    hh = _nibble(w, 0) * _U10 + _nibble(w, 1)
    mm = _nibble(w, 3) * _U10 + _nibble(w, 4)
    ss = _nibble(w, 6) * _U10 + _nibble(w, 7)
    ok &= (hh < np.uint64(24)) & (mm < np.uint64(60)) & (ss < np.uint64(60))
    return ok, np.int64(hh * np.uint64(3600) + mm * np.uint64(60) + ss)


@njit(cache=True, nogil=True, inline="always")
def _parse_timestamp(data, s, e, frac_digits, multiplier, bound, zoned):
    """(ok, value in the unit) of Arrow's ISO-8601 subset.

    ``YYYY-MM-DD`` (naive only), or that plus ``T``/space and ``hh``, ``hh:mm``, ``hh:mm:ss`` or
    ``hh:mm:ss.f`` (1..``frac_digits`` digits); a zone (``Z``, ``±hh[[:]mm]``) is required when
    ``zoned`` and refused otherwise. Overflow is checked as Arrow does: whole seconds times the
    unit, then plus the fraction.
    """
    ok, days = _parse_date(data, s, e)
    if not ok:
        return False, np.int64(0)
    secs = days * 86400
    p = s + 10
    if p == e:
        if zoned:
            return False, np.int64(0)
        return _scale(secs, multiplier, bound, np.int64(0))
    sep = _at(data, p)
    if not (sep == 84 or sep == 32) or e - p < 3:  # 'T' or ' '
        return False, np.int64(0)
    frac = np.int64(0)
    if e - p >= 9 and _at(data, p + 3) == 58 and _at(data, p + 6) == 58:  # the usual hh:mm:ss
        ok, hms = _hms(data, p + 1)
        if not ok:
            return False, np.int64(0)
        secs += hms
        p += 9
        if p < e and _at(data, p) == 46:  # '.'
            p += 1
            q = e
            if zoned:
                q = digit_run_end(data, p, e)
            nd = q - p
            if nd == 0 or nd > frac_digits:
                return False, np.int64(0)
            ok, f = _short_digits(data, p, q)
            if not ok:
                return False, np.int64(0)
            frac = f * np.int64(_at(_POW10, frac_digits - nd))
            p = q
    else:  # hh or hh:mm
        hh = _two(data, p + 1)
        if hh < 0 or hh > 23:
            return False, np.int64(0)
        secs += hh * 3600
        p += 3
        if p + 3 <= e and _at(data, p) == 58:
            mm = _two(data, p + 1)
            if mm < 0 or mm > 59:
                return False, np.int64(0)
            secs += mm * 60
            p += 3
            if p < e and _at(data, p) == 58:  # a partial hh:mm:s
                return False, np.int64(0)
    if zoned:
        ok, off = _parse_zone(data, p, e)
        if not ok:
            return False, np.int64(0)
        secs -= off
    elif p != e:
        return False, np.int64(0)
    return _scale(secs, multiplier, bound, frac)


@njit(cache=True, nogil=True, inline="always")
def _scale(secs, multiplier, bound, frac):
    """(ok, secs * multiplier + frac) unless that leaves int64 (``bound`` = INT64_MAX // multiplier)."""
    if secs > bound or secs < -bound:
        return False, np.int64(0)
    v = secs * multiplier
    if v > _INT64_MAX - frac:
        return False, np.int64(0)
    return True, v + frac


@njit(cache=True, nogil=True)
def parse_timestamp_chunk(offsets, data, valid, voff, has_nulls, lo, hi, frac_digits, multiplier, bound,
                          zoned, out, shift, failed):
    bad = 0
    for i in range(lo, hi):
        if has_nulls and not is_valid(valid, voff + i):
            out[np.uint64(shift + i)] = 0
            continue
        ok, v = _parse_timestamp(data, _at(offsets, i), _at(offsets, i + 1), frac_digits, multiplier, bound,
                                 zoned)
        out[np.uint64(shift + i)] = v
        if not ok:
            failed[np.uint64(i)] = True
            bad += 1
    return bad


# -- validity -------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def validity_without(valid, voff, has_nulls, failed, shift, n, out):
    """Bits ``shift .. shift+n-1`` of ``out`` = input validity and not failed (bits before: 0)."""
    for b in range(len(out)):
        out[b] = 0
    for i in range(n):
        ok = not _at(failed, i)
        if ok and has_nulls:
            ok = is_valid(valid, voff + i) != 0
        if ok:
            j = shift + i
            out[j >> 3] |= np.uint8(1 << (j & 7))
