"""Zero-copy plumbing for nested arrays: slices, validity, offsets, and rebuilding parents.

pyarrow's ``cast`` of a sliced list or map casts the whole shared child array, so per-batch cost
would grow with the row-group size. These helpers take exactly the child range a slice covers and
rebuild the parent over new children, reusing the parent's validity and (when they start at 0)
offsets buffers.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "conform",
    "decoded",
    "list_child_range",
    "list_from_view",
    "names_like",
    "needs_rebuild",
    "rebuild_as",
    "rebuild_list",
    "rebuild_map",
    "rebuild_struct",
    "relabel",
    "same_child_names",
    "same_values",
    "take_rows",
    "validity_buffer",
    "without_views",
]


def validity_buffer(arr: pa.Array) -> pa.Buffer | None:
    """The validity bitmap of ``arr`` starting at bit 0 (None when there are no nulls)."""
    if arr.null_count == 0:
        return None
    if arr.offset % 8 == 0:
        buf = arr.buffers()[0]
        if buf is not None:
            return buf.slice(arr.offset // 8)
    return pc.is_valid(arr).buffers()[1]


def list_child_range(arr: pa.Array) -> tuple[pa.Array, pa.Buffer | None, int]:
    """For a (possibly sliced) list or map: the child values it covers, offsets from 0, and start.

    The returned offsets buffer is None for fixed-size lists.
    """
    if pa.types.is_fixed_size_list(arr.type):
        size = arr.type.list_size
        return arr.values.slice(arr.offset * size, len(arr) * size), None, arr.offset * size
    large = pa.types.is_large_list(arr.type)
    width = 8 if large else 4
    n, first = len(arr), arr.offset
    buf = arr.buffers()[1]
    if buf is None:  # an empty array may come without an offsets buffer
        return arr.values.slice(0, 0), pa.py_buffer(bytes(width)), 0
    bounds = np.frombuffer(buf, dtype=np.int64 if large else np.int32, count=first + n + 1)
    start, end = int(bounds[first]), int(bounds[first + n])
    if start != 0:
        shifted = pa.allocate_buffer((n + 1) * width)
        np.subtract(bounds[first:], start, out=np.frombuffer(shifted, dtype=bounds.dtype))
        buf = shifted
    elif first:
        buf = buf.slice(first * width)
    return arr.values.slice(start, end - start), buf, start


def rebuild_struct(target: pa.DataType, like: pa.Array, children: list[pa.Array]) -> pa.Array:
    """A struct array over new children, keeping ``like``'s validity (no copy when byte-aligned)."""
    return pa.Array.from_buffers(target, len(like), [validity_buffer(like)], null_count=like.null_count,
                                 children=children)


def rebuild_list(target: pa.DataType, like: pa.Array, offsets: pa.Buffer | None,
                 values: pa.Array) -> pa.Array:
    """A list array of ``target`` over new ``values``, keeping ``like``'s validity and ``offsets`` (None: a
    fixed-size list), without copying them.
    """
    buffers = [validity_buffer(like)] if offsets is None else [validity_buffer(like), offsets]
    return pa.Array.from_buffers(target, len(like), buffers, null_count=like.null_count, children=[values])


def rebuild_map(target: pa.DataType, like: pa.Array, offsets: pa.Buffer, keys: pa.Array,
                items: pa.Array) -> pa.Array:
    """A map array of ``target`` over new ``keys`` and ``items``, keeping ``like``'s validity and ``offsets``."""
    entries = pa.Array.from_buffers(_entries_type(target), len(keys), [None], null_count=0, children=[keys, items])
    return pa.Array.from_buffers(target, len(like), [validity_buffer(like), offsets],
                                 null_count=like.null_count, children=[entries])


@functools.lru_cache(maxsize=256)
def _entries_type(map_type: pa.DataType) -> pa.DataType:
    return pa.struct([map_type.key_field, map_type.item_field])


