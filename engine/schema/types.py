"""Field-id aware type model: Arrow primitives plus struct/list/map types whose children are Fields.

Arrow's own nested types carry children as ``pa.Field`` without a stable identity; we need an id on
every struct child, list element, map key and map value, so nested types are our own small frozen
dataclasses while primitives stay plain ``pa.DataType`` objects (hashable and picklable).

A nested type holds fields and a field holds a type. The types come first: they hold their children
as ``FieldLike`` (the interface of :class:`fieldshift.schema.field.Field`, its one implementation), so the
field, which validates its defaults and converts itself to Arrow through modules that build on these
types, is defined above them and nothing here imports it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Protocol, Self, Union

import pyarrow as pa

from fieldshift.errors import InvalidTypeError, NestingDepthError
from fieldshift.schema.type_names import primitive_name

__all__ = [
    "MAX_NESTING_DEPTH",
    "FieldLike",
    "FieldType",
    "ListType",
    "MapType",
    "StructType",
    "arrow_depth",
    "check_arrow_depth",
    "check_primitive",
    "container_depth_guard",
    "int_range",
    "is_nested",
    "logical_type",
    "logically_equal",
    "type_name",
]

LIST_VARIANTS = ("list", "large_list", "list_view", "large_list_view", "fixed_size_list")


class FieldLike(Protocol):
    """A field as the type tree sees it: what :class:`fieldshift.schema.field.Field` (its one implementation)
    offers; the nested types below hold their children as this."""

    @property
    def id(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def type(self) -> FieldType: ...

    @property
    def nullable(self) -> bool: ...

    @property
    def doc(self) -> str | None: ...

    @property
    def initial_default(self) -> Any: ...

    @property
    def write_default(self) -> Any: ...

    @property
    def required(self) -> bool: ...

    def with_(self, **changes: Any) -> Self: ...

    def children(self) -> tuple[FieldLike, ...]: ...

    def logically_equal(self, other: FieldLike) -> bool: ...

    def to_arrow(self) -> pa.Field: ...


@dataclass(frozen=True, slots=True)
class StructType:
    """A struct whose children are id-carrying Fields."""

    fields: tuple[FieldLike, ...]

    def __str__(self) -> str:
        inner = ", ".join(f"{f.name}: {type_name(f.type)}" for f in self.fields)
        return f"struct<{inner}>"


@dataclass(frozen=True, slots=True)
class ListType:
    """A list (any Arrow list layout) whose element is an id-carrying Field.

    ``variant`` keeps the physical Arrow layout so ``to_arrow`` round-trips; it does not change the
    logical type (a large_list<int> and a list<int> hold the same values).
    """

    element: FieldLike
    variant: str = "list"
    size: int | None = None

    def __post_init__(self) -> None:
        if self.element.name != "element":  # Parquet's `item`/`element`: one canonical name
            object.__setattr__(self, "element", self.element.with_(name="element"))
        if self.variant not in LIST_VARIANTS:
            raise ValueError(f"unknown list variant {self.variant!r}; expected one of {LIST_VARIANTS}")
        if (self.variant == "fixed_size_list") != (self.size is not None):
            raise ValueError("a fixed_size_list needs a size, and only a fixed_size_list has one")
        if self.size is not None and self.size < 1:
            raise InvalidTypeError(f"a fixed_size_list needs a size of at least 1, got {self.size}")

    def __str__(self) -> str:
        return f"list<{type_name(self.element.type)}>"


@dataclass(frozen=True, slots=True)
class MapType:
    """A map whose key and value are id-carrying Fields (the key is never null)."""

    key: FieldLike
    value: FieldLike
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
    return primitive_name(t)


MAX_NESTING_DEPTH = 99
"""Parquet schema levels a column may span (Arrow's Parquet reader refuses a 100th; the writer does
not check). A struct costs one level, a list or map two (the group and its repeated group), a leaf one:
a chain of 98 structs over a leaf reads, 99 do not; 49 lists read, 50 do not."""

_DECIMAL_MAX = {32: 9, 64: 18, 128: 38, 256: 76}


def check_primitive(t: pa.DataType, path: str) -> None:
    """Refuse primitives Parquet cannot hold (Arrow builds some of them, e.g. decimal128(5, 9))."""
    if pa.types.is_decimal(t):
        top = _DECIMAL_MAX.get(t.bit_width, 76)
        if not 1 <= t.precision <= top or not 0 <= t.scale <= t.precision:
            raise InvalidTypeError(
                f"column {path!r}: {t} is not a valid decimal; precision must be 1..{top} and scale "
                "0..precision (e.g. decimal(10, 2))"
            )
    elif pa.types.is_fixed_size_binary(t) and t.byte_width < 1:
        raise InvalidTypeError(f"column {path!r}: fixed[{t.byte_width}] needs a width of at least 1")


def arrow_depth(t: pa.DataType) -> int:
    """Parquet levels an Arrow type spans (see MAX_NESTING_DEPTH), walked without recursion."""
    deepest, stack = 0, [(t, 1)]
    while stack:
        t, d = stack.pop()
        deepest = max(deepest, d)
        if pa.types.is_dictionary(t) or pa.types.is_run_end_encoded(t):
            stack.append((t.value_type, d))
        elif isinstance(t, pa.BaseExtensionType):
            stack.append((t.storage_type, d))
        elif pa.types.is_struct(t):
            stack.extend((t.field(i).type, d + 1) for i in range(t.num_fields))
        elif pa.types.is_map(t):
            stack.extend(((t.key_type, d + 2), (t.item_type, d + 2)))
        elif hasattr(t, "value_field"):
            stack.append((t.value_type, d + 2))
    return deepest


def check_arrow_depth(schema: pa.Schema | list[pa.Field]) -> None:
    """Refuse, before any recursive walk, an Arrow schema nested deeper than Parquet reads back."""
    for f in schema:
        depth = arrow_depth(f.type)
        if depth > MAX_NESTING_DEPTH:
            _too_deep(f.name, depth)


def _too_deep(path: str, depth: int) -> None:
    raise NestingDepthError(
        f"column {path!r} nests {depth} Parquet levels deep; Parquet readers accept at most "
        f"{MAX_NESTING_DEPTH} (a struct is one level, a list or map two): flatten it, or store the deep "
        "part as JSON text"
    )


def container_depth_guard(obj: object, limit: int, what: str) -> None:
    """Refuse a JSON-like document (dicts and lists) nested deeper than ``limit`` before parsing it
    recursively, so a hostile or generated schema gives a NestingDepthError, not a RecursionError."""
    stack = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if d > limit:
            raise NestingDepthError(
                f"{what} is nested deeper than fieldshift reads ({MAX_NESTING_DEPTH} Parquet levels)"
            )
        if isinstance(o, dict):  # only containers go on the stack: scalars cannot nest
            stack.extend((v, d + 1) for v in o.values() if isinstance(v, (dict, list)))
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o if isinstance(v, (dict, list)))


def int_range(t: pa.DataType) -> tuple[int, int]:
    """The least and greatest value of an Arrow integer type."""
    bits = t.bit_width
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if pa.types.is_signed_integer(t) else (0, (1 << bits) - 1)
