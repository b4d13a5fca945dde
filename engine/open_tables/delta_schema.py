"""Delta schemas (Spark's JSON schema in ``metaData.schemaString``) as fieldshift schemas with field ids.

With column mapping (``name`` or ``id`` mode) every struct field has ``delta.columnMapping.id`` and a
physical name, the name data files, statistics and partition values use. Without it, files use the
display names, so fields get ids by name path, the same id for the same path in every version (a rename
without column mapping is a drop and an add, as Delta itself reads it). A version from before column
mapping was enabled shares ids with the mapped versions: enabling it keeps each existing column's name as
its physical name. List elements and map keys and values have no id in Delta's schema unless Iceberg
compatibility stored them (``delta.columnMapping.nested.ids``); otherwise they get one per parent path,
above every column-mapping id the log has used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from fieldshift.errors import CatalogFormatError, UnsupportedFormatFeatureError
from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema
from fieldshift.schema.name_mapping import MappedField, NameMapping
from fieldshift.schema.types import FieldType, ListType, MapType, StructType

__all__ = ["DeltaSchema", "DeltaSchemaBuilder", "delta_type", "parse_schema_string"]

ID_KEY = "delta.columnMapping.id"
PHYSICAL_KEY = "delta.columnMapping.physicalName"
NESTED_IDS_KEY = "delta.columnMapping.nested.ids"
TYPE_CHANGES_KEY = "delta.typeChanges"

_PRIMITIVES: dict[str, pa.DataType] = {
    "string": pa.string(), "long": pa.int64(), "integer": pa.int32(), "short": pa.int16(), "byte": pa.int8(),
    "float": pa.float32(), "double": pa.float64(), "boolean": pa.bool_(), "binary": pa.binary(),
    "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"), "timestamp_ntz": pa.timestamp("us"),
    "void": pa.null(),
}
_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_INTEGERS = ("byte", "short", "integer", "long")
_INT_DIGITS = {"byte": 3, "short": 5, "integer": 10, "long": 20}  # the protocol's decimal(10 + k1, k2) etc.


def delta_type(name: str, where: str) -> pa.DataType:
    """A Delta primitive type name as an Arrow type (``variant`` and types fieldshift lacks are refused)."""
    if name in _PRIMITIVES:
        return _PRIMITIVES[name]
    m = _DECIMAL.fullmatch(name.strip())
    if m:
        return pa.decimal128(int(m.group(1)), int(m.group(2)))
    if name == "decimal":
        return pa.decimal128(10, 0)
    raise UnsupportedFormatFeatureError(f"{where} has type {name!r}, which fieldshift does not read "
                                        "(it reads Delta's primitive, decimal, struct, array and map types)")


def parse_schema_string(text: str, where: str) -> dict[str, Any]:
    try:
        parsed = json.loads(text)
    except (TypeError, ValueError) as e:
        raise CatalogFormatError(f"{where}: schemaString is not JSON: {e}") from None
    if not isinstance(parsed, dict) or parsed.get("type") != "struct":
        raise CatalogFormatError(f"{where}: schemaString is not a Delta struct schema")
    return parsed


@dataclass(frozen=True)
class Leaf:
    """A field a statistic or partition value can name: its id, physical path and type."""

    field_id: int
    path: tuple[str, ...]
    type: FieldType


@dataclass(frozen=True, eq=False)
class DeltaSchema:
    """One schema version: the fieldshift schema, and each field's physical path (for statistics and
    partition values, which the log keys by physical name)."""

    schema: Schema
    mode: str
    leaves: tuple[Leaf, ...]
    top: Mapping[str, Leaf]  # display name -> the top-level field
    physical: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    leaf_by_id: Mapping[int, Leaf] = field(default_factory=dict)


def _type_changes_allowed(change: Mapping[str, Any]) -> bool:
    """The protocol's widening changes (``Type Widening``): integers, float, to double, decimals, date."""
    a, b = str(change.get("fromType", "")), str(change.get("toType", ""))
    if a in _INTEGERS and b in _INTEGERS:
        return _INTEGERS.index(b) > _INTEGERS.index(a)
    if (a, b) == ("float", "double") or (a in _INTEGERS[:3] and b == "double") or (a, b) == ("date", "timestamp_ntz"):
        return True
    mb = _DECIMAL.fullmatch(b)
    if mb is None:
        return False
    p, s = int(mb.group(1)), int(mb.group(2))
    if a in _INTEGERS:
        return p - s >= _INT_DIGITS[a]
    ma = _DECIMAL.fullmatch(a)
    return ma is not None and s >= int(ma.group(2)) and p - s >= int(ma.group(1)) - int(ma.group(2))


