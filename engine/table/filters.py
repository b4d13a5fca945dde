"""Scan filters: validated predicates, rewritten exactly into their column's type, evaluated by Arrow.

Null semantics are Iceberg's, as PyIceberg evaluates a row: a null is never equal to, ordered with or
in a list of anything, so ``==``, ``<``, ``<=``, ``>``, ``>=`` and ``in`` are false on it, while ``!=``
and ``not in`` are true on it. Null literals are refused (use ``is_null``/``not_null``), as Iceberg
refuses them. A number literal of another kind than its number column is compared exactly: it is
rewritten into the column's own values before Arrow sees it (``a > 1.5`` on a long column becomes
``a >= 2``, ``a == 1.5`` becomes false, a literal beyond the column's range becomes a constant), so
Arrow never rounds a literal and never raises its range errors.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.errors import InvalidFilterError
from fieldshift.schema import Schema, join_path, split_path
from fieldshift.types import StructType, int_range, type_name

__all__ = ["OPS", "BoundPredicate", "InvalidFilterError", "Predicate", "bind_filter", "parse_filter",
           "row_filter", "sort_keys"]

OPS = ("==", "=", "!=", "<", "<=", ">", ">=", "in", "not in", "is_null", "not_null")
_UNARY = ("is_null", "not_null")
_LISTS = ("in", "not in")
_LIST_KINDS = (list, tuple, set, frozenset)
T = pa.types


# -- shape ---------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Predicate:
    """``column op value``; a scan's filter is a conjunction of these.

    ``column`` is a dotted path (backticks quote a name holding dots) or a sequence of name parts.
    """

    column: str | tuple[str, ...]
    op: str
    value: Any = None

    def __post_init__(self) -> None:
        col = self.column
        if isinstance(col, list):
            col = tuple(col)
            object.__setattr__(self, "column", col)
        if isinstance(col, tuple):
            if not col or not all(isinstance(p, str) and p for p in col):
                raise InvalidFilterError(f"filter column {col!r}: a path is a non-empty sequence of names")
        elif not isinstance(col, str) or not col:
            raise InvalidFilterError(f"filter column {col!r}: name a column (a str such as 'a' or 's.x')")
        op = self.op.strip().lower() if isinstance(self.op, str) else self.op
        if op not in OPS:
            raise InvalidFilterError(f"filter on {self.shown_column!r}: unknown operator {self.op!r}; "
                                     f"use one of {', '.join(OPS)}")
        op = "==" if op == "=" else op
        object.__setattr__(self, "op", op)
        v = self.value
        if op in _UNARY:
            if v is not None:
                raise InvalidFilterError(f"filter {self}: {op} takes no value; write ({self.shown_column!r}, {op!r})")
            return
        if op in _LISTS:
            if not isinstance(v, _LIST_KINDS):
                raise InvalidFilterError(
                    f"filter {self}: {op!r} takes a list, tuple or set of values, not {type(v).__name__}; "
                    f"write ({self.shown_column!r}, {op!r}, [{v!r}])")
            v = tuple(v)
            object.__setattr__(self, "value", v)
            for x in v:
                self._check_literal(x)
            return
        if v is None and op in ("==", "!="):
            raise InvalidFilterError(f"filter {self}: a null literal never compares (nothing equals null); "
                                     f"use ({self.shown_column!r}, {'is_null' if op == '==' else 'not_null'!r})")
        if v is None:
            raise InvalidFilterError(f"filter {self}: {op!r} needs a value, e.g. ({self.shown_column!r}, {op!r}, 5)")
        if isinstance(v, _LIST_KINDS):
            raise InvalidFilterError(f"filter {self}: {op!r} compares with one value; use 'in' for a list")
        self._check_literal(v)

    def _check_literal(self, x: Any) -> None:
        if x is None:
            raise InvalidFilterError(
                f"filter {self}: None in an {self.op!r} list never matches (Iceberg: a null is in no list); "
                f"filter nulls with ({self.shown_column!r}, 'is_null') or ({self.shown_column!r}, 'not_null')")
        if (isinstance(x, float) and math.isnan(x)) or (isinstance(x, decimal.Decimal) and x.is_nan()):
            raise InvalidFilterError(f"filter {self}: NaN compares with nothing; NaN values match only "
                                     "'!=' and 'not in', and no other filter selects them")

    @property
    def shown_column(self) -> str:
        """The column as a dotted path, as messages show it."""
        return self.column if isinstance(self.column, str) else join_path(self.column)

    @property
    def path(self) -> tuple[str, ...]:
        """The column's name parts, from the top level down."""
        return split_path(self.column)

    def __str__(self) -> str:
        if self.op in _UNARY:
            return f"({self.shown_column!r}, {self.op!r})"
        return f"({self.shown_column!r}, {self.op!r}, {self.value!r})"


