"""``fieldshift.spark.update`` and ``fieldshift.spark.delete``: row-level changes of a table from Spark.

Spark's Python data sources cannot run SQL ``UPDATE`` or ``DELETE``, so these are functions. Both run the
engine's own steps (``table/write/row_changes``) around Spark:

- ``delete``: the driver finds the matching rows' positions with a scan of the files the filter's pruning
  keeps (only the filter's columns are read) and commits their deletion vectors (or rewrites, by the
  engine's rule) once; no executor is needed, as nothing new is written but rewrites.
- ``update`` of an unkeyed table: the driver finds the positions the same way; executors (one Spark task per
  matched file) read those rows whole, give them their new values and write the new files; the driver
  commits the vectors and the files once.
- ``update`` of a keyed table: one Spark task per merge group the filter's key pruning keeps reads that
  group's merged rows, keeps those ``where`` matches, gives them their new values (refusing a lowered
  precombine value) and writes them as upsert files; the driver looks the written keys up once
  (``resolve_written``: the deletion vectors of the versions they replace, as ``Table.update`` records
  them) and commits once. Like ``Table.update`` it conflicts with any concurrent commit.

A conflict with a concurrent commit runs the whole change again on the new head (``commits.with_retries``).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from fieldshift.spark.errors_bridge import fieldshift_errors, one_line_errors
from fieldshift.spark.task_units import task_units, unit_frame
from fieldshift.table.catalog.deletion_vectors import decode_positions, encode_positions
from fieldshift.table.commits import Attempt, with_retries
from fieldshift.table.files.data_files import remove_files, removed_unless_committed
from fieldshift.table.partitions.partition_write import MAX_FILE_ROWS, write_partitioned
from fieldshift.table.scan.table_scan import Scan
from fieldshift.table.table import Table
from fieldshift.table.write.row_changes import commit_row_changes, find_rows, plan_removal
from fieldshift.table.write.row_ops import (
    UpdateResult,
    apply_set,
    check_keyed_set,
    check_set,
    keyed_update_units,
    update_unit,
)
from fieldshift.table.write.write_commit import DeleteResult, FilesCommit, commit_files, resolve_written

__all__ = ["delete", "update"]


def delete(spark: Any, location: str, *, where: Any, catalog: str | None = None,
           name: str | None = None) -> DeleteResult:
    """Delete the rows of the table at ``location`` that ``where`` (a filter as ``Table.scan``'s) matches, in
    one commit; as ``Table.delete(filter=...)`` (the driver computes the positions). ``spark`` is the session
    (taken for symmetry with ``update``; a delete needs no executor)."""
    del spark
    with fieldshift_errors():
        return Table.open(location, catalog=catalog, name=name).delete(filter=where)


def update(spark: Any, location: str, *, set: Mapping[str, Any], where: Any = None, catalog: str | None = None,
           name: str | None = None) -> UpdateResult:
    """Give the rows ``where`` matches the values of ``set`` (as ``Table.update``), the new files written by
    Spark's executors and committed once by the driver."""
    with fieldshift_errors():
        table = Table.open(location, catalog=catalog, name=name)
        if table.keys is not None:
            return with_retries(lambda now: _keyed_attempt(spark, table, dict(set), where, now, catalog, name))
        return with_retries(lambda now: _attempt(spark, table, dict(set), where, now, catalog, name))


def _keyed_attempt(spark: Any, table: Table, set: dict[str, Any], where: Any, now: Attempt, catalog: str | None,
                   name: str | None) -> UpdateResult:
    metadata = table.io.metadata()
    schema = metadata.current_schema
    check_keyed_set(set, metadata)  # literals that do not fit are refused here; col(...) values by the tasks
    units = keyed_update_units(table.io, metadata, where)  # a bad filter is refused here
    head = metadata.head.snapshot_id
    if not units:
        return UpdateResult(0, head)
    writer = _KeyedUpdateTasks(str(table.location), *_opened_by(table, catalog, name), head, set, where)
    frame = unit_frame(spark, units)  # each task gets its own unit only
    done = [pickle.loads(row.files) for row in frame.mapInArrow(writer, "files binary").collect()]
    files = [f for part, _ in done for f in part]
    count = sum(n for _, n in done)
    written = [f.path for f in files]
    with removed_unless_committed(table.storage, written):
        if not count:
            return UpdateResult(0, head)
        # the rows the new versions supersede, as Table.update records them (a last retry: merged on read)
        vectors = None if now.last else resolve_written(table.io, metadata, schema, files, "upsert")
        snap = commit_files(table.io, metadata, FilesCommit(schema, False, files, operation="upsert",
                                                            summary={"updated": count}, vectors=vectors,
                                                            exclusive=True))
    return UpdateResult(count, snap.snapshot_id)


def _attempt(spark: Any, table: Table, set: dict[str, Any], where: Any, now: Attempt, catalog: str | None,
             name: str | None) -> UpdateResult:
    del now
    metadata = table.io.metadata()
    schema = metadata.current_schema
    check_set(set, schema)  # names and literals here, col(...) values where rows get them, as Table.update
    matched = find_rows(table.io, metadata, where)
    if not matched.count:
        return UpdateResult(0, metadata.head.snapshot_id)
    by_id = {f.file_id: f for f in matched.read}
    tasks = [(by_id[fid], encode_positions(positions)) for fid, positions in sorted(matched.positions.items())]
    writer = _UpdateTasks(str(table.location), *_opened_by(table, catalog, name), metadata.snapshot.snapshot_id, set)
    frame = unit_frame(spark, tasks)  # each task gets its own file and positions only
    files = [f for row in frame.mapInArrow(writer, "files binary").collect() for f in pickle.loads(row.files)]
    written = [f.path for f in files]
    with removed_unless_committed(table.storage, written):
        removal = plan_removal(table.io, metadata, matched, written)
        snap = commit_row_changes(table.io, metadata, matched, removal, files, operation="update",
                                  summary={"rows": matched.count})
    return UpdateResult(matched.count, snap.snapshot_id)


def _opened_by(table: Table, catalog: str | None, name: str | None) -> tuple[str | None, str | None]:
    """How an executor opens the table: by its location, or by a shared SQLite catalog's path and name."""
    directory = table.catalog.directory
    if catalog is None and directory is not None and directory != table.location:
        return str(table.catalog.path), table.name
    return catalog, name


@dataclass
class _UpdateTasks:
    """mapInArrow function: each input row is a matched file and its positions (``task_units``); writes that
    file's updated rows."""

    location: str
    catalog: str | None
    name: str | None
    snapshot_id: int
    set: dict[str, Any]

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = Table.open(self.location, catalog=self.catalog, name=self.name)
        metadata = table.io.metadata(self.snapshot_id)
        schema = metadata.current_schema
        scan = Scan(table.io, metadata)
        arrow = scan.read_schema.to_arrow()
        for f, text in task_units(batches):
            keep = np.zeros(f.record_count, dtype=bool)
            keep[decode_positions(text).astype(np.int64)] = True
            rows = pa.Table.from_batches(list(scan.evolved_batches(f, keep)), schema=arrow)
            written: list[str] = []
            files = write_partitioned(table.storage, schema, metadata.spec, apply_set(rows, schema, self.set),
                                      written, MAX_FILE_ROWS)
            yield pa.record_batch({"files": pa.array([pickle.dumps(files)], pa.binary())})


@dataclass
class _KeyedUpdateTasks:
    """mapInArrow function: each input row is a merge group's files (``task_units``); writes the new versions of
    its merged rows ``where`` matches (``row_ops.update_unit``) as upsert files."""

    location: str
    catalog: str | None
    name: str | None
    snapshot_id: int
    set: dict[str, Any]
    where: Any

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = Table.open(self.location, catalog=self.catalog, name=self.name)
        metadata = table.io.metadata(self.snapshot_id)
        for unit in task_units(batches):
            written: list[str] = []
            try:
                done = update_unit(table.io, metadata, self.set, self.where, unit, written)
            except BaseException:
                remove_files(table.storage, written)
                raise
            yield pa.record_batch({"files": pa.array([pickle.dumps(done)], pa.binary())})


one_line_errors(_UpdateTasks, _KeyedUpdateTasks)
