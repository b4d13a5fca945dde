"""Numba code that evolves a small batch from its Arrow C data interface export into an IPC message.

Imported lazily by :mod:`fieldshift.kernels.ipc_batches`. ``run_program`` reads the exported input
tree (``ArrowArray`` structs, by address), runs a program of ops (one per output node, in the IPC
order: depth first, parents before children) and returns ``template prefix + body``, the numbers of
the prefix patched; an empty array asks the caller to take the general path (a null that a required
field refuses, or an input whose layout is not the planned one).

Op rows: see :mod:`fieldshift.kernels.ipc_ops`. A frame stack gives each op its parent's input node, the
physical start of the parent's range in that node's children and the row count.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from fieldshift.kernels._nb_util import store_le
from fieldshift.kernels.ipc_ops import OP_WIDTH, RAW, Op

__all__ = ["run_program"]

_ARROW_LENGTH, _ARROW_NULLS, _ARROW_OFFSET, _ARROW_NBUF, _ARROW_NCHILD = 0, 8, 16, 24, 32
_ARROW_BUFFERS, _ARROW_CHILDREN, _ARROW_DICT = 40, 48, 56
_FIXED = Op.FIXED
_BOOL = Op.BOOL
_VAR = Op.VAR
_INT_TO_STRING = Op.INT_TO_STRING
_STRUCT = Op.STRUCT
_LIST = Op.LIST
_NULLS = Op.NULLS
_CONST_FIXED = Op.CONST_FIXED
_CONST_BOOL = Op.CONST_BOOL
_CONST_VAR = Op.CONST_VAR
_ZEROS = Op.ZEROS  # numba reads module globals, not class attributes
_INPUT_BUFFERS = np.array([0, 2, 2, 3, 2, 1, 2, 0, 0, 0, 0, 0], dtype=np.int64)  # by opcode, of the input
_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)
_WIDTH = np.array([0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8], dtype=np.int64)  # byte width by number code


def _loader(bits: int):
    """An intrinsic reading the ``bits``-wide unsigned integer at an address (unaligned) as int64."""

    @intrinsic
    def load(typingctx, addr):
        if not isinstance(addr, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            width = ir.IntType(bits)
            value = builder.load(builder.inttoptr(args[0], width.as_pointer()), align=1)
            return value if bits == 64 else builder.zext(value, ir.IntType(64))

        return types.int64(addr), codegen

    return load


_load_i64, _load_u32, _load_u16, _load_u8 = _loader(64), _loader(32), _loader(16), _loader(8)


@intrinsic
def _copy_in(typingctx, out, pos, src, nbytes):
    """``out[pos:pos + nbytes] = nbytes bytes at address src`` (a memcpy; ``out`` has room)."""
    if not (isinstance(out, types.Array) and out.dtype == types.uint8):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        dst = builder.gep(ary.data, [args[1]])
        source = builder.inttoptr(args[2], ir.IntType(8).as_pointer())
        cgutils.raw_memcpy(builder, dst, source, args[3], context.get_constant(types.intp, 1))
        return context.get_dummy_value()

    return types.none(out, types.intp, types.int64, types.intp), codegen


@njit(cache=True, nogil=True, inline="always")
def _buffer(node, k):
    return _load_i64(_load_i64(node + _ARROW_BUFFERS) + 8 * k)


@njit(cache=True, nogil=True, inline="always")
def _child(node, k):
    return _load_i64(_load_i64(node + _ARROW_CHILDREN) + 8 * k)


@njit(cache=True, nogil=True, inline="always")
def _offset_at(buf, width, i):
    if width == 4:
        v = _load_u32(buf + 4 * i)
        return v - ((v & 0x80000000) << 1)  # sign-extend
    return _load_i64(buf + 8 * i)


@njit(cache=True, nogil=True, inline="always")
def _read_int(addr, code, i):
    if code == 1:
        v = _load_u8(addr + i)
        return v - ((v & 0x80) << 1)
    if code == 2:
        v = _load_u16(addr + 2 * i)
        return v - ((v & 0x8000) << 1)
    if code == 3:
        return _offset_at(addr, 4, i)
    if code == 4 or code == 8:
        return _load_i64(addr + 8 * i)
    if code == 5:
        return _load_u8(addr + i)
    if code == 6:
        return _load_u16(addr + 2 * i)
    return _load_u32(addr + 4 * i)  # 7: uint32


@njit(cache=True, nogil=True)
def _reserve(out, used, extra):
    if used + extra + 8 <= len(out):
        return out
    bigger = np.empty(max(2 * len(out), used + extra + 64), dtype=np.uint8)
    bigger[:used] = out[:used]
    return bigger


@njit(cache=True, nogil=True)
def _has_null(node, start, count):
    validity = _buffer(node, 0)
    if validity == 0 or _load_i64(node + _ARROW_NULLS) == 0:
        return False
    for i in range(start, start + count):
        if not (_load_u8(validity + (i >> 3)) >> (i & 7)) & 1:
            return True
    return False


@njit(cache=True, nogil=True)
def _validity(out, used, node, start, count):
    """Append the range's validity (bits from 0); (out, used, offset, length, null count)."""
    validity = _buffer(node, 0) if node != 0 else 0
    if validity == 0 or _load_i64(node + _ARROW_NULLS) == 0 or count == 0:
        return out, used, used, 0, 0
    nbytes = (count + 7) >> 3
    out = _reserve(out, used, nbytes)
    first = start >> 3
    last = (start + count - 1) >> 3  # the last input byte the range touches
    shift = start & 7
    ones = 0
    for j in range(nbytes):
        low = _load_u8(validity + first + j)
        high = _load_u8(validity + first + j + 1) if first + j + 1 <= last else 0
        byte = ((low >> shift) | (high << (8 - shift))) & 0xFF
        if j == nbytes - 1 and count & 7:
            byte &= (1 << (count & 7)) - 1  # bits past the range: 0
        out[used + j] = np.uint8(byte)
        ones += _POPCOUNT[byte]
    nulls = count - ones
    if nulls == 0:
        return out, used, used, 0, 0
    return out, (used + nbytes + 7) & ~7, used, nbytes, nulls


