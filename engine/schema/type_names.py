"""Names of primitive types: Iceberg's where Iceberg has the type, Arrow-style names where it lacks one.

These names are what the Iceberg-compatible JSON, error messages and `explain()` show. Physical
variants (large/view strings and binaries) share the logical name, so they are written as `string`
and `binary`.
"""

from __future__ import annotations

import re

import pyarrow as pa

__all__ = ["parse_primitive", "primitive_name"]

_SIMPLE = {
    "boolean": pa.bool_(),
    "int8": pa.int8(),
    "int16": pa.int16(),
    "int": pa.int32(),
    "long": pa.int64(),
    "uint8": pa.uint8(),
    "uint16": pa.uint16(),
    "uint32": pa.uint32(),
    "uint64": pa.uint64(),
    "float16": pa.float16(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "binary": pa.binary(),
    "date": pa.date32(),
    "date64": pa.date64(),
    "time_s": pa.time32("s"),
    "time_ms": pa.time32("ms"),
    "time": pa.time64("us"),
    "time_ns": pa.time64("ns"),
    "timestamp_s": pa.timestamp("s"),
    "timestamp_ms": pa.timestamp("ms"),
    "timestamp": pa.timestamp("us"),
    "timestamp_ns": pa.timestamp("ns"),
    "timestamptz_s": pa.timestamp("s", tz="UTC"),
    "timestamptz_ms": pa.timestamp("ms", tz="UTC"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "timestamptz_ns": pa.timestamp("ns", tz="UTC"),
    "unknown": pa.null(),
}
_ALIASES = {
    "bool": "boolean",
    "int32": "int",
    "integer": "int",
    "int64": "long",
    "bigint": "long",
    "tinyint": "int8",
    "smallint": "int16",
    "float32": "float",
    "real": "float",
    "float64": "double",
    "varchar": "string",
    "text": "string",
    "large_string": "string",
    "string_view": "string",
    "utf8": "string",
    "bytes": "binary",
    "blob": "binary",
    "large_binary": "binary",
    "binary_view": "binary",
    "date32": "date",
    "null": "unknown",
    "halffloat": "float16",
    "utinyint": "uint8",
    "usmallint": "uint16",
    "uinteger": "uint32",
    "ubigint": "uint64",
    "uuid": "fixed[16]",
    "timestamp_us": "timestamp",
    "timestamptz_us": "timestamptz",
    "timestamp_ntz": "timestamp",
    "time_us": "time",
}
_NAME_OF = {v: k for k, v in _SIMPLE.items()}
for _variant, _logical in (
    (pa.large_string(), "string"),
    (pa.string_view(), "string"),
    (pa.large_binary(), "binary"),
    (pa.binary_view(), "binary"),
):
    _NAME_OF[_variant] = _logical

_DECIMAL = re.compile(r"^decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_FIXED = re.compile(r"^fixed\s*\[\s*(\d+)\s*\]$")
_ZONED = re.compile(r"^timestamptz(_s|_ms|_ns)?\s*\[\s*([^\]]+)\s*\]$")


def primitive_name(t: pa.DataType) -> str:
    """Name of an Arrow primitive type, e.g. ``long``, ``decimal(10,2)``, ``timestamptz_ms[Europe/Paris]``."""
    name = _NAME_OF.get(t)
    if name is not None:
        return name
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_fixed_size_binary(t):
        return f"fixed[{t.byte_width}]"
    if pa.types.is_timestamp(t) and t.tz is not None:
        suffix = "" if t.unit == "us" else f"_{t.unit}"
        return f"timestamptz{suffix}[{t.tz}]"
    raise TypeError(f"fieldshift has no name for Arrow type {t}; it is not a type Parquet stores")


def parse_primitive(text: str) -> pa.DataType:
    """Parse a primitive type name (Iceberg's, Arrow's, or common SQL spellings) into an Arrow type."""
    key = text.strip().lower()
    key = _ALIASES.get(key, key)
    if key in _SIMPLE:
        return _SIMPLE[key]
    m = _DECIMAL.match(key)
    if m:
        precision, scale = int(m.group(1)), int(m.group(2))
        if precision > 76 or scale > 76:  # beyond any Arrow decimal (smaller errors: the type model)
            raise ValueError(f"{text!r}: decimal precision must be 1..76 and the scale 0..precision")
        return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    m = _FIXED.match(key)
    if m:
        width = int(m.group(1))
        if width >= 2**31:  # Arrow's widths are int32 (0 is refused by the type model)
            raise ValueError(f"{text!r}: a fixed width must be 1..{2**31 - 1} bytes")
        return pa.binary(width)
    m = _ZONED.match(text.strip())
    if m:
        unit = (m.group(1) or "_us")[1:]
        return pa.timestamp(unit, tz=m.group(2).strip())
    raise ValueError(
        f"unknown type {text!r}; use an Iceberg name (int, long, string, decimal(10,2), timestamptz, ...) "
        "or an Arrow-style name (int8, uint16, float16, date64, timestamp_ms, ...)"
    )
