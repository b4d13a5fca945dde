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
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa

from fieldshift.errors import CatalogFormatError
from fieldshift.open_tables.delta_schema import Leaf
from fieldshift.open_tables.source import ColumnStats

__all__ = ["FileStats", "column_stats", "parse_partition_value", "parse_stats", "record_count"]

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


_RECORDS = re.compile(r'"numRecords"\s*:\s*(\d+)')


def record_count(add: Mapping[str, Any]) -> int | None:
    """``numRecords`` of an add action's statistics, without parsing the rest of them."""
    text = add.get("stats")
    if isinstance(text, str):
        m = _RECORDS.search(text)
        return int(m.group(1)) if m else None
    parsed = add.get("stats_parsed")
    if isinstance(parsed, Mapping) and parsed.get("numRecords") is not None:
        return int(parsed["numRecords"])
    return None


def parse_stats(add: Mapping[str, Any]) -> dict[str, Any] | None:
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
    return dict(parsed) if isinstance(parsed, Mapping) else None


class FileStats(Mapping[int, ColumnStats]):
    """A file's statistics by field id, parsed when a filter first asks for one (a snapshot of many files
    is planned without decoding statistics no filter uses). ``known`` holds ones already made (partition
    columns)."""

    __slots__ = ("_add", "_cache", "_leaves", "_parsed")

    def __init__(self, add: Mapping[str, Any], leaves: Mapping[int, Leaf], known: dict[int, ColumnStats]) -> None:
        self._add, self._leaves, self._cache = add, leaves, known
        self._parsed: dict[str, Any] | bool | None = False

    def _stats(self) -> dict[str, Any] | None:
        if self._parsed is False:
            self._parsed = parse_stats(self._add)
        return self._parsed  # type: ignore[return-value]

    def __getitem__(self, field_id: int) -> ColumnStats:
        if field_id in self._cache:
            return self._cache[field_id]
        leaf = self._leaves.get(field_id)
        found = None if leaf is None else column_stats(self._stats(), leaf)
        if found is None:
            raise KeyError(field_id)
        self._cache[field_id] = found
        return found

    def __iter__(self) -> Iterator[int]:
        return iter([fid for fid in {**self._leaves, **self._cache} if fid in self])

    def __contains__(self, field_id: object) -> bool:
        try:
            self[field_id]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def __len__(self) -> int:
        return sum(1 for _ in self)


def column_stats(stats: Mapping[str, Any] | None, leaf: Leaf) -> ColumnStats | None:
    """One field's statistics, found by its physical path (None: the file's stats do not name it)."""
    if not stats or stats.get("numRecords") is None:
        return None
    null_count = _at(stats.get("nullCount"), leaf.path)
    lo, hi = _at(stats.get("minValues"), leaf.path), _at(stats.get("maxValues"), leaf.path)
    if null_count is None and lo is None:
        return None
    lower, upper = _bound(lo, leaf.type, False), _bound(hi, leaf.type, True)
    if lower is None or upper is None:
        lower = upper = None
    return ColumnStats(value_count=int(stats["numRecords"]),
                       null_count=null_count if type(null_count) is int else None,
                       lower=lower, upper=upper, type=leaf.type)


def _at(tree: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if type(tree) is not dict:
            return None
        tree = tree.get(part)
    return None if type(tree) is dict else tree


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
