"""Spark's pushed filters (``pyspark.sql.datasource``) to fieldshift filter expressions, and back.

The data source prunes files with what Spark pushes, and Spark still evaluates every filter on the
rows read, so a translation only has to be *inclusive*: every row Spark's filter keeps, the
expression keeps. ``Not`` needs more: its child must be *exact* (true, false and unknown on the
same rows), or a row the child wrongly kept would be wrongly dropped. Spark's NaN is a value (equal
to itself, above every number) where the engine's is IEEE's, so ``a > 1`` on a floating column
becomes ``a > 1 or a is nan``; a null in an ``IN`` list, ``StringEndsWith``, ``StringContains``, a
column the read schema lacks or a literal that does not fit its column are not translated (Spark
filters those rows alone).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from fieldshift.errors import InvalidFilterError, UnknownFieldError
from fieldshift.schema.model import Schema
from fieldshift.schema.types import StructType
from fieldshift.table.expressions.bind import BoundPredicate, bind
from fieldshift.table.expressions.tree import AlwaysTrue, Expression, Not, Predicate, and_, not_, or_

__all__ = ["from_spark_filter", "to_spark_filters"]

_COMPARE = {"EqualTo": "==", "GreaterThan": ">", "GreaterThanOrEqual": ">=", "LessThan": "<",
            "LessThanOrEqual": "<="}


def from_spark_filter(f: Any, schema: Schema) -> Expression | None:
    """An expression keeping every row Spark's pushed filter ``f`` keeps (None: none that prunes)."""
    found = _translate(f, schema)
    return None if found is None else found[0]


def _translate(f: Any, schema: Schema) -> tuple[Expression, bool] | None:
    """(expression, exact) for a Spark filter; exact: the same truth value, unknown included, on every row."""
    kind = type(f).__name__
    if kind == "Not":
        child = _translate(f.child, schema)
        return (not_(child[0]), True) if child is not None and child[1] else None
    path = tuple(getattr(f, "attribute", ()))
    t = _column_type(schema, path)
    if t is None:
        return None
    floating = pa.types.is_floating(t)
    if kind == "IsNull":
        return Predicate(path, "is_null"), True
    if kind == "IsNotNull":
        return Predicate(path, "not_null"), True
    if kind == "StringStartsWith":
        return _checked(Predicate(path, "starts_with", f.value), schema, exact=True)
    value = getattr(f, "value", None)
    if kind == "EqualNullSafe":  # never unknown: null <=> null is true, null <=> 1 is false
        if value is None:
            return Predicate(path, "is_null"), True
        if _nan(value):
            return Predicate(path, "is_nan"), True
        return _checked(and_(Predicate(path, "==", value), Predicate(path, "not_null")), schema, exact=True)
    if kind == "In":
        values = [v for v in value if v is not None and not _nan(v)]
        exact = len(values) == len(value) or (floating and all(v is not None for v in value))
        parts: list[Expression] = [Predicate(path, "in", values)] if values else []
        if len(values) < len(value) and any(_nan(v) for v in value):
            parts.append(Predicate(path, "is_nan"))
        if not parts:
            return None
        return _checked(or_(*parts), schema, exact=exact)
    op = _COMPARE.get(kind)
    if op is None or value is None:
        return None
    if _nan(value):  # Spark: NaN equals NaN and is above everything
        if op in ("==", ">="):
            return Predicate(path, "is_nan"), False
        return None
    if pa.types.is_timestamp(t) and t.tz is not None and getattr(value, "tzinfo", None) is None:
        return None  # a naive datetime against a zoned column is ambiguous: never prune on it
    expr: Expression = Predicate(path, op, value)
    if floating and op in (">", ">="):
        expr = or_(expr, Predicate(path, "is_nan"))
    return _checked(expr, schema, exact=True)


def _nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _column_type(schema: Schema, path: tuple[str, ...]) -> pa.DataType | None:
    """The column's type when it is a primitive reached through structs only (stats exist for those)."""
    if not path:
        return None
    try:
        target = schema.find(path)
        parents = [schema.find(path[:i]) for i in range(1, len(path))]
    except UnknownFieldError:
        return None
    if not isinstance(target.type, pa.DataType) or not all(isinstance(p.type, StructType) for p in parents):
        return None
    return target.type


def _checked(expr: Expression, schema: Schema, *, exact: bool) -> tuple[Expression, bool] | None:
    """``expr`` when it binds to ``schema`` (its literals fit their columns), else None."""
    try:
        bind(expr, schema)
    except (InvalidFilterError, ValueError, TypeError):
        return None
    return expr, exact


# -- back ----------------------------------------------------------------------------------------
def to_spark_filters(bound: Expression) -> list[Any] | None:
    """A bound filter as Spark's pushed filters (a list that must all hold), or None where they cannot
    say it exactly (an OR, a NaN-sensitive order on a floating column, ``not in`` on a nullable value)."""
    from pyspark.sql import datasource as ds

    if isinstance(bound, AlwaysTrue):
        return []
    out = []
    for part in bound.children if type(bound).__name__ == "And" else (bound,):
        f = _to_spark(part, ds)
        if f is None:
            return None
        out.append(f)
    return out


def _to_spark(e: Expression, ds: Any) -> Any:
    if isinstance(e, Not):
        child = _to_spark(e.child, ds)
        return None if child is None else ds.Not(child)
    if not isinstance(e, BoundPredicate):
        return None
    col = e.path
    if e.op == "is_null":
        return ds.IsNull(col)
    if e.op == "not_null":
        return ds.IsNotNull(col)
    if e.literals is None:
        return None
    values = _values(e)
    floating = pa.types.is_floating(e.literals.type)
    if e.op == "==":
        return ds.EqualTo(col, values[0])
    if e.op == "!=":  # true on nulls and NaN, as NOT (a <=> v)
        return ds.Not(ds.EqualNullSafe(col, values[0]))
    if e.op == "in":
        return ds.In(col, tuple(values))
    if e.op == "starts_with" and isinstance(values[0], str):
        return ds.StringStartsWith(col, values[0])
    if e.op in ("<", "<=") or (e.op in (">", ">=") and not floating):
        kind = {"<": ds.LessThan, "<=": ds.LessThanOrEqual, ">": ds.GreaterThan, ">=": ds.GreaterThanOrEqual}
        return kind[e.op](col, values[0])
    return None


def _values(e: BoundPredicate) -> Sequence[Any]:
    assert e.literals is not None
    return e.literals.to_pylist()  # the column's values (sort keys would give ticks for temporal types)
