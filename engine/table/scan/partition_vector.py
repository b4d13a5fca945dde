"""Partition pruning over many files at once: integer partition values as columns, one numpy comparison per
projected predicate instead of a Python test per file.

Planning a one-day filter on an open 2,000-file table spent most of its time calling each file's compiled
partition test. Most partition values are integers (days, hours, months and years since 1970, bucket numbers,
identity integers and dates' days), and most projected predicates compare them with integer bounds or sets
(``partition_prune.vector_form``). Here those are applied to the columns ``CatalogEntries.partition_columns``
keeps with the snapshot's file list; any other value or test leaves its files to the per-file test, which the
scan runs on the survivors. So this only removes files the per-file test would remove (tests compare the
two). As in ``prune_vector``: ``And`` of children ORs their ruled-out masks, ``Or`` ANDs them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fieldshift.table.expressions.bind import BoundPredicate
from fieldshift.table.expressions.tree import Expression, visit
from fieldshift.table.expressions.visitors import RuledOutMask
from fieldshift.table.partitions.partition_prune import vector_form

__all__ = ["Checks", "partition_ruled_out"]

Checks = Callable[[BoundPredicate], Sequence[tuple[int, Any, bool]]]
"""A leaf's tests on a layout's partition values: (position in the layout, test, whether values need converting
first); the same the per-file test runs (``open_scan._Filter.layout_checks``)."""


def partition_ruled_out(bound: Expression, checks: Checks, ints: Sequence[np.ndarray],
                        is_int: Sequence[np.ndarray]) -> np.ndarray | None:
    """A mask over some files of one partition layout (their values per layout field as int64, and which of
    those are plain integers): True where the values prove the filter false; None: nothing ruled out."""
    return visit(bound, _RuledOut(checks, ints, is_int))


class _RuledOut(RuledOutMask):
    tested = "partition values"

    def __init__(self, checks: Checks, ints: Sequence[np.ndarray], is_int: Sequence[np.ndarray]) -> None:
        self.checks, self.ints, self.is_int = checks, ints, is_int
        self.size = len(ints[0]) if ints else 0

    def visit_leaf(self, leaf: Expression) -> np.ndarray | None:
        assert isinstance(leaf, BoundPredicate)
        out = None
        for i, check, temporal in self.checks(leaf):
            form = None if temporal else vector_form(check)
            if form is None:
                continue  # left to the per-file test
            fails = self.is_int[i] & ~_passes(form, self.ints[i])
            out = fails if out is None else out | fails
        return out


def _passes(form: tuple[str, tuple[int, ...]], values: np.ndarray) -> np.ndarray:
    """Where integer partition values pass a projected test (``partition_prune.vector_form``)."""
    op, operands = form
    if op == "<=":
        return values <= operands[0]
    if op == ">=":
        return values >= operands[0]
    if op == "in":
        return np.isin(values, np.array(operands, np.int64))
    if op == "not in":
        return ~np.isin(values, np.array(operands, np.int64))
    if op == "never":
        return np.zeros(len(values), dtype=bool)
    if op == "always":
        return np.ones(len(values), dtype=bool)
    raise AssertionError(f"unknown vector form {op!r}")
