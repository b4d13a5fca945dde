"""Avro record schemas -> fieldshift :class:`~fieldshift.Schema` (the conventions are in
:mod:`fieldshift.schema.formats.avro`).

``Schema.from_avro`` delegates here and passes its class, which this module knows by its interface
(``SchemaLike``): it never imports ``fieldshift.schema.model``. Users call ``Schema.from_avro`` or
``fieldshift.schema.formats.avro.schema_from_avro``.
"""

from __future__ import annotations

import decimal
import itertools
import json
from collections.abc import Iterator
from typing import Any, TypeVar

import pyarrow as pa

from fieldshift.errors import AvroSchemaError, InvalidDefaultError, MissingFieldIdError
from fieldshift.schema.defaults import validate_default
from fieldshift.schema.field import Field
from fieldshift.schema.formats._avro_shared import (
    _WIDE,
    ELEMENT_ID,
    FIELD_ID,
    FIELD_NAME_PROP,
    KEY_ID,
    VALUE_ID,
    Path,
    _is_null,
    _where,
    avro_name,
)
from fieldshift.schema.schema_like import SchemaLike
from fieldshift.schema.types import MAX_NESTING_DEPTH as _DEPTH
from fieldshift.schema.types import FieldType, ListType, MapType, StructType, type_name
from fieldshift.schema.types import container_depth_guard as _depth_guard

__all__ = ["schema_from_avro"]

S = TypeVar("S", bound=SchemaLike)

_ID_KEYS = (FIELD_ID, ELEMENT_ID, KEY_ID, VALUE_ID)
_NAMED = ("record", "error", "enum", "fixed")
_PRIMITIVES: dict[str, pa.DataType] = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}


# ================================================================================================
# Avro -> fieldshift
# ================================================================================================
def schema_from_avro(avro: str | dict[str, Any], schema_class: type[S], *, schema_id: int = 0,
                     assign_ids: bool = True) -> S:
    """Convert an Avro record schema (JSON text or parsed) into a schema of ``schema_class``, by Iceberg's id
    attributes.

    ``assign_ids=False`` refuses schemas whose fields lack ids (raises MissingFieldIdError).
    """
    root = _load(avro)
    _depth_guard(root, 4 * _DEPTH, "the Avro schema")  # Schema() checks the exact limit
    if not isinstance(root, dict) or root.get("type") not in ("record", "error"):
        raise AvroSchemaError("a table schema in Avro must be a record, got " + json.dumps(root)[:80])
    reader = _Reader(assign_ids, set(_explicit_ids(root)))
    struct = reader.parse(root, (), "")
    assert isinstance(struct, StructType)
    return schema_class(struct.fields, schema_id=schema_id, doc=root.get("doc"))


def _load(avro: str | dict[str, Any]) -> Any:
    if not isinstance(avro, str):
        return avro
    try:
        return json.loads(avro)
    except json.JSONDecodeError as e:
        raise AvroSchemaError(f"the Avro schema is not valid JSON: {e}") from None


def _explicit_ids(node: Any) -> Iterator[int]:
    """Every id the schema states, so assigned ids can skip them (defaults are not searched)."""
    if isinstance(node, list):
        for item in node:
            yield from _explicit_ids(item)
    elif isinstance(node, dict):
        for key in _ID_KEYS:
            if isinstance(node.get(key), int) and not isinstance(node.get(key), bool):
                yield node[key]
        for key in ("type", "items", "values", "fields"):
            if key in node:
                yield from _explicit_ids(node[key])


