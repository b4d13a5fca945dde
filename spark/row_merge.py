"""``fieldshift.spark.merge``: MERGE INTO a fieldshift table from a DataFrame — executors write, the driver commits.

Spark's Python data sources cannot run SQL ``MERGE INTO``, so a function is the route. It returns the same
builder as ``Table.merge`` (every ``when_*`` clause); ``execute()`` pins the table's head and runs up to
two Spark jobs against that snapshot, then commits once:

1. the matched and not-matched clauses: the DataFrame is repartitioned by the ``on`` columns (every source
   row of an ``on`` value lands in one task, so double matches are found there), and each task merges its
   share against the pinned snapshot and writes its files (``merge_commit.merge_part``);
2. ``when_not_matched_by_source_delete``: one task per target unit (an unkeyed table's data file, a keyed
   table's merge group) lists its rows the clauses' conditions would delete (``by_source_candidates``:
   their ``on`` values, and file and position), Spark anti-joins them with the source's ``on`` columns (a
   null matches nothing, as in SQL), and tasks turn what is left into deletes (``by_source_part``: positions,
   or a keyed table's delete files).

The driver then commits every part once (``commit_parts``): a keyed table's files with the deletion vectors
of the rows they supersede (resolved at the pinned snapshot, as ``Table.merge`` records them; merged on read
instead when the merge evolved the schema), an unkeyed table's removed rows by position. The counts are
exact. A commit landing meanwhile fails the merge with ``CommitConflictError`` (run it again).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from fieldshift.spark._arrow import BatchConformer, spark_arrow_schema
from fieldshift.spark.errors_bridge import fieldshift_errors, one_line_errors
from fieldshift.spark.task_units import task_units, unit_frame
from fieldshift.spark.types import schema_to_spark
from fieldshift.table.files.data_files import remove_files
from fieldshift.table.handle import TableIO
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.table import Table
from fieldshift.table.write.merge_builder import MergeBuilder, MergeResult, MergeSpec
from fieldshift.table.write.merge_commit import (
    BY_SOURCE_FILE,
    MergePart,
    by_source_candidates,
    by_source_part,
    check_on,
    commit_parts,
    merge_part,
    target_units,
    without_by_source,
)
from fieldshift.table.write.row_changes import POSITION_COLUMN

__all__ = ["BySourceCandidates", "BySourceDeletes", "MergeTask", "merge"]


@dataclass(frozen=True)
class _Pinned:
    """How an executor opens the table at the snapshot the merge pinned."""

    location: str
    catalog: str | None
    name: str | None
    snapshot_id: int

    def open(self) -> tuple[TableIO, TableMetadata]:
        table = Table.open(self.location, catalog=self.catalog, name=self.name)
        return table.io, table.io.metadata(self.snapshot_id)


def _part_batch(part: MergePart) -> pa.RecordBatch:
    return pa.record_batch({"part": pa.array([pickle.dumps(part)], pa.binary())})


@dataclass(frozen=True)
class MergeTask:
    """Picklable mapInArrow function: one task's share of the source merged against a pinned snapshot."""

    at: _Pinned
    spec: MergeSpec

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        parts = list(batches)
        if not parts or not sum(b.num_rows for b in parts):
            return
        source = pa.Table.from_batches(parts)
        io, metadata = self.at.open()
        yield _part_batch(merge_part(io, metadata, replace(self.spec, source=source)))


@dataclass(frozen=True)
class BySourceCandidates:
    """mapInArrow function: each input row is a target unit (``task_units``: only this task's travel with it);
    yields that unit's rows the by-source clauses would delete (``by_source_candidates``) in Spark's types
    (``target``)."""

    at: _Pinned
    spec: MergeSpec
    target: pa.Schema

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        io, metadata = self.at.open()
        conform = BatchConformer(self.target)
        for unit in task_units(batches):
            rows = by_source_candidates(io, metadata, self.spec, unit)  # in ``target``'s order
            for b in rows.to_batches():
                if b.num_rows:
                    yield conform(b)


