"""Default values: validation against a field's type, Arrow scalars for them, and Iceberg's JSON form."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from fieldshift.errors import InvalidDefaultError
from fieldshift.options import DefaultKind
from fieldshift.schema.formats.arrow_form import type_to_arrow
from fieldshift.schema.types import FieldLike, FieldType, ListType, MapType, StructType, type_name

__all__ = ["default_from_json", "default_scalar", "default_scalars", "default_to_json", "validate_default"]


def _check_value(value: Any, t: FieldType, where: str) -> Any:
    """Normalise ``value`` to the canonical Python value of type ``t`` or raise InvalidDefaultError."""
    if value is None:
        return None
    if isinstance(t, StructType):
        if value != {} or not isinstance(value, dict):
            raise InvalidDefaultError(
                f"{where}: a struct default must be None or {{}} (built from the children's defaults), "
                f"got {value!r}"
            )
        return {}
    if isinstance(t, ListType):
        if not isinstance(value, (list, tuple)):
            raise InvalidDefaultError(f"{where}: a list default must be a list, got {value!r}")
        return [_check_value(v, t.element.type, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(t, MapType):
        items = value.items() if isinstance(value, dict) else value
        try:
            pairs = [(k, v) for k, v in items]
        except (TypeError, ValueError):
            raise InvalidDefaultError(f"{where}: a map default must be a dict, got {value!r}") from None
        return {
            _check_value(k, t.key.type, f"{where} key"): _check_value(v, t.value.type, f"{where}[{k!r}]")
            for k, v in pairs
        }
    arrow_type = type_to_arrow(t)
    if isinstance(value, str) and pa.types.is_temporal(arrow_type):
        value = _parse_iso(value, arrow_type, where)
    if isinstance(value, float) and pa.types.is_integer(arrow_type) and not value.is_integer():
        raise InvalidDefaultError(f"{where}: default {value!r} is not a whole number for type {type_name(t)}")
    try:
        scalar = pa.scalar(value, type=arrow_type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        scalar = None
        if isinstance(value, str) and not pa.types.is_string(arrow_type):
            try:  # ISO text for dates, timestamps, decimals, numbers
                scalar = pa.scalar(value).cast(arrow_type)
            except (pa.ArrowException, TypeError, ValueError):
                scalar = None
    if scalar is None or isinstance(value, bool) != pa.types.is_boolean(arrow_type):
        raise InvalidDefaultError(
            f"{where}: default {value!r} does not fit type {type_name(t)}; give a value of that type"
        )
    return scalar.as_py()


def _parse_iso(text: str, arrow_type: pa.DataType, where: str) -> Any:
    """ISO-8601 text for a date, time or timestamp default (Iceberg's JSON form)."""
    try:
        if pa.types.is_date(arrow_type):
            return dt.date.fromisoformat(text)
        if pa.types.is_time(arrow_type):
            return dt.time.fromisoformat(text)
        if pa.types.is_timestamp(arrow_type):
            value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
            if arrow_type.tz is None:
                return value.replace(tzinfo=None) if value.tzinfo is None else \
                    value.astimezone(dt.UTC).replace(tzinfo=None)
            return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    except ValueError:
        raise InvalidDefaultError(f"{where}: {text!r} is not an ISO-8601 value of type {arrow_type}") from None
    return text


def validate_default(field: FieldLike, value: Any, kind: str) -> Any:
    return _check_value(value, field.type, f"field {field.name!r} (id {field.id}) {kind} default")


def _materialize(field: FieldLike, kind: DefaultKind) -> Any:
    value = field.initial_default if kind == "initial" else field.write_default
    if isinstance(field.type, StructType) and value == {}:
        return {c.name: _materialize(c, kind) for c in field.type.fields}
    return value


def default_scalar(field: FieldLike, kind: DefaultKind = "initial", arrow_type: pa.DataType | None = None) -> pa.Scalar:
    """The field's default as an Arrow scalar of its Arrow type (a null scalar when it has none);
    ``arrow_type`` is that type when the caller has it already."""
    value = _materialize(field, kind)
    return pa.scalar(value, type=type_to_arrow(field.type) if arrow_type is None else arrow_type)


def default_scalars(fields: Iterable[FieldLike], arrow_types: Mapping[int, pa.DataType],
                    kind: DefaultKind = "initial") -> dict[int, pa.Scalar]:
    """``default_scalar`` of many fields by id, one Arrow conversion per type object: ``pa.scalar``
    costs ~2.5 us a call, a list converts at tens of ns a value. A type whose defaults do not convert
    together is left out (``default_scalar`` of each says why)."""
    groups: dict[int, tuple[pa.DataType, list[FieldLike]]] = {}
    for f in fields:
        t = arrow_types[f.id]
        groups.setdefault(id(t), (t, []))[1].append(f)
    out: dict[int, pa.Scalar] = {}
    for t, group in groups.values():
        try:
            values = pa.array([_materialize(f, kind) for f in group], type=t)
        except (pa.ArrowException, TypeError, ValueError, OverflowError, KeyError, AttributeError):
            continue
        out.update(zip((f.id for f in group), values, strict=True))
    return out


def default_to_json(value: Any, t: FieldType) -> Any:
    """Iceberg single-value JSON serialisation of a (validated) default."""
    if value is None:
        return None
    if isinstance(t, StructType):
        return {}
    if isinstance(t, ListType):
        return [default_to_json(v, t.element.type) for v in value]
    if isinstance(t, MapType):
        return {
            "keys": [default_to_json(k, t.key.type) for k in value],
            "values": [default_to_json(v, t.value.type) for v in value.values()],
        }
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex().upper()
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).isoformat()  # Iceberg stores instants in UTC
    if isinstance(value, (dt.date, dt.time, dt.datetime)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return value


def default_from_json(value: Any, t: FieldType) -> Any:
    """Inverse of :func:`default_to_json` (returns a value that ``validate_default`` accepts)."""
    if value is None:
        return None
    if isinstance(t, StructType):
        return {}
    if isinstance(t, ListType):
        return [default_from_json(v, t.element.type) for v in value]
    if isinstance(t, MapType):
        keys = [default_from_json(k, t.key.type) for k in value["keys"]]
        values = [default_from_json(v, t.value.type) for v in value["values"]]
        return dict(zip(keys, values, strict=True))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        if pa.types.is_fixed_size_binary(t) and t.byte_width == 16 and isinstance(value, str) and value.count("-") == 4:
            try:  # Iceberg writes a uuid's default as its text form (fieldshift reads uuid as fixed[16])
                return uuid.UUID(value).bytes
            except ValueError:
                pass
        try:
            return bytes.fromhex(value)
        except ValueError:
            return base64.b64decode(value)
    return value
