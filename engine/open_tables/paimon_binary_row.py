"""Paimon's BinaryRow: the bytes its manifests keep partition values and key/value statistics in.

The serialised row is a 4-byte big-endian field count, then the row itself: a null bit set (the first
8 bits hold the row kind; one bit per field after them, padded to whole 8-byte words), one 8-byte
little-endian slot per field, and a variable part. A slot holds a fixed-size value (booleans, integers,
floats, dates, times, decimals of precision up to 18 as their unscaled long, timestamps of precision up
to 3 as epoch milliseconds), or, for strings and binaries, either the bytes themselves when they fit in
7 (high bit set, length in the top byte) or an offset and length into the variable part; a wide decimal
is its big-endian two's-complement bytes there, a precise timestamp its milliseconds there with the
nanoseconds of the millisecond in the slot. Only the types listed are decoded; others are refused by name.
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from fieldshift.errors import UnsupportedFormatFeatureError

__all__ = ["decode_row"]

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DAY = dt.date(1970, 1, 1)


def _null_bytes(arity: int) -> int:
    return ((arity + 63 + 8) // 64) * 8


def _var(data: bytes, slot: int) -> bytes:
    """A string's or binary's bytes: inline in the slot (short) or in the variable part."""
    word = struct.unpack_from("<Q", data, slot)[0]
    if word & (1 << 63):
        length = (word >> 56) & 0x7F
        return data[slot:slot + length]
    offset, length = word >> 32, word & 0xFFFFFFFF
    if offset + length > len(data):
        raise ValueError(f"a variable-length value at {offset} (+{length}) runs past the row's {len(data)} bytes")
    return data[offset:offset + length]


def _value(data: bytes, slot: int, t: pa.DataType) -> Any:
    T = pa.types
    if T.is_boolean(t):
        return data[slot] != 0
    if T.is_int8(t):
        return struct.unpack_from("<b", data, slot)[0]
    if T.is_int16(t):
        return struct.unpack_from("<h", data, slot)[0]
    if T.is_int32(t):
        return struct.unpack_from("<i", data, slot)[0]
    if T.is_int64(t):
        return struct.unpack_from("<q", data, slot)[0]
    if T.is_float32(t):
        return struct.unpack_from("<f", data, slot)[0]
    if T.is_float64(t):
        return struct.unpack_from("<d", data, slot)[0]
    if T.is_string(t) or T.is_large_string(t):
        return _var(data, slot).decode("utf-8")
    if T.is_binary(t) or T.is_large_binary(t):
        return bytes(_var(data, slot))
    if T.is_date32(t):
        return _EPOCH_DAY + dt.timedelta(days=struct.unpack_from("<i", data, slot)[0])
    if T.is_time32(t):
        ms = struct.unpack_from("<i", data, slot)[0]
        return (dt.datetime.min + dt.timedelta(milliseconds=ms)).time()
    if T.is_decimal(t):
        if t.precision <= 18:
            unscaled = struct.unpack_from("<q", data, slot)[0]
        else:
            unscaled = int.from_bytes(_var(data, slot), "big", signed=True)
        return decimal.Decimal(unscaled).scaleb(-t.scale)
    if T.is_timestamp(t):
        word = struct.unpack_from("<q", data, slot)[0]
        if t.unit in ("s", "ms"):
            millis, nanos = word, 0
        else:
            offset = (word >> 32) & 0xFFFFFFFF
            nanos = word & 0xFFFFFFFF
            millis = struct.unpack_from("<q", data, offset)[0]
        value = _EPOCH + dt.timedelta(milliseconds=millis, microseconds=nanos // 1000)
        return value.replace(tzinfo=dt.UTC) if t.tz is not None else value
    raise TypeError(f"Arrow type {t}")


def decode_row(data: bytes, fields: Sequence[tuple[str, pa.DataType]], where: str) -> tuple[Any, ...]:
    """The values of a serialised BinaryRow whose fields are ``fields`` (name, Arrow type), in order.

    ``where`` names the row for messages (the manifest and what the row is). A row of another arity, or a
    field of a type not decoded here, is an UnsupportedFormatFeatureError."""
    if len(data) < 4:
        raise UnsupportedFormatFeatureError(f"{where}: {len(data)} bytes are no Paimon BinaryRow")
    arity = int.from_bytes(data[:4], "big")
    if arity != len(fields):
        raise UnsupportedFormatFeatureError(f"{where}: the row has {arity} fields, the table's schema says "
                                            f"{len(fields)} ({', '.join(n for n, _ in fields)})")
    row = data[4:]
    width = _null_bytes(arity)
    out = []
    for i, (name, t) in enumerate(fields):
        bit = i + 8
        if row[bit // 8] & (1 << (bit % 8)):
            out.append(None)
            continue
        try:
            out.append(_value(row, width + 8 * i, t))
        except TypeError:
            raise UnsupportedFormatFeatureError(f"{where}: field {name!r} is of type {t}, which fieldshift does not "
                                                "decode from Paimon's binary rows") from None
        except (struct.error, ValueError, UnicodeDecodeError, OverflowError) as e:
            raise UnsupportedFormatFeatureError(f"{where}: field {name!r} is not a valid Paimon binary value "
                                                f"({e})") from None
    return tuple(out)
