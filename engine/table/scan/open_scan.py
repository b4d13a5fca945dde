"""The scan of a table another format wrote: the read-source interface's facts in, evolved Arrow out.

Per snapshot: bind the filter to the snapshot's schema, prune files whose partition values (the filter
projected through each file's transforms) or statistics rule it out, then per file: plan the file's own
Arrow schema against the read schema by field id (``fieldshift.planner``; the format's policy says which
type changes its readers apply; an identity partition value fills a column the file lacks), read only
the columns the plan takes, drop deleted positions, evolve, drop rows equality deletes match, filter
rows. Inlined rows take the same path from memory. Rows the format's own reader produced
(``ReaderRows``: Hudi's merged file slices) take it too, mapped by name.

Filters are the one expression tree (``table/expressions/filters.py``); ``_Filter`` compiles its bound form into the
row filter and into tests of statistics, partition values and partition ranges (``compile_test``).
"""

from __future__ import annotations

import copy
import functools
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from fieldshift.errors import PartitionSpecError, SchemaEvolutionError, UnsupportedFormatFeatureError
from fieldshift.gc_pause import paused_gc
from fieldshift.open_tables.position_deletes import read_position_groups, read_positions
from fieldshift.open_tables.source import (
    ColumnStats,
    DataFileEntry,
    DeleteFile,
    EqualityDeletes,
    InlinedRows,
    PartitionRange,
    PartitionValue,
    ReaderRows,
    ReadSource,
    SnapshotContent,
)
from fieldshift.planner import EvolutionPlan, cached_plan, plan
from fieldshift.planner.cache import plan_columns
from fieldshift.planner.nodes import Take
from fieldshift.schema.file_schema import file_schema_of, has_field_ids, without_field_ids
from fieldshift.schema.formats.arrow_conversion import arrow_field_id
from fieldshift.schema.model import Schema
from fieldshift.table.evolution.partition_evolution import same_keys
from fieldshift.table.expressions.bind import named_columns
from fieldshift.table.expressions.filters import BoundPredicate, bind_filter, parse_filter, row_filter
from fieldshift.table.expressions.tree import AlwaysTrue
from fieldshift.table.expressions.visitors import compile_test, filter_columns
from fieldshift.table.files.data_files import check_file_columns, data_file_errors, name_data_file, read_columns
from fieldshift.table.files.dictionary_read import (
    DICTIONARY_MIN_ROWS,
    decoded,
    dictionary_candidates,
    open_parquet,
    read_types,
)
from fieldshift.table.files.footer_shapes import FileShapes
from fieldshift.table.files.parquet_read import decode_schema
from fieldshift.table.files.stats import leaf_node, may_match, stats_test
from fieldshift.table.keyed.keys import KeySpec
from fieldshift.table.keyed.merge import merge_rows
from fieldshift.table.partitions.partition_prune import project, project_range, project_strict
from fieldshift.table.partitions.transforms import Transform, parse_transform
from fieldshift.table.scan.equality_deletes import EqualityMatcher, with_equality_fields
from fieldshift.table.scan.live_rows import live_batch_size, live_extent, live_parts, live_row_groups
from fieldshift.table.scan.open_merge import merge_versions
from fieldshift.table.scan.partition_vector import partition_ruled_out
from fieldshift.table.scan.prune_vector import MIN_FILES, PruneView, integer_ruled_out

__all__ = ["DetachedSource", "OpenScan", "ScanTask", "group_filter"]

BATCH_SIZE = 65_536
WHOLE_BATCH_ROWS = 1 << 20
"""Rows per batch when a scan reads its whole result (``to_arrow``): a row group of the default layout. Each
batch costs a decode set-up per column and a pass of the evolution plan (benchmarks/README, issue 35)."""
SMALL_TASK_ROWS = 65_536
"""``to_arrow`` runs tasks of fewer rows together, in jobs of at least ``JOB_ROWS`` rows (``_jobs``)."""
JOB_ROWS = 262_144
WHOLE_FILE_BYTES = 1 << 20
"""Files up to this size are read in one request and decoded from memory: opening one and reading its footer and
column chunks one read at a time costs more than its rows; past it the copy costs more than it saves
(benchmarks/README, issue 35's merge-on-read part)."""


@dataclass(frozen=True, slots=True)
class ScanTask:
    """One unit of a scan's work: ``file`` (one data file), ``merge`` (a merge group's files), ``inlined`` or
    ``reader`` (the ``index``-th inlined rows or reader slice of the snapshot)."""

    kind: Literal["file", "merge", "inlined", "reader"]
    files: tuple[DataFileEntry, ...] = ()
    index: int = -1


    def shipped(self) -> ScanTask:
        """The task to send to an executor: its files without statistics (pruning is done; a format may load
        them lazily from its catalog, which does not travel)."""
        return ScanTask(self.kind, tuple(_bare(f) for f in self.files), self.index)


def _bare(f: DataFileEntry) -> DataFileEntry:
    return replace(f, stats={}) if f.stats else f


@dataclass(frozen=True, slots=True)
class DetachedSource:
    """What a scan shipped to an executor keeps of its source: names for messages, the format's casts, and
    the source's file opener (``file_opener``: a picklable callable holding the store's options, so
    executors open files with the credentials the driver was given, not their environment's)."""

    format: str
    name: str
    policy: Any
    partition_transforms: str | None = None
    open_file: Callable[[str], Any] | None = None


