"""Iceberg table-schema JSON, both ways.

Iceberg's layout (``{"type": "struct", "schema-id", "identifier-field-ids", "fields": [...]}``, lists
with ``element-id``, maps with ``key-id``/``value-id``, ``initial-default``/``write-default`` in
single-value JSON). Types Iceberg lacks use Arrow-style names (``int8``, ``uint16``, ``float16``,
``date64``, ``timestamp_ms``, ...), and two keys Iceberg does not define keep Arrow layouts that change
values: ``"size"`` of a fixed-size list and ``"keys-sorted"`` of a map.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from fieldshift.defaults import default_from_json, default_to_json
from fieldshift.errors import InvalidTypeError, NestingDepthError, SchemaJSONError
from fieldshift.field import Field
from fieldshift.schema import Schema
from fieldshift.type_names import parse_primitive, primitive_name
from fieldshift.types import MAX_NESTING_DEPTH, FieldType, ListType, MapType, StructType, container_depth_guard

__all__ = ["schema_from_json", "schema_to_dict", "schema_to_json", "type_from_json", "type_to_json"]


def type_to_json(t: FieldType, include_ids: bool = True) -> Any:
    if isinstance(t, StructType):
        return {"type": "struct", "fields": [_field_to_json(f, include_ids) for f in t.fields]}
    if isinstance(t, ListType):
        out: dict[str, Any] = {
            "type": "list",
            "element-id": t.element.id if include_ids else None,
            "element": type_to_json(t.element.type, include_ids),
            "element-required": not t.element.nullable,
        }
        if t.size is not None:
            out["size"] = t.size
        return out
    if isinstance(t, MapType):
        out = {
            "type": "map",
            "key-id": t.key.id if include_ids else None,
            "key": type_to_json(t.key.type, include_ids),
            "value-id": t.value.id if include_ids else None,
            "value": type_to_json(t.value.type, include_ids),
            "value-required": not t.value.nullable,
        }
        if t.keys_sorted:
            out["keys-sorted"] = True
        return out
    assert isinstance(t, pa.DataType)
    return primitive_name(t)


def _field_to_json(f: Field, include_ids: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": f.id if include_ids else None,
        "name": f.name,
        "required": not f.nullable,
        "type": type_to_json(f.type, include_ids),
    }
    if f.doc is not None:
        out["doc"] = f.doc
    if f.initial_default is not None:
        out["initial-default"] = default_to_json(f.initial_default, f.type)
    if f.write_default is not None:
        out["write-default"] = default_to_json(f.write_default, f.type)
    return out


def schema_to_dict(schema: Schema, include_ids: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "struct",
        "schema-id": schema.schema_id,
        "fields": [_field_to_json(f, include_ids) for f in schema.fields],
    }
    if schema.identifier_field_ids:
        out["identifier-field-ids"] = list(schema.identifier_field_ids)
    if include_ids:
        out["highest-field-id"] = schema.highest_field_id
    else:  # a fingerprint: ids by position only matter relative to each other
        out["ids"] = [f.id for f in schema.all_fields()]
        del out["schema-id"]
    return out


def schema_to_json(schema: Schema, indent: int | None = None) -> str:
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


def schema_from_json(text: str | dict[str, Any]) -> Schema:
    try:
        obj = json.loads(text) if isinstance(text, str) else text
    except RecursionError:  # the decoder recurses per level: far beyond any readable schema
        raise NestingDepthError(f"the schema JSON nests deeper than the {MAX_NESTING_DEPTH} Parquet levels "
                                "readers accept") from None
    container_depth_guard(obj, 4 * MAX_NESTING_DEPTH, "the schema JSON")  # Schema() checks the exact limit
    if obj.get("type", "struct") != "struct":
        raise SchemaJSONError(f"a table schema JSON must be a struct (\"type\": \"struct\"), "
                              f"got type {obj.get('type')!r}")
    return Schema(
        [_field_from_json(f) for f in obj["fields"]],
        schema_id=int(obj.get("schema-id", 0)),
        identifier_field_ids=obj.get("identifier-field-ids", ()),
        highest_field_id=obj.get("highest-field-id"),
    )
