"""Visitors over bound filters: the Arrow compute expression for rows, and the columns a filter reads.

Both take a bound filter without ``Not`` (``filter_bind.rewrite_not``): there, "the row is kept"
composes through ``And`` and ``Or``, so a leaf may say false where SQL says unknown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow.compute as pc

from fieldshift.errors import InvalidFilterError
from fieldshift.table.expressions.bind import BoundPredicate
from fieldshift.table.expressions.tree import Expression, ExpressionVisitor, visit

__all__ = ["RuledOutMask", "Test", "all_of", "any_of", "arrow_expression", "compile_test", "filter_columns"]

Test = Callable[[Any], bool]
"""A test of one thing a filter is checked against (a file's statistics, its partition values, ...)."""


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



# -- tests of files: a filter compiled for one kind of evidence ---------------------------------
def all_of(tests: list[Test | bool]) -> Test | bool:
    """A test true where every one of ``tests`` is (constants folded: True, False or a function)."""
    if any(t is False for t in tests):
        return False
    funcs = [t for t in tests if t is not True]
    if not funcs:
        return True
    return funcs[0] if len(funcs) == 1 else lambda x: all(t(x) for t in funcs)  # type: ignore[operator]


def any_of(tests: list[Test | bool]) -> Test | bool:
    """A test true where one of ``tests`` is (constants folded: True, False or a function)."""
    if any(t is True for t in tests):
        return True
    funcs = [t for t in tests if t is not False]
    if not funcs:
        return False
    return funcs[0] if len(funcs) == 1 else lambda x: any(t(x) for t in funcs)  # type: ignore[operator]


class _Compile(ExpressionVisitor[Test | bool]):
    def __init__(self, leaf: Callable[[BoundPredicate], Test | bool | None], strict: bool) -> None:
        self.leaf, self.strict = leaf, strict

    def visit_true(self) -> Test | bool:
        return True

    def visit_false(self) -> Test | bool:
        return False

    def visit_and(self, results: list[Test | bool]) -> Test | bool:
        return all_of(results)

    def visit_or(self, results: list[Test | bool]) -> Test | bool:
        return any_of(results)

    def visit_not(self, result: Test | bool) -> Test | bool:
        raise InvalidFilterError("files are tested against a filter without NOT (filter_bind.rewrite_not)")

    def visit_leaf(self, leaf: Expression) -> Test | bool:
        assert isinstance(leaf, BoundPredicate)
        test = self.leaf(leaf)
        return (not self.strict) if test is None else test


def compile_test(bound: Expression, leaf: Callable[[BoundPredicate], Test | bool | None], *,
                 strict: bool = False) -> Test:
    """One test of a file's evidence for a bound filter without NOT, from a test per leaf.

    Inclusive (the default): false only where the evidence proves no row passes; a leaf without a test
    (None) may pass. Strict: true only where it proves every row passes; a leaf without a test may not.
    ``And`` and ``Or`` compose either way, as "true" composes in SQL's logic once NOT is gone.
    """
    test = visit(bound, _Compile(leaf, strict))
    if isinstance(test, bool):
        return (lambda x: True) if test else (lambda x: False)
    return test


class RuledOutMask(ExpressionVisitor["np.ndarray | None"]):
    """A mask over many files of those a NOT-free bound filter rules out (True: no row of the file can match);
    None: nothing ruled out. ``And`` rules a file out when one child does, ``Or`` when every child does, so a
    mask only ever holds files the per-file test would rule out too. Subclasses set ``size`` (the number of
    files) and ``tested`` (what the leaves test, for the error) and give ``visit_leaf``."""

    size: int
    tested = "values"

    def visit_true(self) -> np.ndarray | None:
        return None

    def visit_false(self) -> np.ndarray | None:
        return np.ones(self.size, dtype=bool)

    def visit_and(self, results: list[np.ndarray | None]) -> np.ndarray | None:
        masks = [r for r in results if r is not None]
        return np.logical_or.reduce(masks) if masks else None

    def visit_or(self, results: list[np.ndarray | None]) -> np.ndarray | None:
        if any(r is None for r in results):
            return None
        return np.logical_and.reduce(results)

    def visit_not(self, result: np.ndarray | None) -> np.ndarray | None:
        raise InvalidFilterError(f"{self.tested} are tested against a filter without NOT (bind.rewrite_not)")