class _Filter:
    """The scan's filter: bound to the read schema, evaluated on rows, and checked against statistics,
    partition values and partition ranges, each a test compiled from the bound tree (``compile_test``)."""

    def __init__(self, filter: Any, schema: Schema, iceberg_transforms: bool = False, bound: Any = None) -> None:
        """``bound``: ``filter`` already bound to ``schema`` by the caller (bound once per scan, not twice)."""
        self.given = parse_filter(filter)  # the tree as given: the columns its constant leaves name (plan_all)
        self.bound = bind_filter(self.given, schema) if bound is None else bound
        self.filtered = not isinstance(self.bound, AlwaysTrue)
        self.columns = filter_columns(self.bound)
        self._nodes: dict[int, tuple[Any, Take | None]] = {}
        self._projections: dict[tuple[int, str], tuple[Any, bool] | None] = {}
        # transforms other than identity prune only where their values are Iceberg's (years, months, days
        # and hours since 1970, Iceberg's bucket hash); DuckLake's year/month/day are calendar fields
        self.iceberg_transforms = iceberg_transforms
        self._range_tests: dict[tuple[int, str], Any] = {}
        self._compiled: dict[tuple[Any, ...], tuple[Any, Callable[[Any], bool]]] = {}
        self._keys_kept: dict[tuple[int, str, int], bool] = {}

    @functools.cached_property
    def expression(self) -> Any:
        """The filter as an Arrow expression on rows (made when rows are first filtered: planning needs none)."""
        return row_filter(self.bound)

    def __getstate__(self) -> dict[str, Any]:
        """Compiled tests are closures: a pickled filter (a scan shipped to an executor) compiles them anew."""
        return {**self.__dict__, "_nodes": {}, "_projections": {}, "_range_tests": {}, "_compiled": {},
                "_keys_kept": {}}

    def apply(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The rows of ``batch`` the filter keeps."""
        return batch if self.expression is None else batch.filter(self.expression)

    def _test(self, kind: str, schema: Schema, leaf: Callable[[BoundPredicate, Schema], Any]) -> Callable[[Any], bool]:
        key = (kind, id(schema))
        if key not in self._compiled:  # the schema is kept with its test, so its id is not reused
            self._compiled[key] = (schema, compile_test(self.bound, lambda p: leaf(p, schema)))
        return self._compiled[key][1]

    def may_match(self, stats: Mapping[int, ColumnStats], schema: Schema) -> bool:
        """False only when statistics prove no row of the file passes. Bounds are used in the read type
        only when they convert to it exactly (a promotion that keeps values)."""
        return self._test("stats", schema, self._stats_leaf)(stats)

    def _stats_leaf(self, p: BoundPredicate, schema: Schema) -> Callable[[Mapping[int, ColumnStats]], bool]:
        read_type, node = self._node(p, schema)

        def test(stats: Mapping[int, ColumnStats]) -> bool:
            st = stats.get(p.field_id)
            if st is None or st.type is None or st.value_count is None or st.null_count is None:
                return True
            lo, hi = _bounds(st, read_type)
            return may_match((st.value_count, st.null_count, lo, hi), p, node, read_type)
        return test

    def _node(self, p: BoundPredicate, schema: Schema) -> tuple[Any, Take | None]:
        """The predicate column's read type, and a plan node that takes it as it is (made once)."""
        if p.field_id not in self._nodes:
            read_type = schema.field(p.field_id).type
            node = Take(0, read_type, ".".join(p.path)) if isinstance(read_type, pa.DataType) else None
            self._nodes[p.field_id] = (read_type, node)
        return self._nodes[p.field_id]

    def partition_may_match(self, partition: Sequence[PartitionValue], schema: Schema,
                            file_schema: Schema | None = None) -> bool:
        """False only when a file's partition values prove no row passes: each leaf projected through
        the transform of a partition field over its column (Iceberg's inclusive projection). A transform
        fieldshift does not know, or a value it cannot place in the read type, prunes nothing; nor does a
        field whose values, computed on the file's type (``file_schema``, when known), are not the keys the
        transform gives the read type (``partition_evolution.same_keys``)."""
        return self._file_test("partition", schema, file_schema, False)(partition)

    def _file_test(self, kind: str, schema: Schema, file_schema: Schema | None, strict: bool) -> Callable[[Any], bool]:
        key = (kind, id(schema), id(file_schema))
        if key not in self._compiled:  # the schemas are kept with their test, so their ids are not reused
            leaf = self._strict_leaf if strict else self._partition_leaf
            self._compiled[key] = ((schema, file_schema), compile_test(
                self.bound, lambda p: leaf(p, schema, file_schema), strict=strict))
        return self._compiled[key][1]

    def layout_test(self, layout: tuple[tuple[int, str], ...], schema: Schema,
                    file_schema: Schema | None) -> Callable[[tuple[Any, ...]], bool]:
        """``partition_may_match`` for values given apart from their layout ((source id, transform) per value):
        compiled once per layout, each leaf resolved to the positions it projects through, so a file costs a
        few comparisons (a 10,000-file partitioned table)."""
        key = ("layout", id(layout), id(schema), id(file_schema))
        found = self._compiled.get(key)
        if found is None:
            found = self._compiled[key] = ((layout, schema, file_schema), compile_test(
                self.bound, lambda p: self._layout_leaf(p, layout, schema, file_schema)))
        return found[1]

    def layout_checks(self, p: BoundPredicate, layout: tuple[tuple[int, str], ...], schema: Schema,
                      file_schema: Schema | None) -> list[tuple[int, Any, bool]]:
        """The leaf ``p``'s tests on values of ``layout``: (position, projected test, whether the value is
        converted to nanoseconds first) for each partition field that prunes it."""
        checks = []
        for i, (source_id, transform) in enumerate(layout):
            if source_id != p.field_id or not self._same_keys(p, transform, schema, file_schema):
                continue
            projected = self._projected(p, transform, schema)
            if projected is not None:
                checks.append((i, projected[0], projected[1]))
        return checks

    def _layout_leaf(self, p: BoundPredicate, layout: tuple[tuple[int, str], ...], schema: Schema,
                     file_schema: Schema | None) -> Callable[[tuple[Any, ...]], bool] | None:
        checks = self.layout_checks(p, layout, schema, file_schema)
        if not checks:
            return None
        read_type = schema.field(p.field_id).type

        def test(values: tuple[Any, ...]) -> bool:
            for i, check, temporal in checks:
                key = _temporal_key(values[i], read_type) if temporal else values[i]
                if key is not _UNKNOWN and not check(key):
                    return False
            return True
        return test

    def _same_keys(self, p: BoundPredicate, transform: str, schema: Schema, file_schema: Schema | None) -> bool:
        if file_schema is None:
            return True
        key = (id(p), transform, id(file_schema))  # the schemas are kept by the compiled tests
        found = self._keys_kept.get(key)
        if found is None:
            t = _transform(transform)
            found = self._keys_kept[key] = t is not None and file_schema.has_field(p.field_id) and \
                same_keys(t, file_schema.field(p.field_id).type, schema.field(p.field_id).type)
        return found

    def _partition_leaf(self, p: BoundPredicate, schema: Schema, file_schema: Schema | None = None
                        ) -> Callable[[Sequence[PartitionValue]], bool]:
        def test(partition: Sequence[PartitionValue]) -> bool:
            for pv in partition:
                if pv.source_id != p.field_id or not self._same_keys(p, pv.transform, schema, file_schema):
                    continue
                projected = self._projected(p, pv.transform, schema)
                if projected is None:
                    continue
                check, temporal = projected
                key = _temporal_key(pv.value, schema.field(p.field_id).type) if temporal else pv.value
                if key is not _UNKNOWN and not check(key):
                    return False
            return True
        return test

    def partition_all_match(self, partition: Sequence[PartitionValue], schema: Schema,
                            file_schema: Schema | None = None) -> bool:
        """True only when a file's partition values prove every row passes (Iceberg's strict projection: one
        partition field proving a leaf is enough; a leaf no field proves fails)."""
        return self._file_test("strict", schema, file_schema, True)(partition)

    def _strict_leaf(self, p: BoundPredicate, schema: Schema, file_schema: Schema | None = None
                     ) -> Callable[[Sequence[PartitionValue]], bool]:
        def test(partition: Sequence[PartitionValue]) -> bool:
            for pv in partition:
                if pv.source_id != p.field_id or not self._same_keys(p, pv.transform, schema, file_schema):
                    continue
                transform = _transform(pv.transform)
                if transform is None or (transform.kind != "identity" and not self.iceberg_transforms):
                    continue
                check = project_strict(transform, p)
                if check is None:
                    continue
                temporal = self._projected(p, pv.transform, schema)
                key = _temporal_key(pv.value, schema.field(p.field_id).type) \
                    if temporal is not None and temporal[1] else pv.value
                if key is not _UNKNOWN and check(key):
                    return True
            return False
        return test

    def ranges_may_match(self, ranges: Sequence[PartitionRange], schema: Schema) -> bool:
        """False only when a group of files' partition ranges (an Iceberg manifest's summaries) prove that no
        file in it holds a row that passes."""
        return self._test("ranges", schema, self._range_leaf)(ranges)

    def _range_leaf(self, p: BoundPredicate, schema: Schema) -> Callable[[Sequence[PartitionRange]], bool]:
        def test(ranges: Sequence[PartitionRange]) -> bool:
            for r in ranges:
                if r.source_id != p.field_id:
                    continue
                key = (id(p), r.transform)
                if key not in self._range_tests:
                    transform = _transform(r.transform)
                    if transform is not None and transform.kind != "identity" and not self.iceberg_transforms:
                        transform = None
                    self._range_tests[key] = None if transform is None else project_range(transform, p)
                check = self._range_tests[key]
                if check is None:
                    continue
                lo, hi = r.lower, r.upper
                projected = self._projected(p, r.transform, schema)
                if projected is not None and projected[1]:  # identity timestamps and times: nanoseconds
                    read_type = schema.field(p.field_id).type
                    lo, hi = _temporal_key(lo, read_type), _temporal_key(hi, read_type)
                    if lo is _UNKNOWN or hi is _UNKNOWN:
                        continue
                if not check(lo, hi, r.contains_null):
                    return False
            return True
        return test

    def _projected(self, p: BoundPredicate, transform_text: str, schema: Schema) -> tuple[Any, bool] | None:
        """(the leaf's test on partition values of this transform, whether values need converting to
        the nanoseconds ``Transform.value`` records for identity timestamps and times), made once per scan."""
        key = (id(p), transform_text)
        if key not in self._projections:
            transform = _transform(transform_text)
            if transform is not None and transform.kind != "identity" and not self.iceberg_transforms:
                transform = None
            test = None if transform is None else project(transform, p)
            read_type = schema.field(p.field_id).type
            temporal = transform is not None and transform.kind == "identity" and isinstance(read_type, pa.DataType) \
                and (pa.types.is_timestamp(read_type) or pa.types.is_time(read_type))
            self._projections[key] = None if test is None else (test, temporal)
        return self._projections[key]


_UNKNOWN = object()


@functools.lru_cache(maxsize=1024)
def _transform(text: str) -> Transform | None:
    """A partition value's transform (parsed once per text: a scan asks once per file and predicate)."""
    try:
        return parse_transform(text)
    except (PartitionSpecError, ValueError, TypeError):
        return None


def _temporal_key(value: Any, read_type: pa.DataType) -> Any:
    """An identity timestamp or time partition value as ``Transform.value`` records it (nanoseconds)."""
    if value is None:
        return None
    try:
        return parse_transform("identity").values(pa.array([value], read_type))[0]
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return _UNKNOWN


def _only(stats: Mapping[int, ColumnStats], ids: set[int] | None) -> Mapping[int, ColumnStats]:
    """Statistics the pruning may use: in a merge by key only the key's (a file whose values rule a row
    out may hold the newer version of a row whose older version passes)."""
    return stats if ids is None else {i: st for i, st in stats.items() if i in ids}


def _bounds(st: ColumnStats, read_type: Any) -> tuple[Any, Any]:
    if st.lower is None or st.upper is None or not isinstance(read_type, pa.DataType):
        return None, None
    if st.type == read_type:
        return st.lower, st.upper
    T = pa.types
    same_family = (T.is_integer(st.type) and (T.is_integer(read_type) or T.is_decimal(read_type))) or \
        (T.is_floating(st.type) and T.is_floating(read_type)) or (T.is_decimal(st.type) and T.is_decimal(read_type)) \
        or (T.is_date(st.type) and T.is_timestamp(read_type) and read_type.tz is None)
    if not same_family:
        return None, None
    try:
        lo, hi = pa.array([st.lower, st.upper], st.type).cast(read_type, safe=True).to_pylist()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError):
        return None, None
    return lo, hi


