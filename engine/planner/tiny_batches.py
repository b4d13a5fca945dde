"""Tiny batches: a plan's nodes compiled once into an IPC program (``kernels.ipc_batches``).

On a batch of a few rows every array costs a pyarrow wrapper to read and another to build, which is
most of the cost of a W1 batch of 16 rows. The program does the whole batch in one numba call and one
IPC read instead. It covers the work that cannot fail: pass-through, exact numeric widening, int ->
string, decimal precision and string -> binary (the same bytes), structs, lists and maps, constants; a
plan with anything else (a checked cast, a dictionary or view layout, a fixed-size list, a non-null list
constant) has no program, and a required field whose range holds a null sends the batch back to the
general path, which reports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from fieldshift.kernels.ipc_batches import IpcProgram
from fieldshift.kernels.ipc_ops import NUMBER_CODES, OP_WIDTH, RAW, Op
from fieldshift.kernels.ipc_template import ipc_template
from fieldshift.kernels.numba_format import INT_TO_STRING
from fieldshift.kernels.valid_nulls import has_required_descendant
from fieldshift.kernels.widen import NUMPY_WIDEN
from fieldshift.planner.nodes import CastNode, ConstantNode, ListNode, MapNode, Node, NullCheck, StructNode, Take

__all__ = ["TINY_BATCH_ROWS", "compile_program"]

TINY_BATCH_ROWS = 256
"""Up to this many rows the program's copy of every value costs less than the wrappers it saves."""


class _Unsupported(Exception):
    """Raised while compiling: this plan gets no program."""


@dataclass
class _Builder:
    rows: list[list[int]] = field(default_factory=list)
    consts: bytearray = field(default_factory=bytearray)
    depth: int = 0

    def op(self, code: int, src: int, kids: int = 0, a: int = 0, b: int = 0, const: bytes = b"",
           check: bool = False) -> None:
        start = len(self.consts)
        self.consts += const
        self.rows.append([code, src, kids, a, b, start, len(const), int(check)])


def compile_program(nodes: tuple[Node, ...], input_schema: pa.Schema, output_schema: pa.Schema) -> IpcProgram | None:
    """The program for these nodes, or None when some node or type is outside what programs do."""
    try:
        template = ipc_template(output_schema)
    except (pa.ArrowException, ValueError, TypeError):  # a type Arrow cannot make a null sample of
        return None
    if template is None:
        return None
    b = _Builder()
    try:
        for node in nodes:
            _node(b, node, list(input_schema.types), 1)
    except _Unsupported:
        return None
    if len(b.rows) != template.nodes or sum(_buffers(r[0], r[3]) for r in b.rows) != template.buffers:
        return None  # the IPC writer laid these types out otherwise
    ops = np.array(b.rows, dtype=np.int64).reshape(-1)
    assert len(ops) % OP_WIDTH == 0
    return IpcProgram(ops, np.frombuffer(bytes(b.consts) or b"\0", dtype=np.uint8).copy(), template,
                      b.depth + 1, output_schema)


def _buffers(code: int, a: int) -> int:
    if code == Op.STRUCT or (code == Op.NULLS and a == 4):
        return 1
    if code in (Op.VAR, Op.INT_TO_STRING, Op.CONST_VAR) or (code in (Op.NULLS, Op.ZEROS) and a == 3):
        return 3
    return 2


def _node(b: _Builder, node: Node, inputs: list[pa.DataType], depth: int, check: bool = False) -> None:
    b.depth = max(b.depth, depth)
    if isinstance(node, NullCheck):
        _node(b, node.inner, inputs, depth, check=True)
    elif isinstance(node, Take):
        _take(b, node.index, inputs[node.index], node.target, depth, check)
    elif isinstance(node, CastNode):
        _cast(b, node, inputs[node.index], check)
    elif isinstance(node, ConstantNode):
        _constant(b, node.value, depth)
    elif isinstance(node, StructNode):
        source = inputs[node.index]
        if not pa.types.is_struct(source):
            raise _Unsupported
        # a struct with a null check among its children: its nulls' hidden required values are
        # replaced on the general path (valid_hidden_nulls), so a struct with nulls goes there
        hides = any(isinstance(c, NullCheck) for c in node.children)
        b.op(Op.STRUCT, node.index, len(node.children), check=check or hides)
        for child in node.children:
            _node(b, child, [f.type for f in source], depth + 1)
    elif isinstance(node, ListNode):
        source = inputs[node.index]
        b.op(Op.LIST, node.index, 1, a=_list_width(source, node.target), check=check)
        _node(b, node.element, [source.value_type], depth + 1)
    elif isinstance(node, MapNode):
        source = inputs[node.index]
        if not (pa.types.is_map(source) and pa.types.is_map(node.target)):
            raise _Unsupported
        b.op(Op.LIST, node.index, 1, a=4, check=check)
        b.op(Op.STRUCT, 0, 2)
        b.depth = max(b.depth, depth + 2)
        _node(b, node.key, [source.key_type, source.item_type], depth + 2)
        _node(b, node.value, [source.key_type, source.item_type], depth + 2)
    else:
        raise _Unsupported


