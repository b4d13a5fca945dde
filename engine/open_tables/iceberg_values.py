"""Iceberg's stored single values, decoded: column bounds (the spec's binary single-value serialization,
Appendix D) and partition values, as Python values of the type the file was written with.

Bounds are never rewritten when a column is promoted, so an ``int`` column's old files keep 4-byte
bounds after it became ``long``; the spec infers the write-time type from the current type and the
bound's length (long/4 bytes -> int, double/4 -> float, timestamp/4 -> date), and so does this module.
A bound that cannot be decoded is dropped (no statistics: the file is kept), never guessed.
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
import uuid
from typing import Any

import pyarrow as pa

__all__ = ["decode_bound", "partition_python_value"]

T = pa.types
_EPOCH_DAY = dt.date(1970, 1, 1)
# Python types that already are a partition value of an Arrow type (by type id): no conversion needed
_PLAIN: dict[int, tuple[type, ...]] = {
    **{t.id: (int,) for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64())},
    pa.float32().id: (float,), pa.float64().id: (float,), pa.bool_().id: (bool,),
    pa.string().id: (str,), pa.large_string().id: (str,), pa.binary().id: (bytes,),
    pa.large_binary().id: (bytes,), pa.decimal128(1, 0).id: (decimal.Decimal,), pa.date32().id: (dt.date,),
}


def decode_bound(raw: bytes, current: pa.DataType) -> tuple[Any, pa.DataType] | None:
    """(value, the file's type) of one stored bound of a column whose current type is ``current``;
    None when the bound cannot be decoded in that type (wrong length, invalid text, a type Iceberg
    keeps no bounds for)."""
    n = len(raw)
    try:
        if T.is_boolean(current):
            return (raw != b"\x00", current) if n == 1 else None
        if T.is_integer(current):
            if n == 4:
                return struct.unpack("<i", raw)[0], pa.int32()
            if n == 8 and current.bit_width == 64:
                return struct.unpack("<q", raw)[0], pa.int64()
            return None
        if T.is_floating(current):
            if n == 4:
                return struct.unpack("<f", raw)[0], pa.float32()
            if n == 8 and current.bit_width == 64:
                return struct.unpack("<d", raw)[0], pa.float64()
            return None
        if T.is_date(current):
            return (_EPOCH_DAY + dt.timedelta(days=struct.unpack("<i", raw)[0]), pa.date32()) if n == 4 else None
        if T.is_timestamp(current):
            if n == 4:  # a date column promoted to timestamp (v3)
                return _EPOCH_DAY + dt.timedelta(days=struct.unpack("<i", raw)[0]), pa.date32()
            if n != 8:
                return None
            ticks = struct.unpack("<q", raw)[0]
            return _ticks(ticks, current), current
        if T.is_time(current):
            if n != 8:
                return None
            return _ticks(struct.unpack("<q", raw)[0], current), current
        if T.is_string(current) or T.is_large_string(current) or T.is_string_view(current):
            return raw.decode("utf-8"), current
        if T.is_binary(current) or T.is_large_binary(current) or T.is_binary_view(current):
            return bytes(raw), current
        if T.is_fixed_size_binary(current):
            return (bytes(raw), current) if n == current.byte_width else None
        if T.is_decimal(current):
            unscaled = int.from_bytes(raw, "big", signed=True)
            return decimal.Decimal(unscaled).scaleb(-current.scale), current
    except (struct.error, UnicodeDecodeError, OverflowError, ValueError):
        return None
    return None


def _ticks(ticks: int, t: pa.DataType) -> Any:
    """Python value of ``ticks`` in time/timestamp type ``t`` (nanosecond ones stay integer ticks, which
    Arrow takes as they are and a datetime cannot hold)."""
    if t.unit == "ns":
        return ticks
    return pa.array([ticks], pa.int64()).view(t).to_pylist()[0]


def partition_python_value(raw: Any, transform: str, source: pa.DataType | None) -> Any:
    """A partition value as fieldshift's ``PartitionValue`` holds it: identity and truncate values as Python
    values of the source column's type, the other transforms' results as ints (days, months, years, hours
    since the epoch; bucket numbers). ``raw`` is what PyIceberg's Avro reader returned."""
    if raw is None:
        return None
    kind = transform.split("[", 1)[0]
    if kind in ("year", "month", "day", "hour", "bucket"):
        if isinstance(raw, dt.datetime):  # a reader that typed an hour as a timestamp
            return int((raw.replace(tzinfo=None) - dt.datetime(1970, 1, 1)).total_seconds() // 3600)
        if isinstance(raw, dt.date):
            return (raw - _EPOCH_DAY).days
        return int(raw)
    if kind not in ("identity", "truncate") or source is None:
        return raw
    if type(raw) in _PLAIN.get(source.id, ()):
        return raw  # already the Python value Arrow gives for the type
    if isinstance(raw, uuid.UUID):
        raw = raw.bytes
    if (T.is_timestamp(source) or T.is_time(source)) and isinstance(raw, int) and source.unit == "ns":
        return raw
    try:
        return pa.array([raw], source).to_pylist()[0]
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return raw
