"""Arrow <-> fieldshift: ids travel in each Arrow field's metadata under ``PARQUET:field_id``.

This is the key pyarrow's Parquet reader and writer use, so a schema read from a Parquet footer
already carries the ids, and a table written from ``to_arrow()`` stores them in the file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from fieldshift.errors import InvalidFieldIdError, MissingFieldIdError
from fieldshift.field import Field
from fieldshift.type_visitor import TypeVisitor, visit_field, visit_type
from fieldshift.types import FieldType, ListType, MapType, StructType

__all__ = ["FIELD_ID_KEY", "arrow_field_id", "field_from_arrow", "field_to_arrow", "type_to_arrow"]

FIELD_ID_KEY = b"PARQUET:field_id"


def arrow_field_id(f: pa.Field) -> int | None:
    raw = (f.metadata or {}).get(FIELD_ID_KEY)
    return None if raw is None else _parse_id(raw, f.name)


def _parse_id(raw: bytes, path: str) -> int:
    """A ``PARQUET:field_id`` value: a positive integer (negative ids are fieldshift's own, for columns
    nothing identifies)."""
    try:
        fid = int(raw)
    except ValueError:
        fid = 0
    if fid <= 0:
        raise InvalidFieldIdError(
            f"Arrow field {path!r} has {FIELD_ID_KEY.decode()}={raw.decode(errors='replace')!r}; field ids "
            "must be positive integers. Remove the metadata and read with a name mapping, or renumber it"
        )
    return fid


class _ToArrow(TypeVisitor[Any]):
    """Types to Arrow types, fields to ``pa.Field`` with the id in their metadata."""

    def struct(self, t: StructType, fields: list[pa.Field]) -> pa.DataType:
        return pa.struct(fields)

    def field(self, f: Field, result: pa.DataType) -> pa.Field:
        if f.doc is None:
            meta = _ID_METADATA.get(f.id)
            if meta is None:
                meta = pa.KeyValueMetadata({FIELD_ID_KEY: str(f.id).encode()})
                if len(_ID_METADATA) < 65_536:
                    _ID_METADATA[f.id] = meta
        else:
            meta = pa.KeyValueMetadata({FIELD_ID_KEY: str(f.id).encode(), b"doc": f.doc.encode()})
        return pa.field(f.name, result, nullable=f.nullable, metadata=meta)

    def list(self, t: ListType, element: pa.DataType) -> pa.DataType:
        item = self.field(t.element, element)
        if t.variant == "large_list":
            return pa.large_list(item)
        if t.variant == "list_view":
            return pa.list_view(item)
        if t.variant == "large_list_view":
            return pa.large_list_view(item)
        if t.variant == "fixed_size_list":
            return pa.list_(item, t.size)
        return pa.list_(item)

    def map(self, t: MapType, key: pa.DataType, value: pa.DataType) -> pa.DataType:
        return pa.map_(self.field(t.key, key), self.field(t.value, value), keys_sorted=t.keys_sorted)

    def primitive(self, t: pa.DataType) -> pa.DataType:
        return t


_TO_ARROW = _ToArrow()
_ID_METADATA: dict[int, pa.KeyValueMetadata] = {}
"""The metadata of a field without a doc, by id: built once, as pyarrow converts a dict on every call."""


def type_to_arrow(t: FieldType) -> pa.DataType:
    return visit_type(t, _TO_ARROW)


def field_to_arrow(f: Field) -> pa.Field:
    return visit_field(f, _TO_ARROW)


IdSource = Callable[[str], int]


def field_from_arrow(f: pa.Field, path: str, next_id: IdSource | None, name: str | None = None) -> Field:
    """Convert one Arrow field (recursively); ``next_id`` assigns ids to fields that carry none.

    ``name`` replaces the Arrow name (list elements are always "element", whatever Arrow calls them)."""
    meta = f.metadata or {}  # built anew on every access: read once
    raw = meta.get(FIELD_ID_KEY)
    if raw is not None:
        fid = _parse_id(raw, path)
    elif next_id is None:
        raise MissingFieldIdError(
            f"Arrow field {path!r} ({f.type}) has no {FIELD_ID_KEY.decode()!r} metadata. Pass "
            "assign_ids=True to number fields in order, or read the file with a name mapping."
        )
    else:
        fid = next_id(path)
    doc = meta.get(b"doc")
    return Field(
        id=fid,
        name=f.name if name is None else name,
        type=_type_from_arrow(f.type, path, next_id),
        nullable=f.nullable,
        doc=doc.decode() if doc is not None else None,
    )


_NESTED_OR_WRAPPED = frozenset(t.id for t in (
    pa.struct([]), pa.map_(pa.int8(), pa.int8()), pa.list_(pa.int8()), pa.large_list(pa.int8()),
    pa.list_view(pa.int8()), pa.large_list_view(pa.int8()), pa.list_(pa.int8(), 1),
    pa.dictionary(pa.int8(), pa.int8()), pa.run_end_encoded(pa.int32(), pa.int8()),
    pa.uuid(),  # every extension type shares this id
))
_PRIMITIVES: dict[pa.DataType, pa.DataType] = {}


def _type_from_arrow(t: pa.DataType, path: str, next_id: IdSource | None) -> FieldType:
    if t.id not in _NESTED_OR_WRAPPED:
        return _primitive(t, path)
    if pa.types.is_dictionary(t):
        return _type_from_arrow(t.value_type, path, next_id)
    if isinstance(t, pa.BaseExtensionType):  # e.g. arrow.uuid: the values are its storage type
        return _type_from_arrow(t.storage_type, path, next_id)
    if pa.types.is_struct(t):
        children = [t.field(i) for i in range(t.num_fields)]
        return StructType(tuple(field_from_arrow(c, f"{path}.{c.name}", next_id) for c in children))
    if pa.types.is_map(t):
        return MapType(
            key=field_from_arrow(t.key_field, f"{path}.key", next_id),
            value=field_from_arrow(t.item_field, f"{path}.value", next_id),
            keys_sorted=t.keys_sorted,
        )
    for check, variant in (
        (pa.types.is_large_list, "large_list"),
        (pa.types.is_list_view, "list_view"),
        (pa.types.is_large_list_view, "large_list_view"),
        (pa.types.is_fixed_size_list, "fixed_size_list"),
        (pa.types.is_list, "list"),
    ):
        if check(t):
            element = field_from_arrow(t.value_field, f"{path}.element", next_id, "element")
            size = t.list_size if variant == "fixed_size_list" else None
            return ListType(element=element, variant=variant, size=size)
    return _type_from_arrow(t.value_type, path, next_id)  # run-end encoded


def _primitive(t: pa.DataType, path: str) -> pa.DataType:
    """The one shared instance of a storable primitive type (plans memoise decisions per instance)."""
    shared = _PRIMITIVES.get(t)
    if shared is None:
        _check_storable(t, path)
        if len(_PRIMITIVES) < 4096:
            _PRIMITIVES[t] = t
        shared = t
    return shared


def _check_storable(t: pa.DataType, path: str) -> None:
    from fieldshift.type_names import primitive_name

    try:
        primitive_name(t)
    except TypeError:
        raise TypeError(
            f"column {path!r} has Arrow type {t}, which Parquet does not store; fieldshift supports "
            "the types Parquet stores (see the README's type table)"
        ) from None
