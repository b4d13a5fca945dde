"""The Arrow form of fieldshift types and fields: each ``pa.Field`` carries its field's id in its metadata
under ``PARQUET:field_id`` (the key pyarrow's Parquet writer stores), and its doc under ``doc``.

``Field.to_arrow`` and ``Schema.to_arrow`` convert through here, so this module sits below the field: it
reads fields as ``types.FieldLike``. Reading Arrow back into fields is
:mod:`fieldshift.schema.formats.arrow_conversion`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from fieldshift.schema.type_visitor import TypeVisitor, visit_field, visit_fields, visit_type
from fieldshift.schema.types import FieldLike, FieldType, ListType, MapType, StructType

__all__ = ["FIELD_ID_KEY", "field_to_arrow", "fields_to_arrow", "type_to_arrow"]

FIELD_ID_KEY = b"PARQUET:field_id"


class _ToArrow(TypeVisitor[Any]):
    """Types to Arrow types, fields to ``pa.Field`` with the id in their metadata."""

    def struct(self, t: StructType, fields: list[pa.Field]) -> pa.DataType:
        return pa.struct(fields)

    def field(self, f: FieldLike, result: pa.DataType) -> pa.Field:
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


class _ToArrowRecorded(_ToArrow):
    """``_ToArrow`` that keeps every field's Arrow type by id as it builds it."""

    def __init__(self) -> None:
        self.types: dict[int, pa.DataType] = {}

    def field(self, f: FieldLike, result: pa.DataType) -> pa.Field:
        self.types[f.id] = result
        return _ToArrow.field(self, f, result)


_TO_ARROW = _ToArrow()
_ID_METADATA: dict[int, pa.KeyValueMetadata] = {}
"""The metadata of a field without a doc, by id: built once, as pyarrow converts a dict on every call."""


def type_to_arrow(t: FieldType) -> pa.DataType:
    return visit_type(t, _TO_ARROW)


def field_to_arrow(f: FieldLike) -> pa.Field:
    return visit_field(f, _TO_ARROW)


def fields_to_arrow(fields: Sequence[FieldLike]) -> tuple[list[pa.Field], dict[int, pa.DataType]]:
    """``field_to_arrow`` of each field, and the Arrow type built for every field at every depth, by id
    (reading them back out of the Arrow fields would build a wrapper per type)."""
    recorder = _ToArrowRecorded()
    return visit_fields(fields, recorder), recorder.types
