"""The working parts of a `SchemaUpdate`: `TopLevel` (its fields indexed by name and id), fresh ids, defaults.

A builder on a 10,000-column schema must not rebuild and re-index the whole schema for each call:
top-level edits change `TopLevel` in place, and the full `Schema` is built once, when it is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pyarrow as pa

from fieldshift.errors import InvalidDefaultError
from fieldshift.schema.field import Field
from fieldshift.schema.type_visitor import TypeVisitor
from fieldshift.schema.types import FieldType, ListType, MapType, StructType, type_name

__all__ = ["FreshIds", "TopLevel", "recast_default"]


class TopLevel:
    """An ordered list of top-level fields with lazy name -> position and id -> position indexes."""

    __slots__ = ("_by_id", "_by_name", "fields")

    def __init__(self, fields: Iterable[Field]) -> None:
        self.fields: list[Field] = list(fields)
        self._by_name: dict[str, int] | None = None
        self._by_id: dict[int, int] | None = None

    def _index(self) -> tuple[dict[str, int], dict[int, int]]:
        if self._by_name is None or self._by_id is None:
            self._by_name = {f.name: i for i, f in enumerate(self.fields)}
            self._by_id = {f.id: i for i, f in enumerate(self.fields)}
        return self._by_name, self._by_id

    def named(self, name: str) -> Field | None:
        """The top-level field called ``name`` (None: no such column)."""
        i = self._index()[0].get(name)
        return None if i is None else self.fields[i]

    def holds(self, field_id: int) -> bool:
        """Whether ``field_id`` is a top-level field (not a nested one)."""
        return field_id in self._index()[1]

    def append(self, field: Field) -> None:
        self.fields.append(field)
        if self._by_name is not None and self._by_id is not None:
            self._by_name[field.name] = self._by_id[field.id] = len(self.fields) - 1

    def replace(self, field_id: int, new: Field) -> None:
        """Swap the top-level field ``field_id`` for ``new`` (same id, perhaps a new name)."""
        by_name, by_id = self._index()
        i = by_id[field_id]
        old = self.fields[i]
        self.fields[i] = new
        if old.name != new.name:
            del by_name[old.name]
            by_name[new.name] = i

    def reset(self, fields: Iterable[Field]) -> None:
        """Any other edit (insert, move, drop): a new list, indexes rebuilt on the next lookup."""
        self.fields = list(fields)
        self._by_name = self._by_id = None


def recast_default(value: Any, source: FieldType, target: FieldType, path: str) -> Any:
    """Carry a default across a type change (``0`` int stays ``0`` as long, ``1`` becomes ``'1'``...),
    typed by the field's own type, never re-inferred from the Python value (a uint64 >= 2**63)."""
    if value is None or not isinstance(target, pa.DataType):
        return value
    from fieldshift.schema.formats.arrow_conversion import type_to_arrow

    try:
        scalar, arrow_target = pa.scalar(value, type_to_arrow(source)), type_to_arrow(target)
        try:
            return scalar.cast(arrow_target).as_py()
        except pa.ArrowInvalid:
            if pa.types.is_integer(scalar.type) and pa.types.is_floating(arrow_target):
                return scalar.cast(arrow_target, safe=False).as_py()  # rounds, as the column's values do
            raise
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        raise InvalidDefaultError(
            f"cannot change {path!r} to {type_name(target)}: its default {value!r} does not fit the new "
            "type; change or drop the default first"
        ) from None


class FreshIds(TypeVisitor[Any]):
    """A type with fresh ids for every nested field, handed out before the field's own children."""

    def __init__(self, take_id: Callable[[], int]) -> None:
        self.take_id = take_id
        self.ids: dict[int, int] = {}  # id(field) -> its new id, from before_field until it is rebuilt

    def before_field(self, f: Field) -> None:
        self.ids[id(f)] = self.take_id()

    def renumbered(self, f: Field, t: FieldType) -> Field:
        return f.with_(id=self.ids.pop(id(f)), type=t)

    def struct(self, t: StructType, fields: list[Field]) -> FieldType:
        return StructType(tuple(fields))

    def field(self, f: Field, result: FieldType) -> Field:
        return self.renumbered(f, result)

    def list(self, t: ListType, element: FieldType) -> FieldType:
        return ListType(self.renumbered(t.element, element), t.variant, t.size)

    def map(self, t: MapType, key: FieldType, value: FieldType) -> FieldType:
        return MapType(self.renumbered(t.key, key), self.renumbered(t.value, value), t.keys_sorted)

    def primitive(self, t: pa.DataType) -> FieldType:
        return t
