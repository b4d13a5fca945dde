"""Visitors over bound filters: the Arrow compute expression for rows, and the columns a filter reads.

Both take a bound filter without ``Not`` (``filter_bind.rewrite_not``): there, "the row is kept"
composes through ``And`` and ``Or``, so a leaf may say false where SQL says unknown.
"""

from __future__ import annotations

import pyarrow.compute as pc

from fieldshift.errors import InvalidFilterError
from fieldshift.table.expressions import Expression, ExpressionVisitor, visit
from fieldshift.table.filter_bind import BoundPredicate

__all__ = ["arrow_expression", "filter_columns"]


class _ToArrow(ExpressionVisitor[pc.Expression]):
    def visit_true(self) -> pc.Expression:
        return pc.scalar(True)

    def visit_false(self) -> pc.Expression:
        return pc.scalar(False)

    def visit_and(self, results: list[pc.Expression]) -> pc.Expression:
        out = results[0]
        for r in results[1:]:
            out = out & r
        return out

    def visit_or(self, results: list[pc.Expression]) -> pc.Expression:
        out = results[0]
        for r in results[1:]:
            out = out | r
        return out

    def visit_not(self, result: pc.Expression) -> pc.Expression:
        raise InvalidFilterError("arrow_expression takes a filter without NOT (filter_bind.rewrite_not)")

    def visit_leaf(self, leaf: Expression) -> pc.Expression:
        if not isinstance(leaf, BoundPredicate):
            raise InvalidFilterError(f"arrow_expression takes a bound filter; bind {leaf} first")
        return _leaf(leaf)


def _leaf(p: BoundPredicate) -> pc.Expression:
    """One leaf; a null row gives false or null (both drop it) except where the leaf is true on nulls."""
    ref = pc.field(*p.path)
    op = p.op
    if op == "is_null":
        return ref.is_null()
    if op == "not_null":
        return ref.is_valid()
    if op == "is_nan":
        return pc.is_nan(ref)
    if op == "not_nan":
        return ~pc.is_nan(ref) | ref.is_null()
    if p.cmp_type is not None and p.cmp_type != p.read_type:
        ref = ref.cast(p.cmp_type)
    lits = p.literals
    assert lits is not None
    if op in ("starts_with", "not_starts_with"):
        match = pc.starts_with(ref, pattern=p.keys[0])
        return match if op == "starts_with" else ~match | ref.is_null()
    if op == "in":
        return ref.isin(lits)
    if op == "not in":
        return ~ref.isin(lits)  # is_in is false on null: a null is in no list, so not in is true
    s = lits[0]
    if op == "!=":
        return (ref != s) | ref.is_null()
    return {"==": ref == s, "<": ref < s, "<=": ref <= s, ">": ref > s, ">=": ref >= s}[op]


def arrow_expression(bound: Expression) -> pc.Expression:
    """The Arrow row filter of a bound filter without ``Not``: a row is kept where it is true."""
    return visit(bound, _ToArrow())


class _Columns(ExpressionVisitor[list[str]]):
    def visit_true(self) -> list[str]:
        return []

    visit_false = visit_true

    def visit_and(self, results: list[list[str]]) -> list[str]:
        return [c for r in results for c in r]

    visit_or = visit_and

    def visit_not(self, result: list[str]) -> list[str]:
        return result

    def visit_leaf(self, leaf: Expression) -> list[str]:
        assert isinstance(leaf, BoundPredicate)
        return [leaf.path[0]]


def filter_columns(bound: Expression) -> list[str]:
    """The top-level columns a bound filter reads, in order of first use, without repeats."""
    return list(dict.fromkeys(visit(bound, _Columns())))