def conform(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """Give ``arr`` exactly the ``target`` Arrow type when the two hold the same values.

    Decodes dictionaries, turns large/view variants into the target's layout, and relabels field
    names or metadata without copying (``view``) when only those differ.
    """
    if needs_rebuild(arr.type):  # Arrow's cast and view both break these
        return rebuild_as(arr, target)
    if arr.type == target:
        return arr if same_child_names(arr.type, target) else arr.view(target)
    if arr.type.id in _ENCODED:
        arr = decoded(arr)
        if arr.type == target:
            return arr if same_child_names(arr.type, target) else arr.view(target)
    # Arrow's nested cast matches children by name; ours match by position (ids were matched at
    # plan time), so cast into the target layout under the source's names, then relabel. A plain
    # view is only right when nothing but names differ: a timestamp[ms] viewed as [s] would
    # reinterpret the values (Parquet stores seconds as milliseconds).
    named = names_like(arr.type, target)
    if named != arr.type:
        try:
            arr = pc.cast(arr, named, safe=True)
        except pa.ArrowInvalid:  # nulls under null parents in a non-nullable field: Arrow refuses them
            if not pa.types.is_nested(arr.type):
                raise
            return rebuild_as(arr, target)
    try:
        return arr.view(target)
    except pa.ArrowInvalid:  # nulls under null parents in a field the target declares non-nullable
        return relabel(arr, target)


def relabel(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """``arr`` typed ``target`` (equal up to names, metadata and nullability) over the same buffers.

    Where ``target`` declares a nested field non-nullable the validity bitmap is dropped: pyarrow
    builds (and Parquet reads) such fields with nulls under null parents, where no value is seen,
    but then refuses to view or cast them."""
    return _relabel(arr, target, True)


def _relabel(arr: pa.Array, target: pa.DataType, nullable: bool) -> pa.Array:
    arr = arr if arr.offset == 0 else pa.concat_arrays([arr])
    buffers = arr.buffers()
    validity, nulls = (buffers[0], arr.null_count) if nullable else (None, 0)
    if pa.types.is_struct(target):
        kids = [_relabel(arr.field(i), target.field(i).type, target.field(i).nullable)
                for i in range(target.num_fields)]
        return pa.Array.from_buffers(target, len(arr), [validity], nulls, 0, children=kids)
    if pa.types.is_fixed_size_list(target):
        kid = _relabel(arr.values, target.value_type, target.value_field.nullable)
        return pa.Array.from_buffers(target, len(arr), [validity], nulls, 0, children=[kid])
    if pa.types.is_map(target):
        kid = _relabel(arr.values, pa.struct([target.key_field, target.item_field]), False)
        return pa.Array.from_buffers(target, len(arr), [validity, buffers[1]], nulls, 0, children=[kid])
    if pa.types.is_list(target) or pa.types.is_large_list(target):
        kid = _relabel(arr.values, target.value_type, target.value_field.nullable)
        return pa.Array.from_buffers(target, len(arr), [validity, buffers[1]], nulls, 0, children=[kid])
    return pa.Array.from_buffers(target, len(arr), [validity, *buffers[1:]], nulls, 0)


_ENCODED = frozenset(t.id for t in (pa.dictionary(pa.int8(), pa.int8()), pa.run_end_encoded(pa.int32(), pa.int8()),
                                    pa.uuid()))  # every extension type shares this id


def decoded(arr: pa.Array) -> pa.Array:
    """The plain values of a dictionary, run-end encoded or extension array (others as they are)."""
    while arr.type.id in _ENCODED:
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        elif pa.types.is_run_end_encoded(arr.type):
            arr = pc.run_end_decode(arr)
        else:
            arr = arr.storage
    return arr


def same_child_names(a: pa.DataType, b: pa.DataType) -> bool:
    """Arrow's type equality ignores list element names; Parquet's `item` vs `element` must not leak."""
    if pa.types.is_struct(a):
        return all(same_child_names(a.field(i).type, b.field(i).type) for i in range(a.num_fields))
    if pa.types.is_map(a):
        return same_child_names(a.item_type, b.item_type) and same_child_names(a.key_type, b.key_type) \
            and a.key_field.name == b.key_field.name and a.item_field.name == b.item_field.name
    if hasattr(a, "value_field"):
        return a.value_field.name == b.value_field.name and same_child_names(a.value_type, b.value_type)
    return True


def list_from_view(arr: pa.Array) -> pa.Array:
    """A list (or large list) array with the values a list view shows, in order (nested views too)."""
    element = arr.type.value_field
    target = pa.large_list(element) if pa.types.is_large_list_view(arr.type) else pa.list_(element)
    return rebuild_as(arr, names_like(arr.type, without_views(target)))


@functools.lru_cache(maxsize=1024)
def needs_rebuild(t: pa.DataType) -> bool:
    """Arrow's cast and view get these nested layouts wrong: a list view inside a struct, list or map
    (offsets one entry short), any null-typed child (its length is lost), and encoded children (run-end
    encoded, extension: Arrow has no cast from them). :func:`rebuild_as`
    converts them instead."""
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        return True
    if t.id in _ENCODED:
        return False
    kids = [t.field(i).type for i in range(t.num_fields)]
    return any(pa.types.is_null(k) or k.id in _ENCODED or needs_rebuild(k) for k in kids)


def without_views(t: pa.DataType) -> pa.DataType:
    """``t`` with every list view (at any depth) as the list of the same size class."""
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(without_views(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(without_views(t.key_type)),
                       t.item_field.with_type(without_views(t.item_type)), keys_sorted=t.keys_sorted)
    if hasattr(t, "value_field") and not pa.types.is_dictionary(t):
        element = t.value_field.with_type(without_views(t.value_type))
        if pa.types.is_fixed_size_list(t):
            return pa.list_(element, t.list_size)
        return pa.large_list(element) if pa.types.is_large_list(t) or pa.types.is_large_list_view(t) \
            else pa.list_(element)
    return t


def rebuild_as(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """``arr`` in ``target``'s nested layout, children matched by position: lists are rebuilt from
    their offsets and children (never through Arrow's nested cast), leaves are cast."""
    arr = decoded(arr)
    if not pa.types.is_nested(target) or not pa.types.is_nested(arr.type):
        return conform(arr, target)
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(target):
        kids = [rebuild_as(arr.field(i), target.field(i).type) for i in range(target.num_fields)]
        return pa.StructArray.from_arrays(kids, fields=list(target), mask=mask)
    if pa.types.is_map(target):
        entries, buf, _ = list_child_range(arr)
        keys = rebuild_as(entries.field(0), target.key_type)
        items = rebuild_as(entries.field(1), target.item_type)
        return pa.MapArray.from_arrays(_offsets_array(buf, len(arr), pa.int32()), keys, items, type=target,
                                       mask=mask)
    if hasattr(target, "value_field") and not pa.types.is_dictionary(target):
        if pa.types.is_list_view(arr.type) or pa.types.is_large_list_view(arr.type):
            sizes = pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False)
            offsets = pa.array(np.concatenate([[0], np.cumsum(sizes)]), pa.int64())
            values = pc.list_flatten(arr)
        else:
            values, buf, _ = list_child_range(arr)
            if buf is None:  # a fixed-size list: every slot holds list_size values
                offsets = pa.array(np.arange(len(arr) + 1, dtype=np.int64) * arr.type.list_size)
            else:
                offsets = _offsets_array(buf, len(arr), pa.int64() if pa.types.is_large_list(arr.type) else pa.int32())
        if pa.types.is_fixed_size_list(target) and not pa.types.is_fixed_size_list(arr.type):
            values = _fixed_slots(values, offsets, mask, target.list_size)
        values = rebuild_as(values, target.value_type)
        if pa.types.is_fixed_size_list(target):
            return pa.FixedSizeListArray.from_arrays(values, type=target, mask=mask)
        if pa.types.is_list_view(target) or pa.types.is_large_list_view(target):
            kind = pa.int64() if pa.types.is_large_list_view(target) else pa.int32()
            starts = offsets.cast(kind)
            ctor = pa.LargeListViewArray if pa.types.is_large_list_view(target) else pa.ListViewArray
            return ctor.from_arrays(starts.slice(0, len(arr)), pc.subtract(starts.slice(1), starts.slice(0, len(arr))),
                                    values, type=target, mask=mask)
        ctor = pa.LargeListArray if pa.types.is_large_list(target) else pa.ListArray
        offsets = offsets.cast(pa.int64() if pa.types.is_large_list(target) else pa.int32())
        return ctor.from_arrays(offsets, values, type=target, mask=mask)
    return conform(arr, target)


def _fixed_slots(values: pa.Array, offsets: pa.Array, mask: pa.Array | None, size: int) -> pa.Array:
    """A variable-length list's values (``offsets`` from 0 into them) laid out as a fixed-size list of ``size``
    wants them: every entry ``size`` slots, a null entry's filled with nulls (a list's null entry holds no values).
    A value of another length is an ``ArrowInvalid`` naming it (Arrow would regroup the values silently when their
    count happens to fit)."""
    off = offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    nulls = mask.to_numpy(zero_copy_only=False) if mask is not None else np.zeros(len(off) - 1, dtype=bool)
    lengths = np.diff(off)
    wrong = np.flatnonzero((lengths != size) & ~nulls)
    if len(wrong):
        raise pa.ArrowInvalid(f"a list of {lengths[wrong[0]]} values (entry {wrong[0]}) does not fit "
                              f"fixed_size_list of {size}")
    if not (lengths[nulls] != size).any():
        return values
    index = (off[:-1, None] + np.arange(size, dtype=np.int64)).ravel()
    return values.take(pa.array(index, mask=np.repeat(nulls, size)))


def _offsets_array(buf: pa.Buffer, length: int, kind: pa.DataType) -> pa.Array:
    """The offsets ``list_child_range`` gives (from 0) as an array ``from_arrays`` takes."""
    return pa.Array.from_buffers(kind, length + 1, [None, buf])


def names_like(source: pa.DataType, target: pa.DataType) -> pa.DataType:
    """``target`` with the child names (and nullability) of ``source``, position by position."""
    if pa.types.is_struct(target) and pa.types.is_struct(source):
        return pa.struct([
            pa.field(source.field(i).name, names_like(source.field(i).type, target.field(i).type),
                     source.field(i).nullable)
            for i in range(target.num_fields)
        ])
    if pa.types.is_map(target) and pa.types.is_map(source):
        return pa.map_(pa.field(source.key_field.name, names_like(source.key_type, target.key_type), False),
                       pa.field(source.item_field.name, names_like(source.item_type, target.item_type),
                                source.item_field.nullable), keys_sorted=target.keys_sorted)
    if hasattr(target, "value_field") and hasattr(source, "value_field") and not pa.types.is_dictionary(source):
        element = pa.field(source.value_field.name, names_like(source.value_type, target.value_type),
                           source.value_field.nullable)
        if pa.types.is_large_list(target):
            return pa.large_list(element)
        if pa.types.is_fixed_size_list(target):
            return pa.list_(element, target.list_size)
        return pa.list_(element)
    return target


def _unwrapped(t: pa.DataType) -> pa.DataType:
    """The value type under a dictionary, extension or run-end encoding (the layouts conform decodes)."""
    while True:
        if pa.types.is_dictionary(t):
            t = t.value_type
        elif isinstance(t, pa.BaseExtensionType):
            t = t.storage_type
        elif pa.types.is_run_end_encoded(t):
            t = t.value_type
        else:
            return t


_TEXT = frozenset(t.id for t in (pa.string(), pa.large_string(), pa.string_view()))
_BYTES = frozenset(t.id for t in (pa.binary(), pa.large_binary(), pa.binary_view()))


def _variants(got: pa.DataType, want: pa.DataType) -> bool:
    """Physical variants a plan's kernels read by their actual type: text and binary layouts, and
    time units (Parquet stores timestamp[s] as milliseconds; the conversion is checked)."""
    T = pa.types
    if T.is_timestamp(got) and T.is_timestamp(want):
        return got.tz == want.tz
    if T.is_time(got) and T.is_time(want):
        return True
    return (got.id in _TEXT and want.id in _TEXT) or (got.id in _BYTES and want.id in _BYTES)


@functools.lru_cache(maxsize=1024)
def same_values(got: pa.DataType, want: pa.DataType) -> bool:
    """True when an array of type ``got`` holds values of ``want``: equal up to encodings, child names
    and nullability (a plan made for ``want`` reads it)."""
    if got == want:
        return True
    got, want = _unwrapped(got), _unwrapped(want)
    if got == want or _variants(got, want):
        return True
    if pa.types.is_struct(got) and pa.types.is_struct(want):
        return got.num_fields == want.num_fields and all(
            same_values(got.field(i).type, want.field(i).type) for i in range(got.num_fields))
    if pa.types.is_map(got) and pa.types.is_map(want):
        return same_values(got.key_type, want.key_type) and same_values(got.item_type, want.item_type)
    if pa.types.is_map(got) or pa.types.is_map(want):
        return False
    if hasattr(got, "value_field") and hasattr(want, "value_field"):  # list layouts convert (ListNode)
        return getattr(got, "list_size", None) == getattr(want, "list_size", None) \
            and same_values(got.value_type, want.value_type)
    return False


def _take_column(col: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> pa.Array | pa.ChunkedArray:
    try:
        return pc.take(col, pa.array(rows, pa.int64()))
    except pa.ArrowNotImplementedError:  # views, run-end encoded (and nested ones): no take kernel
        pass
    if isinstance(col, pa.ChunkedArray):
        col = pa.concat_arrays(col.chunks) if col.num_chunks != 1 else col.chunk(0)
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1  # runs of consecutive rows: one slice each
    pieces = [col.slice(int(run[0]), len(run)) for run in np.split(rows, breaks) if len(run)]
    return pa.concat_arrays(pieces) if pieces else col.slice(0, 0)


def take_rows(data: Any, rows: np.ndarray) -> Any:
    """``data.take(rows)`` for a Table or RecordBatch of any column types (Arrow has no take for
    string/binary views or run-end encoded arrays: those are sliced and concatenated)."""
    rows = np.asarray(rows, dtype=np.int64)
    try:
        return data.take(pa.array(rows))
    except pa.ArrowNotImplementedError:
        pass
    columns = [_take_column(c, rows) for c in data.columns]
    if isinstance(data, pa.Table):
        return pa.Table.from_arrays(columns, schema=data.schema)
    return pa.RecordBatch.from_arrays(columns, schema=data.schema)
