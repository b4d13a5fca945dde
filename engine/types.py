"""Field-id aware type model: Arrow primitives plus struct/list/map types whose children are Fields.

Arrow's own nested types carry children as ``pa.Field`` without a stable identity; we need an id on
every struct child, list element, map key and map value, so nested types are our own small frozen
dataclasses while primitives stay plain ``pa.DataType`` objects (hashable and picklable).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

import pyarrow as pa

if TYPE_CHECKING:
    from fieldshift.field import Field

__all__ = [
    "FieldType",
    "ListType",
    "MapType",
    "StructType",
    "is_nested",
    "logical_type",
    "logically_equal",
    "type_name",
]

LIST_VARIANTS = ("list", "large_list", "list_view", "large_list_view", "fixed_size_list")


@dataclass(frozen=True, slots=True)
class StructType:
    """A struct whose children are id-carrying Fields."""

    fields: tuple[Field, ...]

    def __str__(self) -> str:
        inner = ", ".join(f"{f.name}: {type_name(f.type)}" for f in self.fields)
        return f"struct<{inner}>"


@dataclass(frozen=True, slots=True)
class ListType:
    """A list (any Arrow list layout) whose element is an id-carrying Field.

    ``variant`` keeps the physical Arrow layout so ``to_arrow`` round-trips; it does not change the
    logical type (a large_list<int> and a list<int> hold the same values).
    """

    element: Field
    variant: str = "list"
    size: int | None = None

    def __post_init__(self) -> None:
        if self.element.name != "element":  # Parquet's `item`/`element`: one canonical name
            object.__setattr__(self, "element", self.element.with_(name="element"))
        if self.variant not in LIST_VARIANTS:
            raise ValueError(f"unknown list variant {self.variant!r}; expected one of {LIST_VARIANTS}")
        if (self.variant == "fixed_size_list") != (self.size is not None):
            raise ValueError("a fixed_size_list needs a size, and only a fixed_size_list has one")

    def __str__(self) -> str:
        return f"list<{type_name(self.element.type)}>"


@dataclass(frozen=True, slots=True)
class MapType:
    """A map whose key and value are id-carrying Fields (the key is never null)."""

    key: Field
    value: Field
    keys_sorted: bool = False

    def __post_init__(self) -> None:
        if self.key.name != "key" or self.key.nullable:
            object.__setattr__(self, "key", self.key.with_(name="key", nullable=False))
        if self.value.name != "value":
            object.__setattr__(self, "value", self.value.with_(name="value"))

    def __str__(self) -> str:
        return f"map<{type_name(self.key.type)}, {type_name(self.value.type)}>"


FieldType = Union[pa.DataType, StructType, ListType, MapType]


def is_nested(t: FieldType) -> bool:
    return isinstance(t, (StructType, ListType, MapType))


_LOGICAL_PRIMITIVE = {
    pa.large_string(): pa.string(),
    pa.string_view(): pa.string(),
    pa.large_binary(): pa.binary(),
    pa.binary_view(): pa.binary(),
}


def logical_type(t: FieldType) -> FieldType:
    """Collapse physical variants (large/view strings and binaries, decimal256 that fits 128 bits)."""
    if isinstance(t, pa.DataType):
        if pa.types.is_decimal(t) and t.precision <= 38:
            return pa.decimal128(t.precision, t.scale)
        return _LOGICAL_PRIMITIVE.get(t, t)
    return t


def logically_equal(a: FieldType, b: FieldType) -> bool:
    """True when two types hold the same values; nested children compare by id, name and type."""
    if isinstance(a, pa.DataType) and isinstance(b, pa.DataType):
        return logical_type(a) == logical_type(b)
    if isinstance(a, StructType) and isinstance(b, StructType):
        return len(a.fields) == len(b.fields) and all(
            x.logically_equal(y) for x, y in zip(a.fields, b.fields, strict=True)
        )
    if isinstance(a, ListType) and isinstance(b, ListType):
        return a.size == b.size and a.element.logically_equal(b.element)
    if isinstance(a, MapType) and isinstance(b, MapType):
        return a.key.logically_equal(b.key) and a.value.logically_equal(b.value)
    return False


def type_name(t: FieldType) -> str:
    """A short human name used in error messages and explain output."""
    if isinstance(t, pa.DataType):
        return _primitive_name(t)
    return str(t)


@functools.lru_cache(maxsize=4096)
def _primitive_name(t: pa.DataType) -> str:
    from fieldshift.type_names import primitive_name

    return primitive_name(t)