def parse_filter(filter: Any) -> tuple[Predicate, ...]:
    """Accept None, one ``(column, op[, value])`` tuple, a list of them (all must hold), or Predicates."""
    if filter is None:
        return ()
    if isinstance(filter, Predicate) or _is_one(filter):
        return (_one(filter),)
    if isinstance(filter, (list, tuple)):
        return tuple(_one(p) for p in filter)
    raise InvalidFilterError(f"a filter is a (column, op, value) tuple or a list of them that must all hold, "
                             f"not a {type(filter).__name__}: {filter!r}")


def _is_one(x: Any) -> bool:
    """``("a", ">", 1)`` or ``(["s", "x"], "is_null")``, as opposed to a list of such conditions."""
    if not (isinstance(x, (tuple, list)) and len(x) in (2, 3) and isinstance(x[1], str)):
        return False
    if isinstance(x[0], str):
        return True
    parts = isinstance(x[0], (tuple, list)) and x[0] and all(isinstance(p, str) for p in x[0])
    return bool(parts) and x[1].strip().lower() in OPS


def _one(p: Any) -> Predicate:
    if isinstance(p, Predicate):
        return p
    if _is_one(p):
        return Predicate(*p)
    if isinstance(p, (tuple, list)) and p and isinstance(p[0], (tuple, list)):
        raise InvalidFilterError(f"filter condition {p!r}: nested lists (OR of conditions) are not supported; "
                                 "a filter is a list of (column, op, value) conditions that must all hold")
    raise InvalidFilterError(f"filter condition {p!r}: write (column, op, value), or (column, 'is_null') / "
                             "(column, 'not_null')")


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
class _Domain:
    """How one column type's values are ordered: literal -> (floor, ceil) column values, and arrays."""

    cmp_type: pa.DataType  # the type comparisons run in (the column's, or an exact wider stand-in)
    locate: Callable[[Any], tuple[Any, Any] | None]  # None: the literal is of the wrong kind
    build: Callable[[list[Any]], pa.Array]
    expects: str


