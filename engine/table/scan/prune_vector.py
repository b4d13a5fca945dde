"""Statistics pruning over many files at once: integer columns read as themselves, one query and one
numpy comparison per predicate instead of a Python call per file.

A filtered scan of 100,000 files spent its time in per-file Python (loading each file's statistics,
copying its ``DataFile``, ``stats.may_match``). Here, for each predicate on an integer column that
every file of a schema version reads unchanged (the plan's node is a ``Take`` of the same type),
the bounds of all live files come from one indexed catalog query, are parsed as one Arrow array
(kept with the snapshot's file list: file_cache), and the files they rule out are dropped with one
comparison. The rules are ``stats.may_match``'s,
applied to arrays; anything else (other types, casts, literals that are not plain integers, bounds
that do not parse) keeps its files for the per-file check, which the scan runs on the survivors.
So this only ever removes files that ``may_match`` would remove (tests compare the two). A filter tree
is evaluated as masks: ``And`` of children ORs their ruled-out masks, ``Or`` ANDs them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.gc_pause import paused_gc
from fieldshift.planner import EvolutionPlan
from fieldshift.planner.nodes import Take
from fieldshift.schema.model import Schema
from fieldshift.schema.types import int_range
from fieldshift.table.catalog.files import column_bounds
from fieldshift.table.catalog.sqlite import DataFile
from fieldshift.table.expressions.bind import BoundPredicate
from fieldshift.table.expressions.tree import Expression, visit
from fieldshift.table.expressions.visitors import RuledOutMask
from fieldshift.table.files.file_cache import Bounds, SnapshotFiles
from fieldshift.table.files.stats import NULL_REJECTING, leaf_node

__all__ = ["MIN_FILES", "PruneScan", "PruneView", "integer_ruled_out", "load_bounds", "prune_by_integer_stats"]


class PruneScan(Protocol):
    """What pruning a list of ``DataFile`` by integer statistics needs of its scan (``table.scan.Scan`` is one):
    the bound filter, the plans per schema version, the snapshot's cached file list, and where to load bounds
    from. A protocol, so the scan imports this module and not the other way round."""

    io: Any  # the table's TableIO: its catalog answers the bounds query
    bound: Expression
    keys: Any  # a KeySpec: only key columns prune a keyed table
    read_schema: Schema
    snapshot_id: int

    @property
    def schemas(self) -> Mapping[int, Schema]: ...

    def plan_of(self, schema_id: int) -> EvolutionPlan: ...

    def snapshot_files(self) -> SnapshotFiles: ...


@dataclass(frozen=True)
class PruneView:
    """What the vectorised rule needs of any scan: the bound filter, the key ids a merge by key prunes on
    (None: every column prunes), the read schema, and each schema version's schema and plan."""

    bound: Expression
    key_ids: frozenset[int] | None
    read_schema: Schema
    schemas: Mapping[int, Schema]
    plan_of: Callable[[int], EvolutionPlan]


MIN_FILES = 64
"""Fewer live files than this: the per-file check alone is as fast."""

_INT_PREFIX = '{"int": "'  # catalog/sql.dump_value's form of an integer
_COMPARED = ("==", "in", "<", "<=", ">", ">=")
_I64 = (-(1 << 63), (1 << 63) - 1)


def prune_by_integer_stats(scan: PruneScan, files: list[DataFile]) -> list[DataFile]:
    """``files`` without those the filter's integer statistics rule out (the rest: unchanged, in order)."""
    if len(files) < MIN_FILES:
        return files
    entry = scan.snapshot_files()
    at = entry.positions(files)
    if at is None:
        return files
    view = PruneView(scan.bound, frozenset(scan.keys.key_ids) if scan.keys is not None else None,
                     scan.read_schema, scan.schemas, scan.plan_of)
    schema_ids = np.fromiter((f.schema_id for f in files), dtype=np.int64, count=len(files))
    ruled_out = integer_ruled_out(view, schema_ids, at, lambda field_id: entry.column(
        field_id, lambda: load_bounds(scan.io.catalog, scan.io.table_id, scan.snapshot_id, entry, field_id)))
    if ruled_out is None or not ruled_out.any():
        return files
    return [files[i] for i in np.flatnonzero(~ruled_out)]


def integer_ruled_out(view: PruneView, schema_ids: np.ndarray, at: np.ndarray,
                      column: Callable[[int], Bounds]) -> np.ndarray | None:
    """A mask over some files (their schema ids, and their positions ``at`` in the arrays ``column(field_id)``
    gives): True where integer statistics prove the filter false for the file; None: nothing ruled out."""
    return visit(view.bound, _RuledOut(view, schema_ids, at, column))