class _Reader:
    """One conversion: the named types seen so far, the types being defined, and the id counter."""

    def __init__(self, assign_ids: bool, used: set[int]) -> None:
        self.assign_ids = assign_ids
        self.counter = (i for i in itertools.count(1) if i not in used)
        self.named: dict[str, tuple[dict[str, Any], str]] = {}
        self.defining: list[str] = []

    # -- ids --------------------------------------------------------------------------------------
    def id_of(self, node: dict[str, Any], key: str, path: Path) -> int:
        raw = node.get(key)
        if raw is None:
            if not self.assign_ids:
                raise MissingFieldIdError(
                    f"Avro field {_where(path)!r} has no {key!r} attribute. Pass assign_ids=True to number "
                    "fields in order, or add the ids (Iceberg writes them)."
                )
            return next(self.counter)
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise AvroSchemaError(f"Avro field {_where(path)!r}: {key!r} must be an integer, got {raw!r}")
        return raw

    # -- fields -----------------------------------------------------------------------------------
    def record_field(self, node: Any, parent: Path, ns: str) -> Field:
        if not isinstance(node, dict) or not node.get("name") or "type" not in node:
            raise AvroSchemaError(f"record {_where(parent)!r} has a malformed field: {node!r}")
        name = node.get(FIELD_NAME_PROP) or node["name"]
        path = (*parent, name)
        fid = self.id_of(node, FIELD_ID, path)
        t, nullable = self.field_type(node["type"], path, ns)
        default = node.get("default")
        return _make_field(path, fid, name, t, nullable, node.get("doc"), default)

    def child_field(self, avro: Any, holder: dict[str, Any], key: str, path: Path, ns: str) -> Field:
        """A list element or map key/value: its id sits on the array or map schema."""
        fid = self.id_of(holder, key, path)
        t, nullable = self.field_type(avro, path, ns)
        return Field(fid, path[-1], t, nullable)

    def field_type(self, avro: Any, path: Path, ns: str) -> tuple[FieldType, bool]:
        """The type and nullability of a field: unions of null and one type become nullable."""
        if not isinstance(avro, list):
            t = self.parse(avro, path, ns)
            return t, _is_null(t)
        branches = [b for b in avro if b != "null"]
        if len(branches) > 1:
            shown = ", ".join(_branch_name(b) for b in branches)
            raise AvroSchemaError(
                f"Avro field {_where(path)!r} is a union of {shown}; a table column has one type, so only "
                'unions of "null" and one type are supported (split the column or pick one type)'
            )
        if not branches:
            return pa.null(), True
        return self.parse(branches[0], path, ns), len(branches) < len(avro)

    # -- types ------------------------------------------------------------------------------------
    def parse(self, avro: Any, path: Path, ns: str) -> FieldType:
        if isinstance(avro, str):
            if avro in _PRIMITIVES:
                return _PRIMITIVES[avro]
            return self.reference(avro, path, ns)
        if isinstance(avro, list):
            raise AvroSchemaError(f"Avro field {_where(path)!r} nests a union directly inside a union")
        if not isinstance(avro, dict) or not isinstance(avro.get("type"), str):
            raise AvroSchemaError(f"Avro field {_where(path)!r} has a malformed type: {avro!r}")
        kind = avro["type"]
        if kind in _NAMED:
            return self.named_type(avro, path, ns)
        if kind == "array":
            return self.array(avro, path, ns)
        if kind == "map":
            return self.map(avro, path, ns)
        if kind in _PRIMITIVES:
            return _logical(avro, kind) or _PRIMITIVES[kind]
        return self.reference(kind, path, ns)

    def named_type(self, avro: dict[str, Any], path: Path, ns: str) -> FieldType:
        full = self.define(avro, path, ns)
        inner_ns = full.rpartition(".")[0]
        kind = avro["type"]
        if kind == "enum":
            return pa.string()
        if kind == "fixed":
            size = avro.get("size")
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise AvroSchemaError(f"Avro fixed type {full!r} at {_where(path)!r} needs an integer size")
            return _logical(avro, "fixed") or pa.binary(size)
        fields = avro.get("fields")
        if not isinstance(fields, list):
            raise AvroSchemaError(f"Avro record {full!r} at {_where(path)!r} needs a list of fields")
        self.defining.append(full)
        try:
            return StructType(tuple(self.record_field(f, path, inner_ns) for f in fields))
        finally:
            self.defining.pop()

    def define(self, avro: dict[str, Any], path: Path, ns: str) -> str:
        name = avro.get("name")
        if not isinstance(name, str) or not name:
            raise AvroSchemaError(f"Avro {avro['type']} at {_where(path)!r} needs a name")
        full = _full_name(name, avro.get("namespace", ns))
        seen = self.named.get(full)
        if seen is not None and seen[0] is not avro:
            raise AvroSchemaError(f"Avro type {full!r} is defined twice (again at {_where(path)!r})")
        self.named[full] = (avro, ns)
        return full

    def reference(self, name: str, path: Path, ns: str) -> FieldType:
        for full in (_full_name(name, ns), name):
            if full in self.named:
                if full in self.defining:
                    raise AvroSchemaError(
                        f"Avro field {_where(path)!r} refers back to record {full!r}; a recursive type has "
                        "no table-schema equivalent"
                    )
                definition, outer_ns = self.named[full]
                return self.named_type(definition, path, outer_ns)
        raise AvroSchemaError(f"Avro field {_where(path)!r} has unknown type {name!r}")

    def array(self, avro: dict[str, Any], path: Path, ns: str) -> FieldType:
        if "items" not in avro:
            raise AvroSchemaError(f"Avro array at {_where(path)!r} has no 'items'")
        items = avro["items"]
        if avro.get("logicalType") == "map" and _is_key_value_record(items):
            return self.key_value_map(items, path, ns)
        return ListType(self.child_field(items, avro, ELEMENT_ID, (*path, "element"), ns))

    def map(self, avro: dict[str, Any], path: Path, ns: str) -> FieldType:
        if "values" not in avro:
            raise AvroSchemaError(f"Avro map at {_where(path)!r} has no 'values'")
        key = Field(self.id_of(avro, KEY_ID, (*path, "key")), "key", pa.string(), nullable=False)
        value = self.child_field(avro["values"], avro, VALUE_ID, (*path, "value"), ns)
        return MapType(key, value)

    def key_value_map(self, record: dict[str, Any], path: Path, ns: str) -> FieldType:
        """Iceberg's map with non-string keys: an array of records holding a ``key`` and a ``value``."""
        inner_ns = self.define(record, path, ns).rpartition(".")[0]
        by_name = {f["name"]: f for f in record["fields"]}
        key = self.record_field(by_name["key"], path, inner_ns)
        value = self.record_field(by_name["value"], path, inner_ns)
        return MapType(key, value)


