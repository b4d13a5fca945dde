"""Iceberg table-schema JSON, both ways.

Iceberg's layout (``{"type": "struct", "schema-id", "identifier-field-ids", "fields": [...]}``, lists
with ``element-id``, maps with ``key-id``/``value-id``, ``initial-default``/``write-default`` in
single-value JSON). Types Iceberg lacks use Arrow-style names (``int8``, ``uint16``, ``float16``,
``date64``, ``timestamp_ms``, ...), and two keys Iceberg does not define keep Arrow layouts that change
values: ``"size"`` of a fixed-size list and ``"keys-sorted"`` of a map.

``Schema.from_json`` and ``Schema.to_json`` delegate here: schemas are read through their interface
(``SchemaLike``) and built as the class the caller gives, so this module never imports ``fieldshift.schema.model``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, TypeVar

import pyarrow as pa

from fieldshift.errors import InvalidTypeError, NestingDepthError, SchemaJSONError
from fieldshift.schema.defaults import default_from_json, default_to_json
from fieldshift.schema.field import Field
from fieldshift.schema.schema_like import SchemaLike
from fieldshift.schema.type_names import parse_primitive, primitive_name
from fieldshift.schema.type_visitor import TypeVisitor, visit_fields, visit_type
from fieldshift.schema.types import MAX_NESTING_DEPTH, FieldType, ListType, MapType, StructType, container_depth_guard

__all__ = ["reads_back_exactly", "schema_from_json", "schema_to_dict", "schema_to_json", "type_from_json",
           "type_to_json"]

S = TypeVar("S", bound=SchemaLike)


class _ToJson(TypeVisitor[Any]):
    """Types to Iceberg's JSON (ids left null when ``include_ids`` is off, as for a fingerprint)."""

    def __init__(self, include_ids: bool) -> None:
        self.include_ids = include_ids

    def struct(self, t: StructType, fields: list[dict[str, Any]]) -> Any:
        return {"type": "struct", "fields": fields}

    def field(self, f: Field, result: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": f.id if self.include_ids else None,
            "name": f.name,
            "required": not f.nullable,
            "type": result,
        }
        if f.doc is not None:
            out["doc"] = f.doc
        if f.initial_default is not None:
            out["initial-default"] = default_to_json(f.initial_default, f.type)
        if f.write_default is not None:
            out["write-default"] = default_to_json(f.write_default, f.type)
        return out

    def list(self, t: ListType, element: Any) -> Any:
        out: dict[str, Any] = {
            "type": "list",
            "element-id": t.element.id if self.include_ids else None,
            "element": element,
            "element-required": not t.element.nullable,
        }
        if t.size is not None:
            out["size"] = t.size
        return out

    def map(self, t: MapType, key: Any, value: Any) -> Any:
        ids = self.include_ids
        out = {
            "type": "map",
            "key-id": t.key.id if ids else None,
            "key": key,
            "value-id": t.value.id if ids else None,
            "value": value,
            "value-required": not t.value.nullable,
        }
        if t.keys_sorted:
            out["keys-sorted"] = True
        return out

    def primitive(self, t: pa.DataType) -> Any:
        assert isinstance(t, pa.DataType)
        return primitive_name(t)


_WITH_IDS, _WITHOUT_IDS = _ToJson(True), _ToJson(False)


def type_to_json(t: FieldType, include_ids: bool = True) -> Any:
    return visit_type(t, _WITH_IDS if include_ids else _WITHOUT_IDS)


def schema_to_dict(schema: SchemaLike, include_ids: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "struct",
        "schema-id": schema.schema_id,
        "fields": visit_fields(schema.fields, _WITH_IDS if include_ids else _WITHOUT_IDS),
    }
    if schema.identifier_field_ids:
        out["identifier-field-ids"] = list(schema.identifier_field_ids)
    if include_ids:
        out["highest-field-id"] = schema.highest_field_id
    else:  # a fingerprint: ids by position only matter relative to each other
        out["ids"] = [f.id for f in schema.all_fields()]
        del out["schema-id"]
    return out


