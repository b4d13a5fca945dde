"""``fieldshift.spark.read(..., filter=...)``: files pruned on the driver, rows filtered by Spark, exactly.

The driver's scan prunes whole partitions (through every spec's transforms) and files (by
statistics); the DataFrame then keeps the rows the engine would keep. The bound filter has no NOT
(``filter_bind.rewrite_not``), so each leaf is translated on its own with the engine's semantics:
``!=``, ``not in`` and ``not_starts_with`` are true on nulls, and NaN compares false (Arrow's), using
the literals the engine already rewrote into the column's own values.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa

from fieldshift.errors import InvalidFilterError
from fieldshift.schema.model import join_path
from fieldshift.table.expressions.bind import BoundPredicate
from fieldshift.table.expressions.tree import Expression, ExpressionVisitor, visit

__all__ = ["spark_condition"]


def _literal(v: Any, t: pa.DataType) -> Any:
    from pyspark.sql import functions as F

    if pa.types.is_timestamp(t) and isinstance(v, dt.datetime):  # never through the Python process's zone
        if t.tz is None:
            return F.lit(v.replace(tzinfo=None).isoformat(sep=" ")).cast("timestamp_ntz")
        return F.lit(v.astimezone(dt.UTC).isoformat()).cast("timestamp")
    return F.lit(v)


def _one(p: BoundPredicate) -> Any:
    from pyspark.sql import functions as F

    c = F.col(join_path(p.path))
    op = p.op
    if op == "is_null":
        return c.isNull()
    if op == "not_null":
        return c.isNotNull()
    if op == "is_nan":
        return F.isnan(c)  # false on a null, as the engine's
    if op == "not_nan":
        return ~F.isnan(c)
    assert p.literals is not None
    t = p.literals.type
    values = [_literal(v, t) for v in p.literals.to_pylist()]
    if op == "starts_with":
        return c.startswith(values[0])
    if op == "not_starts_with":
        return ~c.startswith(values[0]) | c.isNull()
    if op == "!=":
        return (c != values[0]) | c.isNull()
    if op == "not in":
        return ~c.isin(*values) | c.isNull()
    cond = {"==": lambda: c == values[0], "<": lambda: c < values[0], "<=": lambda: c <= values[0],
            ">": lambda: c > values[0], ">=": lambda: c >= values[0], "in": lambda: c.isin(*values)}[op]()
    if pa.types.is_floating(t):
        cond = cond & ~F.isnan(c)  # Spark orders NaN above everything; Arrow (and the engine) match nothing
    return cond


class _ToSpark(ExpressionVisitor[Any]):
    def visit_true(self) -> Any:
        from pyspark.sql import functions as F

        return F.lit(True)

    def visit_false(self) -> Any:
        from pyspark.sql import functions as F

        return F.lit(False)

    def visit_and(self, results: list[Any]) -> Any:
        out = results[0]
        for r in results[1:]:
            out = out & r
        return out

    def visit_or(self, results: list[Any]) -> Any:
        out = results[0]
        for r in results[1:]:
            out = out | r
        return out

    def visit_not(self, result: Any) -> Any:
        raise InvalidFilterError("spark_condition takes a filter without NOT (filter_bind.rewrite_not)")

    def visit_leaf(self, leaf: Expression) -> Any:
        if not isinstance(leaf, BoundPredicate):
            raise InvalidFilterError(f"spark_condition takes a bound filter; bind {leaf} first")
        return _one(leaf)


def spark_condition(bound: Expression) -> Any:
    """A bound filter (no NOT) as a Spark Column that keeps exactly the rows the engine keeps."""
    return visit(bound, _ToSpark())