def _full_name(name: str, ns: Any) -> str:
    return name if "." in name or not ns else f"{ns}.{name}"


def _branch_name(branch: Any) -> str:
    if isinstance(branch, dict):
        return str(branch.get("logicalType") or branch.get("name") or branch.get("type"))
    return str(branch)


def _is_key_value_record(items: Any) -> bool:
    return (
        isinstance(items, dict)
        and items.get("type") == "record"
        and isinstance(items.get("fields"), list)
        and sorted(f.get("name") for f in items["fields"] if isinstance(f, dict)) == ["key", "value"]
    )


def _logical(avro: dict[str, Any], base: str) -> pa.DataType | None:
    """The Arrow type of a logical type, or None to fall back to the base type (Avro spec)."""
    lt = avro.get("logicalType")
    if lt == "decimal" and base in ("bytes", "fixed"):
        return _decimal(avro)
    if lt == "uuid" and base == "string":
        return pa.string()
    temporal = {
        ("date", "int"): pa.date32(),
        ("time-millis", "int"): pa.time32("ms"),
        ("time-micros", "long"): pa.time64("us"),
        ("time-nanos", "long"): pa.time64("ns"),
    }.get((lt, base))
    if temporal is not None:
        return temporal
    if base == "long" and isinstance(lt, str):
        return _timestamp(lt, avro.get("adjust-to-utc", True))
    return None


def _decimal(avro: dict[str, Any]) -> pa.DataType | None:
    precision, scale = avro.get("precision"), avro.get("scale", 0)
    if not isinstance(precision, int) or not isinstance(scale, int) or not 0 <= scale <= precision:
        return None
    if not 1 <= precision <= 76:
        return None
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)


def _timestamp(lt: str, adjust_to_utc: Any) -> pa.DataType | None:
    units = {"millis": "ms", "micros": "us", "nanos": "ns"}
    local, _, unit = lt.rpartition("-")
    if unit not in units or local not in ("timestamp", "local-timestamp"):
        return None
    zoned = local == "timestamp" and adjust_to_utc is not False
    return pa.timestamp(units[unit], tz="UTC" if zoned else None)


