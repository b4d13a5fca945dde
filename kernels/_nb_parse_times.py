"""Numba code for text -> date32 / timestamp with a per-row failure mask (imported lazily).

``parse_date_chunk`` and ``parse_timestamp_chunk`` follow the conventions of
:mod:`fieldshift.kernels._nb_parse_numbers`: rows ``[lo, hi)``, row ``i``'s value to
``out[shift+i]``, ``failed[i]`` set for a non-null row whose text Arrow's cast would refuse, 0 for
null and failed rows. The accepted syntax is exactly Arrow's cast (ISO-8601 dates and timestamps,
years 0..9999, an optional zone that zoned targets require and naive targets refuse).
"""

from __future__ import annotations

from datetime import date

import numpy as np
from numba import njit

from fieldshift.kernels._nb_parse_numbers import _M_30, _POW10, _U1, _U10, _eight_digits, _value8
from fieldshift.kernels._nb_util import at as _at
from fieldshift.kernels._nb_util import digit_run_end, is_valid, load_u64

__all__ = ["parse_date_chunk", "parse_timestamp_chunk"]

_U12 = np.uint64(12)
_U15 = np.uint64(15)
_U1970 = np.uint64(1970)
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
