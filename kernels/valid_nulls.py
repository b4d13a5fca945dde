"""Null values whose required descendants are valid: what the Parquet writer accepts.

Arrow lets a null struct hide anything in its children, but the Parquet writer refuses a
non-nullable child array holding a null even under a null parent. ``pa.nulls(n, struct)`` nulls the
children too, so a missing nullable struct with a required child could not be appended. Here a null
struct gets children of placeholder values (zero, empty) where they are required; hidden nulls of
required children in existing arrays are replaced the same way. Callers first make sure no null in
a required field is visible (plans check it), so only hidden values change.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["has_required_descendant", "null_array", "valid_hidden_nulls", "zeros"]

T = pa.types


def zeros(t: pa.DataType, n: int) -> pa.Array:
    """``n`` valid placeholder values of type ``t`` (zero, empty text, empty list); nested children too."""
    if T.is_struct(t):
        kids = [zeros(f.type, n) if not f.nullable else null_array(f.type, n) for f in t]
        return pa.StructArray.from_arrays(kids, fields=list(t)) if kids else pa.array([{}] * n, t)
    if T.is_map(t) or T.is_list(t) or T.is_large_list(t):
        width = np.int64 if T.is_large_list(t) else np.int32
        offsets = pa.py_buffer(np.zeros(n + 1, dtype=width).tobytes())
        child = pa.array([], _entries(t) if T.is_map(t) else t.value_type)
        return pa.Array.from_buffers(t, n, [None, offsets], null_count=0, children=[child])
    if T.is_fixed_size_list(t):
        child = zeros(t.value_type, n * t.list_size) if not t.value_field.nullable \
            else null_array(t.value_type, n * t.list_size)
        return pa.FixedSizeListArray.from_arrays(child, type=t)
    if T.is_null(t):
        return pa.nulls(n)
    if T.is_fixed_size_binary(t):
        return pa.Array.from_buffers(t, n, [None, pa.py_buffer(bytes(n * t.byte_width))], null_count=0)
    if T.is_string(t) or T.is_large_string(t) or T.is_binary(t) or T.is_large_binary(t) \
            or T.is_string_view(t) or T.is_binary_view(t):
        return pa.array([""] * n, pa.string()).cast(t)
    if T.is_boolean(t):
        return pa.Array.from_buffers(t, n, [None, pa.py_buffer(bytes((n + 7) // 8))], null_count=0)
    # every other storable primitive is fixed width: zero bytes are a valid zero (or epoch)
    return pa.Array.from_buffers(t, n, [None, pa.py_buffer(bytes(n * (t.bit_width // 8)))], null_count=0)


def _entries(t: pa.DataType) -> pa.DataType:
    return pa.struct([t.key_field, t.item_field])


def has_required_descendant(t: pa.DataType) -> bool:
    """True when a non-nullable field sits anywhere inside ``t`` (its nulls need valid children)."""
    if T.is_struct(t):
        return any(not f.nullable or has_required_descendant(f.type) for f in t)
    if T.is_map(t):
        return not t.item_field.nullable or has_required_descendant(t.key_type) \
            or has_required_descendant(t.item_type)
    if T.is_list(t) or T.is_large_list(t) or T.is_fixed_size_list(t):
        return not t.value_field.nullable or has_required_descendant(t.value_type)
    return False


def null_array(t: pa.DataType, n: int) -> pa.Array:
    """``n`` nulls of type ``t``; a struct's required children hold placeholders, not nulls."""
    if not T.is_struct(t) or not has_required_descendant(t):
        return pa.nulls(n, t)
    kids = [zeros(f.type, n) if not f.nullable else null_array(f.type, n) for f in t]
    return pa.StructArray.from_arrays(kids, fields=list(t), mask=pa.array(np.ones(n, dtype=bool)))


def valid_hidden_nulls(arr: pa.Array) -> pa.Array:
    """``arr`` with the nulls of required descendants (all hidden under null parents) replaced."""
    t = arr.type
    if T.is_struct(t):
        kids, changed = [], False
        for i, f in enumerate(t):
            child = arr.field(i)
            fixed = valid_hidden_nulls(child)
            if not f.nullable and fixed.null_count:
                fixed = pc.if_else(pc.is_valid(fixed), fixed, zeros(f.type, len(fixed)))
            changed |= fixed is not child
            kids.append(fixed)
        if not changed:
            return arr
        mask = pc.is_null(arr) if arr.null_count else None
        return pa.StructArray.from_arrays(kids, fields=list(t), mask=mask)
    if T.is_list(t) or T.is_large_list(t) or T.is_map(t):
        values = arr.values  # the whole child, not only the slice's range
        fixed = valid_hidden_nulls(values)
        if not T.is_map(t) and not t.value_field.nullable and fixed.null_count:
            fixed = pc.if_else(pc.is_valid(fixed), fixed, zeros(t.value_type, len(fixed)))
        if fixed is values:
            return arr
        return pa.Array.from_buffers(t, len(arr), arr.buffers()[:2], null_count=arr.null_count,
                                     offset=arr.offset, children=[fixed])
    return arr
