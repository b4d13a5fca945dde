"""Partition pruning: a scan's filter projected through each spec's transforms (Iceberg's inclusive projection).

Every row of a file has the file's partition value under each field of the file's spec, so a file is
skipped when a projected predicate is false on that value: ``ts >= t`` under ``day`` becomes
``ts_day >= day(t)``, ``id == 5`` under ``bucket[16]`` becomes ``id_bucket_16 == bucket(5)``. Files of
every spec the table ever had are pruned through their own spec, so a day-partitioned old file and an
hour-partitioned new one are both judged right. A predicate is projected only when the file's source
type and the read type map every value to the same key (``partition_evolution.same_keys``);
otherwise that field does not prune the file. Pruning never drops a row: projections are inclusive.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from fieldshift.schema import Schema
from fieldshift.table.catalog import DataFile
from fieldshift.table.filters import BoundPredicate
from fieldshift.table.partition_evolution import same_keys
from fieldshift.table.partitioning import PartitionSpec
from fieldshift.table.transforms import Transform

__all__ = ["PartitionPruner", "project", "project_range"]

Test = Callable[[Any], bool]
RangeTest = Callable[[Any, Any, Any], bool]
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


def _unless_wrapped(test: Test, width: int) -> Test:
    """Keep a file whose recorded truncate value is no multiple of the width: Java's Iceberg (and
    fieldshift catalogs written before truncate was exact) wrap the floor of an integer near the
    minimum to a huge positive number, which is out of order."""
    return lambda v: (type(v) is int and v % width != 0) or test(v)


def _range_unless_wrapped(test: RangeTest, width: int) -> RangeTest:
    """Keep a group of files that may hold a wrapped truncate value: a bound no multiple of the width,
    or an upper bound among the last ``width`` values below 2**31 or 2**63, where wrapped ints and
    longs land (a wrapped value between two true ones hides behind them)."""
    def test_unless_wrapped(lo: Any, hi: Any, nulls: Any) -> bool:
        if any(type(v) is int and v % width != 0 for v in (lo, hi)):
            return True
        if type(hi) is int and (2**31 - width < hi < 2**31 or hi > 2**63 - width):
            return True
        return test(lo, hi, nulls)
    return test_unless_wrapped


def project(transform: Transform, p: BoundPredicate) -> Test | None:
    """A test on a file's partition value that is false only if no row can satisfy ``p`` (None: keep all)."""
    test = _project(transform, p)
    if test is not None and transform.kind == "truncate" and p.op not in ("false", "is_null", "not_null"):
        return _unless_wrapped(test, transform.param)
    return test


def _project(transform: Transform, p: BoundPredicate) -> Test | None:
    op = p.op
    if op == "false":
        return lambda v: False
    if op == "true" or transform.kind == "void":
        return None
    if op == "is_null":  # every transform but void maps null to null and a value to a value
        return lambda v: v is None
    if op == "not_null":
        return lambda v: v is not None
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


def project_range(transform: Transform, p: BoundPredicate) -> RangeTest | None:
    """A test on a group of files' partition values under ``transform`` — (lower, upper, contains_null),
    None where unknown — that is false only if no file of the group can hold a row satisfying ``p``
    (Iceberg's manifest pruning by partition summaries; None: the predicate prunes no group)."""
    test = _project_range(transform, p)
    if test is not None and transform.kind == "truncate" and p.op not in ("false", "is_null"):
        return _range_unless_wrapped(test, transform.param)
    return test


def _project_range(transform: Transform, p: BoundPredicate) -> RangeTest | None:
    op = p.op
    if op == "false":
        return lambda lo, hi, nulls: False
    if op == "true" or transform.kind == "void":
        return None
    if op == "is_null":
        return lambda lo, hi, nulls: nulls is not False
    if op in ("not_null", "!=", "not in") or p.literals is None:
        return None
    try:
        values = transform.values(p.literals)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        return None
    if op in ("==", "in"):  # the bounds bound the transformed values, whatever the transform's order
        return lambda lo, hi, nulls: _any_within(values, lo, hi)
    if not transform.preserves_order:
        return None
    bound = values[0]
    if transform.kind == "identity" and op in ("<", ">"):  # values are the column's own: strict holds
        if op == "<":
            return lambda lo, hi, nulls: _compare(lambda: lo is None or lo < bound)
        return lambda lo, hi, nulls: _compare(lambda: hi is None or hi > bound)
    if op in ("<", ">"):
        near = _neighbour(p, -1 if op == "<" else 1)
        if near is not None:
            bound = transform.values(near)[0]
    if op in ("<", "<="):
        return lambda lo, hi, nulls: _compare(lambda: lo is None or lo <= bound)
    return lambda lo, hi, nulls: _compare(lambda: hi is None or hi >= bound)


def _compare(check: Callable[[], bool]) -> bool:
    try:
        return bool(check())
    except TypeError:
        return True


def _any_within(values: list[Any], lo: Any, hi: Any) -> bool:
    if lo is None or hi is None:
        return True
    return any(v is not None and _compare(lambda v=v: lo <= v <= hi) for v in values)


class PartitionPruner:
    """Decides per data file, from its spec and partition values alone, whether the filter may match."""

    def __init__(self, bound: Sequence[BoundPredicate], specs: Sequence[PartitionSpec],
                 schemas: dict[int, Schema]) -> None:
        self._bound = tuple(bound)
        self._specs = {s.spec_id: s for s in specs}
        self._schemas = schemas
        self._tests: dict[tuple[int, int], list[tuple[int, Test]]] = {}

    def _tests_for(self, spec_id: int, schema_id: int) -> list[tuple[int, Test]]:
        key = (spec_id, schema_id)
        if key not in self._tests:
            tests: list[tuple[int, Test]] = []
            spec = self._specs.get(spec_id)
            file_schema = self._schemas.get(schema_id)
            for p in self._bound if spec is not None and file_schema is not None else ():
                if p.op == "false":
                    tests.append((-1, lambda v: False))
                    continue
                for i, f in enumerate(spec.fields):
                    if f.source_id != p.field_id or not file_schema.has_field(f.source_id):
                        continue
                    if not same_keys(f.transform, file_schema.field(f.source_id).type, p.read_type):
                        continue
                    test = project(f.transform, p)
                    if test is not None:
                        tests.append((i, test))
            self._tests[key] = tests
        return self._tests[key]

    def may_match(self, f: DataFile) -> bool:
        for i, test in self._tests_for(f.spec_id, f.schema_id):
            if i < 0:
                return False
            if i >= len(f.partition):
                continue  # a file recorded without values (cannot happen for a spec with fields): keep it
            if not test(f.partition[i]):
                return False
        return True
