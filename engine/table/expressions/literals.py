"""Literals against column types: a filter literal rewritten exactly into its column's values.

A number literal of another kind than its number column is compared exactly: it is located among
the column's own values before Arrow sees it (``a > 1.5`` on a long column becomes ``a >= 2``,
``a == 1.5`` becomes false, a literal beyond the column's range becomes a constant), so Arrow never
rounds a literal and never raises its range errors. Literals of filter text (``SqlLiteral``) are
first typed like their column, as the CLI's ``--where`` always did (``f = 0.1`` on a float column
means the float nearest 0.1).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa

from fieldshift.ddl.changes import SqlLiteral, coerce_literal
from fieldshift.schema.types import FieldType, int_range

__all__ = ["Domain", "domain", "locate_values", "sort_keys", "typed_text_literal"]

T = pa.types


# -- literals against column types ---------------------------------------------------------------
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = _EPOCH.replace(tzinfo=dt.UTC)
_TICKS_PER_SECOND = {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}
_INF = math.inf


def _locate_int(x: Fraction | float, lo: int, hi: int) -> tuple[int | None, int | None]:
    """(largest int in [lo, hi] <= x, smallest one >= x); None where there is none."""
    if x == _INF:
        return hi, None
    if x == -_INF:
        return None, lo
    f, c = math.floor(x), math.ceil(x)
    return (None if f < lo else min(f, hi)), (None if c > hi else max(c, lo))


def _locate_float(x: Fraction | float, dtype: type) -> tuple[float, float]:
    """The column floats just below and above ``x`` (equal when ``x`` is one of them)."""
    if isinstance(x, float):  # +-inf
        return x, x
    try:
        nearest = float(x)
    except OverflowError:
        nearest = _INF if x > 0 else -_INF
    with np.errstate(over="ignore"):
        c = dtype(nearest)  # the float nearest x, then this width's: one of x's two neighbours
    fc = None if math.isinf(c) else Fraction(float(c))
    if fc == x:
        return float(c), float(c)
    above = c > 0 if fc is None else fc > x
    if above:
        return float(np.nextafter(c, dtype(-_INF))), float(c)
    return float(c), float(np.nextafter(c, dtype(_INF)))


def _as_real(v: Any) -> Fraction | float | None:
    """A number literal as an exact Fraction (or +-inf); None when it is not a number."""
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    if isinstance(v, (float, np.floating)):
        return float(v) if math.isinf(v) else Fraction(float(v))
    if isinstance(v, decimal.Decimal):
        return (_INF if v > 0 else -_INF) if v.is_infinite() else Fraction(v)
    if isinstance(v, Fraction):
        return v
    return None


def _seconds(v: Any, aware_column: bool | None) -> Fraction | None:
    """A date/datetime literal as exact seconds since the epoch; None for another kind.

    ``aware_column``: None for a date column, else whether the timestamp column has a zone. A naive
    datetime against a zoned column is read as UTC (as the CLI reads a timestamp without an offset).
    """
    if isinstance(v, dt.datetime):
        nanos = int(getattr(v, "nanosecond", 0) or 0)
        if v.tzinfo is not None and v.utcoffset() is not None:
            if not aware_column:
                raise ValueError("a datetime with a zone does not compare with a column without one; "
                                 "pass a naive datetime (wall-clock time)")
            delta = v - _EPOCH_UTC
        else:
            delta = v.replace(tzinfo=None) - _EPOCH
        micros = delta // dt.timedelta(microseconds=1)
        return Fraction(micros * 1000 + nanos, 10**9)
    if isinstance(v, dt.date):
        return Fraction((v - _EPOCH.date()).days * 86400)
    return None


@dataclass(frozen=True)
class Domain:
    """How one column type's values are ordered: literal -> (floor, ceil) column values, and arrays."""

    cmp_type: pa.DataType  # the type comparisons run in (the column's, or an exact wider stand-in)
    locate: Callable[[Any], tuple[Any, Any] | None]  # None: the literal is of the wrong kind
    build: Callable[[list[Any]], pa.Array]
    expects: str


