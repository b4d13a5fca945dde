"""Partition pruning: a scan's filter projected through each spec's transforms (Iceberg's inclusive projection).

Every row of a file has the file's partition value under each field of the file's spec, so a file is
skipped when a projected predicate is false on that value: ``ts >= t`` under ``day`` becomes
``ts_day >= day(t)``, ``id == 5`` under ``bucket[16]`` becomes ``id_bucket_16 == bucket(5)``. Files of
every spec the table ever had are pruned through their own spec, so a day-partitioned old file and an
hour-partitioned new one are both judged right. A predicate is projected only when the file's source
type and the read type map every value to the same key (``partition_evolution.same_keys``);
otherwise that field does not prune the file. Pruning never drops a row: projections are inclusive.
The strict projection (true only when every row of a file matches) lets ``Scan.count`` count such
files from the catalog. A filter tree projects leaf by leaf, combined by its ``And`` and ``Or``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from fieldshift.errors import InvalidFilterError
from fieldshift.schema import Schema
from fieldshift.table.catalog import DataFile
from fieldshift.table.expressions import Expression, ExpressionVisitor, visit
from fieldshift.table.filter_bind import BoundPredicate
from fieldshift.table.partition_evolution import same_keys
from fieldshift.table.partitioning import PartitionSpec
from fieldshift.table.transforms import Transform

__all__ = ["PartitionPruner", "project", "project_strict"]

Test = Callable[[Any], bool]
PartitionTest = Callable[[tuple], bool]
T = pa.types


def _neighbour(p: BoundPredicate, delta: int) -> pa.Array | None:
    """The column value next to an integer-like literal (``x < k`` is ``x <= k - 1`` on whole ticks)."""
    cmp = p.cmp_type
    if cmp is None or not p.keys or not isinstance(p.keys[0], int) or isinstance(p.keys[0], bool):
        return None
    k = p.keys[0] + delta
    try:
        if T.is_integer(cmp):
            return pa.array([k], cmp)
        if T.is_date(cmp) or T.is_timestamp(cmp) or T.is_time(cmp):
            return pa.array([k], pa.int32() if cmp.bit_width == 32 else pa.int64()).view(cmp)
    except (pa.ArrowException, OverflowError):
        return None
    return None


def _at_most(bound: Any) -> Test:
    def test(v: Any) -> bool:
        try:
            return v is not None and v <= bound
        except TypeError:
            return True
    return test


def _at_least(bound: Any) -> Test:
    def test(v: Any) -> bool:
        try:
            return v is not None and v >= bound
        except TypeError:
            return True
    return test


def project(transform: Transform, p: BoundPredicate) -> Test | None:
    """A test on a file's partition value that is false only if no row can satisfy ``p`` (None: keep all)."""
    op = p.op
    if transform.kind == "void":
        return None
    if op == "is_null":  # every transform but void maps null to null and a value to a value
        return lambda v: v is None
    if op == "not_null":
        return lambda v: v is not None
    if op in ("is_nan", "not_nan"):
        return _nan_test(transform, op)
    if op in ("starts_with", "not_starts_with"):
        return _prefix_test(transform, p, strict=False)
    if p.literals is None:
        return None
    try:
        values = transform.values(p.literals)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        return None
    if op in ("==", "in"):
        wanted = set(values)
        return lambda v: v is not None and v in wanted
    if op in ("!=", "not in"):
        if transform.kind != "identity":
            return None
        unwanted = set(values)
        return lambda v: v is None or v not in unwanted  # null rows pass != and not in
    if not transform.preserves_order:
        return None
    if op in ("<", ">"):
        near = _neighbour(p, -1 if op == "<" else 1)
        if near is not None:
            values = transform.values(near)
    return _at_most(values[0]) if op in ("<", "<=") else _at_least(values[0])


def project_strict(transform: Transform, p: BoundPredicate) -> Test | None:
    """A test on a file's partition value that is true only if every row satisfies ``p`` (None: never)."""
    op = p.op
    if transform.kind == "void":
        return None
    if op in ("is_null", "not_null"):
        return project(transform, p)
    if op in ("is_nan", "not_nan"):
        return _nan_test(transform, op)
    if op in ("starts_with", "not_starts_with"):
        return _prefix_test(transform, p, strict=True)
    if p.literals is None:
        return None
    try:
        values = transform.values(p.literals)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        return None
    if op in ("!=", "not in"):  # a row whose key differs from every literal's equals none of them
        unwanted = set(values)
        return lambda v: v is None or v not in unwanted
    if transform.kind == "identity" and op in ("==", "in"):
        wanted = set(values)
        return lambda v: v is not None and v in wanted
    if not transform.preserves_order or op not in ("<", "<=", ">", ">="):
        return None
    if op in ("<=", ">="):  # a <= k is a < k + 1 on whole ticks; else a key below k's is below k
        near = _neighbour(p, 1 if op == "<=" else -1)
        if near is not None:
            try:
                values = transform.values(near)
            except (pa.ArrowException, ValueError, TypeError, OverflowError):
                return None
    return _below(values[0]) if op in ("<", "<=") else _above(values[0])


def _below(bound: Any) -> Test:
    def test(v: Any) -> bool:
        try:
            return v is not None and v < bound
        except TypeError:
            return False
    return test


