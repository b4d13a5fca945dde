"""Scan filters in, one expression tree out: what ``Table.scan(filter=...)`` accepts.

A filter is any of: ``None``; a ``(column, op[, value])`` tuple or a list of them and of expressions
(all must hold); an expression tree (``fieldshift.col("a") > 5``, combined with ``& | ~``); or filter
text (``"v > 2 and (name is null or name = 'x')"``, the grammar in ``filter_text``). Each becomes the
same tree (``expressions``), so each gives the same answers. ``bind_filter`` validates it against the
read schema and rewrites its literals exactly (``filter_bind``); ``row_filter`` is the Arrow filter.

Null semantics are SQL's three-valued logic (``expressions`` says it in full): ``==``, ordering,
``in`` and ``starts_with`` are unknown on a null and a row is kept only where the filter is true;
``!=``, ``not in`` and ``not_starts_with`` are true on a null, as Iceberg (and PyIceberg) evaluate a
row. Null literals are refused (use ``is_null``/``not_null``), and so are NaN literals (use
``is_nan``/``not_nan``).
"""

from __future__ import annotations

from typing import Any

import pyarrow.compute as pc

from fieldshift.errors import FilterSyntaxError, InvalidFilterError
from fieldshift.schema.model import Schema
from fieldshift.table.expressions.bind import BoundPredicate, bind
from fieldshift.table.expressions.literals import sort_keys
from fieldshift.table.expressions.references import Reference
from fieldshift.table.expressions.text import parse_filter_text
from fieldshift.table.expressions.tree import OPS, AlwaysTrue, Expression, Predicate, and_
from fieldshift.table.expressions.visitors import arrow_expression

__all__ = ["OPS", "BoundPredicate", "FilterSyntaxError", "InvalidFilterError", "Predicate", "bind_filter",
           "parse_filter", "row_filter", "sort_keys"]


def parse_filter(filter: Any) -> Expression:
    """The expression tree of any filter a scan accepts (``AlwaysTrue()`` for None)."""
    if filter is None:
        return AlwaysTrue()
    if isinstance(filter, Expression):
        return filter
    if isinstance(filter, str):
        return parse_filter_text(filter)
    if _is_one(filter):
        return Predicate(*filter)
    if isinstance(filter, (list, tuple)):
        return and_(*(_one(p) for p in filter))
    raise InvalidFilterError(f"a filter is filter text, an expression (fieldshift.col('a') > 1), a (column, op, "
                             f"value) tuple, or a list of them that must all hold; not a {type(filter).__name__}: "
                             f"{filter!r}")


def _is_one(x: Any) -> bool:
    """``("a", ">", 1)`` or ``(["s", "x"], "is_null")``, as opposed to a list of such conditions."""
    if not (isinstance(x, (tuple, list)) and len(x) in (2, 3) and isinstance(x[1], str)):
        return False
    if isinstance(x[0], str):
        return True
    parts = isinstance(x[0], (tuple, list)) and x[0] and all(isinstance(p, str) for p in x[0])
    return bool(parts) and x[1].strip().lower() in OPS


def _one(p: Any) -> Expression:
    if isinstance(p, Expression):
        return p
    if isinstance(p, str):
        return parse_filter_text(p)
    if _is_one(p):
        return Predicate(*p)
    if isinstance(p, Reference):
        raise InvalidFilterError(f"filter condition {p!r}: a column alone is no condition; compare it, "
                                 "e.g. col('ok') == True")
    if isinstance(p, (tuple, list)) and p and isinstance(p[0], (tuple, list)):
        raise InvalidFilterError(f"filter condition {p!r}: nested lists are not an OR of conditions; a list's "
                                 "conditions must all hold. Write OR as (col('a') == 1) | (col('b') < 0), or as "
                                 "text: \"a = 1 or b < 0\"")
    raise InvalidFilterError(f"filter condition {p!r}: write (column, op, value), or (column, 'is_null') / "
                             "(column, 'not_null')")


def bind_filter(filter: Expression, schema: Schema) -> Expression:
    """``filter`` validated against ``schema`` (the read schema), literals rewritten exactly, NOT pushed
    into the leaves: what every visitor that prunes or filters takes."""
    return bind(filter, schema)


def row_filter(bound: Expression) -> pc.Expression | None:
    """The Arrow row filter of a bound filter (None when every row passes)."""
    return None if isinstance(bound, AlwaysTrue) else arrow_expression(bound)