@njit(cache=True, nogil=True)
def _zeros(out, used, nbytes):
    out = _reserve(out, used, nbytes)
    for j in range(nbytes):
        out[used + j] = 0
    return out, (used + nbytes + 7) & ~7


@njit(cache=True, nogil=True, inline="always")
def _entry(out, table, k, offset, length):
    """Buffer ``k`` of the message: its body offset and length (16 bytes each in the metadata)."""
    store_le(out, table + 16 * k, np.int64(offset))
    store_le(out, table + 16 * k + 8, np.int64(length))


@njit(cache=True, nogil=True)
def _offsets(out, used, offsets, width, start, count, step):
    """Append ``count + 1`` offsets of ``width`` bytes from 0: the input's rebased (``offsets`` != 0)
    or ``k * step``. Returns (out, used, bytes written, first input offset, bytes the range spans)."""
    nbytes = (count + 1) * width
    out = _reserve(out, used, nbytes)
    first = _offset_at(offsets, width, start) if offsets != 0 else 0
    for k in range(count + 1):
        v = _offset_at(offsets, width, start + k) - first if offsets != 0 else k * step
        if width == 4:
            store_le(out, used + 4 * k, np.int32(v))
        else:
            store_le(out, used + 8 * k, np.int64(v))
    span = _offset_at(offsets, width, start + count) - first if offsets != 0 else count * step
    return out, used, nbytes, first, span


@njit(cache=True, nogil=True)
def _numbers(out, used, data, a, b, start, count, f32, f64):
    """Values of number code ``a`` converted to code ``b`` (an exact widening)."""
    width = _WIDTH[b]
    bits32, bits64 = f32.view(np.uint32), f64.view(np.uint64)
    for i in range(count):
        if a == 9:  # float32 -> float64
            bits32[0] = np.uint32(_load_u32(data + 4 * (start + i)))
            f64[0] = np.float64(f32[0])
            store_le(out, used + 8 * i, bits64[0])
            continue
        v = _read_int(data, a, start + i)
        if b == 9:
            f32[0] = np.float32(v)
            store_le(out, used + 4 * i, bits32[0])
        elif b == 10:
            f64[0] = np.float64(v)
            store_le(out, used + 8 * i, bits64[0])
        elif width == 2:
            store_le(out, used + 2 * i, np.uint16(v & 0xFFFF))
        elif width == 4:
            store_le(out, used + 4 * i, np.uint32(v & 0xFFFFFFFF))
        else:
            store_le(out, used + 8 * i, np.int64(v))


