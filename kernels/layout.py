"""Zero-copy plumbing for nested arrays: slices, validity, offsets, and rebuilding parents.

pyarrow's ``cast`` of a sliced list or map casts the whole shared child array, so per-batch cost
would grow with the row-group size. These helpers take exactly the child range a slice covers and
rebuild the parent over new children, reusing the parent's validity and (when they start at 0)
offsets buffers.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.kernels.registry import kernel

__all__ = [
    "conform",
    "list_child_range",
    "rebuild_list",
    "rebuild_map",
    "rebuild_struct",
    "validity_buffer",
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
    offsets = arr.offsets
    start = offsets[0].as_py() if len(arr) else 0
    end = offsets[len(offsets) - 1].as_py() if len(arr) else 0
    if start != 0:
        offsets = pc.subtract(offsets, pa.scalar(start, offsets.type))
    buf = offsets.buffers()[1]
    if offsets.offset:
        buf = buf.slice(offsets.offset * offsets.type.bit_width // 8)
    return arr.values.slice(start, end - start), buf, start


def rebuild_struct(target: pa.DataType, like: pa.Array, children: list[pa.Array]) -> pa.Array:
    """A struct array over new children, keeping ``like``'s validity (no copy when byte-aligned)."""
    return pa.Array.from_buffers(target, len(like), [validity_buffer(like)], null_count=like.null_count,
                                 children=children)


def rebuild_list(target: pa.DataType, like: pa.Array, offsets: pa.Buffer | None,
                 values: pa.Array) -> pa.Array:
    buffers = [validity_buffer(like)] if offsets is None else [validity_buffer(like), offsets]
    return pa.Array.from_buffers(target, len(like), buffers, null_count=like.null_count, children=[values])


def rebuild_map(target: pa.DataType, like: pa.Array, offsets: pa.Buffer, keys: pa.Array,
                items: pa.Array) -> pa.Array:
    entries_type = pa.struct([target.key_field, target.item_field])
    entries = pa.Array.from_buffers(entries_type, len(keys), [None], null_count=0, children=[keys, items])
    return pa.Array.from_buffers(target, len(like), [validity_buffer(like), offsets],
                                 null_count=like.null_count, children=[entries])


@kernel("conform")
def conform(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """Give ``arr`` exactly the ``target`` Arrow type when the two hold the same values.

    Decodes dictionaries, turns large/view variants into the target's layout, and relabels field
    names or metadata without copying (``view``) when only those differ.
    """
    if arr.type == target:
        return arr
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
        if arr.type == target:
            return arr
    try:
        return arr.view(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError):
        return pc.cast(arr, target, safe=True)
