"""Table maintenance: compaction into the current schema, and snapshot expiry.

``compact`` rewrites, per merge group of a keyed table, every group holding more than one file, a
file of an older schema or a delete file into one file in the current schema (the merge applied); of
an unkeyed table, the small files and the files of older schemas. The new file's data sequence number
is the highest of the files it replaces (Iceberg's rule), so an upsert or delete committed meanwhile
stays newer; a concurrent compaction of the same files conflicts and this one retries. A keyed
compaction's files are resolved (``deletion_vectors``): they need no merge until the next upsert.

``expire_snapshots`` forgets old snapshots and the catalog rows of files only they referenced;
``Table.vacuum`` then deletes those files. Time travel to an expired snapshot raises
:class:`SnapshotExpiredError`. The head is never expired.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import pyarrow as pa

from fieldshift.errors import CommitConflictError, DataFileError, InvalidOptionError
from fieldshift.table.catalog import DataFile
from fieldshift.table.deletion_vectors import VectorCommit
from fieldshift.table.files import check_present, remove_files
from fieldshift.table.merge import group_files, read_group
from fieldshift.table.partition_write import write_partitioned
from fieldshift.table.publish.iceberg_vacuum import published_data_paths
from fieldshift.table.scan import Scan

if TYPE_CHECKING:
    from fieldshift.table.table import Table

__all__ = ["CompactResult", "ExpireResult", "PendingCompaction", "age_margin", "commit_compaction", "compact",
           "expire_snapshots", "prepare_compaction", "remove_expired_files"]

RETRIES = 8
SMALL_FILE_ROWS = 1 << 19
"""An unkeyed table's files under this many rows are small: compaction merges them."""


@dataclass(frozen=True)
class CompactResult:
    """What one compaction did (``snapshot_id`` None: nothing needed rewriting, nothing was committed)."""

    files_removed: int
    files_written: int
    rows_written: int
    snapshot_id: int | None


@dataclass(frozen=True)
class ExpireResult:
    """Snapshots forgotten and the files only they referenced (``Table.vacuum`` deletes these)."""

    expired_snapshots: tuple[int, ...]
    unreferenced_files: tuple[str, ...]


def _keyed_groups(files: list[DataFile], schema_id: int, spec_id: int) -> list[list[DataFile]]:
    return [g for g in group_files(files)
            if len(g) > 1 or any(f.content == "deletes" or f.schema_id != schema_id or f.spec_id != spec_id
                                 for f in g)]


def _unkeyed_groups(files: list[DataFile], schema_id: int, spec_id: int) -> list[list[DataFile]]:
    old = [f for f in files if f.schema_id != schema_id or f.spec_id != spec_id]
    chosen = old + [f for f in files if f not in old and f.record_count < SMALL_FILE_ROWS]
    if len(chosen) < 2 and not old:
        return []
    return [chosen]


def _rows(scan: Scan, group: list[DataFile]) -> pa.Table:
    if scan.keys is not None:
        return read_group(scan, group)
    arrow = scan.read_schema.to_arrow()
    return pa.Table.from_batches([b for f in group for b in scan.evolved_batches(f)], schema=arrow)


@dataclass
class PendingCompaction:
    """Files written for a compaction, not yet committed (``commit_compaction`` commits or conflicts)."""

    base_snapshot_id: int
    schema_id: int
    add: list[DataFile]
    remove: list[int]
    written: list[str]


def prepare_compaction(table: Table, max_file_rows: int) -> PendingCompaction | None:
    """Write the compacted files of the head snapshot (None: nothing needs compacting)."""
    head = table.catalog.head(table.table_id)
    scan = Scan(table.io, table.io.metadata(head.snapshot_id))
    schema = scan.full_schema
    pspec = table.spec  # the output is written in the current schema and partition spec
    groups = (_keyed_groups if scan.keys is not None else _unkeyed_groups)(scan.live_files(), schema.schema_id,
                                                                           pspec.spec_id)
    if not groups:
        return None
    pending = PendingCompaction(head.snapshot_id, schema.schema_id, [],
                                [f.file_id for g in groups for f in g if f.file_id is not None], [])
    try:
        for group in groups:
            rows = _rows(scan, group).select(schema.names)
            seq = max(f.sequence or 0 for f in group) if scan.keys is not None else None
            files = write_partitioned(table.storage, schema, pspec, rows, pending.written, max_file_rows,
                                      keys=scan.keys)
            pending.add += [replace(f, sequence=seq) for f in files]
    except BaseException:
        remove_files(table.storage, pending.written)
        raise
    return pending


