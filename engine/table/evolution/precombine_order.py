"""Type changes of a keyed table's precombine column: only those that keep the order of every two values.

Merges rank the versions of a key by their precombine values read in the *current* type, while an
upsert that looked its keys up (deletion vectors) decided the winner in the type of its day. A change
that reorders values or makes two values equal (``long -> string``: ``"9" > "10"``; ``long -> double``
above 2**53) would make a merge-on-read pick another version than the one committed, and differ from
the resolved read of the same snapshot. So the precombine column may only widen in ways that keep
order and distinctness: wider integers, integers into decimals or into floats that hold them exactly,
wider floats, decimals with at least the scale, date and timestamp unit widening and zone changes,
time unit widening, and string / binary layouts (compared byte by byte either way).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from fieldshift.errors import KeyDeclarationError
from fieldshift.schema.model import Schema
from fieldshift.schema.types import int_range

__all__ = ["PRECOMBINE_PROPERTY", "check_precombine_change", "keeps_order"]

PRECOMBINE_PROPERTY = "fieldshift.precombine-id"
T = pa.types
_MANTISSA = {16: 11, 32: 24, 64: 53}


def _int_fits(old: pa.DataType, new: pa.DataType) -> bool:
    (a, b), (c, d) = int_range(old), int_range(new)
    return c <= a and b <= d


def _ticks(t: pa.DataType) -> int:
    if T.is_date32(t):
        return 1
    if T.is_date64(t):
        return 86_400_000
    return {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}[t.unit]


def _bytes_like(t: pa.DataType) -> bool:
    return any(f(t) for f in (T.is_string, T.is_large_string, T.is_string_view, T.is_binary,
                              T.is_large_binary, T.is_binary_view))


def keeps_order(old: Any, new: Any) -> bool:
    """Whether every two values of type ``old`` compare the same way (and stay distinct) read as ``new``."""
    if old == new:
        return True
    if not isinstance(old, pa.DataType) or not isinstance(new, pa.DataType):
        return False
    if T.is_integer(old):
        if T.is_integer(new):
            return _int_fits(old, new)
        if T.is_decimal(new):
            return True
        if T.is_floating(new):
            return old.bit_width - T.is_signed_integer(old) <= _MANTISSA[new.bit_width]
        return False
    if T.is_floating(old):
        return T.is_floating(new) and new.bit_width >= old.bit_width
    if T.is_decimal(old):
        return T.is_decimal(new) and new.scale >= old.scale
    if (T.is_date(old) or T.is_timestamp(old)) and (T.is_date(new) or T.is_timestamp(new)):
        return _ticks(new) >= _ticks(old) and not (T.is_timestamp(old) and T.is_date(new))
    if T.is_time(old) and T.is_time(new):
        return _ticks(new) >= _ticks(old)
    return _bytes_like(old) and _bytes_like(new)


def check_precombine_change(properties: dict[str, Any], old: Schema, new: Schema, *, table: str) -> None:
    """Refuse a new schema that changes the precombine column's type in a way that reorders its values."""
    raw = properties.get(PRECOMBINE_PROPERTY)
    if raw is None:
        return
    fid = int(raw)
    if not old.has_field(fid) or not new.has_field(fid):
        return  # dropping it is refused by keys.check_key_change
    before, after = old.field(fid).type, new.field(fid).type
    if not keeps_order(before, after):
        raise KeyDeclarationError(
            f"table {table!r}: cannot change precombine column {new.path_of(fid)!r} from {before} to {after}: "
            "merges rank the versions of a key by it, and that change would reorder values or make different "
            "values equal, so a merge could bring back a version an upsert already replaced. Allowed: widenings "
            "that keep order (wider integers or floats, integers into decimals or exact floats, decimal "
            "precision, date/timestamp/time units)")