def _domain(t: pa.DataType) -> _Domain | None:
    if T.is_integer(t):
        lo, hi = int_range(t)

        def loc_int(v: Any) -> tuple[Any, Any] | None:
            x = _as_real(v)
            return None if x is None else _locate_int(x, lo, hi)
        return _Domain(t, loc_int, lambda vs: pa.array(vs, t), "a number (int, float or Decimal)")
    if T.is_floating(t):
        cmp = pa.float32() if T.is_float16(t) else t
        dtype = {16: np.float16, 32: np.float32, 64: np.float64}[t.bit_width]

        def loc_float(v: Any) -> tuple[Any, Any] | None:
            x = _as_real(v)
            return None if x is None else _locate_float(x, dtype)
        return _Domain(cmp, loc_float, lambda vs: pa.array(vs, cmp), "a number (int, float or Decimal)")
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
        return _Domain(t, loc_dec, lambda vs: pa.array(vs, t), "a number (int, float or Decimal)")
    if T.is_string(t) or T.is_large_string(t) or T.is_string_view(t):
        cmp = pa.large_string() if T.is_string_view(t) else t
        return _Domain(cmp, lambda v: (v, v) if isinstance(v, str) else None, lambda vs: pa.array(vs, cmp), "a str")
    if T.is_binary(t) or T.is_large_binary(t) or T.is_binary_view(t) or T.is_fixed_size_binary(t):
        cmp = pa.large_binary() if T.is_binary_view(t) else pa.binary() if T.is_fixed_size_binary(t) else t

        def loc_bytes(v: Any) -> tuple[Any, Any] | None:
            return (bytes(v), bytes(v)) if isinstance(v, (bytes, bytearray, memoryview)) else None
        return _Domain(cmp, loc_bytes, lambda vs: pa.array(vs, cmp), "bytes")
    if T.is_boolean(t):
        return _Domain(t, lambda v: (bool(v), bool(v)) if isinstance(v, (bool, np.bool_)) else None,
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
        return _Domain(t, loc_time, lambda vs: pa.array(vs, storage).view(t), "a datetime.time")
    return None


def _temporal_domain(t: pa.DataType) -> _Domain:
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
    return _Domain(t, loc, build, "a datetime.date or datetime.datetime")


# -- binding -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BoundPredicate:
    """A predicate checked against the read schema, its literals rewritten into the column's values.

    ``op`` is one of ``== != < <= > >= in not in is_null not_null`` or the constants ``true`` /
    ``false`` (a literal no value of the column can equal or pass). ``literals`` are column values
    in ``cmp_type``; ``keys`` are their Python sort keys (what statistics are compared with).
    """

    predicate: Predicate
    path: tuple[str, ...]
    field_id: int
    op: str
    read_type: Any = None
    cmp_type: pa.DataType | None = None
    literals: pa.Array | None = None
    keys: tuple[Any, ...] = ()

    def expression(self) -> pc.Expression:
        """The Arrow row filter; every row is true or false (null counts as false)."""
        if self.op in ("true", "false"):
            return pc.scalar(self.op == "true")
        ref = pc.field(*self.path)
        if self.op == "is_null":
            return ref.is_null()
        if self.op == "not_null":
            return ref.is_valid()
        if self.cmp_type is not None and self.cmp_type != self.read_type:
            ref = ref.cast(self.cmp_type)
        lits = self.literals
        assert lits is not None
        if self.op == "in":
            return ref.isin(lits)
        if self.op == "not in":
            return ~ref.isin(lits)  # is_in is false on null: a null is in no list, so not in is true
        s = lits[0]
        if self.op == "!=":
            return (ref != s) | ref.is_null()
        return {"==": ref == s, "<": ref < s, "<=": ref <= s, ">": ref > s, ">=": ref >= s}[self.op]


def bind_filter(predicates: Sequence[Predicate], schema: Schema) -> tuple[BoundPredicate, ...]:
    """Validate each predicate against ``schema`` (the read schema) and rewrite it exactly."""
    return tuple(_bind(p, schema) for p in predicates)


def _bind(p: Predicate, schema: Schema) -> BoundPredicate:
    parts = p.path
    field = schema.find(parts)
    for i in range(1, len(parts)):
        parent = schema.find(parts[:i])
        if not isinstance(parent.type, StructType):
            raise InvalidFilterError(f"filter {p}: filters reach nested fields through structs only, "
                                     f"and {join_path(parts[:i])!r} is a {type_name(parent.type)}")
    t = field.type
    if p.op in _UNARY:
        return BoundPredicate(p, parts, field.id, p.op, t)
    domain = _domain(t) if isinstance(t, pa.DataType) else None
    if domain is None:
        raise InvalidFilterError(f"filter {p}: column {join_path(parts)!r} is {type_name(t)}, which filters "
                                 "cannot compare; use is_null / not_null, or filter on a primitive field")
    located = []
    for v in (p.value if p.op in _LISTS else (p.value,)):
        try:
            found = domain.locate(v)
        except ValueError as e:
            raise InvalidFilterError(f"filter {p}: column {join_path(parts)!r} is {type_name(t)}: {e}") from None
        if found is None:
            raise InvalidFilterError(
                f"filter {p}: column {join_path(parts)!r} is {type_name(t)}, and the literal {v!r} "
                f"({type(v).__name__}) does not compare with it; pass {domain.expects}")
        located.append(found)
    op, values = _rewrite(p.op, located)
    if op in ("true", "false"):
        return BoundPredicate(p, parts, field.id, op, t)
    if op in _LISTS and T.is_floating(t) and any(v == 0 for v in values):
        values = [v for v in values if v != 0] + [0.0, -0.0]  # is_in hashes bits: -0.0 must equal 0.0
    lits = domain.build(values)
    if lits.type != domain.cmp_type:
        lits = lits.cast(domain.cmp_type)
    return BoundPredicate(p, parts, field.id, op, t, domain.cmp_type, lits, tuple(sort_keys(lits)))


def _rewrite(op: str, located: list[tuple[Any, Any]]) -> tuple[str, list[Any]]:
    """The same test on column values only: non-representable literals become floors, ceilings or constants."""
    def exact(fc: tuple[Any, Any]) -> bool:
        return fc[0] is not None and fc[1] is not None and fc[0] == fc[1]

    if op in _LISTS:
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


def row_filter(bound: Sequence[BoundPredicate]) -> pc.Expression | None:
    """The conjunction of ``bound``'s expressions (None when there is no filter)."""
    expr = None
    for p in bound:
        expr = p.expression() if expr is None else expr & p.expression()
    return expr


def sort_keys(arr: pa.Array) -> list[Any]:
    """Python values that order exactly as Arrow orders ``arr``'s values (temporal ones as ticks)."""
    t = arr.type
    if T.is_temporal(t):
        return arr.view(pa.int32() if t.bit_width == 32 else pa.int64()).to_pylist()
    if T.is_float16(t):
        return arr.cast(pa.float32()).to_pylist()
    return arr.to_pylist()
