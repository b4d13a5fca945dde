"""``fieldshift.spark.merge``: MERGE INTO a fieldshift table from a DataFrame — executors write, the driver commits.

Spark's Python data sources cannot run SQL ``MERGE INTO``, so a function is the route. It returns the same
builder as ``Table.merge`` (``when_matched_update``, ``when_matched_delete``, ``when_not_matched_insert``);
``execute()`` pins the table's head, repartitions the DataFrame by the ``on`` columns (every source row of
an ``on`` value lands in one task, so double matches are found there), and each task merges its share
against the pinned snapshot and writes its files (``merge_commit.merge_part``). The driver then commits
once (``commit_parts``): a keyed table's files merge on read, an unkeyed table's matched rows are removed
by position. A commit landing meanwhile fails the merge with ``CommitConflictError`` (run it again).
``when_not_matched_by_source_delete`` needs every source row at once: use ``Table.merge`` for it.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from fieldshift.errors import InvalidOptionError
from fieldshift.spark.errors_bridge import fieldshift_errors, one_line_errors
from fieldshift.table.table import Table
from fieldshift.table.write.merge_builder import MergeBuilder, MergeResult, MergeSpec
from fieldshift.table.write.merge_commit import MergePart, commit_parts, merge_part

__all__ = ["MergeTask", "merge"]


@dataclass(frozen=True)
class MergeTask:
    """Picklable mapInArrow function: one task's share of the source merged against a pinned snapshot."""

    location: str
    catalog: str | None
    name: str | None
    snapshot_id: int
    spec: MergeSpec

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        parts = list(batches)
        if not parts or not sum(b.num_rows for b in parts):
            return
        source = pa.Table.from_batches(parts)
        table = Table.open(self.location, catalog=self.catalog, name=self.name)
        done = merge_part(table.io, table.io.metadata(self.snapshot_id), replace(self.spec, source=source))
        yield pa.record_batch({"part": pa.array([pickle.dumps(done)], pa.binary())})


one_line_errors(MergeTask)


def _arrow_schema(df: Any) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema)


def merge(df: Any, location: str, on: str | Sequence[str], *, catalog: str | None = None, name: str | None = None,
          evolve: bool = True, partitions: int | None = None) -> MergeBuilder:
    """MERGE INTO the fieldshift table at ``location`` from ``df`` (see the module docstring); chain clauses as
    on ``Table.merge`` and call ``execute()`` (returns a ``MergeResult``). ``partitions``: tasks the source is
    spread over by its ``on`` columns (default: ``spark.sql.shuffle.partitions``)."""
    empty = _arrow_schema(df).empty_table()
    names = [on] if isinstance(on, str) else list(on)

    def run(spec: MergeSpec) -> MergeResult:
        if spec.of("delete_by_source"):
            raise InvalidOptionError("fieldshift.spark.merge cannot run when_not_matched_by_source_delete (it needs "
                                     "every source row at once); use Table.merge for it")
        table = Table.open(location, catalog=catalog, name=name)
        metadata = table.io.metadata()
        task = MergeTask(location, catalog, name, metadata.head.snapshot_id, replace(spec, source=empty))
        spread = df.repartition(partitions, *names) if partitions else df.repartition(*names)
        with fieldshift_errors():  # a task's refusal (a double match, a bad value) comes back as itself
            rows = spread.mapInArrow(task, "part binary").collect()
        parts: list[MergePart] = [pickle.loads(r["part"]) for r in rows]
        return commit_parts(table.io, metadata, replace(spec, source=empty), parts)

    return MergeBuilder(run, empty, on, evolve=evolve)
