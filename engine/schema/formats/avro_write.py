"""fieldshift :class:`~fieldshift.Schema` -> Avro record schemas (the type table is in
:mod:`fieldshift.schema.formats.avro`).

``Schema.to_avro`` delegates here; it reads the schema through its interface (``SchemaLike``), so this
module never imports ``fieldshift.schema.model``."""

from __future__ import annotations

import decimal
import functools
from typing import Any

import pyarrow as pa

from fieldshift.errors import AvroSchemaError
from fieldshift.schema.field import Field
from fieldshift.schema.formats._avro_shared import (
    _VALID_NAME,
    _WIDE,
    ELEMENT_ID,
    FIELD_ID,
    FIELD_NAME_PROP,
    KEY_ID,
    VALUE_ID,
    _is_null,
    avro_name,
)
from fieldshift.schema.schema_like import SchemaLike
from fieldshift.schema.type_visitor import TypeVisitor, visit_fields
from fieldshift.schema.types import FieldType, ListType, MapType, StructType, logical_type

__all__ = ["schema_to_avro"]


# ================================================================================================
# fieldshift -> Avro
# ================================================================================================
def schema_to_avro(schema: SchemaLike, name: str = "record") -> dict[str, Any]:
    """An Avro record schema with Iceberg's id attributes, so ``schema_from_avro`` restores the ids."""
    if not all(_VALID_NAME.match(part) for part in name.split(".")):
        raise AvroSchemaError(
            f"{name!r} is not a valid Avro record name (letters, digits and _, dots between namespace parts)"
        )
    out: dict[str, Any] = {"type": "record", "name": name}
    if schema.doc:
        out["doc"] = schema.doc
    out["fields"] = visit_fields(schema.fields, _TO_AVRO)
    return out


class _ToAvro(TypeVisitor[Any]):
    """Types to Avro schemas. A named type (a record, a fixed) takes the id of the field that owns it:
    the type leaves its name empty and the owner's callback fills it in (see ``_owned``)."""

    def field(self, f: Field, result: Any) -> dict[str, Any]:
        result = _owned(result, f.id)
        out: dict[str, Any] = {"name": avro_name(f.name)}
        if out["name"] != f.name:
            out[FIELD_NAME_PROP] = f.name
        default = _default_to_avro(f.initial_default, f.type)
        if f.nullable and not _is_null(f.type):  # the default must match the union's first branch
            result = ["null", result] if default is None else [result, "null"]
        out["type"] = result
        if f.nullable or default is not None:
            out["default"] = default
        if f.doc:
            out["doc"] = f.doc
        out[FIELD_ID] = f.id
        return out

    def struct(self, t: StructType, fields: list[dict[str, Any]]) -> Any:
        return {"type": "record", "name": None, "fields": fields}

    def list(self, t: ListType, element: Any) -> Any:
        return {"type": "array", "items": _child_to_avro(t.element, element), ELEMENT_ID: t.element.id}

    def map(self, t: MapType, key: Any, value: Any) -> Any:
        if logical_type(t.key.type) == pa.string():
            return {"type": "map", "values": _child_to_avro(t.value, value), KEY_ID: t.key.id, VALUE_ID: t.value.id}
        record = {
            "type": "record",
            "name": f"k{t.key.id}_v{t.value.id}",
            "fields": [self.field(t.key, key), self.field(t.value, value)],
        }
        return {"type": "array", "logicalType": "map", "items": record}

    def primitive(self, t: pa.DataType) -> Any:
        return _primitive_to_avro(t)


_TO_AVRO = _ToAvro()


def _owned(avro_type: Any, owner_id: int) -> Any:
    """Name a record or fixed type after the field that owns it (``r<id>``, ``fixed_<id>``)."""
    if avro_type.__class__ is dict and avro_type.get("name", "") is None:
        prefix = "r" if avro_type["type"] == "record" else "fixed_"
        avro_type["name"] = f"{prefix}{owner_id}"
    return avro_type


def _child_to_avro(f: Field, avro_type: Any) -> Any:
    """A list element or map value: nullable becomes ``["null", T]`` (they have no defaults)."""
    avro_type = _owned(avro_type, f.id)
    return ["null", avro_type] if f.nullable and not _is_null(f.type) else avro_type


