"""DuckLake's type names and text-encoded values, in fieldshift's (Arrow) terms.

A DuckLake catalog names each column's type with the specification's names (``int32``, ``timestamptz``,
``decimal(10,2)``, ``struct``...; nested types are parent rows with children, see ``ducklake_schema``);
DuckDB's own names are accepted too. Each maps to the Arrow type DuckDB itself hands out for it, so a
table reads as DuckDB reads it: 128-bit integers as decimal(38, 0) (DuckDB writes them to Parquet as
DOUBLE), ``timestamptz`` in UTC, ``json`` as text, ``uuid`` as the 16 bytes Parquet stores. A type
with no fieldshift counterpart is an UnsupportedFormatFeatureError naming the column.

Statistics, partition values, defaults and inlined values in SQLite or PostgreSQL catalogs are text;
``decode_text`` reads that text as a value of the column's type (the specification's "Type Encoding").
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from typing import Any

import pyarrow as pa

from fieldshift.errors import UnsupportedFormatFeatureError

__all__ = ["NESTED", "decode_text", "primitive_type"]

NESTED = ("struct", "list", "map")

_PRIMITIVES: dict[str, pa.DataType] = {
    "boolean": pa.bool_(), "bool": pa.bool_(),
    "int8": pa.int8(), "tinyint": pa.int8(),
    "int16": pa.int16(), "smallint": pa.int16(),
    "int32": pa.int32(), "integer": pa.int32(), "int": pa.int32(),
    "int64": pa.int64(), "bigint": pa.int64(),
    "uint8": pa.uint8(), "utinyint": pa.uint8(),
    "uint16": pa.uint16(), "usmallint": pa.uint16(),
    "uint32": pa.uint32(), "uinteger": pa.uint32(),
    "uint64": pa.uint64(), "ubigint": pa.uint64(),
    "int128": pa.decimal128(38, 0), "hugeint": pa.decimal128(38, 0),
    "uint128": pa.decimal128(38, 0), "uhugeint": pa.decimal128(38, 0),
    "float32": pa.float32(), "float": pa.float32(), "real": pa.float32(),
    "float64": pa.float64(), "double": pa.float64(),
    "time": pa.time64("us"), "timetz": pa.time64("us"),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"), "timestamptz": pa.timestamp("us", "UTC"),
    "timestamp with time zone": pa.timestamp("us", "UTC"),
    "timestamp_s": pa.timestamp("s"), "timestamp_ms": pa.timestamp("ms"), "timestamp_ns": pa.timestamp("ns"),
    "varchar": pa.string(), "text": pa.string(), "string": pa.string(), "json": pa.string(),
    "blob": pa.binary(), "bytea": pa.binary(),
    "uuid": pa.binary(16),
}
_DECIMAL = re.compile(r"decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_WHY_NOT = {
    "interval": "Parquet stores DuckDB intervals as 12-byte fixed values fieldshift does not decode yet",
    "variant": "fieldshift has no variant type",
    "geometry": "fieldshift has no geometry type",
}


def primitive_type(name: str, column: str) -> pa.DataType:
    """The Arrow type of a DuckLake primitive type name (``column`` is the column path, for the message)."""
    key = name.strip().lower()
    if key in _PRIMITIVES:
        return _PRIMITIVES[key]
    m = _DECIMAL.match(key)
    if m:
        precision, scale = int(m.group(1)), int(m.group(2))
        if precision <= 38:
            return pa.decimal128(precision, scale)
    why = _WHY_NOT.get(key.split("(")[0], "fieldshift has no counterpart for it")
    raise UnsupportedFormatFeatureError(f"DuckLake column {column!r} has type {name!r}, which fieldshift does not "
                                        f"read ({why}); read the table with DuckDB, or select other columns")


_INFINITE = ("infinity", "-infinity", "+infinity")
_BLOB_ESCAPE = re.compile(rb"\\x([0-9A-Fa-f]{2})")


def decode_text(text: str | None, t: pa.DataType, *, hex_blob: bool = False) -> Any:
    """``text`` as a Python value of Arrow type ``t``; None for null text and for values fieldshift's
    types cannot hold (``infinity`` dates). ``hex_blob``: blobs as hex digits (statistics), else DuckDB's
    blob literal with ``\\xNN`` escapes (defaults and inlined values)."""
    if text is None:
        return None
    if not isinstance(text, str):  # a catalog that kept the value natively (integers in SQLite, ...)
        return _native(text, t)
    T = pa.types
    if T.is_boolean(t):
        return text.strip().lower() in ("1", "true", "t")
    if T.is_integer(t):
        return int(text)
    if T.is_floating(t):
        return float(text)
    if T.is_decimal(t):
        return decimal.Decimal(text)
    if T.is_string(t):
        return text
    if T.is_fixed_size_binary(t) and t.byte_width == 16 and len(text) == 36:  # a uuid's text
        return bytes.fromhex(text.replace("-", ""))
    if T.is_binary(t) or T.is_fixed_size_binary(t):
        if hex_blob:
            return bytes.fromhex(text)
        return _BLOB_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), text.encode("latin-1", "replace"))
    if text.strip().lower() in _INFINITE:
        return None
    if T.is_date(t):
        return dt.date.fromisoformat(text.strip()[:10])
    if T.is_timestamp(t):
        return _timestamp(text, t)
    if T.is_time(t):
        return dt.time.fromisoformat(_micros(text.strip().split("+")[0]))
    raise UnsupportedFormatFeatureError(f"cannot read a DuckLake value of type {t} from its text {text!r}")


def _native(value: Any, t: pa.DataType) -> Any:
    if pa.types.is_boolean(t):
        return bool(value)
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def _micros(text: str) -> str:
    """Python parses at most 6 fraction digits: cut nanoseconds (bounds stay bounds: the scan rounds a
    nanosecond maximum up again)."""
    m = re.search(r"\.(\d{7,})", text)
    return text if m is None else text[:m.start() + 7] + text[m.end():]


def _timestamp(text: str, t: pa.DataType) -> dt.datetime:
    value = dt.datetime.fromisoformat(_micros(text.strip()).replace(" ", "T", 1))
    if t.tz is None:
        return value.replace(tzinfo=None) if value.tzinfo is None else value.astimezone(dt.UTC).replace(tzinfo=None)
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