def _list_width(source: pa.DataType, target: pa.DataType) -> int:
    if pa.types.is_list(source) and pa.types.is_list(target):
        return 4
    if pa.types.is_large_list(source) and pa.types.is_large_list(target):
        return 8
    raise _Unsupported  # fixed-size lists, views, or a change of layout


def _take(b: _Builder, src: int, source: pa.DataType, target: pa.DataType, depth: int, check: bool) -> None:
    """The input as it is (names may differ: the buffers are the same)."""
    b.depth = max(b.depth, depth)
    if source.id != target.id:
        raise _Unsupported
    if pa.types.is_struct(target):
        if source.num_fields != target.num_fields:
            raise _Unsupported
        b.op(Op.STRUCT, src, target.num_fields, check=check)
        for k in range(target.num_fields):
            _take(b, k, source.field(k).type, target.field(k).type, depth + 1, False)
    elif pa.types.is_map(target):
        b.op(Op.LIST, src, 1, a=4, check=check)
        b.op(Op.STRUCT, 0, 2)
        _take(b, 0, source.key_type, target.key_type, depth + 2, False)
        _take(b, 1, source.item_type, target.item_type, depth + 2, False)
    elif pa.types.is_list(target) or pa.types.is_large_list(target):
        b.op(Op.LIST, src, 1, a=_list_width(source, target), check=check)
        _take(b, 0, source.value_type, target.value_type, depth + 1, False)
    else:
        _leaf(b, src, source, target, check)


def _leaf(b: _Builder, src: int, source: pa.DataType, target: pa.DataType, check: bool) -> None:
    if pa.types.is_boolean(target):
        b.op(Op.BOOL, src, check=check)
    elif pa.types.is_string(target) or pa.types.is_binary(target):
        b.op(Op.VAR, src, a=4, check=check)
    elif pa.types.is_large_string(target) or pa.types.is_large_binary(target):
        b.op(Op.VAR, src, a=8, check=check)
    elif _fixed_width(target) and source.equals(target):
        width = _fixed_width(target)
        b.op(Op.FIXED, src, a=RAW + width, b=RAW + width, check=check)
    else:
        raise _Unsupported


