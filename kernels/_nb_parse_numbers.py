"""Numba code for text -> integer (parsed) and text -> float / decimal (validated), with a per-row failure mask.

Imported lazily by :mod:`fieldshift.kernels.numba_parse`. ``parse_int_chunk`` reads rows
``[lo, hi)`` of a string array (``offsets`` for those rows inclusive of the end, ``data`` the whole
data buffer), writes row ``i``'s value to ``out[shift+i]`` and sets ``failed[i]`` for a non-null row
whose text is not accepted. Null and failed rows get 0. The accepted syntax is exactly Arrow's cast
(checked in the tests against ``pyarrow.compute.cast``).

``check_*_chunk`` only validate the syntax (and, for decimals, that the value fits) so that Arrow
can convert the valid rows itself; those validators lean towards accepting: a row they pass that
Arrow still rejects is found afterwards by the slow bisecting path, never silently wrong. The digit
helpers (``_eight_digits``, ``_value8``) also serve :mod:`fieldshift.kernels._nb_parse_times`.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from fieldshift.kernels._nb_util import at as _at
from fieldshift.kernels._nb_util import digit_run_end, is_valid, load_u64, store_le

__all__ = ["check_decimal_chunk", "check_float_chunk", "has_exponent", "parse_int_chunk"]

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U3 = np.uint64(3)
_U4 = np.uint64(4)
_U8 = np.uint64(8)
_U9 = np.uint64(9)
_U10 = np.uint64(10)
_U16 = np.uint64(16)
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
            s = np.int64(_at(offsets, i))
            e = np.int64(_at(offsets, i + 1))
            neg = s < e and _at(data, s) == 45
            p = s + np.int64(neg)
            nd = e - p
            if 0 < nd <= 20 and (signed or not neg) and not (nd >= 2 and _at(data, p) == 48
                                                             and (_at(data, p + 1) | 32) == 120):
                # an optional '-' and up to 20 characters, not hex: written out here, as through the
                # tuple-returning helpers below this loop ran 2-3x slower
                ok = True
                acc = _U0
                if nd <= 8:  # digit by digit
                    for k in range(p, e):
                        d = np.uint64(_at(data, k)) - _U48
                        if d > _U9:
                            ok = False
                            break
                        acc = acc * _U10 + d
                else:  # eight at a time, the last 1..7 as the tail of the word ending at stop (stop - 8 >= p)
                    stop = e - 1 if nd == 20 else e  # a 20th digit is added with an overflow check
                    q = p
                    while stop - q >= 8:
                        w = load_u64(data, q)
                        if not _eight_digits(w):
                            ok = False
                            break
                        acc = acc * _U1E8 + _value8(w)
                        q += 8
                    r = stop - q
                    if ok and r > 0:
                        w = load_u64(data, stop - 8)
                        low = (_U1 << np.uint64((8 - r) * 8)) - _U1
                        w = (w & ~low) | (_M_30 & low)
                        if _eight_digits(w):
                            acc = acc * _POW10[r] + _value8(w)
                        else:
                            ok = False
                    if ok and nd == 20:
                        d = np.uint64(_at(data, stop)) - _U48
                        if d > _U9 or acc > _UMAX_DIV10 or (acc == _UMAX_DIV10 and d > _UMAX_MOD10):
                            ok = False
                        else:
                            acc = acc * _U10 + d
                if ok and acc <= (max_neg if neg else max_pos):
                    m = _U0 - np.uint64(neg)
                    bits = (acc ^ m) - m
                else:
                    ok = False
            else:
                ok, bits = _parse_int(data, s, e, signed, hex_digits, max_pos, max_neg)
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


# -- plain numbers, eight bytes at a time (the validators' fast path) -------------------------------
_M_7F = np.uint64(0x7F7F7F7F7F7F7F7F)
_M_80 = np.uint64(0x8080808080808080)
_M_DOTS = np.uint64(0x2E2E2E2E2E2E2E2E)
_TO_30 = np.uint64(0x5050505050505050)  # 0x80 - 0x30 per byte: the high bit is set from '0' up
_TO_3A = np.uint64(0x4646464646464646)  # 0x80 - 0x3A per byte: ... and from ':' (past '9') up
_ZEROS = np.uint64(0x3030303030303030)
_PLAIN_MAX = 24


@njit(cache=True, nogil=True, inline="always")
def _dot_bytes(w):
    """The '.' bytes of ``w`` as high bits (exact for every byte)."""
    return ~(((w & _M_7F) ^ _M_DOTS) + _M_7F) & ~w & _M_80


@njit(cache=True, nogil=True, inline="always")
def _other_bytes(w, dots):
    """The bytes of ``w`` that are neither a digit nor a '.' as high bits, exact for every byte: no
    carry crosses a byte (the digit-run test is exact only up to its first non-digit)."""
    x = w & _M_7F
    digits = (x + _TO_30) & ~(x + _TO_3A) & ~w & _M_80
    return ~(digits | dots) & _M_80


@njit(cache=True, nogil=True, inline="always")
def _plain_number(data, s, e):
    """For text ``digits[.digits]`` (at least one digit, at most one '.', up to 24 bytes, no sign):
    the length of its integer part; -1 for anything else (an exponent, inf, a bad byte), which the
    full validators then judge. Bytes are read only inside ``[e - 8, e)`` and before."""
    n = e - s
    if n <= 0 or n > _PLAIN_MAX or e < 8:
        return -1
    dot_at = -1
    k = s
    while k < e:
        left = e - k
        if left >= 8:
            w = load_u64(data, k)
        else:  # the last bytes, shifted down, padded with '0'
            w = (load_u64(data, e - 8) >> np.uint64((8 - left) * 8)) | (_ZEROS << np.uint64(left * 8))
        dots = _dot_bytes(w)
        if _other_bytes(w, dots) != 0:
            return -1
        if dots != 0:
            if dot_at >= 0 or (dots & (dots - _U1)) != 0:
                return -1
            dot_at = k - s + np.int64(trailing_zeros(dots) >> _U3)
        k += 8
    if dot_at < 0:
        return n
    if n == 1:  # a lone '.'
        return -1
    return dot_at


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
        s = _at(offsets, i)
        e = _at(offsets, i + 1)
        t = s
        if t < e:  # past a sign, without a branch (signs come at random; not in a helper: numba's
            c = data[t]  # inlining made that 3x slower)
            t += np.int64((c == 43) | (c == 45))
        if _plain_number(data, t, e) < 0 and not _valid_float(data, s, e):
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
        s = _at(offsets, i)
        e = _at(offsets, i + 1)
        t = s
        if t < e:  # past a sign (see check_float_chunk)
            c = data[t]
            t += np.int64((c == 43) | (c == 45))
        whole = _plain_number(data, t, e)  # digits that fit as written fit (zeros only shorten them)
        if (whole < 0 or whole > precision - scale or e - t - whole - 1 > scale) and \
                not _valid_decimal(data, s, e, precision, scale):
            failed[np.uint64(i)] = True
            bad += 1
    return bad



_M_20 = np.uint64(0x2020202020202020)
_M_65 = np.uint64(0x6565656565656565)
_M_01 = np.uint64(0x0101010101010101)
_M_80 = np.uint64(0x8080808080808080)


@njit(cache=True, nogil=True)
def has_exponent(data, lo, hi):
    """Does ``data[lo:hi]`` hold an ``e`` or ``E``? Short text with an exponent can still have more
    digits than a decimal holds. Eight bytes at a time: a byte of ``w | 0x20`` equal to ``e`` is a
    zero byte of ``(w | 0x20) ^ 0x65...``, found exactly by ``(x - 0x01...) & ~x & 0x80...``."""
    found = _U0
    i = lo
    while i + 8 <= hi:
        x = (load_u64(data, i) | _M_20) ^ _M_65
        found |= (x - _M_01) & ~x & _M_80
        i += 8
    while i < hi:
        found |= np.uint64((data[i] | 32) == 101)
        i += 1
    return found != _U0
