"""Rewriting every field's nullability at once (map keys stay required: Arrow's rule)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema
from fieldshift.schema.type_visitor import TypeVisitor, visit_fields
from fieldshift.schema.types import FieldType, ListType, MapType, StructType

__all__ = ["with_nullability"]


class _Nullability(TypeVisitor[Any]):
    def __init__(self, nullable: Callable[[Field], bool]) -> None:
        self.nullable = nullable

    def field(self, f: Field, result: FieldType) -> Field:
        f = f.with_(type=result)
        return f.with_(nullable=self.nullable(f))

    def struct(self, t: StructType, fields: list[Field]) -> FieldType:
        return StructType(tuple(fields))

    def list(self, t: ListType, element: FieldType) -> FieldType:
        return ListType(self.field(t.element, element), t.variant, t.size)

    def map(self, t: MapType, key: FieldType, value: FieldType) -> FieldType:
        return MapType(t.key.with_(type=key, nullable=False), self.field(t.value, value), t.keys_sorted)

    def primitive(self, t: pa.DataType) -> FieldType:
        return t


def with_nullability(schema: Schema, nullable: Callable[[Field], bool]) -> Schema:
    """The same schema (ids, schema id, highest id) with ``nullable(field)`` decided for every field."""
    return Schema(visit_fields(schema.fields, _Nullability(nullable)), schema_id=schema.schema_id,
                  highest_field_id=schema.highest_field_id, unmapped_ids=schema.unmapped_ids)
