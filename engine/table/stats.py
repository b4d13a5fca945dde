"""Per-file column statistics, kept in the type of the file that produced them.

Pruning converts the filter literal into the file's type and prunes only when that conversion is
exact; otherwise the file is read. Peers have silently dropped matching rows by comparing stats of
an old type against literals of a new one (DuckLake #1307, Iceberg PR #17744, Paimon PR #8843).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.schema import Schema
from fieldshift.types import StructType

__all__ = ["compute_stats", "decode_value", "encode_value", "may_match"]

_MAX_TEXT_STAT = 256


def encode_value(v: Any) -> Any:
    """A JSON-safe, type-tagged form (so a stat read back has its original Python type)."""
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": str(v)}
    if isinstance(v, float):
        return {"float": repr(v)}
    if isinstance(v, decimal.Decimal):
        return {"decimal": str(v)}
    if isinstance(v, str):
        return {"str": v}
    if isinstance(v, bytes):
        return {"bytes": base64.b64encode(v).decode()}
    if isinstance(v, dt.datetime):
        return {"datetime": v.isoformat()}
    if isinstance(v, dt.date):
        return {"date": v.isoformat()}
    if isinstance(v, dt.time):
        return {"time": v.isoformat()}
    if isinstance(v, dict):
        return {"dict": [[encode_value(k), encode_value(x)] for k, x in v.items()]}
    if isinstance(v, (list, tuple)):
        return {"list": [encode_value(x) for x in v]}
    raise TypeError(f"cannot store value {v!r} of type {type(v).__name__} in the catalog")


def decode_value(obj: Any) -> Any:
    (tag, raw), = obj.items()
    return {
        "bool": lambda r: r,
        "int": int,
        "float": float,
        "decimal": decimal.Decimal,
        "str": lambda r: r,
        "bytes": base64.b64decode,
        "datetime": dt.datetime.fromisoformat,
        "date": dt.date.fromisoformat,
        "time": dt.time.fromisoformat,
        "dict": lambda r: {decode_value(k): decode_value(x) for k, x in r},
        "list": lambda r: [decode_value(x) for x in r],
    }[tag](raw)


def _leaves(schema: Schema, table: pa.Table) -> Iterator[tuple[int, pa.DataType, pa.ChunkedArray]]:
    """Primitive columns reachable through structs only (list/map children have no row stats)."""
    def walk(fields: tuple, arrays: list) -> Iterator[tuple[int, pa.DataType, pa.ChunkedArray]]:
        for f, arr in zip(fields, arrays, strict=True):
            if isinstance(f.type, StructType):
                chunks = [c.flatten() for c in arr.chunks]  # applies the parent's validity
                children = [pa.chunked_array([c[i] for c in chunks], type=arr.type.field(i).type)
                            for i in range(arr.type.num_fields)]
                yield from walk(f.type.fields, children)
            elif isinstance(f.type, pa.DataType):
                yield f.id, f.type, arr

    yield from walk(schema.fields, table.columns)


def compute_stats(schema: Schema, table: pa.Table) -> dict[int, tuple[int, int, Any, Any]]:
    """field id -> (value count, null count, min, max); bounds are None where unsafe to keep."""
    out: dict[int, tuple[int, int, Any, Any]] = {}
    for fid, t, arr in _leaves(schema, table):
        lo = hi = None
        if _orderable(t) and arr.null_count < len(arr):
            mm = pc.min_max(arr)
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
            if pa.types.is_floating(t) and (pc.any(pc.is_nan(arr)).as_py() or _nan(lo) or _nan(hi)):
                lo = hi = None  # NaN orders nowhere: never prune on it
            if isinstance(lo, (str, bytes)) and max(len(lo), len(hi)) > _MAX_TEXT_STAT:
                lo = hi = None
        out[fid] = (len(arr), arr.null_count, lo, hi)
    return out


def _nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _orderable(t: pa.DataType) -> bool:
    T = pa.types
    return (T.is_integer(t) or T.is_floating(t) or T.is_decimal(t) or T.is_string(t)
            or T.is_large_string(t) or T.is_binary(t) or T.is_large_binary(t) or T.is_temporal(t)) \
        and not T.is_duration(t) and not T.is_interval(t)


def exact_literal(value: Any, file_type: pa.DataType) -> Any | None:
    """``value`` as a Python value of ``file_type`` if the conversion loses nothing, else None."""
    try:
        scalar = pa.scalar(value)
        converted = scalar.cast(file_type, safe=True)
        if converted.cast(scalar.type, safe=True).as_py() != scalar.as_py():
            return None
        return converted.as_py()
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None


def may_match(stats: tuple[int, int, Any, Any] | None, op: str, value: Any, file_type: pa.DataType) -> bool:
    """False only when the stats prove no row of the file satisfies ``column op value``."""
    if stats is None:
        return True
    count, nulls, lo, hi = stats
    if op == "is_null":
        return nulls > 0
    if op == "not_null":
        return nulls < count
    if nulls == count:
        return False  # every comparison with null is null, never true
    if lo is None or hi is None:
        return True
    values = value if op in ("in", "not in") else [value]
    exact = [exact_literal(v, file_type) for v in values]
    if any(e is None for e in exact):
        return True
    try:
        if op in ("=", "=="):
            return lo <= exact[0] <= hi
        if op == "in":
            return any(lo <= e <= hi for e in exact)
        if op == "<":
            return lo < exact[0]
        if op == "<=":
            return lo <= exact[0]
        if op == ">":
            return hi > exact[0]
        if op == ">=":
            return hi >= exact[0]
    except TypeError:
        return True
    return True