class _RuledOut(RuledOutMask):
    """A mask over the files: True where integer statistics prove the (sub)filter false (the per-file
    ``stats_test`` would rule them out too)."""

    tested = "statistics"

    def __init__(self, view: PruneView, schema_ids: np.ndarray, at: np.ndarray,
                 column: Callable[[int], Bounds]) -> None:
        self.view, self.schema_ids, self.at, self.column = view, schema_ids, at, column
        self.distinct = {int(s) for s in np.unique(schema_ids)}
        self.size = len(at)

    def visit_leaf(self, leaf: Expression) -> np.ndarray | None:
        view = self.view
        assert isinstance(leaf, BoundPredicate)
        if view.key_ids is not None and leaf.field_id not in view.key_ids:
            return None  # as the per-file check: only key values prune a merge by key
        eligible = _eligible_schema_ids(view, leaf, self.distinct)
        if not eligible:
            return None
        file_type = next(iter(eligible.values()))  # every eligible file holds the read type itself
        with paused_gc():  # a statistics row per file, none in a cycle (gc_pause)
            bounds = self.column(leaf.field_id)
        drop = _ruled_out(leaf, file_type, bounds, self.at)
        if len(eligible) < len(self.distinct):
            drop &= np.isin(self.schema_ids, np.fromiter(eligible, dtype=np.int64, count=len(eligible)))
        return drop


def _eligible_schema_ids(view: PruneView, pred: BoundPredicate, schema_ids: set[int]) -> dict[int, pa.DataType]:
    """Schema versions whose files read ``pred``'s column as the same integer type (one plan per version)."""
    if pred.op not in (*_COMPARED, "is_null", "not_null") or \
            not all(type(k) is int and _I64[0] <= k <= _I64[1] for k in pred.keys):
        return {}
    out = {}
    for sid in schema_ids:
        file_schema = view.schemas[sid]
        if not file_schema.has_field(pred.field_id):
            continue  # a constant in these files: the per-file check keeps them
        file_type = file_schema.field(pred.field_id).type
        node = leaf_node(view.plan_of(sid).nodes, view.read_schema.fields, pred.path)
        if isinstance(node, Take) and isinstance(file_type, pa.DataType) and pa.types.is_integer(file_type) \
                and node.target == file_type:
            out[sid] = file_type
    return out


def _int64_range(t: pa.DataType) -> tuple[int, int]:
    """The values ``t`` holds, clipped to int64 (bounds are parsed as int64)."""
    low, high = int_range(t)
    return max(low, _I64[0]), min(high, _I64[1])


def _ruled_out(pred: BoundPredicate, file_type: pa.DataType, b: Bounds, at: np.ndarray) -> np.ndarray:
    """A mask over the files at positions ``at``: True where statistics prove no row matches ``pred``."""
    present, counts, nulls = b.present[at], b.counts[at], b.nulls[at]
    lo, hi, ok = b.low[at], b.high[at], b.ok[at]
    low, high = _int64_range(file_type)
    bounds = ok & (lo >= low) & (lo <= high) & (hi >= low) & (hi <= high)  # as stats.read_bounds
    out = nulls >= counts if pred.op in NULL_REJECTING else np.zeros(len(at), dtype=bool)
    keys = pred.keys
    if pred.op == "is_null":
        out = (nulls == 0) & bounds
    elif pred.op in _COMPARED:
        if pred.op == "==":
            miss = (lo > keys[0]) | (hi < keys[0])
        elif pred.op == "in":
            miss = np.ones(len(lo), dtype=bool)
            for k in keys:
                miss &= (lo > k) | (hi < k)
        elif pred.op == "<":
            miss = lo >= keys[0]
        elif pred.op == "<=":
            miss = lo > keys[0]
        elif pred.op == ">":
            miss = hi <= keys[0]
        else:
            miss = hi < keys[0]
        out |= bounds & miss
    return out & present


def load_bounds(catalog: Any, table_id: int, snapshot_id: int, entry: SnapshotFiles, field_id: int) -> Bounds:
    """One column's statistics for every file of the snapshot (aligned with ``entry.files``): one query, parsed
    as arrays."""
    rows = catalog.read(column_bounds, table_id, snapshot_id, field_id)
    n = len(entry.ids)
    present = np.zeros(n, dtype=bool)
    counts, nulls, low, high = (np.zeros(n, dtype=np.int64) for _ in range(4))
    ok = np.zeros(n, dtype=bool)
    if rows and n:
        file_ids, values, null_counts, mins, maxes = zip(*rows, strict=True)  # columns, not rows
        row_ids = np.array(file_ids, dtype=np.int64)
        at = np.minimum(np.searchsorted(entry.ids, row_ids), n - 1)
        mine = entry.ids[at] == row_ids
        at = at[mine]
        present[at] = True
        counts[at] = np.array(values, dtype=np.int64)[mine]
        nulls[at] = np.array(null_counts, dtype=np.int64)[mine]
        lo, lo_ok = _parse_ints(mins, mine)
        hi, hi_ok = _parse_ints(maxes, mine)
        low[at], high[at], ok[at] = lo, hi, lo_ok & hi_ok
    return Bounds(present, counts, nulls, low, high, ok)


def _parse_ints(texts: Sequence[str | None], mine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Stored integer bounds as int64 values and a mask of those that parsed (others: not usable)."""
    arr = pc.filter(pa.array(texts, pa.string()), pa.array(mine))
    n = len(arr)
    ok = pc.fill_null(pc.and_(pc.starts_with(arr, _INT_PREFIX), pc.ends_with(arr, '"}')), False)
    digits = pc.if_else(ok, pc.utf8_slice_codeunits(arr, len(_INT_PREFIX), -2), pa.scalar("0"))
    try:
        values = pc.cast(digits, pa.int64())
    except pa.ArrowInvalid:  # a bound beyond int64 (a uint64 column): leave these files to the per-file check
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    return values.to_numpy(zero_copy_only=False), ok.to_numpy(zero_copy_only=False)