@njit(cache=True, nogil=True)
def _decimal_text(out, at, v):
    """Write the integer ``v`` in decimal at ``out[at:]``; returns the bytes written."""
    mag = np.uint64(v) if v >= 0 else np.uint64(0) - np.uint64(v)  # -2**63 too
    size = 0
    if v < 0:
        out[at] = 45
        size = 1
    digits = 1
    rest = mag // np.uint64(10)
    while rest > 0:
        digits += 1
        rest //= np.uint64(10)
    for k in range(digits - 1, -1, -1):
        out[at + size + k] = np.uint8(48 + np.int64(mag % np.uint64(10)))
        mag //= np.uint64(10)
    return size + digits


@njit(cache=True, nogil=True)
def _repeat(out, used, consts, c0, c1, count):
    """``count`` copies of the constant's ``c1`` bytes."""
    out = _reserve(out, used, count * c1)
    for i in range(count):
        for j in range(c1):
            out[used + i * c1 + j] = consts[c0 + j]
    return out


@njit(cache=True, nogil=True)
def run_program(root, n, ops, consts, prefix, length_at, body_length_at, nodes_at, buffers_at, max_depth,
                budget):
    m = len(prefix)
    out = np.empty(m + 1024 + n * 16 * (len(ops) // OP_WIDTH + 1), dtype=np.uint8)
    out[:m] = prefix
    used = m
    frame_node = np.zeros(max_depth + 1, dtype=np.int64)  # the input node whose children ops read
    frame_base = np.zeros(max_depth + 1, dtype=np.int64)  # ... the physical start within those children
    frame_rows = np.zeros(max_depth + 1, dtype=np.int64)
    frame_left = np.zeros(max_depth + 1, dtype=np.int64)  # child ops still to come
    sp = 0
    frame_node[0], frame_base[0], frame_rows[0], frame_left[0] = root, _load_i64(root + _ARROW_OFFSET), n, 1 << 62
    node_k = buf_k = 0
    empty = np.empty(0, dtype=np.uint8)
    f32, f64 = np.zeros(1, dtype=np.float32), np.zeros(1, dtype=np.float64)  # scratch for float bits
    for r in range(0, len(ops), OP_WIDTH):
        while frame_left[sp] == 0:
            sp -= 1
        frame_left[sp] -= 1
        code, src, kids, a, b = ops[r], ops[r + 1], ops[r + 2], ops[r + 3], ops[r + 4]
        c0, c1, check = ops[r + 5], ops[r + 6], ops[r + 7]
        count = frame_rows[sp]
        node = start = 0
        if src >= 0:  # the input node, checked against the planned layout before any read
            parent = frame_node[sp]
            if parent == 0 or src >= _load_i64(parent + _ARROW_NCHILD):
                return empty
            node = _child(parent, src)
            if _load_i64(node + _ARROW_DICT) != 0 or frame_base[sp] + count > _load_i64(node + _ARROW_LENGTH) \
                    or _load_i64(node + _ARROW_NBUF) != _INPUT_BUFFERS[code]:
                return empty
            start = _load_i64(node + _ARROW_OFFSET) + frame_base[sp]
            for k in range(1, _INPUT_BUFFERS[code]):
                if count and _buffer(node, k) == 0:  # values an exporter left out: not ours to guess
                    return empty
            if check != 0 and _has_null(node, start, count):
                return empty
        # the node and its validity
        if code == _NULLS:
            vo, vl, nulls = used, (count + 7) >> 3, count
            out, used = _zeros(out, used, vl)
        elif code == _CONST_FIXED or code == _CONST_BOOL or code == _CONST_VAR or code == _ZEROS:
            vo, vl, nulls = used, 0, 0
        else:
            out, used, vo, vl, nulls = _validity(out, used, node, start, count)
        _entry(out, buffers_at, buf_k, vo - m, vl)
        buf_k += 1
        store_le(out, nodes_at + 16 * node_k, np.int64(count))
        store_le(out, nodes_at + 16 * node_k + 8, np.int64(nulls))
        node_k += 1
        # its other buffers
        if code == _FIXED or code == _CONST_FIXED:
            width = c1 if code == _CONST_FIXED else (a - RAW if a >= RAW else _WIDTH[b])
            nbytes = count * width
            out = _reserve(out, used, nbytes)
            if code == _CONST_FIXED:
                out = _repeat(out, used, consts, c0, c1, count)
            elif a >= RAW:
                _copy_in(out, used, _buffer(node, 1) + start * width, nbytes)
            else:
                _numbers(out, used, _buffer(node, 1), a, b, start, count, f32, f64)
            _entry(out, buffers_at, buf_k, used - m, nbytes)
            buf_k += 1
            used = (used + nbytes + 7) & ~7
        elif code == _BOOL or code == _CONST_BOOL:
            nbytes = (count + 7) >> 3
            out, after = _zeros(out, used, nbytes)
            for i in range(count):
                q = start + i
                if a if code == _CONST_BOOL else (_load_u8(_buffer(node, 1) + (q >> 3)) >> (q & 7)) & 1:
                    out[used + (i >> 3)] |= np.uint8(1 << (i & 7))
            _entry(out, buffers_at, buf_k, used - m, nbytes)
            buf_k += 1
            used = after
        elif code == _VAR or code == _CONST_VAR:
            offsets = _buffer(node, 1) if code == _VAR else 0
            out, at, nbytes, first, span = _offsets(out, used, offsets, a, start, count, c1)
            _entry(out, buffers_at, buf_k, at - m, nbytes)
            used = (at + nbytes + 7) & ~7
            out = _reserve(out, used, span)
            if code == _VAR:
                _copy_in(out, used, _buffer(node, 2) + first, span)
            else:
                out = _repeat(out, used, consts, c0, c1, count)
            _entry(out, buffers_at, buf_k + 1, used - m, span)
            buf_k += 2
            used = (used + span + 7) & ~7
        elif code == _INT_TO_STRING:
            data, validity = _buffer(node, 1), _buffer(node, 0)
            nbytes = (count + 1) * 4
            out = _reserve(out, used, nbytes + 21 * count)
            text = (used + nbytes + 7) & ~7
            size = 0
            store_le(out, used, np.int32(0))
            for i in range(count):
                q = start + i
                if validity == 0 or (_load_u8(validity + (q >> 3)) >> (q & 7)) & 1:
                    size += _decimal_text(out, text + size, _read_int(data, a, q))
                store_le(out, used + 4 * (i + 1), np.int32(size))
            _entry(out, buffers_at, buf_k, used - m, nbytes)
            _entry(out, buffers_at, buf_k + 1, text - m, size)
            buf_k += 2
            used = (text + size + 7) & ~7
        elif code == _LIST or ((code == _NULLS or code == _ZEROS) and (a == 3 or a == 5)):  # offsets
            if code == _LIST:
                out, at, nbytes, first, span = _offsets(out, used, _buffer(node, 1), a, start, count, 0)
                used = (at + nbytes + 7) & ~7
            else:
                at, nbytes = used, (count + 1) * b
                out, used = _zeros(out, used, nbytes)
            _entry(out, buffers_at, buf_k, at - m, nbytes)
            buf_k += 1
            if code != _LIST and a == 3:  # the empty data of null or empty text
                _entry(out, buffers_at, buf_k, used - m, 0)
                buf_k += 1
        elif (code == _NULLS or code == _ZEROS) and (a == 1 or a == 2):  # zero values
            nbytes = count * b if a == 1 else (count + 7) >> 3
            at = used
            out, used = _zeros(out, used, nbytes)
            _entry(out, buffers_at, buf_k, at - m, nbytes)
            buf_k += 1
        if used - m > budget:  # long values: the general path passes them through without a copy
            return empty
        if kids > 0:  # the children's frame
            if sp + 1 > max_depth:
                return empty
            sp += 1
            frame_left[sp] = kids
            if code == _STRUCT:  # a struct of no input (src -1) is a constant: its children too
                frame_node[sp], frame_base[sp], frame_rows[sp] = node, start, count
            elif code == _LIST:  # a list of no rows may have no offsets buffer (Arrow's spec allows it)
                offsets = _buffer(node, 1)
                first = _offset_at(offsets, a, start) if offsets != 0 else 0
                frame_node[sp], frame_base[sp] = node, first
                frame_rows[sp] = _offset_at(offsets, a, start + count) - first if offsets != 0 else 0
            else:  # nulls or zeros: the children of a null struct have its rows, of a list none
                frame_node[sp], frame_base[sp], frame_rows[sp] = 0, 0, count if code == _NULLS and a == 4 else 0
    body = (used - m + 7) & ~7
    out = _reserve(out, used, 8)
    out[used:m + body] = 0
    store_le(out, length_at, np.int64(n))
    store_le(out, body_length_at, np.int64(body))
    return out[:m + body]