def _primitive_to_avro(t: pa.DataType) -> Any:
    if pa.types.is_fixed_size_binary(t):
        return {"type": "fixed", "name": None, "size": t.byte_width}  # named by its owner (_owned)
    avro = _avro_equivalent(t)
    if avro is None:
        raise AvroSchemaError(f"fieldshift has no Avro type for {t}")
    kind, logical, _ = avro
    if logical is None:
        return kind
    out: dict[str, Any] = {"type": kind, "logicalType": logical}
    if logical == "decimal":
        precision, scale = (20, 0) if pa.types.is_uint64(t) else (t.precision, t.scale)
        out.update(precision=precision, scale=scale)
    return out


@functools.lru_cache(maxsize=1024)
def _avro_equivalent(t: pa.DataType) -> tuple[str, str | None, pa.DataType | None] | None:
    """(Avro type, logical type, the Arrow type whose integers Avro stores) for a primitive (once per type)."""
    if pa.types.is_integer(t):
        return _integer_equivalent(t)
    if pa.types.is_decimal(t):
        return "bytes", "decimal", None
    if pa.types.is_date(t):
        return "int", "date", pa.date32()
    if pa.types.is_time(t):
        return _time_equivalent(t)
    if pa.types.is_timestamp(t):
        unit = "ms" if t.unit == "s" else t.unit
        word = {"ms": "millis", "us": "micros", "ns": "nanos"}[unit]
        logical = f"timestamp-{word}" if t.tz is not None else f"local-timestamp-{word}"
        return "long", logical, pa.timestamp(unit, tz="UTC" if t.tz is not None else None)
    simple = {
        pa.null(): "null", pa.bool_(): "boolean", pa.float16(): "float", pa.float32(): "float",
        pa.float64(): "double", pa.string(): "string", pa.binary(): "bytes",
    }.get(logical_type(t))
    return (simple, None, None) if simple else None


def _integer_equivalent(t: pa.DataType) -> tuple[str, str | None, pa.DataType | None]:
    if pa.types.is_uint64(t):
        return "bytes", "decimal", None
    if t.bit_width < 32 or t == pa.int32():
        return "int", None, None
    return "long", None, None


def _time_equivalent(t: pa.DataType) -> tuple[str, str | None, pa.DataType | None]:
    if t.unit in ("s", "ms"):
        return "int", "time-millis", pa.time32("ms")
    if t.unit == "us":
        return "long", "time-micros", pa.time64("us")
    return "long", "time-nanos", pa.time64("ns")


def _default_to_avro(value: Any, t: FieldType) -> Any:
    """A validated fieldshift default -> Avro's JSON encoding of it."""
    if value is None:
        return None
    if isinstance(t, StructType):  # {}: spell out what the fields' own defaults build
        return {avro_name(c.name): _default_to_avro(c.initial_default, c.type) for c in t.fields}
    if isinstance(t, ListType):
        return [_default_to_avro(v, t.element.type) for v in value]
    if isinstance(t, MapType):
        pairs = [(_default_to_avro(k, t.key.type), _default_to_avro(v, t.value.type))
                 for k, v in value.items()]
        if logical_type(t.key.type) == pa.string():
            return dict(pairs)
        return [{"key": k, "value": v} for k, v in pairs]
    return _primitive_default_to_avro(value, t)


def _primitive_default_to_avro(value: Any, t: pa.DataType) -> Any:
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if pa.types.is_decimal(t) or pa.types.is_uint64(t):
        scale = 0 if pa.types.is_uint64(t) else t.scale
        unscaled = int(decimal.Decimal(value).scaleb(scale, _WIDE))
        return unscaled.to_bytes((unscaled.bit_length() + 8) // 8, "big", signed=True).decode("latin-1")
    equivalent = _avro_equivalent(t)
    stored = equivalent[2] if equivalent else None
    if stored is not None:
        storage = pa.int32() if stored.bit_width == 32 else pa.int64()
        return pa.scalar(value, t).cast(stored).cast(storage).as_py()
    return value
