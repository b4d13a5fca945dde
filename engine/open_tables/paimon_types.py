"""Paimon's schema files in fieldshift's terms: field JSON to ``Field``, type text to Arrow.

A Paimon schema file lists fields with ids (numbered from 0), names and types; an atomic type is text
(``INT``, ``DECIMAL(10, 2)``, ``TIMESTAMP(6) WITH LOCAL TIME ZONE``, ``STRING NOT NULL``), a nested one
an object (``{"type": "ROW", "fields": [...]}``, ``ARRAY`` with ``element``, ``MAP`` with ``key`` and
``value``). Each maps to the Arrow type pypaimon reads it as, so a table reads as Paimon's Python reader
reads it. Only ROW fields carry ids in Paimon; an array element or a map key or value gets an id derived
from its nearest ROW field and its path below it, the same in every schema version, so a nested change
still finds its old values. A type fieldshift has no counterpart for is a named error.
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa

from fieldshift.errors import UnsupportedFormatFeatureError
from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema
from fieldshift.schema.types import FieldType, ListType, MapType, StructType

__all__ = ["atomic_type", "field_from_json", "schema_from_json"]

_SIMPLE: dict[str, pa.DataType] = {
    "BOOLEAN": pa.bool_(),
    "TINYINT": pa.int8(),
    "SMALLINT": pa.int16(),
    "INT": pa.int32(), "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "FLOAT": pa.float32(),
    "DOUBLE": pa.float64(),
    "STRING": pa.string(),
    "BYTES": pa.binary(),
    "DATE": pa.date32(),
}
_SIZED = re.compile(r"(CHAR|VARCHAR|BINARY|VARBINARY)\s*\(\s*\d+\s*\)$")
_DECIMAL = re.compile(r"(?:DECIMAL|NUMERIC|DEC)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$")
_TIMESTAMP = re.compile(r"(TIMESTAMP_LTZ|TIMESTAMP)\s*(?:\(\s*(\d+)\s*\))?\s*"
                        r"(WITH LOCAL TIME ZONE|WITHOUT TIME ZONE)?$")
_TIME = re.compile(r"TIME\s*(?:\(\s*\d+\s*\))?\s*(?:WITHOUT TIME ZONE)?$")
_NOT_NULL = re.compile(r"\s+NOT\s+NULL$")
_WHY_NOT = {
    "VARIANT": "fieldshift has no variant type",
    "BLOB": "Paimon keeps BLOB values in separate blob files fieldshift does not read",
    "VECTOR": "fieldshift does not read Paimon's vector columns",
    "MULTISET": "fieldshift has no multiset type",
}

# Synthetic ids of array elements and map keys/values: above every id a Paimon table numbers itself
# (its ROW fields), below Paimon's own system-field ids near 2**31.
_SYNTHETIC_BASE = 2**30
_STEP = {"element": 1, "key": 2, "value": 3}
_MAX_SYNTHETIC_DEPTH = 4


def _nullable(text: str) -> tuple[str, bool]:
    text = text.strip()
    if _NOT_NULL.search(text.upper()):
        return _NOT_NULL.sub("", text.upper()).strip(), False
    return text.upper(), True


def _timestamp_unit(precision: int) -> str:
    return "s" if precision == 0 else "ms" if precision <= 3 else "us" if precision <= 6 else "ns"


def atomic_type(text: str, column: str) -> tuple[pa.DataType, bool]:
    """An atomic Paimon type's Arrow type and whether it is nullable (``INT NOT NULL``: not)."""
    name, nullable = _nullable(text)
    if name in _SIMPLE:
        return _SIMPLE[name], nullable
    if _SIZED.match(name):
        return (pa.binary() if "BINARY" in name else pa.string()), nullable
    m = _DECIMAL.match(name)
    if m:
        precision = int(m.group(1) or 10)
        return pa.decimal128(precision, int(m.group(2) or 0)), nullable
    m = _TIMESTAMP.match(name)
    if m:
        local = m.group(1) == "TIMESTAMP_LTZ" or m.group(3) == "WITH LOCAL TIME ZONE"
        unit = _timestamp_unit(int(m.group(2)) if m.group(2) is not None else 6)
        return pa.timestamp(unit, "UTC" if local else None), nullable
    if _TIME.match(name):
        return pa.time32("ms"), nullable
    head = name.split("(")[0].split()[0] if name else name
    why = _WHY_NOT.get(head, "fieldshift does not know this Paimon type")
    raise UnsupportedFormatFeatureError(f"Paimon column {column!r} has type {text.strip()!r}: {why}")


def _synthetic_id(anchor: int, path: tuple[str, ...], column: str) -> int:
    if len(path) > _MAX_SYNTHETIC_DEPTH:
        raise UnsupportedFormatFeatureError(f"Paimon column {column!r} nests arrays and maps more than "
                                            f"{_MAX_SYNTHETIC_DEPTH} deep without a ROW between them; fieldshift "
                                            "cannot number its inner values")
    code = 1
    for step in path:
        code = code * 4 + _STEP[step]
    return _SYNTHETIC_BASE + anchor * 1024 + code


def _type(obj: Any, column: str, anchor: int, path: tuple[str, ...]) -> tuple[FieldType, bool]:
    """A Paimon type (text or nested object) as a fieldshift type, and whether it is nullable."""
    if isinstance(obj, str):
        return atomic_type(obj, column)
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise UnsupportedFormatFeatureError(f"Paimon column {column!r} has a type fieldshift cannot parse: {obj!r}")
    kind, nullable = _nullable(obj["type"])
    if kind == "ROW":
        children = tuple(field_from_json(f, f"{column}.{f.get('name')}") for f in obj.get("fields", []))
        return StructType(children), nullable
    if kind == "ARRAY":
        element = _child(obj.get("element"), f"{column}.element", anchor, (*path, "element"), "element")
        return ListType(element), nullable
    if kind == "MAP":
        key = _child(obj.get("key"), f"{column}.key", anchor, (*path, "key"), "key")
        value = _child(obj.get("value"), f"{column}.value", anchor, (*path, "value"), "value")
        return MapType(key.with_(nullable=False), value), nullable
    why = _WHY_NOT.get(kind, "fieldshift does not know this Paimon type")
    raise UnsupportedFormatFeatureError(f"Paimon column {column!r} has type {kind}: {why}")


def _child(obj: Any, column: str, anchor: int, path: tuple[str, ...], name: str) -> Field:
    t, nullable = _type(obj, column, anchor, path)
    return Field(_synthetic_id(anchor, path, column), name, t, nullable)


def field_from_json(obj: Any, column: str | None = None) -> Field:
    """One field of a schema file (``{"id": 0, "name": "a", "type": "INT", "description": ...}``)."""
    if not isinstance(obj, dict) or "id" not in obj or "name" not in obj or "type" not in obj:
        raise UnsupportedFormatFeatureError(f"a Paimon schema field needs id, name and type; got {obj!r}")
    where = column or str(obj["name"])
    t, nullable = _type(obj["type"], where, int(obj["id"]), ())
    return Field(int(obj["id"]), str(obj["name"]), t, nullable, doc=obj.get("description"))


def schema_from_json(obj: dict[str, Any]) -> Schema:
    """A schema file's fields as a fieldshift ``Schema`` with the file's id as its ``schema_id``."""
    return Schema([field_from_json(f) for f in obj.get("fields", [])], schema_id=int(obj.get("id", 0)))
