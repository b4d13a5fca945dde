"""A Hudi table's schema versions as fieldshift schemas, with field ids that hold across versions.

Hudi keeps one of two schema histories:

- **Avro schemas by name** (every table): each commit records its writer's Avro schema
  (``extraMetadata.schema``), without field ids; readers match a file's columns to the table schema by
  name. ``AvroIds`` gives each column path (``a``, ``a.b``, ``l.element``, ``m.value``) one id the first
  time any version has it and the same id in every later version, so a renamed column is a dropped one
  plus an added one (its old values read as null, as Hudi's by-name readers give them) and a type change
  of one name is a promotion of one field.
- **The internal schema** (schema-on-read evolution, ``hoodie.schema.on.read.enable``): each commit records
  ``extraMetadata.latestSchema``, a JSON record schema whose fields carry ids (from 0, Hudi's meta
  fields first; kept as they are), and ``.hoodie/.schema/<instant>.schemacommit`` keeps every version.
  A renamed column keeps its id, so old files read their values under the new name.

Every field reads as nullable: Hudi's readers give null for a column a file lacks, whatever the writer
declared. Hudi's meta columns (``_hoodie_commit_time`` ...) are strings first in the schema, as its
readers return them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from fieldshift.errors import CatalogFormatError, UnsupportedFormatFeatureError
from fieldshift.schema.field import Field
from fieldshift.schema.formats.avro import schema_from_avro
from fieldshift.schema.model import Schema
from fieldshift.schema.types import FieldType, ListType, MapType, StructType

__all__ = ["META_FIELDS", "AvroIds", "internal_schema", "nullable_schema"]

META_FIELDS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
               "_hoodie_file_name")

_PRIMITIVES: Mapping[str, pa.DataType] = {
    "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(), "double": pa.float64(),
    "date": pa.date32(), "time": pa.time64("us"), "timestamp": pa.timestamp("us", tz="UTC"),
    "string": pa.string(), "uuid": pa.string(), "binary": pa.binary(),
}
_FIXED = re.compile(r"fixed\[(\d+)\]")
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")


class AvroIds:
    """Field ids by column path, assigned the first time a path is seen and kept for every later version.
    Hudi's meta columns take ids 1-5 whether or not a version lists them."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, ...], int] = {(m,): i + 1 for i, m in enumerate(META_FIELDS)}

    def _id(self, path: tuple[str, ...]) -> int:
        if path not in self._ids:
            self._ids[path] = len(self._ids) + 1
        return self._ids[path]

    def schema(self, avro: str | dict[str, Any], schema_id: int, *, meta_fields: bool, where: str) -> Schema:
        """One version: ``avro`` (a commit's writer schema) with ids by path, Hudi's meta columns first
        when the table keeps them (``meta_fields``), every field nullable."""
        try:
            root = json.loads(avro) if isinstance(avro, str) else avro
        except json.JSONDecodeError as e:
            raise CatalogFormatError(f"{where}: the Avro schema is not valid JSON ({e})") from None
        if not isinstance(root, dict) or root.get("type") not in ("record", "error"):
            raise CatalogFormatError(f"{where}: the table schema is not an Avro record")
        fields = list(root.get("fields") or [])
        names = {f.get("name") for f in fields if isinstance(f, dict)}
        if meta_fields:
            fields = [{"name": m, "type": ["null", "string"], "default": None} for m in META_FIELDS
                      if m not in names] + fields
        with_ids = dict(root, fields=[self._field(f, ()) for f in fields])
        return nullable_schema(schema_from_avro(with_ids, schema_id=schema_id, assign_ids=False))

    def _field(self, f: Any, path: tuple[str, ...]) -> Any:
        if not isinstance(f, dict) or not isinstance(f.get("name"), str):
            return f  # schema_from_avro names what is wrong with it
        p = (*path, f["name"])
        return dict(f, **{"field-id": self._id(p), "type": self._type(f.get("type"), p)})

    def _type(self, node: Any, path: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [self._type(n, path) for n in node]
        if not isinstance(node, dict):
            return node
        kind = node.get("type")
        if kind in ("record", "error"):
            return dict(node, fields=[self._field(f, path) for f in node.get("fields") or []])
        if kind == "array":
            p = (*path, "element")
            return dict(node, **{"element-id": self._id(p), "items": self._type(node.get("items"), p)})
        if kind == "map":
            key_id, p = self._id((*path, "key")), (*path, "value")
            value_id = self._id(p)
            return dict(node, **{"key-id": key_id, "value-id": value_id, "values": self._type(node.get("values"), p)})
        if isinstance(kind, (dict, list)):
            return dict(node, type=self._type(kind, path))
        return node


def internal_schema(obj: Mapping[str, Any], schema_id: int, where: str) -> Schema:
    """A version of Hudi's internal schema (the JSON ``SerDeHelper`` writes) with its own ids."""
    try:
        struct = _internal_type(obj, where)
    except (KeyError, TypeError, ValueError) as e:
        raise CatalogFormatError(f"{where}: Hudi's internal schema cannot be read ({type(e).__name__}: {e})") from None
    assert isinstance(struct, StructType)
    return nullable_schema(Schema(struct.fields, schema_id=schema_id))


def _internal_type(node: Any, where: str) -> FieldType:
    if isinstance(node, str):
        text = node.strip().lower()
        if text in _PRIMITIVES:
            return _PRIMITIVES[text]
        if m := _FIXED.fullmatch(text):
            return pa.binary(int(m.group(1)))
        if m := _DECIMAL.fullmatch(text):
            return pa.decimal128(int(m.group(1)), int(m.group(2)))
        raise UnsupportedFormatFeatureError(f"{where}: Hudi's internal schema has type {node!r}, which fieldshift "
                                            "does not read")
    kind = node["type"]
    if kind == "record":
        return StructType(tuple(Field(int(f["id"]), f["name"], _internal_type(f["type"], where),
                                      nullable=bool(f.get("optional", True)), doc=f.get("doc"))
                                for f in node["fields"]))
    if kind == "array":
        return ListType(Field(int(node["element-id"]), "element", _internal_type(node["element"], where),
                              nullable=bool(node.get("element_optional", True))))
    if kind == "map":
        return MapType(Field(int(node["key-id"]), "key", _internal_type(node["key"], where), nullable=False),
                       Field(int(node["value-id"]), "value", _internal_type(node["value"], where),
                             nullable=bool(node.get("value_optional", True))))
    raise CatalogFormatError(f"{where}: Hudi's internal schema has a nested type {kind!r} it does not define")


def nullable_schema(schema: Schema) -> Schema:
    """``schema`` with every field nullable (map keys stay required), as Hudi's readers read tables."""
    return Schema([_nullable(f) for f in schema.fields], schema_id=schema.schema_id, doc=schema.doc)


def _nullable(f: Field, key: bool = False) -> Field:
    t: FieldType = f.type
    if isinstance(t, StructType):
        t = StructType(tuple(_nullable(c) for c in t.fields))
    elif isinstance(t, ListType):
        t = ListType(_nullable(t.element), t.variant, t.size)
    elif isinstance(t, MapType):
        t = MapType(_nullable(t.key, key=True), _nullable(t.value), t.keys_sorted)
    return Field(f.id, f.name, t, nullable=not key, doc=f.doc, initial_default=f.initial_default,
                 write_default=f.write_default)
