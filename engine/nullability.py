"""Rewriting every field's nullability at once (map keys stay required: Arrow's rule)."""

from __future__ import annotations

from collections.abc import Callable

from fieldshift.field import Field
from fieldshift.schema import Schema
from fieldshift.types import ListType, MapType, StructType

__all__ = ["with_nullability"]


def with_nullability(schema: Schema, nullable: Callable[[Field], bool]) -> Schema:
    """The same schema (ids, schema id, highest id) with ``nullable(field)`` decided for every field."""
    def walk(f: Field, key: bool = False) -> Field:
        t = f.type
        if isinstance(t, StructType):
            t = StructType(tuple(walk(c) for c in t.fields))
        elif isinstance(t, ListType):
            t = ListType(walk(t.element), t.variant, t.size)
        elif isinstance(t, MapType):
            t = MapType(walk(t.key, key=True), walk(t.value), t.keys_sorted)
        return f.with_(type=t, nullable=False if key else nullable(f.with_(type=t)))

    return Schema([walk(f) for f in schema.fields], schema_id=schema.schema_id,
                  highest_field_id=schema.highest_field_id, unmapped_ids=schema.unmapped_ids)