class DeltaSchemaBuilder:
    """Numbers the fields of every schema version of one table consistently (see the module doc).

    ``versions`` are (schema JSON, column-mapping mode) pairs, oldest first; the ids of column mapping
    are collected from all of them before any version is numbered, so ids do not depend on which
    version is built first.
    """

    def __init__(self, versions: Sequence[tuple[Mapping[str, Any], str]], max_column_id: int = 0) -> None:
        self._ids: dict[tuple[str, ...], int] = {}
        top = max_column_id
        for schema, mode in versions:
            if mode in ("name", "id"):
                for path, fid in _mapped_ids(schema):
                    self._ids.setdefault(path, fid)
                    top = max(top, fid)
        self._next = top + 1
        self._mapping: dict[tuple[str, ...], int] = {}

    def _id(self, path: tuple[str, ...]) -> int:
        if path not in self._ids:
            self._ids[path] = self._next
            self._next += 1
        return self._ids[path]

    def build(self, schema: Mapping[str, Any], mode: str, schema_id: int, where: str) -> DeltaSchema:
        leaves: list[Leaf] = []
        physical: dict[int, tuple[str, ...]] = {}
        fields = [self._field(f, (), mode, where, leaves, physical, None) for f in schema.get("fields", [])]
        top = {f["name"]: Leaf(fd.id, (physical[fd.id][0],), fd.type)
               for f, fd in zip(schema.get("fields", []), fields, strict=True)}
        return DeltaSchema(Schema(fields, schema_id=schema_id), mode, tuple(leaves), top, physical,
                           {leaf.field_id: leaf for leaf in leaves})

    def name_mapping(self) -> NameMapping:
        """Physical (or, without column mapping, display) name paths of every version built so far → ids:
        how a data file's columns find their fields in ``none`` and ``name`` modes."""
        return NameMapping(_mapped_fields(self._mapping, ()))

    # -- one field ------------------------------------------------------------------------------
    def _field(self, f: Mapping[str, Any], parent: tuple[str, ...], mode: str, where: str, leaves: list[Leaf],
               physical: dict[int, tuple[str, ...]], nested_ids: Mapping[str, int] | None) -> Field:
        name = f.get("name")
        if not isinstance(name, str) or not name:
            raise CatalogFormatError(f"{where}: a field has no name ({f!r})")
        meta = f.get("metadata") or {}
        label = f"{where}, column {'.'.join((*parent, name))}"
        if mode in ("name", "id"):
            if ID_KEY not in meta or PHYSICAL_KEY not in meta:
                raise CatalogFormatError(f"{label}: column mapping is {mode!r} but the field has no "
                                         f"{ID_KEY} / {PHYSICAL_KEY}")
            phys = str(meta[PHYSICAL_KEY])
            path = (*parent, phys)
            fid = int(meta[ID_KEY])
            self._ids.setdefault(path, fid)
        else:
            path = (*parent, name)
            fid = self._id(path)
        for change in meta.get(TYPE_CHANGES_KEY) or []:
            if not _type_changes_allowed(change):
                raise UnsupportedFormatFeatureError(f"{label}: type change {change.get('fromType')} -> "
                                                    f"{change.get('toType')} is not one of Delta's type widenings")
        own_nested = meta.get(NESTED_IDS_KEY) if isinstance(meta.get(NESTED_IDS_KEY), Mapping) else nested_ids
        physical[fid] = path
        self._mapping[path] = fid
        ftype = self._type(f.get("type"), path, mode, label, leaves, physical, own_nested)
        if not isinstance(ftype, (StructType, ListType, MapType)):
            leaves.append(Leaf(fid, path, ftype))
        comment = meta.get("comment")
        return Field(fid, name, ftype, nullable=bool(f.get("nullable", True)),
                     doc=comment if isinstance(comment, str) else None)

    def _type(self, t: Any, path: tuple[str, ...], mode: str, where: str, leaves: list[Leaf],
              physical: dict[int, tuple[str, ...]], nested_ids: Mapping[str, int] | None) -> FieldType:
        if isinstance(t, str):
            return delta_type(t, where)
        if not isinstance(t, Mapping):
            raise CatalogFormatError(f"{where}: type {t!r} is not a Delta type")
        kind = t.get("type")
        if kind == "struct":
            return StructType(tuple(self._field(c, path, mode, where, leaves, physical, nested_ids)
                                    for c in t.get("fields", [])))
        if kind == "array":
            element = self._child("element", t.get("elementType"), bool(t.get("containsNull", True)), path, mode,
                                  where, leaves, physical, nested_ids)
            return ListType(element)
        if kind == "map":
            key = self._child("key", t.get("keyType"), False, path, mode, where, leaves, physical, nested_ids)
            value = self._child("value", t.get("valueType"), bool(t.get("valueContainsNull", True)), path, mode,
                                where, leaves, physical, nested_ids)
            return MapType(key, value)
        if kind == "variant" or t == "variant":
            raise UnsupportedFormatFeatureError(f"{where} is a variant column, which fieldshift does not read")
        raise UnsupportedFormatFeatureError(f"{where} has type {kind!r}, which fieldshift does not read")

    def _child(self, role: str, t: Any, nullable: bool, parent: tuple[str, ...], mode: str, where: str,
               leaves: list[Leaf], physical: dict[int, tuple[str, ...]],
               nested_ids: Mapping[str, int] | None) -> Field:
        path = (*parent, role)
        key = ".".join(path[_owner_depth(path):]) if nested_ids else None
        if nested_ids and key in nested_ids:
            fid = int(nested_ids[key])
            self._ids.setdefault(path, fid)
        else:
            fid = self._id(path)
        physical[fid] = path
        self._mapping[path] = fid
        ftype = self._type(t, path, mode, f"{where}.{role}", leaves, physical, nested_ids)
        if not isinstance(ftype, (StructType, ListType, MapType)):
            leaves.append(Leaf(fid, path, ftype))
        return Field(fid, role, ftype, nullable=nullable)


