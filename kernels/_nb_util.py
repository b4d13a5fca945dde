"""Small numba helpers shared by the kernels (imported only together with numba)."""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import intrinsic

__all__ = ["at", "bit_length", "digit_run_end", "is_valid", "load_u64", "store_le", "store_u64"]


@intrinsic
def store_le(typingctx, arr, idx, val):
    """``arr[idx:idx+k] = val`` as little-endian bytes, k = the integer width of ``val`` (unaligned)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.uint8 and isinstance(val, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        i = context.cast(builder, args[1], sig.args[1], types.intp)
        ptr = builder.gep(ary.data, [i])
        width = ir.IntType(sig.args[2].bitwidth)
        builder.store(args[2], builder.bitcast(ptr, width.as_pointer()), align=1)
        return context.get_dummy_value()

    return types.none(arr, idx, val), codegen


@njit(cache=True, nogil=True, inline="always")
def store_u64(arr, idx, val):
    store_le(arr, idx, np.uint64(val))


@njit(cache=True, nogil=True, inline="always")
def is_valid(valid, pos):
    """Bit ``pos`` of an Arrow validity bitmap (as uint8 bytes)."""
    return (valid[np.uint64(pos) >> np.uint64(3)] >> (pos & 7)) & 1


@njit(cache=True, nogil=True, inline="always")
def bit_length(u):
    """Bits needed for the uint64 ``u`` (0 for 0)."""
    return np.uint64(64) - np.uint64(leading_zeros(np.uint64(u)))


@njit(cache=True, nogil=True, inline="always")
def at(arr, k):
    """``arr[k]`` for a known non-negative ``k``: an unsigned index skips numba's wraparound check."""
    return arr[np.uint64(k)]


@intrinsic
def load_u64(typingctx, arr, idx):
    """The eight bytes ``arr[idx:idx+8]`` as a little-endian uint64 (unaligned)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.uint8):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        i = context.cast(builder, args[1], sig.args[1], types.intp)
        ptr = builder.gep(ary.data, [i])
        return builder.load(builder.bitcast(ptr, ir.IntType(64).as_pointer()), align=1)

    return types.uint64(arr, idx), codegen


_HIGH_NIBBLES = np.uint64(0xF0F0F0F0F0F0F0F0)
_SIXES = np.uint64(0x0606060606060606)
_THREES = np.uint64(0x3030303030303030)
_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True, nogil=True, inline="always")
def _non_digit_bytes(w):
    """Nonzero bytes where ``w`` has a byte that is not an ASCII digit (exact up to the first one)."""
    return ((w & _HIGH_NIBBLES) ^ _THREES) | (((w + _SIXES) & _HIGH_NIBBLES) ^ _THREES)


@njit(cache=True, nogil=True)
def digit_run_end(data, s, e):
    """The first position in ``[s, e)`` that is not an ASCII digit (``e`` if none), eight at a time.

    Words are read only inside ``[0, e)``: near ``e`` the last eight bytes before ``e`` are read and
    shifted, so this needs ``e >= 8`` for that path (else it steps byte by byte).
    """
    while s < e:
        left = e - s
        if left >= 8:
            w = load_u64(data, s)
        elif e >= 8:
            shift = np.uint64((8 - left) * 8)
            w = (load_u64(data, e - 8) >> shift) | (_ONES << np.uint64(left * 8))  # pad: not digits
        else:
            c = data[np.uint64(s)]
            if c < 48 or c > 57:
                return s
            s += 1
            continue
        bad = _non_digit_bytes(w)
        if bad != 0:
            return min(s + np.int64(trailing_zeros(bad) >> 3), e)
        s += 8
    return e
