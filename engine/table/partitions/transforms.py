"""Iceberg's partition transforms on Arrow arrays: identity, year, month, day, hour, bucket[N], truncate[W], void.

Each transform maps a source column to partition keys vectorised (``keys``), and a key to the value
the catalog records (``value``), so a write groups its rows by keys and a scan maps a filter literal
through the very same code. Results are Iceberg's, bit for bit: years, months, days and hours count
from 1970-01-01 00:00 UTC and floor (a moment before the epoch is in year -1, not 0); bucket is
``(murmur3_x86_32(iceberg bytes) & 0x7FFFFFFF) % N`` (``fieldshift.kernels.murmur3``); truncate
floors integers and decimals (``v - (((v % W) + W) % W)``) and keeps the first W code points of a
string or W bytes of a binary. Zoned timestamps are transformed in UTC. Truncated integers and
decimals are exact, as the specification's formula and PyIceberg give them, even where the floor
lies outside the column's type (Java's Iceberg wraps ``truncate[10]`` of ``-2**63`` to a huge
positive long; an exact value keeps pruning right).

Arrow types Iceberg does not define are mapped to the type they widen to: int8/int16/uint8/uint16 ->
int, uint32 -> long, float16 -> float, large_string/string_view -> string, large_binary/binary_view
-> binary, date64 -> date, timestamp[s]/[ms] -> timestamp (microseconds), time32 -> time,
time64[ns] -> time (floored to microseconds for bucket). uint64 (values above 2**63 have no long
form), booleans and floats under bucket/truncate, and nested types are refused.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.errors import PartitionSpecError
from fieldshift.kernels.murmur3 import bucket as murmur3_bucket

__all__ = ["TIME_TRANSFORMS", "Transform", "parse_transform"]

T = pa.types
TIME_TRANSFORMS = ("year", "month", "day", "hour")
_TICKS_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_NANOS_PER_UNIT = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
_EPOCH = dt.datetime(1970, 1, 1)
_EXACT = decimal.Context(prec=400, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)  # no rounding for any decimal


def _is_string(t: pa.DataType) -> bool:
    return T.is_string(t) or T.is_large_string(t) or T.is_string_view(t)


def _is_binary(t: pa.DataType) -> bool:
    return T.is_binary(t) or T.is_large_binary(t) or T.is_binary_view(t)


def _is_hashable_int(t: pa.DataType) -> bool:
    return T.is_integer(t) and not T.is_uint64(t)


def _refusal(transform: str, t: pa.DataType, why: str) -> str:
    return f"transform {transform} is not defined for {t}: {why}"


@dataclass(frozen=True, slots=True)
class Transform:
    """One Iceberg transform; ``str()`` is Iceberg's name (``day``, ``bucket[16]``, ``truncate[4]``)."""

    kind: str
    param: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("identity", "void", "bucket", "truncate", *TIME_TRANSFORMS):
            raise PartitionSpecError(f"unknown partition transform {self.kind!r}; use identity, year, month, "
                                     "day, hour, bucket[N], truncate[W] or void")
        needs = self.kind in ("bucket", "truncate")
        if needs and (isinstance(self.param, bool) or not isinstance(self.param, int) or self.param <= 0):
            what = "buckets" if self.kind == "bucket" else "width"
            raise PartitionSpecError(f"{self.kind} needs a positive whole number ({what}), not {self.param!r}")
        if not needs and self.param is not None:
            raise PartitionSpecError(f"transform {self.kind} takes no parameter (got {self.param!r})")

    def __str__(self) -> str:
        return f"{self.kind}[{self.param}]" if self.param is not None else self.kind

    @property
    def preserves_order(self) -> bool:
        """Monotone: a <= b implies T(a) <= T(b), so range filters project (bucket and void do not)."""
        return self.kind not in ("bucket", "void")

    # -- types ----------------------------------------------------------------------------------
    def refusal(self, t: Any) -> str | None:
        """Why this transform cannot apply to type ``t`` (None: it can)."""
        if not isinstance(t, pa.DataType) or T.is_nested(t) or T.is_dictionary(t):
            return _refusal(str(self), t, "partition a primitive column (a struct's child is fine)")
        k = self.kind
        if k == "void":
            return None
        if k == "identity":
            ok = (T.is_integer(t) or T.is_floating(t) or T.is_decimal(t) or _is_string(t) or _is_binary(t)
                  or T.is_fixed_size_binary(t) or T.is_boolean(t) or T.is_date(t) or T.is_timestamp(t)
                  or T.is_time(t))
            return None if ok else _refusal(str(self), t, "identity takes numbers, decimals, strings, binary, "
                                            "booleans, dates, times and timestamps")
        if k in ("year", "month", "day"):
            return None if T.is_date(t) or T.is_timestamp(t) else _refusal(str(self), t, f"{k} takes dates and "
                                                                           "timestamps")
        if k == "hour":
            return None if T.is_timestamp(t) else _refusal(str(self), t, "hour takes timestamps")
        if T.is_uint64(t):
            return _refusal(str(self), t, "uint64 values above 2**63 have no Iceberg long; cast the column to "
                            "int64 (or partition by identity)")
        if k == "bucket":
            ok = (_is_hashable_int(t) or T.is_decimal(t) or _is_string(t) or _is_binary(t) or T.is_fixed_size_binary(t)
                  or T.is_date(t) or T.is_timestamp(t) or T.is_time(t))
            return None if ok else _refusal(str(self), t, "Iceberg hashes ints, longs, decimals, dates, times, "
                                            "timestamps, strings and binary only (no floats or booleans)")
        ok = _is_hashable_int(t) or T.is_decimal(t) or _is_string(t) or _is_binary(t)
        return None if ok else _refusal(str(self), t, "truncate takes ints, longs, decimals, strings and binary")

    def check(self, t: Any, where: str) -> None:
        """Raise :class:`PartitionSpecError` naming ``where`` unless this transform applies to ``t``."""
        why = self.refusal(t)
        if why is not None:
            raise PartitionSpecError(f"{where}: {why}")

    # -- values ---------------------------------------------------------------------------------
    def keys(self, arr: pa.Array | pa.ChunkedArray) -> pa.Array:
        """The partition key of every value, vectorised (null stays null; void gives all nulls)."""
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
        t = arr.type
        k = self.kind
        if k == "void":
            return pa.nulls(len(arr), pa.int32())
        if k == "identity":
            if T.is_timestamp(t) or T.is_time(t):
                return arr.view(pa.int32() if t.bit_width == 32 else pa.int64())
            if T.is_string_view(t):
                return arr.cast(pa.large_string())
            if T.is_binary_view(t):
                return arr.cast(pa.large_binary())
            return arr
        if k == "bucket":
            if T.is_time(t) and t.bit_width == 32:
                arr = arr.cast(pa.time64("us"))
            return murmur3_bucket(arr, self.param)
        if k == "truncate":
            return _truncate(arr, self.param)
        return _time_keys(arr, k)

    def value(self, key: Any, source: pa.DataType) -> Any:
        """The recorded partition value of one key (from ``keys(...).to_pylist()``).

        Identity on timestamps and times records integer nanoseconds since the epoch / midnight (any
        unit, so a unit change keeps values equal); truncate of an integer records a Python int (an
        exact floor below int64 arrives as a decimal key); everything else records the key as it is.
        """
        if key is None:
            return key
        if self.kind == "truncate" and T.is_integer(source):
            return key if type(key) is int else int(decimal.Decimal(key))
        if self.kind == "truncate" and T.is_decimal(source) and isinstance(key, str):
            return decimal.Decimal(key)
        if self.kind != "identity":
            return key
        if T.is_timestamp(source) or T.is_time(source):
            return int(key) * _NANOS_PER_UNIT[source.unit]
        if isinstance(key, memoryview):
            return bytes(key)
        return key

    def values(self, arr: pa.Array | pa.ChunkedArray) -> list[Any]:
        """``value`` of every key of ``arr`` (for literals and tests; writes group by keys first)."""
        return [self.value(k, arr.type) for k in self.keys(arr).to_pylist()]

    def human(self, value: Any, source: pa.DataType) -> str:
        """Iceberg's human string of a partition value, for directory names (``2024-01-31-13`` for an hour)."""
        if value is None:
            return "null"
        k = self.kind
        try:
            if k == "year":
                return f"{1970 + value:04d}"
            if k == "month":
                y, m = divmod(value, 12)
                return f"{1970 + y:04d}-{m + 1:02d}"
            if k == "day":
                return (_EPOCH.date() + dt.timedelta(days=value)).isoformat()
            if k == "hour":
                return (_EPOCH + dt.timedelta(hours=value)).strftime("%Y-%m-%d-%H")
            if k == "identity" and T.is_timestamp(source):
                micros = value // 1000
                return (_EPOCH + dt.timedelta(microseconds=micros)).isoformat()
            if k == "identity" and T.is_time(source):
                return (dt.datetime.min + dt.timedelta(microseconds=value // 1000)).time().isoformat()
        except (OverflowError, ValueError):
            return str(value)
        if isinstance(value, bytes):
            return base64.b64encode(value).decode()
        if isinstance(value, dt.date):
            return value.isoformat()
        return str(value).lower() if isinstance(value, bool) else str(value)


# -- time transforms -------------------------------------------------------------------------------
def _ticks(arr: pa.Array) -> tuple[np.ndarray, np.ndarray | None, int]:
    """(int64 ticks with nulls as 0, null mask or None, ticks per second; dates count days as -1)."""
    t = arr.type
    mask = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    if T.is_date32(t):
        raw = arr.view(pa.int32()).cast(pa.int64())
        per = -1
    elif T.is_date64(t):
        raw = arr.view(pa.int64())
        per = 1000
    else:
        raw = arr.view(pa.int64())
        per = _TICKS_PER_SECOND[t.unit]
    return raw.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64), mask, per


def _civil(days: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(year, month 1-12) of days since 1970-01-01 in the proleptic Gregorian calendar, any range."""
    z = days + 719_468
    era = np.floor_divide(z, 146_097)
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return year, month


def _time_keys(arr: pa.Array, kind: str) -> pa.Array:
    ticks, mask, per = _ticks(arr)
    if kind == "hour":
        out = np.floor_divide(ticks, per * 3600)
    else:
        days = ticks if per == -1 else np.floor_divide(ticks, per * 86_400)
        if kind == "day":
            out = days
        else:
            year, month = _civil(days)
            out = year - 1970 if kind == "year" else (year - 1970) * 12 + (month - 1)
    result = pa.array(out, pa.int64(), mask=mask)
    lo, hi = (int(out.min()), int(out.max())) if len(out) else (0, 0)
    return result.cast(pa.int32()) if -(2**31) <= lo and hi < 2**31 else result


# -- truncate --------------------------------------------------------------------------------------
def _truncate(arr: pa.Array, width: int) -> pa.Array:
    t = arr.type
    if T.is_integer(t):
        return _truncate_int(arr, width)
    if T.is_decimal(t):
        return _truncate_decimal(arr, width)
    if _is_string(t):
        return pc.utf8_slice_codeunits(arr.cast(pa.large_string()) if T.is_string_view(t) else arr, 0, width)
    return pc.binary_slice(arr.cast(pa.large_binary()) if T.is_binary_view(t) else arr, 0, width)


def _exact(unscaled: list[int | None], scale: int) -> pa.Array:
    """Exact keys of unscaled whole numbers: a decimal of ``scale`` as wide as they need (Arrow's widest
    holds 76 digits; beyond it, the decimal's text, which ``Transform.value`` reads back)."""
    digits = max([scale, *(len(str(abs(u))) for u in unscaled if u is not None)])
    values = [None if u is None else decimal.Decimal(u).scaleb(-scale, _EXACT) for u in unscaled]
    if digits > 76:
        return pa.array([None if v is None else str(v) for v in values], pa.large_string())
    return pa.array(values, pa.decimal128(38, scale) if digits <= 38 else pa.decimal256(76, scale))


def _truncate_int(arr: pa.Array, width: int) -> pa.Array:
    """``v - (((v % W) + W) % W)`` computed exactly, as Iceberg's specification defines it.

    The floor of a value near the type's minimum can lie below it (``truncate[10]`` of ``-2**63`` is
    ``-2**63 - 2``): Java's Iceberg wraps that to a huge positive number, which breaks the order that
    pruning relies on, so the key is kept exact (int64 when it fits, else a decimal; ``value`` records
    it as a Python int, as PyIceberg computes it) and every recorded value stays in order.
    """
    if width < 2**62:
        mask = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
        v = arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
        with np.errstate(over="ignore"):
            out = v - np.mod(v, np.int64(width))  # numpy's mod takes the divisor's sign: Iceberg's floor
        if not (out > v).any():  # the exact floor is never above v: out > v means it wrapped below int64
            return pa.array(out, pa.int64(), mask=mask)
    return _exact([None if v is None else v - v % width for v in arr.to_pylist()], 0)  # Python's % floors


def _truncate_decimal(arr: pa.Array, width: int) -> pa.Array:
    """Floor the unscaled value to a multiple of ``width`` (Iceberg's truncate on decimals).

    The floor may need more digits than the column has (``truncate[100]`` of ``-9999999.99`` in a
    decimal(9,2) is ``-10000000.00``), so keys are a wider decimal of the same scale.
    """
    t = arr.type
    out: list[int | None] = []
    for v in arr.to_pylist():
        if v is None:
            out.append(None)
            continue
        unscaled = int(v.scaleb(t.scale, _EXACT))  # the default context would round past 28 digits
        out.append(unscaled - unscaled % width)  # Python's % floors
    return _exact(out, t.scale)


# -- parsing ---------------------------------------------------------------------------------------
_ALIASES = {"years": "year", "months": "month", "days": "day", "date": "day", "hours": "hour",
            "date_hour": "hour", "identity": "identity", "void": "void", "year": "year", "month": "month",
            "day": "day", "hour": "hour", "bucket": "bucket", "truncate": "truncate"}
_SPEC = re.compile(r"^\s*([A-Za-z_]+)\s*(?:\[\s*(\d+)\s*\])?\s*$")


def parse_transform(text: str | Transform) -> Transform:
    """``identity``, ``day``/``days``, ``bucket[16]``, ``truncate[4]`` (Iceberg's names and Spark's plurals)."""
    if isinstance(text, Transform):
        return text
    if not isinstance(text, str):
        raise PartitionSpecError(f"a transform is a name such as 'day' or 'bucket[16]', not {text!r}")
    m = _SPEC.match(text)
    kind = _ALIASES.get(m.group(1).lower()) if m else None
    if kind is None or m is None:
        raise PartitionSpecError(f"unknown partition transform {text!r}; use identity, year, month, day, hour, "
                                 "bucket[N], truncate[W] or void")
    return Transform(kind, int(m.group(2)) if m.group(2) is not None else None)
