"""One walk of a single fieldshift type tree: struct, field, list, map, primitive callbacks, post-order.

Learned from PyIceberg's ``SchemaVisitor`` / ``visit``: the walk goes down a type, and the visitor's
callbacks build the result bottom-up from their children's results. Conversions (to Arrow, Iceberg
JSON, Avro, Spark) and rewrites (nullability, fresh ids) are visitors, so the Struct/List/Map
recursion is written once, here. Two walks stay elsewhere: ``partner_visitor`` walks a read schema
*with* a file schema, and walks that carry values along the type (defaults, literals) recurse by hand.

- ``field(f, result)`` wraps the result of a struct field's type (e.g. into a ``pa.Field``). A list's
  element and a map's key and value are Fields too; ``list`` / ``map`` get their types' results and
  call ``field`` themselves when they want the same wrapping (they often want another one).
- ``before_field`` / ``after_field`` run around every field (struct fields, elements, keys, values),
  for visitors that track where they are (a path, the owning field's id, ids handed out pre-order).
  The walk calls them only when a visitor overrides them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

import pyarrow as pa

from fieldshift.schema.types import FieldLike, FieldType, ListType, MapType, StructType

__all__ = ["TypeVisitor", "visit_field", "visit_fields", "visit_type"]

T = TypeVar("T")
_NESTED = frozenset({StructType, ListType, MapType})


class TypeVisitor(Generic[T]):
    """Callbacks of ``visit_type``; ``T`` is what the visitor builds for a type (or a field)."""

    hooks = False  # set for subclasses that override before_field / after_field (see __init_subclass__)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.hooks = cls.before_field is not TypeVisitor.before_field or cls.after_field is not TypeVisitor.after_field

    def before_field(self, f: FieldLike) -> None:
        """Runs before ``f``'s type is visited (struct fields, list elements, map keys and values)."""

    def after_field(self, f: FieldLike) -> None:
        """Runs after ``f``'s type is visited, before ``field`` (or the parent's ``list`` / ``map``)."""

    def struct(self, t: StructType, fields: list[T]) -> T:
        """``fields``: the ``field`` results of the struct's fields, in order."""
        raise NotImplementedError

    def field(self, f: FieldLike, result: T) -> T:
        """A struct field (or a top-level field) whose type gave ``result``."""
        return result

    def list(self, t: ListType, element: T) -> T:
        """``element``: the result of the element's type."""
        raise NotImplementedError

    def map(self, t: MapType, key: T, value: T) -> T:
        """``key`` / ``value``: the results of the key's and the value's types."""
        raise NotImplementedError

    def primitive(self, t: pa.DataType) -> T:
        raise NotImplementedError


_NESTED = frozenset({StructType, ListType, MapType})


def visit_type(t: FieldType, visitor: TypeVisitor[T]) -> T:
    """Walk ``t`` post-order: children first, then the callback of ``t``'s kind."""
    cls = t.__class__
    if cls is StructType:
        if visitor.hooks:
            return visitor.struct(t, visit_fields(t.fields, visitor))  # type: ignore[union-attr]
        wrap, primitive = visitor.field, visitor.primitive  # inline: primitive children make no extra call
        return visitor.struct(t, [  # type: ignore[arg-type]
            wrap(f, primitive(c) if (c := f.type).__class__ not in _NESTED else visit_type(c, visitor))
            for f in t.fields  # type: ignore[union-attr]
        ])
    if cls is ListType:
        if visitor.hooks:
            return visitor.list(t, _child(t.element, visitor))  # type: ignore[arg-type, union-attr]
        e = t.element.type  # type: ignore[union-attr]
        return visitor.list(t, visitor.primitive(e) if e.__class__ not in _NESTED  # type: ignore[arg-type]
                            else visit_type(e, visitor))
    if cls is MapType:
        if visitor.hooks:
            return visitor.map(t, _child(t.key, visitor), _child(t.value, visitor))  # type: ignore[arg-type, union-attr]
        primitive = visitor.primitive
        k, v = t.key.type, t.value.type  # type: ignore[union-attr]
        return visitor.map(t, primitive(k) if k.__class__ not in _NESTED else visit_type(k, visitor),  # type: ignore[arg-type]
                           primitive(v) if v.__class__ not in _NESTED else visit_type(v, visitor))
    return visitor.primitive(t)  # type: ignore[arg-type]


def visit_fields(fields: Sequence[FieldLike], visitor: TypeVisitor[T]) -> list[T]:
    """The ``field`` results of a struct's (or a schema's) fields."""
    wrap, primitive = visitor.field, visitor.primitive
    if not visitor.hooks:
        return [wrap(f, primitive(t) if (t := f.type).__class__ not in _NESTED else visit_type(t, visitor))
                for f in fields]
    before, after = visitor.before_field, visitor.after_field
    out = []
    for f in fields:
        before(f)
        t = f.type
        result = primitive(t) if t.__class__ not in _NESTED else visit_type(t, visitor)
        after(f)
        out.append(wrap(f, result))
    return out


def visit_field(f: FieldLike, visitor: TypeVisitor[T]) -> T:
    """One field: its type visited between the hooks, then ``field``."""
    if visitor.hooks:
        return visitor.field(f, _child(f, visitor))
    t = f.type
    return visitor.field(f, visitor.primitive(t) if t.__class__ not in _NESTED else visit_type(t, visitor))


def _child(f: FieldLike, visitor: TypeVisitor[T]) -> T:
    """The result of ``f``'s type, between the hooks (a list element's, a map key's or value's: the
    parent wraps it)."""
    t = f.type
    if not visitor.hooks:
        return visitor.primitive(t) if t.__class__ not in _NESTED else visit_type(t, visitor)
    visitor.before_field(f)
    result = visitor.primitive(t) if t.__class__ not in _NESTED else visit_type(t, visitor)
    visitor.after_field(f)
    return result