def commit_compaction(table: Table, pending: PendingCompaction) -> int:
    """Commit a prepared compaction (its files are removed again if the commit fails); the snapshot id."""
    try:
        snap = table.catalog.commit(
            table.table_id, pending.base_snapshot_id, operation="compact", write_schema_id=pending.schema_id,
            add_files=pending.add, remove_files=pending.remove, vectors=_resolving(pending),
            summary={"files_removed": len(pending.remove), "files_written": len(pending.add),
                     "rows": sum(f.record_count for f in pending.add)},
            present=lambda: check_present(table.storage, [f.path for f in pending.add]))
    except BaseException:
        remove_files(table.storage, pending.written)
        raise
    return snap.snapshot_id


def _resolving(pending: PendingCompaction) -> VectorCommit | None:
    """A keyed compaction's files hold each key of their groups once: resolved, unless a concurrent
    commit changed one of their buckets (then they stay unresolved and merge on read)."""
    buckets = frozenset(f.bucket for f in pending.add if f.bucket is not None)
    if not buckets:
        return None
    return VectorCommit(buckets, resolved=frozenset(f.path for f in pending.add), on_conflict="skip")


def compact(table: Table, max_file_rows: int) -> CompactResult:
    """See the module docstring; a conflict with a concurrent compaction retries on the new head."""
    for attempt in range(RETRIES):
        base = table.catalog.head(table.table_id).snapshot_id
        try:
            pending = prepare_compaction(table, max_file_rows)
        except DataFileError:  # a concurrent compaction + expiry removed a file this one was reading: retry
            if attempt == RETRIES - 1 or table.catalog.head(table.table_id).snapshot_id == base:
                raise
            continue
        if pending is None:
            return CompactResult(0, 0, 0, None)
        try:
            snapshot_id = commit_compaction(table, pending)
        except CommitConflictError:
            if attempt == RETRIES - 1:
                raise
            time.sleep(0.01 * (attempt + 1))
            continue
        return CompactResult(len(pending.remove), len(pending.add), sum(f.record_count for f in pending.add),
                             snapshot_id)
    raise AssertionError("unreachable")



def age_margin(older_than: dt.timedelta | float) -> dt.timedelta:
    """``older_than`` of expiry and vacuum (a timedelta, or seconds) as a timedelta: finite, not negative."""
    if isinstance(older_than, (int, float)) and not isinstance(older_than, bool):
        if not math.isfinite(older_than) or not 0 <= older_than <= _MAX_AGE.total_seconds():
            raise InvalidOptionError(f"older_than must be a number of seconds from 0 to {_MAX_AGE.total_seconds():.0f} "
                                     f"(or a timedelta), not {older_than!r}; nothing was changed")
        return dt.timedelta(seconds=older_than)  # plain numbers are seconds
    if not isinstance(older_than, dt.timedelta):
        raise TypeError(f"older_than must be a datetime.timedelta or seconds, not {older_than!r}")
    if older_than < dt.timedelta(0):
        raise InvalidOptionError(f"older_than must not be negative, not {older_than!r}; nothing was changed")
    return min(older_than, _MAX_AGE)


_MAX_AGE = dt.timedelta(days=365_000)
"""Longer than any table has lived; also keeps ``now - older_than`` within datetime's range."""

def expire_snapshots(table: Table, older_than: dt.timedelta | float, retain_last: int) -> ExpireResult:
    """See the module docstring."""
    older_than = age_margin(older_than)
    if isinstance(retain_last, bool) or not isinstance(retain_last, int) or retain_last < 1:
        raise TypeError(f"retain_last must be an int >= 1 (the head is always kept), not {retain_last!r}")
    snapshots = table.history()
    cutoff = dt.datetime.now(dt.UTC) - older_than
    candidates = snapshots[:-retain_last]
    expired = [s.snapshot_id for s in candidates if dt.datetime.fromisoformat(s.committed_at) <= cutoff]
    if not expired:
        return ExpireResult((), ())
    expired = [s.snapshot_id for s in snapshots if s.snapshot_id <= max(expired)]  # always a prefix
    paths = table.catalog.expire(table.table_id, expired)
    return ExpireResult(tuple(expired), tuple(paths))


def remove_expired_files(table: Table, result: ExpireResult) -> list[str]:
    """Delete the files an expiry left unreferenced (and still unreferenced): unlike ``vacuum`` this needs
    no age margin, as they were committed files, never a writer's files in flight."""
    keep = table.catalog.all_paths(table.table_id) | published_data_paths(table.storage)
    removed = []
    for rel in result.unreferenced_files:
        if rel in keep:
            continue
        try:
            table.storage.delete(rel, missing_ok=False)
        except FileNotFoundError:
            continue
        removed.append(rel)
    return removed