def _undeleted(f: DataFileEntry) -> bool:
    """Whether every row ``f`` records is live (no delete of any kind names it)."""
    return (f.positions is None or not len(f.positions)) and not f.delete_files and not f.equality_deletes \
        and f.snapshot_column is None


def _holding(tasks: list[ScanTask], rows: int) -> list[ScanTask] | None:
    """The shortest prefix of file tasks holding at least ``rows`` rows by their record counts (None: some task
    is not a file without deletes, whose count would be exact)."""
    if any(t.kind != "file" or not _undeleted(t.files[0]) for t in tasks):
        return None
    total = 0
    for i, t in enumerate(tasks):
        if total >= rows:
            return tasks[:i]
        total += t.files[0].record_count
    return tasks


def _jobs(order: Sequence[int], rows: Sequence[int], small: int) -> list[list[int]]:
    """Tasks (``order``: largest first) as the pool's jobs: a job each, but tasks of fewer than ``small`` rows run one
    after another in jobs of at least ``JOB_ROWS`` rows (``small`` 0: every task alone). Two threads reading small
    files at once spend more CPU passing the GIL back and forth than either saves (benchmarks/README, issue 35's
    fourth part)."""
    jobs: list[list[int]] = []
    pending: list[int] = []
    held = 0
    for i in order:
        if rows[i] >= small:
            jobs.append([i])
            continue
        pending.append(i)
        held += rows[i]
        if held >= JOB_ROWS:
            jobs.append(pending)
            pending, held = [], 0
    if pending:
        jobs.append(pending)
    return jobs


def _version_plan(file_schema: Schema, read_schema: Schema, policy: Any) -> tuple[pa.Schema, EvolutionPlan]:
    """(the columns of ``file_schema`` a read of ``read_schema`` takes, as Arrow; their plan)."""
    wanted = {x.id for x in read_schema.all_fields()}
    columns = file_schema.select([x.name for x in file_schema.fields if x.id in wanted])
    return columns.to_arrow(), cached_plan(columns, read_schema, policy)


_VERSION_PLANS: dict[tuple[Any, ...], tuple[Schema, tuple[pa.Schema, EvolutionPlan], int]] = {}
_VERSION_PLANS_LOCK = threading.Lock()
_version_plan_columns = 0  # the columns (plan_columns) of the plans in _VERSION_PLANS
MAX_VERSION_PLANS = 4_096
"""Schema versions' plans kept across scans (``_shared_version_plan``); past it the oldest half is forgotten."""
MAX_VERSION_PLAN_COLUMNS = 250_000
"""Columns (``plan_columns``) of the plans kept across scans; past it the oldest are forgotten. The plan cache is
bounded so (its ``columns``): a count alone kept 4,096 plans of 2,000-column versions (~1.2 MB each) alive."""