def domain(t: pa.DataType) -> Domain | None:
    """How filters compare literals with column type ``t`` (None: filters cannot compare it)."""
    if T.is_integer(t):
        lo, hi = int_range(t)

        def loc_int(v: Any) -> tuple[Any, Any] | None:
            x = _as_real(v)
            return None if x is None else _locate_int(x, lo, hi)
        return Domain(t, loc_int, lambda vs: pa.array(vs, t), "a number (int, float or Decimal)")
    if T.is_floating(t):
        cmp = pa.float32() if T.is_float16(t) else t
        dtype = {16: np.float16, 32: np.float32, 64: np.float64}[t.bit_width]

        def loc_float(v: Any) -> tuple[Any, Any] | None:
            x = _as_real(v)
            return None if x is None else _locate_float(x, dtype)
        return Domain(cmp, loc_float, lambda vs: pa.array(vs, cmp), "a number (int, float or Decimal)")
    if T.is_decimal(t):
        scale = 10**t.scale
        limit = 10**t.precision - 1

        def loc_dec(v: Any) -> tuple[Any, Any] | None:
            if isinstance(v, (float, np.floating)) and math.isfinite(v):
                v = decimal.Decimal(repr(float(v)))  # a float against decimals means the decimal it prints as
            x = _as_real(v)
            if x is None:
                return None
            f, c = _locate_int(x if isinstance(x, float) else x * scale, -limit, limit)
            return tuple(None if k is None else decimal.Decimal(k).scaleb(-t.scale) for k in (f, c))
        return Domain(t, loc_dec, lambda vs: pa.array(vs, t), "a number (int, float or Decimal)")
    if T.is_string(t) or T.is_large_string(t) or T.is_string_view(t):
        cmp = pa.large_string() if T.is_string_view(t) else t
        return Domain(cmp, lambda v: (v, v) if isinstance(v, str) else None, lambda vs: pa.array(vs, cmp), "a str")
    if T.is_binary(t) or T.is_large_binary(t) or T.is_binary_view(t) or T.is_fixed_size_binary(t):
        cmp = pa.large_binary() if T.is_binary_view(t) else pa.binary() if T.is_fixed_size_binary(t) else t

        def loc_bytes(v: Any) -> tuple[Any, Any] | None:
            return (bytes(v), bytes(v)) if isinstance(v, (bytes, bytearray, memoryview)) else None
        return Domain(cmp, loc_bytes, lambda vs: pa.array(vs, cmp), "bytes")
    if T.is_boolean(t):
        return Domain(t, lambda v: (bool(v), bool(v)) if isinstance(v, (bool, np.bool_)) else None,
                       lambda vs: pa.array(vs, t), "a bool")
    if T.is_date(t) or T.is_timestamp(t):
        return _temporal_domain(t)
    if T.is_time(t):
        per_second = _TICKS_PER_SECOND[t.unit]
        storage = pa.int32() if T.is_time32(t) else pa.int64()
        lo, hi = int_range(storage)

        def loc_time(v: Any) -> tuple[Any, Any] | None:
            if not isinstance(v, dt.time):
                return None
            if v.tzinfo is not None:
                raise ValueError("a time with a zone does not compare with a time column; pass a naive time")
            secs = Fraction(v.hour * 3600 + v.minute * 60 + v.second) + Fraction(v.microsecond, 10**6)
            return _locate_int(secs * per_second, lo, hi)
        return Domain(t, loc_time, lambda vs: pa.array(vs, storage).view(t), "a datetime.time")
    return None


def _temporal_domain(t: pa.DataType) -> Domain:
    """Dates count days, timestamps count their unit since the epoch (UTC for zoned columns)."""
    if T.is_date(t):
        per_second: Fraction | int = Fraction(1, 86400)
        lo, hi = int_range(pa.int32())
        aware: bool | None = None

        def build(vs: list[Any]) -> pa.Array:
            days = pa.array(vs, pa.int32()).view(pa.date32())
            return days if T.is_date32(t) else days.cast(t)
    else:
        per_second = _TICKS_PER_SECOND[t.unit]
        lo, hi = int_range(pa.int64())
        aware = t.tz is not None

        def build(vs: list[Any]) -> pa.Array:
            return pa.array(vs, pa.int64()).view(t)

    def loc(v: Any) -> tuple[Any, Any] | None:
        if aware is None and isinstance(v, dt.datetime) and v.tzinfo is not None:
            raise ValueError("a datetime with a zone does not compare with a date column; pass a date")
        secs = _seconds(v, aware)
        return None if secs is None else _locate_int(secs * per_second, lo, hi)
    return Domain(t, loc, build, "a datetime.date or datetime.datetime")


def locate_values(op: str, located: list[tuple[Any, Any]]) -> tuple[str, list[Any]]:
    """The same test on column values only: non-representable literals become floors, ceilings or
    constants (op ``true`` / ``false``)."""
    def exact(fc: tuple[Any, Any]) -> bool:
        return fc[0] is not None and fc[1] is not None and fc[0] == fc[1]

    if op in ("in", "not in"):
        values = list(dict.fromkeys(f for f, c in located if exact((f, c))))
        if not values:
            return ("false" if op == "in" else "true"), []
        return op, values
    (f, c), = located
    if exact((f, c)):
        return op, [f]
    if op in ("==", "!="):
        return ("false" if op == "==" else "true"), []
    if op in ("<", "<="):
        return ("false", []) if f is None else ("<=", [f])
    return ("false", []) if c is None else (">=", [c])


def typed_text_literal(lit: SqlLiteral, t: FieldType) -> Any:
    """A literal of filter text as a Python value of column type ``t``; ValueError says why not.

    Integers and decimals keep the literal exact (``a > 1.5`` on a long column compares exactly);
    everything else is read as the column's type, as the CLI's ``--where`` always did.
    """
    if lit.kind == "number" and isinstance(t, pa.DataType) and (T.is_integer(t) or T.is_decimal(t)):
        return int(lit.text) if re.fullmatch(r"[+-]?\d+", lit.text) else decimal.Decimal(lit.text)
    return coerce_literal(lit, t)


def sort_keys(arr: pa.Array) -> list[Any]:
    """Python values that order exactly as Arrow orders ``arr``'s values (temporal ones as ticks)."""
    t = arr.type
    if T.is_temporal(t):
        return arr.view(pa.int32() if t.bit_width == 32 else pa.int64()).to_pylist()
    if T.is_float16(t):
        return arr.cast(pa.float32()).to_pylist()
    return arr.to_pylist()