def _fixed_width(t: pa.DataType) -> int:
    """Byte width of a fixed-width layout of whole bytes (0 for anything else)."""
    if not (pa.types.is_decimal(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_primitive(t)) or \
            pa.types.is_boolean(t) or pa.types.is_null(t):
        return 0
    try:
        bits = t.bit_width
    except ValueError:
        return 0
    return bits // 8 if bits % 8 == 0 else 0


def _cast(b: _Builder, node: CastNode, source: pa.DataType, check: bool) -> None:
    src, dst = NUMBER_CODES.get(source), NUMBER_CODES.get(node.target)
    if node.kernel == NUMPY_WIDEN and src is not None and dst is not None and src != NUMBER_CODES[pa.uint64()]:
        b.op(Op.FIXED, node.index, a=src, b=dst, check=check)
    elif node.kernel == INT_TO_STRING and src is not None and src <= 7 and pa.types.is_string(node.target):
        b.op(Op.INT_TO_STRING, node.index, a=src, check=check)
    elif _same_decimal_bytes(source, node.target):
        b.op(Op.FIXED, node.index, a=RAW + 16, b=RAW + 16, check=check)
    elif (source, node.target) in ((pa.string(), pa.binary()), (pa.large_string(), pa.large_binary())):
        b.op(Op.VAR, node.index, a=4 if source == pa.string() else 8, check=check)  # the same bytes
    else:
        raise _Unsupported


def _same_decimal_bytes(source: pa.DataType, target: pa.DataType) -> bool:
    """A decimal128 given more precision at the same scale: the same 16 bytes a value."""
    return pa.types.is_decimal128(source) and pa.types.is_decimal128(target) and \
        source.scale == target.scale and target.precision >= source.precision


def _constant(b: _Builder, value: pa.Scalar, depth: int) -> None:
    t = value.type
    if not value.is_valid:
        _null_array(b, t, depth)
    elif pa.types.is_boolean(t):
        b.op(Op.CONST_BOOL, -1, a=int(value.as_py()))
    elif pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        raw = value.as_py()
        b.op(Op.CONST_VAR, -1, a=8 if pa.types.is_large_string(t) or pa.types.is_large_binary(t) else 4,
             const=raw.encode() if isinstance(raw, str) else bytes(raw))
    elif _fixed_width(t):
        arr = pa.array([value], t)
        width = _fixed_width(t)
        b.op(Op.CONST_FIXED, -1, const=arr.buffers()[1].to_pybytes()[:width])
    elif pa.types.is_struct(t):  # a struct of no input: never null, its children constants
        b.op(Op.STRUCT, -1, t.num_fields)
        b.depth = max(b.depth, depth + 1)
        for k in range(t.num_fields):  # as pa.repeat builds them: a null child is nulls all through
            if value[k].is_valid:
                _constant(b, value[k], depth + 1)
            else:
                _nulls(b, value[k].type, depth + 1)
    else:
        raise _Unsupported


def _null_array(b: _Builder, t: pa.DataType, depth: int) -> None:
    """Nulls as ``valid_nulls.null_array`` makes them: a struct's required children hold placeholders."""
    if not (pa.types.is_struct(t) and has_required_descendant(t)):
        _nulls(b, t, depth)
        return
    b.depth = max(b.depth, depth)
    b.op(Op.NULLS, -1, t.num_fields, a=4)
    for f in t:
        (_null_array if f.nullable else _zeros)(b, f.type, depth + 1)


def _zeros(b: _Builder, t: pa.DataType, depth: int) -> None:
    """Valid placeholders as ``valid_nulls.zeros`` makes them (zero, empty text, empty list)."""
    b.depth = max(b.depth, depth)
    if pa.types.is_struct(t):
        b.op(Op.STRUCT, -1, t.num_fields)
        for f in t:
            (_null_array if f.nullable else _zeros)(b, f.type, depth + 1)
    elif pa.types.is_map(t):
        b.op(Op.ZEROS, -1, 1, a=5, b=4)
        b.op(Op.STRUCT, -1, 2)
        _nulls(b, t.key_type, depth + 2)  # no rows
        _nulls(b, t.item_type, depth + 2)
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        b.op(Op.ZEROS, -1, 1, a=5, b=8 if pa.types.is_large_list(t) else 4)
        _nulls(b, t.value_type, depth + 1)  # no rows
    else:
        b.op(Op.ZEROS, -1, a=_leaf_layout(t), b=_leaf_width(t))


def _nulls(b: _Builder, t: pa.DataType, depth: int) -> None:
    """Nulls as ``pa.nulls`` makes them: a struct's children are null too."""
    b.depth = max(b.depth, depth)
    if pa.types.is_struct(t):
        b.op(Op.NULLS, -1, t.num_fields, a=4)
        for f in t:
            _nulls(b, f.type, depth + 1)
    elif pa.types.is_map(t):
        b.op(Op.NULLS, -1, 1, a=5, b=4)
        b.op(Op.NULLS, -1, 2, a=4)
        _nulls(b, t.key_type, depth + 2)
        _nulls(b, t.item_type, depth + 2)
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        b.op(Op.NULLS, -1, 1, a=5, b=8 if pa.types.is_large_list(t) else 4)
        _nulls(b, t.value_type, depth + 1)
    else:
        b.op(Op.NULLS, -1, a=_leaf_layout(t), b=_leaf_width(t))


def _leaf_layout(t: pa.DataType) -> int:
    """The layout code of a leaf for NULLS and ZEROS ops: 1 fixed width, 2 boolean, 3 text."""
    if pa.types.is_boolean(t):
        return 2
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        return 3
    if _fixed_width(t):
        return 1
    raise _Unsupported


def _leaf_width(t: pa.DataType) -> int:
    """Byte width of a fixed-width leaf, offset width of text (0 for booleans)."""
    if pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        return 8
    if pa.types.is_string(t) or pa.types.is_binary(t):
        return 4
    return _fixed_width(t)
