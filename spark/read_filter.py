"""``fieldshift.spark.read(..., filter=...)``: files pruned on the driver, rows filtered by Spark, exactly.

The driver's scan prunes whole partitions (through every spec's transforms) and files (by
statistics); the DataFrame then keeps the rows the engine would keep, with Iceberg's null semantics
(``!=`` and ``not in`` are true on nulls) and Arrow's NaN semantics (NaN compares false), using the
literals the engine already rewrote into the column's own values.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from fieldshift.schema import join_path
from fieldshift.table.filters import BoundPredicate

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

    if p.op in ("true", "false"):
        return F.lit(p.op == "true")
    c = F.col(join_path(p.path))
    if p.op == "is_null":
        return c.isNull()
    if p.op == "not_null":
        return c.isNotNull()
    assert p.literals is not None
    t = p.literals.type
    values = [_literal(v, t) for v in p.literals.to_pylist()]
    if p.op == "!=":
        return (c != values[0]) | c.isNull()
    if p.op == "not in":
        return ~c.isin(*values) | c.isNull()
    cond = {"==": lambda: c == values[0], "<": lambda: c < values[0], "<=": lambda: c <= values[0],
            ">": lambda: c > values[0], ">=": lambda: c >= values[0], "in": lambda: c.isin(*values)}[p.op]()
    if pa.types.is_floating(t):
        cond = cond & ~F.isnan(c)  # Spark orders NaN above everything; Arrow (and the engine) match nothing
    return cond


def spark_condition(bound: Sequence[BoundPredicate]) -> Any:
    """The conjunction of ``bound`` as a Spark Column (None when there is no filter)."""
    out = None
    for p in bound:
        cond = _one(p)
        out = cond if out is None else out & cond
    return out