@dataclass(frozen=True)
class BySourceDeletes:
    """mapInArrow function: the candidates no source row matched, as one part (positions or delete files)."""

    at: _Pinned
    spec: MergeSpec

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        parts = [b for b in batches if b.num_rows]
        if not parts:
            return
        io, metadata = self.at.open()
        rows = pa.Table.from_batches(parts)
        names = [*self.spec.on, *rows.column_names[len(self.spec.on):]]  # the on columns' own names again
        yield _part_batch(by_source_part(io, metadata, self.spec, rows.rename_columns(names)))


one_line_errors(MergeTask, BySourceCandidates, BySourceDeletes)


def _arrow_schema(df: Any) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema)


def _column(name: str) -> Any:
    """A top-level column by its exact name (Spark reads ``a.b`` as a path unless quoted)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def _collect(frame: Any, task: Any) -> list[MergePart]:
    return [pickle.loads(r["part"]) for r in frame.mapInArrow(task, "part binary").collect()]


def _by_source(df: Any, at: _Pinned, io: TableIO, metadata: TableMetadata, spec: MergeSpec,
               names: list[str]) -> list[MergePart]:
    """Job 2 (module docstring): the target rows no source row matches that the by-source clauses delete."""
    units = target_units(io, metadata)
    if not units:
        return []
    from pyspark.sql.types import LongType, StructField, StructType

    joined = [f"_fs_on_{i}" for i in range(len(names))]  # plain names for the join (any column name works)
    fields = [StructField(a, f.dataType, f.nullable)
              for f, a in zip(schema_to_spark(metadata.current_schema.select(names)).fields, joined, strict=True)]
    if metadata.keys is None:
        fields += [StructField(POSITION_COLUMN, LongType(), False), StructField(BY_SOURCE_FILE, LongType(), False)]
    struct = StructType(fields)
    task = BySourceCandidates(at, spec, spark_arrow_schema(struct))
    candidates = unit_frame(df.sparkSession, units).mapInArrow(task, struct)
    source = df.select(*(_column(n).alias(a) for n, a in zip(names, joined, strict=True)))
    unmatched = candidates.join(source, on=joined, how="left_anti")
    return _collect(unmatched, BySourceDeletes(at, spec))


def merge(df: Any, location: str, on: str | Sequence[str], *, catalog: str | None = None, name: str | None = None,
          evolve: bool = True, partitions: int | None = None) -> MergeBuilder:
    """MERGE INTO the fieldshift table at ``location`` from ``df`` (see the module docstring); chain clauses as
    on ``Table.merge`` and call ``execute()`` (returns a ``MergeResult``, the same as ``Table.merge``'s on the
    same data). ``partitions``: tasks the source is spread over by its ``on`` columns (default:
    ``spark.sql.shuffle.partitions``)."""
    empty = _arrow_schema(df).empty_table()
    names = [on] if isinstance(on, str) else list(on)

    def run(spec: MergeSpec) -> MergeResult:
        table = Table.open(location, catalog=catalog, name=name)
        metadata = table.io.metadata()
        check_on(spec, metadata)
        at = _Pinned(location, catalog, name, metadata.head.snapshot_id)
        shape = replace(spec, source=empty)  # the tasks' spec: the source only gives the schema
        rest = without_by_source(shape)
        parts: list[MergePart] = []
        try:
            with fieldshift_errors():  # a task's refusal (a double match, a bad value) comes back as itself
                if rest.clauses:
                    by = [_column(n) for n in names]
                    spread = df.repartition(partitions, *by) if partitions else df.repartition(*by)
                    parts += _collect(spread, MergeTask(at, rest))
                if len(rest.clauses) != len(shape.clauses):
                    parts += _by_source(df, at, table.io, metadata, shape, names)
        except BaseException:
            remove_files(table.storage, [f.path for p in parts for f in p.files])
            raise
        return commit_parts(table.io, metadata, shape, parts)

    return MergeBuilder(run, empty, on, evolve=evolve)