def schema_to_json(schema: SchemaLike, indent: int | None = None) -> str:
    return json.dumps(schema_to_dict(schema), indent=indent)


def type_from_json(obj: Any, element_field: str = "") -> FieldType:
    if isinstance(obj, str):
        try:
            return parse_primitive(obj)
        except ValueError as e:
            raise InvalidTypeError(f"schema JSON: {e}") from None
    kind = obj.get("type")
    if kind == "struct":
        return StructType(tuple(_field_from_json(f) for f in obj["fields"]))
    if kind == "list":
        element_type = type_from_json(obj["element"])
        element = Field(obj["element-id"], "element", element_type, not obj.get("element-required", False))
        size = obj.get("size")
        return ListType(element, "fixed_size_list" if size is not None else "list", size)
    if kind == "map":
        key = Field(obj["key-id"], "key", type_from_json(obj["key"]), nullable=False)
        value = Field(obj["value-id"], "value", type_from_json(obj["value"]),
                      not obj.get("value-required", False))
        return MapType(key, value, keys_sorted=bool(obj.get("keys-sorted", False)))
    raise SchemaJSONError(f"unknown nested type in schema JSON: {obj!r}; expected a primitive type name or an "
                          "object whose 'type' is 'struct', 'list' or 'map'")


def _field_from_json(obj: dict[str, Any]) -> Field:
    t = type_from_json(obj["type"])
    return Field(
        id=int(obj["id"]),
        name=obj["name"],
        type=t,
        nullable=not obj.get("required", False),
        doc=obj.get("doc"),
        initial_default=default_from_json(obj.get("initial-default"), t),
        write_default=default_from_json(obj.get("write-default"), t),
    )


def schema_from_json(text: str | dict[str, Any], schema_class: type[S]) -> S:
    """A schema of ``schema_class`` (``Schema.from_json`` passes itself) from Iceberg's table-schema JSON."""
    try:
        obj = json.loads(text) if isinstance(text, str) else text
    except RecursionError:  # the decoder recurses per level: far beyond any readable schema
        raise NestingDepthError(f"the schema JSON nests deeper than the {MAX_NESTING_DEPTH} Parquet levels "
                                "readers accept") from None
    container_depth_guard(obj, 4 * MAX_NESTING_DEPTH, "the schema JSON")  # Schema() checks the exact limit
    if obj.get("type", "struct") != "struct":
        raise SchemaJSONError(f"a table schema JSON must be a struct (\"type\": \"struct\"), "
                              f"got type {obj.get('type')!r}")
    return schema_class(
        [_field_from_json(f) for f in obj["fields"]],
        schema_id=int(obj.get("schema-id", 0)),
        identifier_field_ids=obj.get("identifier-field-ids", ()),
        highest_field_id=obj.get("highest-field-id"),
    )


def reads_back_exactly(schema: SchemaLike) -> bool:
    """Whether ``schema_from_json(schema_to_json(schema))`` gives the same schema in every detail, so a
    writer may keep its object for the JSON it wrote instead of parsing the text again. False for what
    the JSON cannot hold exactly: physical variants (large_string, large_list), a schema doc, and
    defaults that read back as other values (e.g. times)."""
    if schema.doc is not None or schema.unmapped_ids:
        return False
    for f in schema.all_fields():
        t = f.type
        if isinstance(t, pa.DataType):
            if not _primitive_reads_back(t):
                return False
        elif isinstance(t, ListType) and t.variant not in ("list", "fixed_size_list"):
            return False
        if (f.initial_default is not None or f.write_default is not None) and not _defaults_read_back(f):
            return False
    return True


@lru_cache(maxsize=1024)
def _primitive_reads_back(t: pa.DataType) -> bool:
    try:
        return parse_primitive(primitive_name(t)) == t
    except (TypeError, ValueError):
        return False


def _defaults_read_back(field: Field) -> bool:
    try:
        back = _field_from_json(json.loads(json.dumps(visit_fields((field,), _WITH_IDS)[0])))
    except (TypeError, ValueError):
        return False
    return all(type(b) is type(v) and b == v for b, v in ((back.initial_default, field.initial_default),
                                                           (back.write_default, field.write_default)))