def _owner_depth(path: tuple[str, ...]) -> int:
    """Where the key of ``delta.columnMapping.nested.ids`` starts: at the nearest struct field's
    physical name, the last path part that is not element/key/value."""
    i = len(path) - 1
    while i > 0 and path[i] in ("element", "key", "value"):
        i -= 1
    return i


def _mapped_ids(schema: Mapping[str, Any]) -> Iterator[tuple[tuple[str, ...], int]]:
    """Every (physical path, column-mapping id) of a mapped schema, nested ones included."""
    def walk(t: Any, parent: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], int]]:
        if not isinstance(t, Mapping):
            return
        if t.get("type") == "struct":
            for f in t.get("fields", []):
                meta = f.get("metadata") or {}
                if ID_KEY in meta and PHYSICAL_KEY in meta:
                    path = (*parent, str(meta[PHYSICAL_KEY]))
                    yield path, int(meta[ID_KEY])
                    nested = meta.get(NESTED_IDS_KEY)
                    if isinstance(nested, Mapping):
                        for key, fid in nested.items():
                            yield (*parent, *str(key).split(".")), int(fid)
                    yield from walk(f.get("type"), path)
        elif t.get("type") == "array":
            yield from walk(t.get("elementType"), (*parent, "element"))
        elif t.get("type") == "map":
            yield from walk(t.get("keyType"), (*parent, "key"))
            yield from walk(t.get("valueType"), (*parent, "value"))

    yield from walk(schema, ())


def _mapped_fields(mapping: Mapping[tuple[str, ...], int], prefix: tuple[str, ...]) -> tuple[MappedField, ...]:
    tree: dict[str, Any] = {}
    for path in mapping:
        level = tree
        for part in path:
            level = level.setdefault(part, {})

    def fields(level: Mapping[str, Any], at: tuple[str, ...]) -> tuple[MappedField, ...]:
        return tuple(MappedField(mapping.get((*at, n)), (n,), fields(sub, (*at, n)))
                     for n, sub in sorted(level.items()))

    return fields(tree, prefix)
