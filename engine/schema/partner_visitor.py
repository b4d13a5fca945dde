"""One walk of a read schema with its partner, the file schema, matched by field id.

Learned from PyIceberg's ``SchemaWithPartnerVisitor``: the walk goes down the read schema's
struct/list/map/primitive tree, a ``PartnerAccessor`` finds the file field partnering each read
field (by id in a struct, by position in a list or map), and the visitor's callbacks receive the
read field, its file partner (or None) and the results of its children. Two differences, because
planning is on the hot path and needs them:

- A visitor hands a context down (``field_contexts``, ``element_context``, ...): a path, a target
  type, a Spark type, ...
- By default a read field without a partner, or whose partner has another shape, is not walked
  into (``missing`` / ``mismatch`` decide alone). With ``descend_missing = True`` the walk goes on
  with no partner, as PyIceberg's does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

from fieldshift.schema.field import Field
from fieldshift.schema.types import FieldType, ListType, MapType, StructType

__all__ = ["PartnerAccessor", "PartnerVisitor", "visit_level", "visit_with_partner"]

_NESTED = frozenset({StructType, ListType, MapType})

C = TypeVar("C")
T = TypeVar("T")

class PartnerAccessor:
    """Finds file partners: by id among a struct's fields, by position in a list or map."""

    def struct_partners(self, file_fields: tuple[Field, ...]) -> dict[int, tuple[int, Field]]:
        """Field id -> (position in the file struct, file field)."""
        return {f.id: (i, f) for i, f in enumerate(file_fields)}


ID_ACCESSOR = PartnerAccessor()


class PartnerVisitor(Generic[C, T]):
    """Callbacks of ``visit_with_partner``; ``C`` is the context handed down, ``T`` a result.

    ``index`` is the file field's position in its parent (0 for a list element and a map key, 1 for
    a map value), what a reader needs to take the column out of the file's data.
    """

    descend_missing = False
    wraps_fields = False  # call ``field`` with every result (off: one call less per field)
    accessor: PartnerAccessor = ID_ACCESSOR

    def field_contexts(self, ctx: C, read_fields: tuple[Field, ...]) -> Sequence[C]:
        """The contexts of a struct's (or schema's) read fields, in read order; ``ctx`` is the parent's.

        One call per level, not per field: planning a thousand columns calls it a few times."""
        return [ctx] * len(read_fields)

    def element_context(self, ctx: C, rf: Field) -> C:
        """The context of ``rf``, the element of the list whose context is ``ctx``."""
        return ctx

    def key_context(self, ctx: C, rf: Field) -> C:
        return ctx

    def value_context(self, ctx: C, rf: Field) -> C:
        return ctx

    def missing(self, rf: Field, ctx: C) -> T:
        """``rf`` has no partner in the file (only called unless ``descend_missing``)."""
        raise NotImplementedError

    def mismatch(self, rf: Field, ff: Field, index: int, ctx: C) -> T:
        """``rf`` and its partner differ in shape (struct, list, map, primitive), unless ``descend_missing``."""
        raise NotImplementedError

    def primitive(self, rf: Field, ff: Field | None, index: int, ctx: C) -> T:
        raise NotImplementedError

    def struct(self, rf: Field, ff: Field | None, index: int, ctx: C, children: list[T]) -> T:
        raise NotImplementedError

    def list(self, rf: Field, ff: Field | None, index: int, ctx: C, element: T) -> T:
        raise NotImplementedError

    def map(self, rf: Field, ff: Field | None, index: int, ctx: C, key: T, value: T) -> T:
        raise NotImplementedError

    def field(self, rf: Field, ff: Field | None, ctx: C, result: T) -> T:
        """Called with every field's result (partnered or not) when ``wraps_fields``: e.g. to wrap it."""
        return result


def visit_level(visitor: PartnerVisitor[C, T], read_fields: tuple[Field, ...],
                file_fields: tuple[Field, ...] | None, ctx: C) -> list[T]:
    """Visit the fields of one struct (or a schema's top level); ``ctx`` is the parent's context."""
    partners = visitor.accessor.struct_partners(file_fields) if file_fields else {}
    primitive = visitor.primitive
    wrap = visitor.field if visitor.wraps_fields else None
    out = []
    for rf, child in zip(read_fields, visitor.field_contexts(ctx, read_fields), strict=True):
        found = partners.get(rf.id)
        if found is None:
            ff = None
            result = _walk(visitor, rf, None, 0, child) if visitor.descend_missing else visitor.missing(rf, child)
        else:
            index, ff = found
            rc, fc = rf.type.__class__, ff.type.__class__
            if rc not in _NESTED and fc not in _NESTED:  # two primitives, the common case: no detour
                result = primitive(rf, ff, index, child)
            elif rc is fc:
                result = _walk(visitor, rf, ff, index, child)
            else:
                result = visit_with_partner(visitor, rf, ff, index, child)
        out.append(result if wrap is None else wrap(rf, ff, child, result))
    return out


def visit_with_partner(visitor: PartnerVisitor[C, T], rf: Field, ff: Field, index: int, ctx: C) -> T:
    """Visit ``rf`` with its file partner ``ff`` (``index``: its position in the file's parent)."""
    rt, ft = rf.type, ff.type
    if rt.__class__ not in _NESTED:
        if ft.__class__ not in _NESTED:
            return visitor.primitive(rf, ff, index, ctx)
    elif type(rt) is type(ft):
        return _walk(visitor, rf, ff, index, ctx)
    if visitor.descend_missing:
        return _walk(visitor, rf, ff, index, ctx)
    return visitor.mismatch(rf, ff, index, ctx)


def _walk(visitor: PartnerVisitor[C, T], rf: Field, ff: Field | None, index: int, ctx: C) -> T:
    """Descend into ``rf``'s children; partners come from ``ff`` where it has ``rf``'s shape."""
    rt = rf.type
    ft: FieldType | None = ff.type if ff is not None else None
    if rt.__class__ is StructType:
        children = visit_level(visitor, rt.fields, ft.fields if isinstance(ft, StructType) else None, ctx)
        return visitor.struct(rf, ff, index, ctx, children)
    if isinstance(rt, ListType):
        element = _child(visitor, rt.element, ft.element if isinstance(ft, ListType) else None, 0,
                         visitor.element_context(ctx, rt.element))
        return visitor.list(rf, ff, index, ctx, element)
    if isinstance(rt, MapType):
        is_map = isinstance(ft, MapType)
        key = _child(visitor, rt.key, ft.key if is_map else None, 0, visitor.key_context(ctx, rt.key))
        value = _child(visitor, rt.value, ft.value if is_map else None, 1, visitor.value_context(ctx, rt.value))
        return visitor.map(rf, ff, index, ctx, key, value)
    return visitor.primitive(rf, ff, index, ctx)


def _child(visitor: PartnerVisitor[C, T], rf: Field, ff: Field | None, index: int, child: C) -> T:
    """A list element, map key or map value (``child``: its context)."""
    if ff is not None:
        if rf.type.__class__ not in _NESTED and ff.type.__class__ not in _NESTED:
            result = visitor.primitive(rf, ff, index, child)
        else:
            result = visit_with_partner(visitor, rf, ff, index, child)
    elif visitor.descend_missing:
        result = _walk(visitor, rf, None, index, child)
    else:
        result = visitor.missing(rf, child)
    return visitor.field(rf, ff, child, result) if visitor.wraps_fields else result