def _above(bound: Any) -> Test:
    def test(v: Any) -> bool:
        try:
            return v is not None and v > bound
        except TypeError:
            return False
    return test


def _nan_test(transform: Transform, op: str) -> Test | None:
    """Identity keeps a float's NaN as its partition value (no other transform takes floats)."""
    if transform.kind != "identity":
        return None
    if op == "is_nan":
        return lambda v: isinstance(v, float) and math.isnan(v)
    return lambda v: not (isinstance(v, float) and math.isnan(v))


def _prefix_test(transform: Transform, p: BoundPredicate, *, strict: bool) -> Test | None:
    """``starts_with`` through identity, or truncate[W] (every row's key is its first W characters or bytes)."""
    prefix = p.keys[0]
    if transform.kind == "identity":
        width = len(prefix)
    elif transform.kind == "truncate" and transform.param is not None:
        width = transform.param
    else:
        return None
    head = prefix[:width]
    if p.op == "starts_with":
        if strict and width < len(prefix):
            return None  # the key holds only the first W characters: it cannot prove the rest
        return lambda v: isinstance(v, type(head)) and v.startswith(head)
    if not strict and width < len(prefix):
        return None  # a key that starts with the head may still belong to rows that differ later
    return lambda v: not (isinstance(v, type(head)) and v.startswith(head))


class _Tests(ExpressionVisitor[PartitionTest | bool]):
    """A test on a file's partition tuple for one (spec, file schema): projected leaves, combined."""

    def __init__(self, spec: PartitionSpec, file_schema: Schema, strict: bool) -> None:
        self.spec, self.file_schema, self.strict = spec, file_schema, strict

    def visit_true(self) -> PartitionTest | bool:
        return True

    def visit_false(self) -> PartitionTest | bool:
        return False

    def visit_and(self, results: list[PartitionTest | bool]) -> PartitionTest | bool:
        return _all(results)

    def visit_or(self, results: list[PartitionTest | bool]) -> PartitionTest | bool:
        return _any(results)

    def visit_not(self, result: PartitionTest | bool) -> PartitionTest | bool:
        raise InvalidFilterError("partitions are projected from a filter without NOT (filter_bind.rewrite_not)")

    def visit_leaf(self, leaf: Expression) -> PartitionTest | bool:
        assert isinstance(leaf, BoundPredicate)
        tests: list[PartitionTest | bool] = []
        for i, f in enumerate(self.spec.fields):
            if f.source_id != leaf.field_id or not self.file_schema.has_field(f.source_id):
                continue
            if not same_keys(f.transform, self.file_schema.field(f.source_id).type, leaf.read_type):
                continue
            test = (project_strict if self.strict else project)(f.transform, leaf)
            if test is not None:
                tests.append(_at(i, test, self.strict))
        # inclusive: every field's projection must hold; strict: one field proving it is enough
        return _any(tests) if self.strict else _all(tests)


def _at(i: int, test: Test, strict: bool) -> PartitionTest:
    def on(values: tuple) -> bool:
        if i >= len(values):
            return not strict  # a file recorded without values (cannot happen for a spec with fields)
        return test(values[i])
    return on


def _all(results: list[PartitionTest | bool]) -> PartitionTest | bool:
    if any(r is False for r in results):
        return False
    tests = [r for r in results if r is not True]
    if not tests:
        return True
    return tests[0] if len(tests) == 1 else lambda v: all(t(v) for t in tests)  # type: ignore[operator]


def _any(results: list[PartitionTest | bool]) -> PartitionTest | bool:
    if any(r is True for r in results):
        return True
    tests = [r for r in results if r is not False]
    if not tests:
        return False
    return tests[0] if len(tests) == 1 else lambda v: any(t(v) for t in tests)  # type: ignore[operator]


class PartitionPruner:
    """Decides per data file, from its spec and partition values alone, whether the filter may match
    (inclusive projection) and whether every row matches (strict projection)."""

    def __init__(self, bound: Expression, specs: Sequence[PartitionSpec], schemas: dict[int, Schema]) -> None:
        self._bound = bound
        self._specs = {s.spec_id: s for s in specs}
        self._schemas = schemas
        self._tests: dict[tuple[int, int, bool], PartitionTest | bool] = {}

    def _test_for(self, spec_id: int, schema_id: int, strict: bool) -> PartitionTest | bool:
        key = (spec_id, schema_id, strict)
        if key not in self._tests:
            spec = self._specs.get(spec_id)
            file_schema = self._schemas.get(schema_id)
            if spec is None or file_schema is None:
                self._tests[key] = not strict
            else:
                self._tests[key] = visit(self._bound, _Tests(spec, file_schema, strict))
        return self._tests[key]

    def may_match(self, f: DataFile) -> bool:
        """False only when no row of ``f`` can satisfy the filter, by its partition values."""
        test = self._test_for(f.spec_id, f.schema_id, False)
        return test if isinstance(test, bool) else test(f.partition)

    def all_match(self, f: DataFile) -> bool:
        """True only when every row of ``f`` satisfies the filter, by its partition values."""
        test = self._test_for(f.spec_id, f.schema_id, True)
        return test if isinstance(test, bool) else test(f.partition)
