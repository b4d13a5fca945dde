"""A row-at-a-time reference implementation of schema evolution, used as the engine's test oracle.

It works on ``to_pylist()`` rows: a struct is a dict keyed by the file's names, a list is a list, a
map is a list of ``(key, value)`` tuples. Every level is matched by field id, never by name or
position. A read field the file lacks gets, in order: a caller's constant, its ``initial_default``
(a struct default ``{}`` is built from its children's own initial defaults), or None. Values are
cast one at a time in plain Python.

It deliberately shares nothing with the engine but the schema model (``Field``, ``StructType``,
``ListType``, ``MapType``) it reads ids, names, types and defaults from.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from fieldshift import CastPolicy, Field, ListType, MapType, Schema, StructType

__all__ = ["OracleError", "cast_value", "missing_value", "oracle_evolve"]

T = pa.types


class OracleError(ValueError):
    """The oracle cannot read a value (the change is not one it models, or a value does not cast)."""


def oracle_evolve(
    rows: list[dict[str, Any]],
    file_schema: Schema,
    read_schema: Schema,
    policy: CastPolicy | None = None,
    constants: Mapping[int, Any] | None = None,
) -> list[dict[str, Any]]:
    """Rows written with ``file_schema`` as they read under ``read_schema``."""
    policy = policy or CastPolicy.lossless()
    constants = dict(constants or {})
    return [_struct(row, file_schema.fields, read_schema.fields, policy, constants) for row in rows]


def _struct(
    value: dict[str, Any],
    file_fields: tuple[Field, ...],
    read_fields: tuple[Field, ...],
    policy: CastPolicy,
    constants: dict[int, Any],
) -> dict[str, Any]:
    file_by_id = {f.id: f for f in file_fields}
    out: dict[str, Any] = {}
    for rf in read_fields:
        ff = file_by_id.get(rf.id)
        if ff is None:
            out[rf.name] = missing_value(rf, constants)
        else:
            out[rf.name] = _value(value[ff.name], ff, rf, policy, constants)
    return out


def _value(v: Any, ff: Field, rf: Field, policy: CastPolicy, constants: dict[int, Any]) -> Any:
    if v is None:
        return None
    ft, rt = ff.type, rf.type
    if isinstance(rt, StructType):
        if not isinstance(ft, StructType):
            raise OracleError(f"{rf.name}: {ft} cannot become a struct")
        return _struct(v, ft.fields, rt.fields, policy, constants)
    if isinstance(rt, ListType):
        if not isinstance(ft, ListType):
            raise OracleError(f"{rf.name}: {ft} cannot become a list")
        return [_value(e, ft.element, rt.element, policy, constants) for e in v]
    if isinstance(rt, MapType):
        if not isinstance(ft, MapType):
            raise OracleError(f"{rf.name}: {ft} cannot become a map")
        return [
            (_value(k, ft.key, rt.key, policy, constants), _value(x, ft.value, rt.value, policy, constants))
            for k, x in v
        ]
    if not isinstance(ft, pa.DataType):
        raise OracleError(f"{rf.name}: {ft} cannot become {rt}")
    return cast_value(v, ft, rt, policy)


def missing_value(rf: Field, constants: Mapping[int, Any] | None = None) -> Any:
    """What a read field absent from the file holds: constant, then initial default, then None."""
    if constants and rf.id in constants:
        return constants[rf.id]
    return _initial_default(rf)


def _initial_default(f: Field) -> Any:
    d = f.initial_default
    if d is None:
        return None
    if isinstance(f.type, StructType):  # Iceberg: {} = each child's own initial default
        return {c.name: _initial_default(c) for c in f.type.fields}
    if isinstance(f.type, MapType):
        return list(d.items())
    return d


def _is_str(t: pa.DataType) -> bool:
    return T.is_string(t) or T.is_large_string(t) or T.is_string_view(t)


def _is_bin(t: pa.DataType) -> bool:
    return T.is_binary(t) or T.is_large_binary(t) or T.is_binary_view(t)


def cast_value(v: Any, ft: pa.DataType, rt: pa.DataType, policy: CastPolicy) -> Any:
    """One value of file type ``ft`` read as ``rt``, by the plain-Python widening rules."""
    if ft == rt or (_is_str(ft) and _is_str(rt)) or (_is_bin(ft) and _is_bin(rt)):
        return v
    if T.is_integer(ft) and T.is_integer(rt):
        return v
    if T.is_integer(ft) and T.is_floating(rt):
        return float(v)
    if T.is_floating(ft) and T.is_floating(rt):
        return float(v)
    if (T.is_integer(ft) or T.is_decimal(ft)) and T.is_decimal(rt):
        return _quantize(decimal.Decimal(v), rt)
    if T.is_date(ft) and T.is_date(rt):
        return v
    if T.is_date(ft) and T.is_timestamp(rt):
        return dt.datetime.combine(v, dt.time())
    if T.is_timestamp(ft) and T.is_timestamp(rt):
        return v
    if _is_str(ft) and _is_bin(rt):
        return v.encode("utf-8")
    if _is_bin(ft) and _is_str(rt):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError as e:
            raise OracleError(f"{v!r} is not UTF-8") from e
    if T.is_integer(ft) and _is_str(rt) and "number_to_string" in policy.rules:
        return str(v)
    raise OracleError(f"the oracle does not model {ft} -> {rt} under {policy.name}")


def _quantize(d: decimal.Decimal, rt: pa.DataType) -> decimal.Decimal:
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        out = d.quantize(decimal.Decimal(1).scaleb(-rt.scale))
    if out != d:
        raise OracleError(f"{d} does not fit scale {rt.scale}")
    if len(out.as_tuple().digits) > rt.precision and out != 0:
        raise OracleError(f"{d} does not fit precision {rt.precision}")
    return out
