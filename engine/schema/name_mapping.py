"""Iceberg name mapping: field ids for data files written without them (Hive imports, plain Parquet, CSV).

A mapping is Iceberg's ``schema.name-mapping.default`` JSON: a list of
``{"field-id": 1, "names": ["id", "record_id"], "fields": [...]}``. Every name of an entry resolves to
its id, so a renamed column keeps its old names as aliases. List elements are mapped under the name
``element``, map keys and values under ``key`` and ``value``. Names are matched one level at a time,
so ``a.b`` is the literal name of one column, never a path.

:meth:`NameMapping.update` follows Iceberg's ``MappingUtil.update``: a rename adds the new name and
keeps the old ones; an added field gets an entry; a name moves to whichever field took it last. That
last rule means that after drop-then-re-add of a name, old id-less files resolve that name to the
*new* field (as in Iceberg): a name mapping cannot tell the two apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from fieldshift.errors import NameMappingError
from fieldshift.schema.field import Field
from fieldshift.schema.formats.arrow_conversion import FIELD_ID_KEY
from fieldshift.schema.model import Schema
from fieldshift.schema.type_visitor import TypeVisitor, visit_field
from fieldshift.schema.types import ListType, MapType, StructType

__all__ = ["MappedField", "NameMapping", "NameMappingError"]

_TOP = -1  # parent key of top-level fields (Iceberg uses -1 too)


@dataclass(frozen=True, slots=True)
class MappedField:
    """One mapped column: its id (None maps the names without an id), its names, its nested fields."""

    field_id: int | None
    names: tuple[str, ...]
    fields: tuple[MappedField, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "fields", tuple(self.fields))
        if self.field_id is not None and (isinstance(self.field_id, bool) or not isinstance(self.field_id, int)
                                          or self.field_id < 0):
            raise NameMappingError(
                f"name mapping: {', '.join(self.names) or 'a field'} has field id {self.field_id!r}; "
                "field ids are whole numbers from 0 (negative ids are not valid)"
            )
        _check_unique(self.fields, f"field id {self.field_id} ({', '.join(self.names) or 'no names'})")

    def child(self, name: str) -> MappedField | None:
        """The nested entry that answers to ``name`` (any of its names)."""
        return _lookup(self.fields, name)


def _lookup(fields: Sequence[MappedField], name: str) -> MappedField | None:
    return next((f for f in fields if name in f.names), None)


def _check_unique(fields: Sequence[MappedField], where: str) -> None:
    seen: set[str] = set()
    for f in fields:
        for name in f.names:
            if name in seen:
                raise NameMappingError(
                    f"name mapping: {name!r} is mapped twice under {where}; a name may belong to one field"
                )
            seen.add(name)


@dataclass(frozen=True, slots=True)
class NameMapping:
    """Iceberg's name mapping: resolves column names (and old names) of id-less files to field ids."""

    fields: tuple[MappedField, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        _check_unique(self.fields, "the top level")
        seen: set[int] = set()
        for fid, f in _by_id(self.fields):
            if fid in seen:
                raise NameMappingError(
                    f"name mapping: field id {fid} is mapped twice (the second time as "
                    f"{', '.join(f.names) or 'no names'}); every id belongs to one field"
                )
            seen.add(fid)

    def __iter__(self) -> Iterator[MappedField]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def find(self, *names: str) -> MappedField | None:
        """The entry reached by one name per level (``find("a", "element", "b")``), or None."""
        level, found = self.fields, None
        for name in names:
            found = _lookup(level, name)
            if found is None:
                return None
            level = found.fields
        return found

    # -- JSON -------------------------------------------------------------------------------------
    @classmethod
    def from_json(cls, text: str | list[Any]) -> NameMapping:
        """Parse Iceberg's name-mapping JSON (the ``schema.name-mapping.default`` table property)."""
        if isinstance(text, str):
            try:
                text = json.loads(text)
            except json.JSONDecodeError as e:
                raise NameMappingError(f"name mapping is not valid JSON: {e}") from None
        return cls(_fields_from_json(text, "name mapping"))

    def to_json(self, *, indent: int | None = None) -> str:
        """The mapping as Iceberg's ``schema.name-mapping.default`` JSON (``from_json`` reads it back)."""
        return json.dumps([_field_to_json(f) for f in self.fields], indent=indent)

    # -- building ---------------------------------------------------------------------------------
    @classmethod
    def from_schema(cls, schema: Schema) -> NameMapping:
        """The mapping of a schema: each field under its current name."""
        return cls(tuple(_mapped(f) for f in schema.fields))

    def update(self, old_schema: Schema, new_schema: Schema) -> NameMapping:
        """The mapping after the table moved from ``old_schema`` to ``new_schema`` (renames, adds).

        Fields of ``new_schema`` the mapping lacks, and current names it lacks, are caught up too, so
        a mapping that missed an earlier schema change is repaired rather than left behind.
        """
        index = dict(_by_id(self.fields))
        renames = {
            f.id: f.name
            for f in new_schema.all_fields()
            if (old_schema.has_field(f.id) and old_schema.field(f.id).name != f.name)
            or (f.id in index and f.name not in index[f.id].names)
        }
        adds: dict[int, list[Field]] = {}
        for f in new_schema.all_fields():
            parent = new_schema.parent_id(f.id)
            if f.id not in index and (parent is None or parent in index):
                adds.setdefault(_TOP if parent is None else parent, []).append(f)
        return NameMapping(_Updater(renames, adds).level(self.fields, _TOP))

    # -- applying ---------------------------------------------------------------------------------
    def apply(self, schema: pa.Schema) -> pa.Schema:
        """``schema`` with ``PARQUET:field_id`` set on every field the mapping resolves, at any depth.

        Fields the mapping does not know carry no id afterwards (any id they had is removed), so the
        engine treats them as unknown columns and ignores them.
        """
        return pa.schema([_apply_field(f, _lookup(self.fields, f.name)) for f in schema],
                         metadata=schema.metadata)


# -- JSON helpers ---------------------------------------------------------------------------------
def _fields_from_json(obj: Any, where: str) -> tuple[MappedField, ...]:
    if obj is None:
        return ()
    if not isinstance(obj, list):
        raise NameMappingError(f"{where}: expected a JSON list of fields, got {type(obj).__name__}")
    return tuple(_field_from_json(item, f"{where}[{i}]") for i, item in enumerate(obj))


def _field_from_json(obj: Any, where: str) -> MappedField:
    if not isinstance(obj, dict):
        raise NameMappingError(f"{where}: expected an object with 'names', got {obj!r}")
    names = obj.get("names")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise NameMappingError(f"{where}: 'names' must be a list of strings, got {names!r}")
    field_id = obj.get("field-id")
    if field_id is not None and (isinstance(field_id, bool) or not isinstance(field_id, int)):
        raise NameMappingError(f"{where}: 'field-id' must be an integer, got {field_id!r}")
    label = f"{where} ({', '.join(names) or 'no names'})"
    return MappedField(field_id, tuple(names), _fields_from_json(obj.get("fields"), f"{label}.fields"))


def _field_to_json(f: MappedField) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if f.field_id is not None:
        out["field-id"] = f.field_id
    out["names"] = list(f.names)
    if f.fields:
        out["fields"] = [_field_to_json(c) for c in f.fields]
    return out


def _by_id(fields: Sequence[MappedField]) -> Iterator[tuple[int, MappedField]]:
    for f in fields:
        if f.field_id is not None:
            yield f.field_id, f
        yield from _by_id(f.fields)


# -- building helpers -----------------------------------------------------------------------------
class _Mapping(TypeVisitor[Any]):
    """A field's mapping entry: its id, its current name, the entries of its children."""

    def field(self, f: Field, result: tuple[MappedField, ...]) -> MappedField:
        return MappedField(f.id, (f.name,), result)

    def struct(self, t: StructType, fields: list[MappedField]) -> tuple[MappedField, ...]:
        return tuple(fields)

    def list(self, t: ListType, element: tuple[MappedField, ...]) -> tuple[MappedField, ...]:
        return (self.field(t.element, element),)

    def map(self, t: MapType, key: tuple[MappedField, ...],
            value: tuple[MappedField, ...]) -> tuple[MappedField, ...]:
        return self.field(t.key, key), self.field(t.value, value)

    def primitive(self, t: pa.DataType) -> tuple[MappedField, ...]:
        return ()


_MAPPING = _Mapping()


def _mapped(f: Field) -> MappedField:
    return visit_field(f, _MAPPING)


class _Updater:
    """Iceberg's UpdateMapping visitor: renames add names, adds add entries, taken names move."""

    def __init__(self, renames: dict[int, str], adds: dict[int, list[Field]]) -> None:
        self.renames = renames
        self.adds = adds

    def level(self, fields: Sequence[MappedField], parent: int) -> tuple[MappedField, ...]:
        updated = [self.field(f) for f in fields]
        taken = {self.renames[f.field_id]: f.field_id for f in updated if f.field_id in self.renames}
        updated = _release(updated, taken)
        added = [_mapped(f) for f in self.adds.get(parent, ())]
        return (*_release(updated, {f.names[0]: f.field_id for f in added}), *added)

    def field(self, f: MappedField) -> MappedField:
        names = f.names
        new_name = self.renames.get(f.field_id) if f.field_id is not None else None
        if new_name is not None and new_name not in names:
            names = (*names, new_name)
        children = self.level(f.fields, f.field_id) if f.field_id is not None else f.fields
        return MappedField(f.field_id, names, children)


def _release(fields: Sequence[MappedField], taken: dict[str, int | None]) -> list[MappedField]:
    """Remove names now taken by another field; an entry left with no names is dropped."""
    out = []
    for f in fields:
        names = tuple(n for n in f.names if n not in taken or taken[n] == f.field_id)
        if names:
            out.append(MappedField(f.field_id, names, f.fields))
    return out


# -- applying helpers -----------------------------------------------------------------------------
def _apply_field(f: pa.Field, mapped: MappedField | None) -> pa.Field:
    meta = {k: v for k, v in (f.metadata or {}).items() if k != FIELD_ID_KEY}
    if mapped is not None and mapped.field_id is not None:
        meta[FIELD_ID_KEY] = str(mapped.field_id).encode()
    nested = mapped.fields if mapped is not None else ()
    out = pa.field(f.name, _apply_type(f.type, nested), f.nullable)
    return out.with_metadata(meta) if meta else out


def _apply_type(t: pa.DataType, nested: Sequence[MappedField]) -> pa.DataType:
    if pa.types.is_struct(t):
        children = (t.field(i) for i in range(t.num_fields))
        return pa.struct([_apply_field(c, _lookup(nested, c.name)) for c in children])
    if pa.types.is_map(t):
        key = _apply_field(t.key_field, _lookup(nested, "key"))
        item = _apply_field(t.item_field, _lookup(nested, "value"))
        return pa.map_(key, item, keys_sorted=t.keys_sorted)
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_apply_field(t.value_field, _lookup(nested, "element")), t.list_size)
    for check, build in (
        (pa.types.is_large_list, pa.large_list),
        (pa.types.is_list_view, pa.list_view),
        (pa.types.is_large_list_view, pa.large_list_view),
        (pa.types.is_list, pa.list_),
    ):
        if check(t):
            return build(_apply_field(t.value_field, _lookup(nested, "element")))
    return t
