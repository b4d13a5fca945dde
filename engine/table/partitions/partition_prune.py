"""Partition pruning: one predicate projected through a transform (Iceberg's inclusive and strict projections).

Every row of a file has the file's partition value under each field of the file's spec, so a file is
skipped when a projected predicate is false on that value: ``ts >= t`` under ``day`` becomes
``ts_day >= day(t)``, ``id == 5`` under ``bucket[16]`` becomes ``id_bucket_16 == bucket(5)``. The scan
(``open_scan._Filter``) projects each leaf of its filter through the transform of every partition value
a file records, combined by the filter's ``And`` and ``Or``; it projects a predicate only when the file's
source type and the read type map every value to the same key (``partition_evolution.same_keys``).
Pruning never drops a row: projections are inclusive. The strict projection (true only when every row of a
file matches) lets a count take such files from the metadata; ``project_range`` tests a group of files'
ranges of values (an Iceberg manifest's summaries).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from fieldshift.table.expressions.bind import BoundPredicate
from fieldshift.table.partitions.transforms import Transform

__all__ = ["clear_projections", "project", "project_range", "project_strict", "vector_form"]

Test = Callable[[Any], bool]
RangeTest = Callable[[Any, Any, Any], bool]
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


_I64 = (-(1 << 63), (1 << 63) - 1)


def _plain_ints(values: Any) -> bool:
    return all(type(v) is int and _I64[0] <= v <= _I64[1] for v in values)


def _vector(test: Test, op: str, operands: Any) -> Test:
    """Mark ``test`` with what it does to an integer value (``op`` against ``operands``), when the operands are
    plain int64 integers: a scan then tests many files' integer partition values at once (``vector_form``)."""
    if _plain_ints(operands):
        test.vector = (op, tuple(operands))  # type: ignore[attr-defined]
    return test


def vector_form(test: Test | None) -> tuple[str, tuple[int, ...]] | None:
    """What ``test`` does to a plain integer partition value, as (op, integer operands): ``<=``, ``>=`` (one
    operand), ``in``, ``not in``, ``never`` (false for any integer), ``always`` (true for any integer); None: only
    the test itself says (a wrapped truncate value, a non-integer literal, a NaN or prefix test)."""
    return getattr(test, "vector", None)


def _at_most(bound: Any) -> Test:
    def test(v: Any) -> bool:
        try:
            return v is not None and v <= bound
        except TypeError:
            return True
    return _vector(test, "<=", (bound,))


def _at_least(bound: Any) -> Test:
    def test(v: Any) -> bool:
        try:
            return v is not None and v >= bound
        except TypeError:
            return True
    return _vector(test, ">=", (bound,))


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
    return _cached("inclusive", transform, p, _inclusive)


def _inclusive(transform: Transform, p: BoundPredicate) -> Test | None:
    test = _project(transform, p)
    if test is not None and transform.kind == "truncate" and p.op not in ("is_null", "not_null"):
        return _unless_wrapped(test, transform.param)
    return test


_PROJECTED: dict[tuple[Any, ...], Any] = {}
_PROJECTED_MAX = 4096
_MISSING = object()


def _cached(kind: str, transform: Transform, p: BoundPredicate,
            make: Callable[[Transform, BoundPredicate], Any]) -> Any:
    """``make(transform, p)``, kept per process: a projection depends only on the transform, the operator, the
    comparison type and the literals' exact keys, and computing a literal's key through a transform costs
    Arrow calls (a repeated one-day filter projected its two timestamps again on every scan)."""
    key = (kind, transform, p.op, p.cmp_type, tuple(p.keys))
    try:
        found = _PROJECTED.get(key, _MISSING)
    except TypeError:  # a key Python cannot hash: not kept
        return make(transform, p)
    if found is _MISSING:
        found = make(transform, p)
        if len(_PROJECTED) >= _PROJECTED_MAX:
            _PROJECTED.clear()
        _PROJECTED[key] = found
    return found


def clear_projections() -> None:
    """Forget the kept projections (tests compare a projection made anew with the kept one)."""
    _PROJECTED.clear()


def _shared_start(transform: Transform, p: BoundPredicate, strict: bool) -> tuple[bool, Any]:
    """What both projections decide the same way: (True, the test) for a void transform, null, NaN and prefix
    tests and a leaf without literals or whose literals the transform cannot take; else (False, the literals'
    values under the transform)."""
    op = p.op
    if transform.kind == "void":
        return True, None
    if op == "is_null":  # every transform but void maps null to null and a value to a value
        return True, _vector(lambda v: v is None, "never", ())
    if op == "not_null":
        return True, _vector(lambda v: v is not None, "always", ())
    if op in ("is_nan", "not_nan"):
        return True, _nan_test(transform, op)
    if op in ("starts_with", "not_starts_with"):
        return True, _prefix_test(transform, p, strict=strict)
    if p.literals is None:
        return True, None
    try:
        return False, transform.values(p.literals)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        return True, None


def _project(transform: Transform, p: BoundPredicate) -> Test | None:
    done, values = _shared_start(transform, p, strict=False)
    if done:
        return values  # type: ignore[no-any-return]
    op = p.op
    if op in ("==", "in"):
        wanted = set(values)
        return _vector(lambda v: v is not None and v in wanted, "in",
                       sorted(wanted) if _plain_ints(wanted) else (None,))
    if op in ("!=", "not in"):
        if transform.kind != "identity":
            return None
        unwanted = set(values)
        return _vector(lambda v: v is None or v not in unwanted,  # null rows pass != and not in
                       "not in", sorted(unwanted) if _plain_ints(unwanted) else (None,))
    if not transform.preserves_order:
        return None
    if op in ("<", ">"):
        near = _neighbour(p, -1 if op == "<" else 1)
        if near is not None:
            values = transform.values(near)
    return _at_most(values[0]) if op in ("<", "<=") else _at_least(values[0])


def project_strict(transform: Transform, p: BoundPredicate) -> Test | None:
    """A test on a file's partition value that is true only if every row satisfies ``p`` (None: never)."""
    return _cached("strict", transform, p, _strict)


def _strict(transform: Transform, p: BoundPredicate) -> Test | None:
    test = _project_strict(transform, p)
    if test is not None and transform.kind == "truncate" and p.op not in ("is_null", "not_null"):
        width = transform.param
        return lambda v: not (type(v) is int and v % width != 0) and test(v)  # a wrapped value proves nothing
    return test


def _project_strict(transform: Transform, p: BoundPredicate) -> Test | None:
    done, values = _shared_start(transform, p, strict=True)
    if done:
        return values  # type: ignore[no-any-return]
    op = p.op
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


def project_range(transform: Transform, p: BoundPredicate) -> RangeTest | None:
    """A test on a group of files' partition values under ``transform`` — (lower, upper, contains_null),
    None where unknown — that is false only if no file of the group can hold a row satisfying ``p``
    (Iceberg's manifest pruning by partition summaries; None: the predicate prunes no group)."""
    return _cached("range", transform, p, _range)


def _range(transform: Transform, p: BoundPredicate) -> RangeTest | None:
    test = _project_range(transform, p)
    if test is not None and transform.kind == "truncate" and p.op != "is_null":
        return _range_unless_wrapped(test, transform.param)
    return test


def _project_range(transform: Transform, p: BoundPredicate) -> RangeTest | None:
    op = p.op
    if transform.kind == "void":
        return None
    if op == "is_null":
        return lambda lo, hi, nulls: nulls is not False
    if op not in ("==", "in", "<", "<=", ">", ">=") or p.literals is None:
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