def _make_field(
    path: Path, fid: int, name: str, t: FieldType, nullable: bool, doc: Any, default: Any
) -> Field:
    value = _converted_default(default, t, path)
    try:
        return Field(fid, name, t, nullable, doc, initial_default=value, write_default=value)
    except InvalidDefaultError as e:
        raise _bad_default(path, default, t, e) from e


def _converted_default(default: Any, t: FieldType, path: Path) -> Any:
    try:
        return _default_from_avro(default, t, path)
    except (TypeError, UnicodeError, pa.ArrowException, decimal.InvalidOperation) as e:
        raise _bad_default(path, default, t, e) from e


def _bad_default(path: Path, default: Any, t: FieldType, cause: Exception) -> InvalidDefaultError:
    return InvalidDefaultError(
        f"Avro field {_where(path)!r}: default {default!r} does not fit type {type_name(t)} ({cause})"
    )


def _default_from_avro(value: Any, t: FieldType, path: Path) -> Any:
    """Avro's JSON encoding of a default -> the Python value fieldshift keeps for type ``t``."""
    if value is None:
        return None
    if isinstance(t, StructType):
        return _struct_default(value, t, path)
    if isinstance(t, ListType):
        if not isinstance(value, list):
            raise InvalidDefaultError(f"Avro field {_where(path)!r}: an array default must be a list")
        return [_default_from_avro(v, t.element.type, (*path, "element")) for v in value]
    if isinstance(t, MapType):
        return _map_default(value, t, path)
    return _primitive_default(value, t)


def _map_default(value: Any, t: MapType, path: Path) -> dict[Any, Any]:
    if isinstance(value, dict):
        pairs = list(value.items())
    elif isinstance(value, list) and all(isinstance(e, dict) and e.keys() == {"key", "value"} for e in value):
        pairs = [(e["key"], e["value"]) for e in value]
    else:
        raise InvalidDefaultError(f"Avro field {_where(path)!r}: a map default must be an object")
    key_path, value_path = (*path, "key"), (*path, "value")
    return {
        _default_from_avro(k, t.key.type, key_path): _default_from_avro(v, t.value.type, value_path)
        for k, v in pairs
    }


def _struct_default(value: Any, t: StructType, path: Path) -> dict[str, Any]:
    """Accept a record default only when it says what ``{}`` says: each field's own default."""
    if not isinstance(value, dict):
        raise InvalidDefaultError(f"Avro field {_where(path)!r}: a record default must be an object")
    children = {avro_name(c.name): c for c in t.fields}
    for key, given in value.items():
        child = children.get(key)
        if child is None:
            raise InvalidDefaultError(f"Avro field {_where(path)!r}: the default names unknown field {key!r}")
        converted = _default_from_avro(given, child.type, (*path, child.name))
        if validate_default(child, converted, "initial") != child.initial_default:
            raise InvalidDefaultError(
                f"Avro field {_where(path)!r}: the record default sets {child.name!r} to {given!r}, but that "
                f"field's own default is {child.initial_default!r}. Struct defaults can only be null or {{}} "
                "(built from the fields' defaults, as in Iceberg); put the value in the field's default."
            )
    return {}


def _primitive_default(value: Any, t: pa.DataType) -> Any:
    if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):
        return value.encode("latin-1") if isinstance(value, str) else value
    if pa.types.is_decimal(t):
        if isinstance(value, str):  # Avro encodes a decimal default as its unscaled two's-complement bytes
            unscaled = int.from_bytes(value.encode("latin-1"), "big", signed=True)
            return decimal.Decimal(unscaled).scaleb(-t.scale, _WIDE)
        return decimal.Decimal(str(value))
    if _is_temporal(t) and isinstance(value, int) and not isinstance(value, bool):
        storage = pa.int32() if t.bit_width == 32 else pa.int64()
        return pa.scalar(value, storage).cast(t).as_py()
    return value


def _is_temporal(t: pa.DataType) -> bool:
    return pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_timestamp(t)