def _shared_version_plan(file_schema: Schema, read_schema: Schema, policy: Any) -> tuple[pa.Schema, EvolutionPlan]:
    """``_version_plan`` kept across scans: a table's schema versions are the same objects scan after scan (its
    metadata), while each scan selects their columns anew and fingerprints the selection for the plan cache's key
    (a cost per version and scan). Keyed by the read schema's fingerprint (its structure, ids, docs and defaults),
    the policy by value and the version's schema by identity, which the entry holds so the identity is not
    reused."""
    global _version_plan_columns
    key = (read_schema.fingerprint(), policy, id(file_schema))
    hit = _VERSION_PLANS.get(key)
    if hit is not None and hit[0] is file_schema:
        return hit[1]
    found = _version_plan(file_schema, read_schema, policy)
    weight = plan_columns(found[1])
    with _VERSION_PLANS_LOCK:
        if len(_VERSION_PLANS) >= MAX_VERSION_PLANS:
            for old in list(_VERSION_PLANS)[:MAX_VERSION_PLANS // 2]:  # dicts keep insertion order: the oldest
                _version_plan_columns -= _VERSION_PLANS.pop(old)[2]
        while _VERSION_PLANS and _version_plan_columns + weight > MAX_VERSION_PLAN_COLUMNS:
            _version_plan_columns -= _VERSION_PLANS.pop(next(iter(_VERSION_PLANS)))[2]  # the oldest
        gone = _VERSION_PLANS.pop(key, None)  # another thread's entry for the same key: its columns leave too
        _version_plan_columns += weight - (gone[2] if gone is not None else 0)
        _VERSION_PLANS[key] = (file_schema, found, weight)
    return found


def _run_jobs(jobs: Sequence[Any], read: Callable[[Any], Any], workers: int) -> list[Any]:
    """``read`` of every job, in job order, by ``workers`` threads: the calling thread is one of them, taking jobs
    from the same queue as ``workers - 1`` pool threads (one job: no pool at all). A thread the pool makes anew
    starts with cold allocator caches, so reading on the caller saves CPU on every scan (benchmarks/README, issue
    35's fifth part). Once a job failed (or the caller was interrupted) no further job starts, as ``pool.map``
    cancels the jobs not yet started: a Ctrl-C stops a scan of thousands of files. The jobs started run to their
    end; then the first failed job's error (in job order) is raised, as ``pool.map``'s results raise it (jobs are
    handed out in order, so every job before a failed one has started)."""
    outcomes: list[tuple[bool, Any] | None] = [None] * len(jobs)
    pending = iter(range(len(jobs)))
    lock = threading.Lock()
    stopped = False

    def work() -> None:
        nonlocal stopped
        while True:
            with lock:
                k = None if stopped else next(pending, None)
            if k is None:
                return
            try:
                outcomes[k] = (True, read(jobs[k]))
            except BaseException as e:  # kept for its place in job order
                outcomes[k] = (False, e)
                stopped = True

    if workers <= 1:
        work()
    else:
        with ThreadPoolExecutor(max_workers=workers - 1) as pool:
            helpers = [pool.submit(work) for _ in range(workers - 1)]
            try:
                work()
                for h in helpers:
                    h.result()
            except BaseException:  # the caller interrupted outside a job: the pool's threads stop too
                stopped = True
                raise
    results = []
    for outcome in outcomes:
        assert outcome is not None  # a job not started follows a failed one, raised first
        ok, value = outcome
        if not ok:
            raise value
        results.append(value)
    return results


def group_filter(filter: Any, schema: Schema,
                 source: ReadSource) -> Callable[[tuple[PartitionRange, ...]], bool] | None:
    """The ``keep`` test a source that prunes groups of files takes for a scan with ``filter`` at a snapshot
    of ``schema`` (None: the filter has no predicate to prune with)."""
    f = _Filter(filter, schema, getattr(source, "partition_transforms", None) == "iceberg")
    if not f.filtered:
        return None
    return lambda ranges: f.ranges_may_match(ranges, schema)


class OpenScan:
    """A lazy read of one snapshot of a ReadSource into its schema (or the ``columns`` of it)."""

    def __init__(self, source: ReadSource, content: SnapshotContent, columns: Sequence[str] | None = None,
                 filter: Any = None, batch_size: int = BATCH_SIZE, *, schema: Schema | None = None,
                 policy: Any = None, limit: int | None = None, bound: Any = None) -> None:
        """``schema``: the schema to read into (default: the snapshot's); ``policy``: the type changes to apply
        (default: the source's); ``limit``: the most rows to return (the first ones of the unlimited order);
        ``bound``: ``filter`` as the caller already bound it to ``schema`` (``bind_filter``), not bound again."""
        if columns is not None and (isinstance(columns, (str, bytes)) or not all(isinstance(c, str) for c in columns)):
            raise TypeError(f"columns must be a list of top-level column names, e.g. ['id'], not {columns!r}")
        self.source, self.content = source, content
        self.snapshot_id = content.snapshot.snapshot_id
        self.full_schema = content.schema if schema is None else schema
        self.filter = _Filter(filter, self.full_schema, getattr(source, "partition_transforms", None) == "iceberg",
                              bound)
        self.columns = list(columns) if columns is not None else self.full_schema.names
        self.merge = content.merge
        self.key_names, self.order_names = self._merge_columns()
        self.read_schema = self.full_schema.select(list(dict.fromkeys(
            [*self.columns, *self.filter.columns, *self.key_names, *self.order_names])))
        self.output_schema = self.full_schema.select(self.columns).to_arrow()
        self.policy = source.policy if policy is None else policy
        self.batch_size = batch_size
        self.limit = limit
        self.prune = True  # False reads every live file (tests compare the two)
        self.vector_prune = True  # False: every file's statistics checked one by one (tests compare the two)
        # False: deleted positions removed by one filter per batch, every row group decoded (``live_rows``)
        self.fast_deletes = True
        self.whole_small_files = True  # False: a small file is opened and read chunk by chunk like a big one
        # False: string and binary columns decoded dense by the Parquet reader, not as dictionaries (dictionary_read)
        self.dictionary_strings = True
        # to_arrow runs tasks of fewer rows one after another in jobs of JOB_ROWS (0: a job each; _jobs)
        self.small_task_rows = SMALL_TASK_ROWS
        self._dictionary_columns: dict[int, tuple[str, ...]] = {}
        # False: every file's footer converted to Arrow and checked on its own, not once per shape (footer_shapes)
        self.footer_shapes = True
        self._shapes = FileShapes()
        # entries' schema ids describe their files exactly: plan once per schema id, without footers
        self.exact = bool(getattr(source, "exact_schemas", False))
        self._schemas: dict[int, Schema] = dict(source.schemas()) if self.exact else {}
        self._schema_plans: dict[int, tuple[pa.Schema, EvolutionPlan]] = {}
        # False: each scan selects its schema versions' columns and looks their plans up itself (_shared_version_plan)
        self.shared_plans = True
        # False: to_arrow's jobs all run on pool threads while the calling thread waits (_run_jobs)
        self.caller_reads = True
        self._stats_tests: dict[int, Callable[[dict[int, Any]], bool]] = {}
        self._filesystems: dict[str, tuple[pafs.FileSystem, Callable[[str], str]]] = {}
        self._groups: dict[str, dict[str, np.ndarray]] = {}
        self._lock = threading.Lock()
        eq_ids = {i for d in self._all_equality_deletes() for i in d.field_ids}
        self.equality: EqualityMatcher | None = None
        if eq_ids:
            where = f"{source.format} table {source.name}"
            self.read_schema, paths = with_equality_fields(self.read_schema, eq_ids, self.full_schema,
                                                           source.schemas(), where)
            self._equality_args = (paths, where)
            self.equality = EqualityMatcher(self.read_schema, paths, self.policy, self._open, where)

    # -- shipping to executors --------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        """A pickled scan reads files without the source: Spark plans on the driver (which holds the format's
        metadata connection) and ships the scan to executors, which read and evolve one task each. Rows of
        the format's own reader (``ReaderRows``) stay behind: the driver reads those."""
        state = dict(self.__dict__)
        src = self.source
        if not isinstance(src, DetachedSource):  # a shipped scan pickles again on its way to the executor
            state["source"] = DetachedSource(src.format, src.name, src.policy,
                                             getattr(src, "partition_transforms", None),
                                             getattr(src, "file_opener", None))
        state["content"] = replace(self.content, reader_rows=(), files=tuple(_bare(f) for f in self.content.files))
        state["_filesystems"], state["_groups"], state["equality"], state["_schema_plans"] = {}, {}, None, {}
        state["_stats_tests"], state["_shapes"] = {}, FileShapes()
        del state["_lock"]
        return state

    def shipped(self, task: ScanTask) -> OpenScan:
        """A detached copy of this scan that holds only ``task``'s files (what one Spark task needs to read
        it: a small pickle whatever the snapshot's size)."""
        out = copy.copy(self)  # through __getstate__: no source, no reader rows
        files = tuple(_bare(f) for f in task.files)
        out.content = replace(out.content, files=files, inlined=(), reader_rows=())
        return out

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        args = state.get("_equality_args")
        if args is not None:
            self.equality = EqualityMatcher(self.read_schema, args[0], self.policy, self._open, args[1])

    def _merge_columns(self) -> tuple[list[str], list[str]]:
        """The top-level columns a merge by key sorts on: the key, then the version order."""
        if self.merge.kind == "none":
            return [], []
        names = []
        for fid in (*self.merge.key_ids, *self.merge.order_ids):
            if not self.full_schema.has_field(fid) or self.full_schema.parent_id(fid) is not None:
                raise UnsupportedFormatFeatureError(f"{self.source.format} table {self.source.name}: rows merge by "
                                                    f"field id {fid}, which is no top-level column of schema "
                                                    f"{self.full_schema.schema_id}")
            names.append(self.full_schema.field(fid).name)
        return names[:len(self.merge.key_ids)], names[len(self.merge.key_ids):]

    # -- planning -------------------------------------------------------------------------------
    def files(self) -> list[DataFileEntry]:
        """The snapshot's live files that the filter's partition values and statistics cannot rule out."""
        lazy = self._lazy_files()
        if lazy is not None:
            return self._lazy_pruned(lazy)
        files = list(self.content.files)
        for f in files:
            if f.file_format != "parquet":
                raise UnsupportedFormatFeatureError(f"{self.source.format} table {self.source.name}: data file "
                                                    f"{f.path} is {f.file_format.upper()}; fieldshift reads Parquet "
                                                    "data files")
        if self.exact:  # every live file's schema first: whether a scan can read never depends on the filter
            for schema_id in sorted({f.schema_id for f in files if f.schema_id is not None}):
                self.plan_of(schema_id)
        if not self.prune or not self.filter.filtered:
            return files
        with paused_gc():  # statistics of every file decoded at once, cycle-free (gc_pause)
            return self._by_stats([f for f in files if self.filter.partition_may_match(
                f.partition, self.full_schema, self._file_schema(f))])

    def partition_may_match(self, f: DataFileEntry) -> bool:
        """False only when ``f``'s partition values prove no row of it passes the filter."""
        return self.filter.partition_may_match(f.partition, self.full_schema, self._file_schema(f))

    def partition_all_match(self, f: DataFileEntry) -> bool:
        """True only when ``f``'s partition values prove every row of it passes the filter."""
        return self.filter.partition_all_match(f.partition, self.full_schema, self._file_schema(f))

    def _file_schema(self, f: DataFileEntry) -> Schema | None:
        """The schema ``f`` was written with, for an ``exact_schemas`` source (None: unknown)."""
        return self._schemas.get(f.schema_id) if self.exact and f.schema_id is not None else None

    def _lazy_files(self) -> Any:
        """The content's files when they come as a lazy sequence with arrays (``catalog_entries``), else None."""
        files = self.content.files
        return files if self.exact and hasattr(files, "schema_ids") and hasattr(files, "select") else None

    def plan_all(self) -> None:
        """Plan every live file's schema version now (an ``exact_schemas`` source; others plan per file)."""
        lazy = self._lazy_files()
        if lazy is not None:  # the catalog's entries keep their distinct schema ids (a scan plans them all)
            found = getattr(lazy, "distinct_schema_ids", None)
            ids = found if found is not None else np.unique(lazy.schema_ids).tolist()
        else:
            ids = sorted({f.schema_id for f in self.content.files if f.schema_id is not None}) if self.exact else []
        for schema_id in ids:
            self.plan_of(int(schema_id))
        if self.exact and self._folded_columns:
            self._check_folded_columns([int(i) for i in ids])

    @functools.cached_property
    def _folded_columns(self) -> list[str]:
        """The columns the filter names but no longer reads: a leaf that bound to a constant (``c >= 2**64`` on an
        int column)."""
        if not self.filter.filtered:
            return []
        read = set(self.read_schema.names)
        return [n for n in named_columns(self.filter.given, self.full_schema) if n not in read]

    def _check_folded_columns(self, ids: Sequence[int]) -> None:
        """The filter's folded columns must be readable from every schema version too: whether a scan is refused
        must not depend on a literal making its leaf constant (``c < 0`` is refused on the same files)."""
        check = self.full_schema.select(self._folded_columns)
        wanted = {x.id for x in check.all_fields()}
        for schema_id in ids:
            file_schema = self._schemas[schema_id]
            cached_plan(file_schema.select([x.name for x in file_schema.fields if x.id in wanted]), check, self.policy)

    def _lazy_pruned(self, files: Any) -> list[DataFileEntry]:
        """``files`` for a source whose entries are built on demand: every schema version planned, then
        partition values, integer statistics of all files at once (``prune_vector``), and the statistics of
        the files left, each step building entries only for what the one before kept."""
        self.plan_all()
        if not self.prune or not self.filter.filtered:
            return list(files)
        keys = frozenset(self.merge.key_ids) if self.merge.kind == "key" else None
        with paused_gc():
            at = np.arange(len(files))
            if self._partitioned():
                at = self._partition_kept(files, at)
            if self.vector_prune and len(at) >= MIN_FILES:
                view = PruneView(self.filter.bound, keys, self.read_schema, self._schemas, self.plan_of)
                gone = integer_ruled_out(view, files.schema_ids[at], files.listed_at[at], files.column)
                if gone is not None:
                    at = at[~gone]
            return self._by_stats(files.select(at))

    def _partition_kept(self, files: Any, at: np.ndarray) -> np.ndarray:
        """The positions of ``at`` whose partition values may hold a row the filter keeps (one compiled test per
        partition layout and schema version; many files: integer values tested as columns first)."""
        if self.vector_prune and len(at) >= MIN_FILES and hasattr(files, "partition_columns"):
            gone = self._partition_ruled_out(files)
            at = at[~gone[at]]
        sids, parts, tests, kept = files.schema_ids.tolist(), files.partition_parts, {}, []
        for i in at.tolist():
            layout, values = parts(i)
            key = (id(layout), sids[i])  # a layout is one shared object per distinct layout
            test = tests.get(key)
            if test is None:
                test = tests[key] = self.filter.layout_test(layout, self.full_schema, self._schemas.get(sids[i]))
            if test(values):
                kept.append(i)
        return np.array(kept, np.int64)

    def _partition_ruled_out(self, files: Any) -> np.ndarray:
        """A mask over all of ``files``: True where integer partition values prove the filter false
        (``partition_vector``; the per-file test decides the rest)."""
        gone = np.zeros(len(files), dtype=bool)
        for group in files.partition_columns():
            sids = files.schema_ids[group.positions]
            distinct = np.unique(sids)
            for sid in distinct.tolist():
                file_schema = self._schemas.get(sid)
                mine = None if len(distinct) == 1 else sids == sid
                ints = group.ints if mine is None else [c[mine] for c in group.ints]
                is_int = group.is_int if mine is None else [c[mine] for c in group.is_int]
                def checks(p: BoundPredicate, layout: Any = group.layout, fsch: Any = file_schema) -> Any:
                    return self.filter.layout_checks(p, layout, self.full_schema, fsch)
                ruled = partition_ruled_out(self.filter.bound, checks, ints, is_int)
                if ruled is not None:
                    at = group.positions if mine is None else group.positions[mine]
                    gone[at[ruled]] = True
        return gone

    def _partitioned(self) -> bool:
        """Whether any partition spec of the source has a field (else partition values prune nothing)."""
        specs = getattr(self.source, "specs", None)
        return specs is None or any(s.fields for s in specs())

    def _by_stats(self, files: list[DataFileEntry]) -> list[DataFileEntry]:
        """``files`` without those whose statistics rule the filter out."""
        keys = set(self.merge.key_ids) if self.merge.kind == "key" else None
        with paused_gc():  # statistics of every file decoded at once, cycle-free (gc_pause)
            with_stats = getattr(self.source, "with_stats", None)
            if with_stats is not None:  # a source that loads statistics lazily: only the files left
                files = with_stats(files)
            if self.exact:
                return [f for f in files if self._exact_may_match(f, keys)]
            return [f for f in files if self.filter.may_match(_only(f.stats, keys), self.full_schema)]

    def _exact_may_match(self, f: DataFileEntry, keys: set[int] | None) -> bool:
        """A file of an ``exact_schemas`` source: its statistics converted into the read types by its schema
        version's own plan (``stats.may_match``: only casts that keep order and equality prune)."""
        if f.schema_id is None:
            return self.filter.may_match(_only(f.stats, keys), self.full_schema)
        test = self._stats_tests.get(f.schema_id)
        if test is None:
            test = self._stats_tests[f.schema_id] = stats_test(self.filter.bound, self._leaf_info(f.schema_id, keys))
        return test({fid: (st.value_count, st.null_count, st.lower, st.upper) for fid, st in f.stats.items()
                     if st.value_count is not None and st.null_count is not None})

    def _leaf_info(self, schema_id: int, keys: set[int] | None) -> Callable[[BoundPredicate], Any]:
        """For the statistics test of one schema version's files: each leaf's plan node and file type (None:
        the leaf cannot prune these files, e.g. a non-key column of a merge by key)."""
        file_schema, nodes = self._schemas[schema_id], self.plan_of(schema_id).nodes

        def info(p: BoundPredicate) -> tuple[Any, Any] | None:
            if keys is not None and p.field_id not in keys:
                return None  # only key values are shared by every version of a row: others could resurrect one
            if not file_schema.has_field(p.field_id):
                return None  # a constant in these files: cannot prune on it
            return leaf_node(nodes, self.read_schema.fields, p.path), file_schema.field(p.field_id).type
        return info

    def _all_equality_deletes(self) -> list[EqualityDeletes]:
        listed = getattr(self.content.files, "equality_files", None)  # a lazy sequence knows them unbuilt
        found = {d.path: d for d in listed} if listed is not None else \
            {d.path: d for f in self.content.files for d in f.equality_deletes}
        found.update((d.path, d) for d in self.content.equality_deletes)
        return list(found.values())

    def equality_deletes(self, f: DataFileEntry) -> tuple[EqualityDeletes, ...]:
        """The equality deletes of ``f``: its own, and the snapshot-wide ones newer than it."""
        wide = tuple(d for d in self.content.equality_deletes
                     if f.sequence_number is None or f.sequence_number < d.sequence_number)
        return f.equality_deletes + wide

    def _open(self, path: str) -> Any:
        """A readable file: through the source's own ``open_file`` when it has one (a store it holds options
        for), else a local path or a URI pyarrow.fs knows (s3://, gs://, file://, ...)."""
        opener = getattr(self.source, "open_file", None)
        if opener is not None:
            return opener(path)
        if "://" not in path:
            return pafs.LocalFileSystem().open_input_file(path)
        key = path.split("://", 1)[0] + "://" + path.split("://", 1)[1].split("/", 1)[0]
        if key not in self._filesystems:
            fs, _ = pafs.FileSystem.from_uri(path)
            self._filesystems[key] = (fs, lambda p: pafs.FileSystem.from_uri(p)[1])
        fs, inner = self._filesystems[key]
        return fs.open_input_file(inner(path))

    def _positions(self, d: DeleteFile) -> np.ndarray:
        """A delete file's positions in its data file; a Parquet file naming many data files is read once
        per scan and split by file."""
        if d.format != "parquet" or d.data_file_path is None or d.up_to_snapshot is not None:
            return read_positions(d, self._open)
        with self._lock:
            groups = self._groups.get(d.path)
        if groups is None:
            groups = read_position_groups(d, self._open)
            with self._lock:
                self._groups[d.path] = groups
        return groups.get(d.data_file_path, np.empty(0, np.int64))

    def deleted(self, f: DataFileEntry) -> np.ndarray | None:
        """Sorted positions of ``f``'s deleted rows at this snapshot (None: none are deleted)."""
        parts = [self._positions(d) for d in f.delete_files]
        if f.positions is not None and len(f.positions):
            parts.append(np.asarray(f.positions, np.int64))
        if not parts:
            return None
        if len(parts) == 1 and bool(np.all(parts[0][1:] > parts[0][:-1])):
            return parts[0]  # sorted and distinct already (a deletion vector's positions): no hash pass
        return np.unique(np.concatenate(parts))

    # -- reading --------------------------------------------------------------------------------
    def _plan(self, arrow_schema: pa.Schema, mapping: Any, constants: dict[int, Any] | None = None) -> EvolutionPlan:
        return plan(arrow_schema, self.read_schema, policy=self.policy, name_mapping=mapping, constants=constants)

    def _constants(self, f: DataFileEntry, found: pa.Schema) -> dict[int, Any] | None:
        """Identity partition values of read columns the file lacks (the Iceberg spec's first projection rule: a
        file of a migrated Hive table keeps its partition column only in the metadata, as Delta's files do)."""
        wanted = {pv.source_id: pv.value for pv in f.partition
                  if pv.transform == "identity" and pv.value is not None and self.read_schema.has_field(pv.source_id)}
        if not wanted:
            return None
        try:
            present = file_schema_of(found, name_mapping=f.name_mapping)
        except SchemaEvolutionError:
            return None
        return {sid: v for sid, v in wanted.items() if not present.has_field(sid)} or None

    def _by_mapping(self, found: pa.Schema, f: DataFileEntry, raw: Sequence[str] = ()) -> pa.Schema | None:
        """The top-level columns of a file without field ids that its name mapping gives a read field, and the
        ``raw`` columns (None: the file has ids, or no mapping): a file of a format that resolves columns by
        name reads only those (a name matches one level at a time, so leaving the others unread changes no
        match)."""
        if f.name_mapping is None or has_field_ids(found):
            return None
        wanted = {field.id for field in self.read_schema.fields}
        mapped = f.name_mapping.apply(pa.schema([pa.field(n, pa.null()) for n in found.names]))
        keep = [found.field(i) for i, m in enumerate(mapped) if arrow_field_id(m) in wanted or found.names[i] in raw]
        return pa.schema(keep or [found.field(0)], metadata=found.metadata)  # one column still counts rows

    def schema_plan(self, schema_id: int) -> tuple[pa.Schema, EvolutionPlan]:
        """(the columns a file of this schema version holds that the read needs, as Arrow; their plan)."""
        return self._exact_plan(schema_id)

    def plan_of(self, schema_id: int) -> EvolutionPlan:
        """The plan for every file of one schema version of a source whose schema ids describe their files
        exactly (``exact_schemas``), made once and shared by every such file."""
        return self._exact_plan(schema_id)[1]

    def _exact_plan(self, schema_id: int) -> tuple[pa.Schema, EvolutionPlan]:
        """(the file columns to read, as the schema records them; the plan), once per schema version."""
        found = self._schema_plans.get(schema_id)
        if found is None:
            file_schema = self._schemas[schema_id]
            if not self.shared_plans:
                found = self._schema_plans[schema_id] = _version_plan(file_schema, self.read_schema, self.policy)
            else:
                found = self._schema_plans[schema_id] = _shared_version_plan(file_schema, self.read_schema,
                                                                             self.policy)
        return found

    def _is_exact(self, f: DataFileEntry, raw: Sequence[str]) -> bool:
        return self.exact and f.schema_id is not None and not raw and f.name_mapping is None \
            and f.snapshot_column is None and f.ids_in_file

    def file_plan(self, f: DataFileEntry) -> EvolutionPlan:
        """The plan that evolves data file ``f`` into the read schema (reads the file's footer only)."""
        if self._is_exact(f, ()):
            assert f.schema_id is not None
            return self.plan_of(f.schema_id)
        with data_file_errors(f.path):
            return self._file_plan(f)[4]

    def _file_plan(self, f: DataFileEntry, raw: Sequence[str] = ()
                   ) -> tuple[pq.ParquetFile, pa.Schema, bool, pa.Schema, EvolutionPlan]:
        """(the open file, its columns as resolved, whether its own ids were dropped, the columns read, the plan)."""
        # INT96 (Spark's legacy timestamps) as microseconds, the unit every table format reads them in
        pf = pq.ParquetFile(self._open(f.path), arrow_extensions_enabled=False, coerce_int96_timestamp_unit="us")
        found = pf.schema_arrow
        foreign_ids = not f.ids_in_file and has_field_ids(found)
        if foreign_ids:  # ids the table does not own: columns resolve by name only
            found = without_field_ids(found)
        constants = self._constants(f, found)
        projected = self._by_mapping(found, f, raw) or decode_schema(
            found, self.read_schema, policy=self.policy, name_mapping=f.name_mapping, constants=constants)
        try:
            p = self._plan(projected, f.name_mapping, constants)
        except SchemaEvolutionError as e:
            raise name_data_file(e, f.path, self.content.snapshot.schema_id) from None
        return pf, found, foreign_ids, projected, p

    def evolved_batches(self, f: DataFileEntry, raw: Sequence[str] = ()) -> Iterator[pa.RecordBatch]:
        """A data file's live rows in the read schema, before the row filter; ``raw`` columns of the file
        (a merge's sequence number and row kind) follow as they are."""
        deleted = self.deleted(f)
        equality = self.equality_deletes(f) if self.equality is not None else ()
        if self._is_exact(f, raw):
            yield from self._exact_batches(f, deleted, equality)
            return
        with data_file_errors(f.path):
            pf, found, foreign_ids, projected, p = self._file_plan(f, raw)
            by_snapshot = f.snapshot_column is not None
            if by_snapshot and f.snapshot_column not in found.names:
                raise UnsupportedFormatFeatureError(f"data file {f.path} should record each row's snapshot in "
                                                    f"{f.snapshot_column!r} and has no such column")
            missing = [c for c in raw if c not in found.names]
            if missing:
                raise UnsupportedFormatFeatureError(f"{self.source.format} table {self.source.name}: data file "
                                                    f"{f.path} has no column {missing[0]!r}, which its rows merge by")
            extra = [c for c in raw if c not in projected.names]  # raw columns the projection did not take
            names = [*projected.names, *([f.snapshot_column] if by_snapshot else []), *extra]
            offset = 0
            for whole in read_columns(pf, names, self.batch_size, file_schema=found):
                keep = self._keep(whole, offset, deleted, f)
                offset += whole.num_rows
                if by_snapshot:
                    whole = whole.drop_columns([f.snapshot_column])
                if foreign_ids:
                    stripped = pa.schema([found.field(n) for n in whole.schema.names])  # raw columns too
                    whole = pa.RecordBatch.from_arrays(whole.columns, schema=stripped)
                parts = [whole] if keep is None else live_parts(whole, np.flatnonzero(~keep), self.fast_deletes)
                for batch in parts:
                    kept = [batch.column(c) for c in raw]
                    out = p.apply(batch.drop_columns(extra) if extra else batch)
                    for c, values in zip(raw, kept, strict=True):
                        out = out.append_column(c, values)
                    yield self._without_equality_deleted(out, equality)

    def _without_equality_deleted(self, out: pa.RecordBatch, equality: tuple[EqualityDeletes, ...]
                                  ) -> pa.RecordBatch:
        """``out`` without the rows ``equality``'s delete files remove (``out`` itself when there are none)."""
        if equality:
            assert self.equality is not None
            gone = self.equality.deleted(out, equality)
            if gone is not None and gone.any():
                return out.filter(pa.array(~gone))
        return out

    def _exact_batches(self, f: DataFileEntry, deleted: np.ndarray | None,
                       equality: tuple[EqualityDeletes, ...]) -> Iterator[pa.RecordBatch]:
        """``evolved_batches`` of a file its schema id describes: the columns that schema records (a file whose
        columns are not those was replaced: a ``DataFileError``), evolved by the schema version's one plan."""
        assert f.schema_id is not None
        expected, p = self._exact_plan(f.schema_id)
        offset = 0
        with data_file_errors(f.path):
            opener = getattr(self.source, "parquet_file", None)  # the source's own reader of its files
            # string and binary dictionary chunks read as dictionaries, made dense after the deletes (dictionary_read)
            wanted = self._dictionary_candidates(f.schema_id, expected) \
                if self.dictionary_strings and f.record_count >= DICTIONARY_MIN_ROWS else ()
            options = {"read_dictionary": wanted} if wanted else {}
            if opener is None:
                pf = open_parquet(self._open(f.path), **options)
            else:
                pf = opener(f.path, whole=True, **options) if self._read_whole(f) else opener(f.path, **options)
            restore: pa.Schema | None
            indices: Sequence[int] | None = None
            if not wanted and self.footer_shapes:  # a footer like one checked already: its answers (footer_shapes)
                shape = self._shapes.shape(f.schema_id, f.path, pf, expected)
                found, restore, dense_at, indices = shape.found, shape.restore, [], shape.indices
            else:
                found = pf.schema.to_arrow_schema() if wanted else pf.schema_arrow  # the file's own (dense) types
                check_file_columns(f.path, found, expected)
                restore, dense_at = read_types(expected, pf.schema_arrow) if wanted else (expected, [])
            dense_types = [expected.field(i).type for i in dense_at]
            groups, stop, batch_size = None, None, self.batch_size
            # row groups without a live row, and the rows after the last live one, are not decoded (live_rows)
            if deleted is not None and self.fast_deletes:
                md = pf.metadata
                rows = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
                groups, deleted = live_row_groups(rows, deleted)
                if groups is not None and not groups:
                    return
                total = sum(rows) if groups is None else sum(rows[i] for i in groups)
                stop = live_extent(total, deleted)
                stop, batch_size = (stop, live_batch_size(stop, batch_size)) if stop < total else (None, batch_size)
            for whole in read_columns(pf, expected.names, batch_size, groups, restore=restore,
                                      file_schema=found, indices=indices):
                n = whole.num_rows
                parts = [whole]
                if deleted is not None:
                    lo, hi = np.searchsorted(deleted, [offset, offset + n])
                    if hi > lo:
                        parts = live_parts(whole, deleted[lo:hi] - offset, self.fast_deletes)
                offset += n
                if dense_at:
                    parts = [piece for part in parts for piece in decoded(part, dense_at, dense_types)]
                for batch in parts:
                    try:
                        out = p.apply(batch)
                    except SchemaEvolutionError as e:
                        name_data_file(e, f.path, f.schema_id)
                        raise
                    yield self._without_equality_deleted(out, equality)
                if stop is not None and offset >= stop:
                    return  # the rest is deleted: never decoded

    def _dictionary_candidates(self, schema_id: int, expected: pa.Schema) -> tuple[str, ...]:
        """The columns of a schema version's files to ask for as dictionaries (``dictionary_read``), once each."""
        found = self._dictionary_columns.get(schema_id)
        if found is None:
            found = self._dictionary_columns[schema_id] = dictionary_candidates(expected)
        return found

    def _read_whole(self, f: DataFileEntry) -> bool:
        """Whether to read ``f`` in one request and decode it from memory: a small file (``WHOLE_FILE_BYTES``) of a
        source whose ``parquet_file`` can (``whole_files``)."""
        return self.whole_small_files and getattr(self.source, "whole_files", False) and f.file_size is not None \
            and f.file_size <= WHOLE_FILE_BYTES

    @staticmethod
    def _keep(batch: pa.RecordBatch, offset: int, deleted: np.ndarray | None, f: DataFileEntry) -> np.ndarray | None:
        """The batch's live rows: not deleted, and of a snapshot the read sees (None: all of them)."""
        n, keep = batch.num_rows, None
        if deleted is not None:
            lo, hi = np.searchsorted(deleted, [offset, offset + n])
            if hi > lo:
                keep = np.ones(n, bool)
                keep[deleted[lo:hi] - offset] = False
        if f.snapshot_column is not None and f.up_to_snapshot is not None:
            seen = batch.column(f.snapshot_column).to_numpy(zero_copy_only=False) <= f.up_to_snapshot
            keep = seen if keep is None else keep & seen
        return keep

    def _inlined_batches(self, rows: InlinedRows) -> Iterator[pa.RecordBatch]:
        p = self._plan(rows.rows.schema, None)
        for batch in rows.rows.to_batches(self.batch_size):
            yield p.apply(batch)

    def reader_rows(self) -> list[ReaderRows]:
        """The snapshot's rows of the format's own reader that the filter's statistics cannot rule out."""
        rows = list(self.content.reader_rows)
        if not self.prune or not self.filter.filtered:
            return rows
        return [r for r in rows if self.filter.may_match(r.stats, self.full_schema)]

    def _reader_batches(self, rows: ReaderRows) -> Iterator[pa.RecordBatch]:
        """A peer reader's batches evolved by name; a plan per distinct batch schema."""
        plans: dict[pa.Schema, EvolutionPlan] = {}
        for batch in rows.read():
            p = plans.get(batch.schema)
            if p is None:
                try:
                    p = plans[batch.schema] = self._plan(batch.schema, rows.name_mapping)
                except SchemaEvolutionError as e:
                    raise name_data_file(e, rows.label, self.content.snapshot.schema_id) from None
            yield p.apply(batch)

    def finish(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The filter's rows of a task's batch, in the output columns (the batch itself when it has just those: a
        select builds a new batch, which costs more than comparing the names)."""
        batch = self.filter.apply(batch)
        names = self.output_schema.names
        return batch if batch.schema.names == names else batch.select(names)

    def _merged_batches(self, files: Sequence[DataFileEntry]) -> Iterator[pa.RecordBatch]:
        """The rows of one merge group's files after merging versions by key (``table/open_merge``)."""
        raw = [c for c in (self.merge.sequence_column, self.merge.kind_column) if c is not None]
        ordered = sorted(files, key=lambda f: -1 if f.sequence_number is None else f.sequence_number)
        if getattr(self.source, "merges_by_precombine", False) and not raw and len(self.order_names) <= 1:
            yield from self._precombine_merged(ordered)
            return
        batches = [b for f in ordered for b in self.evolved_batches(f, raw)]
        if not batches:
            return
        rows = pa.Table.from_batches(batches)
        where = f"{self.source.format} table {self.source.name}, files {ordered[0].path} and {len(ordered) - 1} more"
        merged = merge_versions(rows, self.merge, self.key_names, self.order_names, where,
                                unique=len(ordered) == 1 and self.merge.unique_per_file)
        yield from merged.to_batches(self.batch_size)

    def _precombine_merged(self, ordered: Sequence[DataFileEntry]) -> Iterator[pa.RecordBatch]:
        """A fieldshift keyed table's group (``merge.merge_rows``): per key, the row with the highest (precombine,
        sequence number, position) wins, NaN above every number; its equality deletes applied file by file."""
        m = self.merge
        spec = KeySpec(tuple(m.key_ids), tuple(self.key_names), m.order_ids[0] if m.order_ids else None,
                       self.order_names[0] if self.order_names else None, 0)
        arrow = self.read_schema.to_arrow()
        data = [(f.sequence_number or 0, pa.Table.from_batches(list(self.evolved_batches(f)), schema=arrow))
                for f in ordered]
        if data:
            yield from merge_rows(data, [], spec).to_batches(self.batch_size)

    def tasks(self) -> list[ScanTask]:
        """The scan's units of work, each read on its own (threads here, Spark tasks on executors): a data
        file, a merge group's files (a merge by key), the inlined rows, or one slice of the format's own reader."""
        if self.merge.kind == "key":
            groups: dict[Any, list[DataFileEntry]] = {}
            for f in self.files():
                groups.setdefault(f.merge_group, []).append(f)
            resolved = self.content.resolved_groups
            tasks = []
            for key, g in groups.items():  # a resolved group's files read on their own, unmerged
                tasks += [ScanTask("file", (f,)) for f in g] if key in resolved else [ScanTask("merge", tuple(g))]
        else:
            tasks = [ScanTask("file", (f,)) for f in self.files()]
        tasks += [ScanTask("inlined", index=i) for i in range(len(self.content.inlined))]
        kept = {id(r) for r in self.reader_rows()}
        tasks += [ScanTask("reader", index=i) for i, r in enumerate(self.content.reader_rows) if id(r) in kept]
        return tasks

    def task_batches(self, task: ScanTask) -> Iterator[pa.RecordBatch]:
        """A task's rows in the read schema, before the row filter (``finish`` applies it)."""
        if task.kind == "merge":
            return self._merged_batches(task.files)
        if task.kind == "file":
            return self.evolved_batches(task.files[0])
        if task.kind == "inlined":
            return self._inlined_batches(self.content.inlined[task.index])
        return self._reader_batches(self.content.reader_rows[task.index])

    def _parts(self) -> list[Callable[[], Iterator[pa.RecordBatch]]]:
        return [(lambda t=t: self.task_batches(t)) for t in self.tasks()]

    # -- results --------------------------------------------------------------------------------
    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """Evolved batches file by file, then the inlined rows (memory bounded by one batch per file; a merge
        by key's by one merge group). With a ``limit``, no task is opened after the batch that completes it."""
        batches = self._all_batches()
        return batches if self.limit is None else self._first_rows(batches, self.limit)

    def _all_batches(self) -> Iterator[pa.RecordBatch]:
        for part in self._parts():
            for batch in part():
                out = self.finish(batch)
                if out.num_rows:
                    yield out

    def _first_rows(self, batches: Iterator[pa.RecordBatch], limit: int) -> Iterator[pa.RecordBatch]:
        """The first ``limit`` rows of ``batches`` (every live file is still planned, as ``files`` does)."""
        try:
            if limit == 0:
                self.files()  # a scan that cannot read some file fails whatever its limit
                return
            left = limit
            for batch in batches:
                if batch.num_rows >= left:
                    yield batch.slice(0, left)
                    return
                left -= batch.num_rows
                yield batch
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()  # the file being read now

    def to_reader(self) -> pa.RecordBatchReader:
        return pa.RecordBatchReader.from_batches(self.output_schema, self.to_batches())

    def to_arrow(self) -> pa.Table:
        """The whole result as one Table; tasks are read in parallel, the largest first. With a ``limit`` and
        no row filter nor merge, only the first files holding that many rows are read."""
        if self.limit is not None and (self.filter.expression is not None or self.merge.kind == "key"):
            return pa.Table.from_batches(list(self.to_batches()), schema=self.output_schema)
        tasks = self.tasks()
        if self.limit is not None:
            tasks = _holding(tasks, self.limit)
            if tasks is None:  # deletes make recorded counts an upper bound: stream instead
                return pa.Table.from_batches(list(self.to_batches()), schema=self.output_schema)

        reader = self
        if self.batch_size < WHOLE_BATCH_ROWS:  # the whole result is held anyway: read in row-group sized batches
            reader = object.__new__(type(self))  # the same scan (its source, caches and lock), not a pickled copy
            reader.__dict__.update(self.__dict__, batch_size=WHOLE_BATCH_ROWS)

        def run(task: ScanTask) -> list[pa.RecordBatch]:
            return [b for b in (reader.finish(x) for x in reader.task_batches(task)) if b.num_rows]

        rows = [sum(f.record_count for f in t.files) for t in tasks]
        order = sorted(range(len(tasks)), key=lambda i: -rows[i])
        jobs = _jobs(order, rows, self.small_task_rows)
        workers = max(1, min(os.cpu_count() or 1, len(jobs)))
        if self.caller_reads:
            outs = _run_jobs(jobs, lambda job: [run(tasks[i]) for i in job], workers)
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                outs = list(pool.map(lambda job: [run(tasks[i]) for i in job], jobs))
        done = {i: out for job, job_outs in zip(jobs, outs, strict=True) for i, out in zip(job, job_outs, strict=True)}
        result = pa.Table.from_batches([b for i in range(len(tasks)) for b in done[i]], schema=self.output_schema)
        return result if self.limit is None else result.slice(0, self.limit)

    def count(self) -> int:
        """Row count; without a filter, from the metadata and the delete positions alone (a merge by key: only
        its resolved groups; the others are read and merged). With a filter, files whose partition values
        prove every row passes (the strict projection) are counted from their record counts, the rest read."""
        if self.filter.filtered:
            if self.limit is not None:
                return sum(b.num_rows for b in self.to_batches())  # a limit stops the reading
            return self._filtered_count()
        if self.merge.kind == "key":
            resolved = self.content.resolved_groups
            merged = [t for t in self.tasks() if t.kind != "file" or t.files[0].merge_group not in resolved]
            rows = sum(self._file_count(f) for f in self.content.files if f.merge_group in resolved) + \
                sum(b.num_rows for t in merged for b in self.task_batches(t))
        else:
            rows = sum(r.rows.num_rows for r in self.content.inlined)
            for reader in self.content.reader_rows:
                rows += reader.record_count if reader.record_count is not None else \
                    sum(b.num_rows for b in reader.read())
            rows += sum(self._file_count(f) for f in self.content.files)
        return rows if self.limit is None else min(rows, self.limit)

    def _filtered_count(self) -> int:
        total = 0
        strict = self.prune and self.merge.kind == "none" and self._partitioned()
        for task in self.tasks():
            f = task.files[0] if task.kind == "file" else None
            if strict and f is not None and _undeleted(f) and \
                    self.filter.partition_all_match(f.partition, self.full_schema, self._file_schema(f)):
                total += f.record_count
            else:
                total += sum(self.finish(b).num_rows for b in self.task_batches(task))
        return total

    def _file_count(self, f: DataFileEntry) -> int:
        """A file's live rows: from its record count and deleted positions where no other delete applies."""
        if f.snapshot_column is not None or (self.equality is not None and self.equality_deletes(f)):
            return sum(b.num_rows for b in self.evolved_batches(f))
        deleted = self.deleted(f)
        return f.record_count - (0 if deleted is None else int(np.count_nonzero(deleted < f.record_count)))
