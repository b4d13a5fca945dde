"""Values the Delta log holds as text or JSON: partition values (strings, typed by the schema) and file
statistics (``stats``: numRecords, minValues, maxValues, nullCount, keyed by physical name).

Statistics are used only where they can never drop a file a read needs: Delta truncates timestamps in
statistics to milliseconds (an upper bound gets the millisecond back) and cuts strings to a prefix (an
upper bound of 32 characters or more may be cut, so such bounds are not used); with deletion vectors the
bounds are "wide" (they still bound every live value). A value that does not parse leaves that column's
bounds unknown, never wrong.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from fieldshift.errors import CatalogFormatError
from fieldshift.open_tables.delta_schema import Leaf
from fieldshift.open_tables.source import ColumnStats

__all__ = ["file_stats", "parse_partition_value", "parse_stats"]

STRING_PREFIX = 32  # Delta's default dataSkippingStringPrefixLength
_MS = dt.timedelta(milliseconds=1)
_NON_FINITE = {"NaN", "Infinity", "-Infinity", "+Infinity"}


def parse_partition_value(text: str | None, t: Any, where: str) -> Any:
    """A partition value as a Python value of the column's type (the protocol's serialization; an empty
    string is null)."""
    if text is None or text == "" or not isinstance(t, pa.DataType) or pa.types.is_null(t):
        return None
    try:
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return text
        if pa.types.is_integer(t):
            return int(text)
        if pa.types.is_floating(t):
            return float(text)
        if pa.types.is_decimal(t):
            return decimal.Decimal(text)
        if pa.types.is_boolean(t):
            if text.lower() not in ("true", "false"):
                raise ValueError("not true or false")
            return text.lower() == "true"
        if pa.types.is_date(t):
            return dt.date.fromisoformat(text.strip())
        if pa.types.is_timestamp(t):
            return _timestamp(text, t)
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            return text.encode("latin-1")
    except (ValueError, ArithmeticError, UnicodeEncodeError) as e:
        raise CatalogFormatError(f"{where}: partition value {text!r} is not a {t} ({e})") from None
    raise CatalogFormatError(f"{where}: a partition column of type {t} is not one Delta partitions by")


def _timestamp(text: str, t: pa.TimestampType) -> dt.datetime:
    """``YYYY-MM-DD hh:mm:ss[.ffffff]`` (read as UTC for a zoned column) or ISO 8601 with a zone."""
    value = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if t.tz is None:
        return value.replace(tzinfo=None) if value.tzinfo is None else value.astimezone(dt.UTC).replace(tzinfo=None)
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def parse_stats(add: Mapping[str, Any], where: str) -> dict[str, Any] | None:
    """An add action's statistics as a dict (from the JSON string, or a checkpoint's ``stats_parsed``);
    decimals stay exact."""
    text = add.get("stats")
    if text:
        try:
            parsed = json.loads(text, parse_float=decimal.Decimal)
        except ValueError:
            return None  # statistics are optional: unreadable ones prune nothing
        return parsed if isinstance(parsed, dict) else None
    parsed = add.get("stats_parsed")
    return parsed if isinstance(parsed, dict) else None


def file_stats(stats: Mapping[str, Any] | None, leaves: Iterable[Leaf]) -> dict[int, ColumnStats]:
    """Per-field statistics of the columns the file's stats name (by physical path)."""
    if not stats or stats.get("numRecords") is None:
        return {}
    count = int(stats["numRecords"])
    mins, maxs, nulls = (stats.get(k) or {} for k in ("minValues", "maxValues", "nullCount"))
    out: dict[int, ColumnStats] = {}
    for leaf in leaves:
        null_count = _at(nulls, leaf.path)
        lo, hi = _at(mins, leaf.path), _at(maxs, leaf.path)
        if null_count is None and lo is None:
            continue
        lower, upper = _bound(lo, leaf.type, False), _bound(hi, leaf.type, True)
        if lower is None or upper is None:
            lower = upper = None
        out[leaf.field_id] = ColumnStats(value_count=count, null_count=None if not isinstance(null_count, int)
                                         else null_count, lower=lower, upper=upper, type=leaf.type)
    return out


def _at(tree: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(tree, Mapping):
            return None
        tree = tree.get(part)
    return None if isinstance(tree, Mapping) else tree


def _bound(value: Any, t: Any, upper: bool) -> Any:
    """A statistics value as a bound of type ``t`` (None: unknown or unusable)."""
    if value is None or not isinstance(t, pa.DataType):
        return None
    try:
        if pa.types.is_integer(t):
            return int(value) if not isinstance(value, bool) and value == int(value) else None
        if pa.types.is_floating(t):
            return None if isinstance(value, str) and value in _NON_FINITE else float(value)
        if pa.types.is_decimal(t):
            return decimal.Decimal(str(value))
        if pa.types.is_boolean(t):
            return value if isinstance(value, bool) else None
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            if not isinstance(value, str) or (upper and len(value) >= STRING_PREFIX):
                return None
            return value
        if pa.types.is_date(t):
            return dt.date.fromisoformat(str(value)[:10])
        if pa.types.is_timestamp(t):
            if isinstance(value, dt.datetime):  # stats_parsed
                value = value.isoformat()
            stamp = _timestamp(str(value), t)
            return stamp + _MS if upper else stamp  # statistics are truncated to milliseconds
    except (ValueError, TypeError, ArithmeticError):
        return None
    return None
