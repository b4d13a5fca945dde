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
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from fieldshift.errors import CommitConflictError, DataFileError, InvalidOptionError
from fieldshift.table.catalog.deletion_vectors import VectorCommit
from fieldshift.table.commits import Attempt, with_retries
from fieldshift.table.files.data_files import remove_files
from fieldshift.table.handle import TableIO
from fieldshift.table.keyed.merge import group_files, read_group
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.partitions.partition_write import write_partitioned
from fieldshift.table.publish.iceberg_vacuum import published_data_paths
from fieldshift.table.records import DataFile
from fieldshift.table.scan.table_scan import Scan
from fieldshift.table.updates import AddFiles, DeletionVectors, FilesPresent, RemoveFiles, TableUpdate

__all__ = ["CompactResult", "ExpireResult", "PendingCompaction", "age_margin", "commit_compaction", "compact",
           "expire_snapshots", "prepare_compaction", "remove_expired_files"]

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


def _unkeyed_groups(files: list[DataFile], schema_id: int, spec_id: int,
                    deleted: Collection[int] = ()) -> list[list[DataFile]]:
    """Files of an older schema or spec, or with rows deleted (``deleted``: ids of files with a deletion
    vector), and small files; nothing when only one small file would be rewritten."""
    old = [f for f in files if f.schema_id != schema_id or f.spec_id != spec_id or f.file_id in deleted]
    chosen = old + [f for f in files if f not in old and f.record_count < SMALL_FILE_ROWS]
    if len(chosen) < 2 and not old:
        return []
    return [chosen]


def _rows(scan: Scan, group: list[DataFile]) -> pa.Table:
    if scan.keys is not None:
        return read_group(scan, group)
    arrow = scan.read_schema.to_arrow()
    vectors = scan.deletion_vectors()  # rows deletes and updates removed stay removed

    def kept(f: DataFile) -> Any:
        v = vectors.get(f.file_id) if f.file_id is not None else None
        return v.keep_mask(f.record_count) if v is not None else None

    return pa.Table.from_batches([b for f in group for b in scan.evolved_batches(f, kept(f))], schema=arrow)


@dataclass
class PendingCompaction:
    """Files written for a compaction, not yet committed (``commit_compaction`` commits or conflicts)."""

    base_snapshot_id: int
    schema_id: int
    add: list[DataFile]
    remove: list[int]
    written: list[str]
    keyed: bool = False


def prepare_compaction(io: TableIO, metadata: TableMetadata,
                       max_file_rows: int | None = None) -> PendingCompaction | None:
    """Write the compacted files of ``metadata``'s head snapshot (None: nothing needs compacting), laid out as
    the table's properties say (``max_file_rows``, when given, caps the rows per file instead)."""
    scan = Scan(io, metadata)
    schema = scan.full_schema
    pspec = metadata.spec  # the output is written in the current schema and partition spec
    if scan.keys is not None:
        groups = _keyed_groups(scan.live_files(), schema.schema_id, pspec.spec_id)
    else:
        deleted = {fid for fid, v in scan.deletion_vectors().items() if v.cardinality}
        groups = _unkeyed_groups(scan.live_files(), schema.schema_id, pspec.spec_id, deleted)
    if not groups:
        return None
    pending = PendingCompaction(metadata.snapshot.snapshot_id, schema.schema_id, [],
                                [f.file_id for g in groups for f in g if f.file_id is not None], [],
                                scan.keys is not None)
    try:
        for group in groups:
            rows = _rows(scan, group).select(schema.names)
            seq = max(f.sequence or 0 for f in group) if scan.keys is not None else None
            files = write_partitioned(io.storage, schema, pspec, rows, pending.written,
                                      max_file_rows or metadata.layout.file_rows, keys=scan.keys,
                                      layout=metadata.layout)
            pending.add += [replace(f, sequence=seq) for f in files]
    except BaseException:
        remove_files(io.storage, pending.written)
        raise
    return pending


def commit_compaction(io: TableIO, pending: PendingCompaction) -> int:
    """Commit a prepared compaction (its files are removed again if the commit fails); the snapshot id."""
    updates: list[TableUpdate] = [AddFiles(tuple(pending.add), pending.schema_id), RemoveFiles(tuple(pending.remove))]
    vectors = _resolving(pending)
    if vectors is not None:
        updates.append(DeletionVectors(vectors))
    try:
        snap = io.catalog.commit(
            io.table_id, pending.base_snapshot_id, [FilesPresent(io.storage, tuple(f.path for f in pending.add))],
            updates, operation="compact",
            summary={"files_removed": len(pending.remove), "files_written": len(pending.add),
                     "rows": sum(f.record_count for f in pending.add)})
    except BaseException:
        remove_files(io.storage, pending.written)
        raise
    return snap.snapshot_id


def _resolving(pending: PendingCompaction) -> VectorCommit | None:
    """A keyed compaction's files hold each key of their groups once: resolved, unless a concurrent
    commit changed one of their buckets (then they stay unresolved and merge on read)."""
    buckets = frozenset(f.bucket for f in pending.add if f.bucket is not None)
    if not pending.keyed:  # an unkeyed table: a concurrent delete or update of a file read here conflicts
        return VectorCommit(frozenset(), files_read=frozenset(pending.remove), refuse_added=False)
    if not buckets:
        return None
    return VectorCommit(buckets, resolved=frozenset(f.path for f in pending.add), on_conflict="skip")


def compact(io: TableIO, max_file_rows: int | None = None) -> CompactResult:
    """See the module docstring; a conflict with a concurrent compaction retries on the new head
    (``commits.with_retries``), and so does a file a concurrent compaction and expiry removed midway."""

    def attempt(now: Attempt) -> CompactResult:
        metadata = io.metadata()
        try:
            pending = prepare_compaction(io, metadata, max_file_rows)
        except DataFileError as e:  # a concurrent compaction + expiry removed a file this one was reading
            if now.last or io.catalog.head(io.table_id).snapshot_id == metadata.head.snapshot_id:
                raise
            raise CommitConflictError(f"a file this compaction was reading went meanwhile ({e}); retry") from None
        if pending is None:
            return CompactResult(0, 0, 0, None)
        snapshot_id = commit_compaction(io, pending)
        return CompactResult(len(pending.remove), len(pending.add), sum(f.record_count for f in pending.add),
                             snapshot_id)

    return with_retries(attempt)


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

def expire_snapshots(io: TableIO, older_than: dt.timedelta | float, retain_last: int) -> ExpireResult:
    """See the module docstring."""
    older_than = age_margin(older_than)
    if isinstance(retain_last, bool) or not isinstance(retain_last, int) or retain_last < 1:
        raise TypeError(f"retain_last must be an int >= 1 (the head is always kept), not {retain_last!r}")
    snapshots = io.catalog.snapshots(io.table_id)
    cutoff = dt.datetime.now(dt.UTC) - older_than
    candidates = snapshots[:-retain_last]
    expired = [s.snapshot_id for s in candidates if dt.datetime.fromisoformat(s.committed_at) <= cutoff]
    if not expired:
        return ExpireResult((), ())
    expired = [s.snapshot_id for s in snapshots if s.snapshot_id <= max(expired)]  # always a prefix
    paths = io.catalog.expire(io.table_id, expired)
    return ExpireResult(tuple(expired), tuple(paths))


def remove_expired_files(io: TableIO, result: ExpireResult) -> list[str]:
    """Delete the files an expiry left unreferenced (and still unreferenced): unlike ``vacuum`` this needs
    no age margin, as they were committed files, never a writer's files in flight."""
    keep = io.catalog.all_paths(io.table_id) | published_data_paths(io.storage)
    removed = []
    for rel in result.unreferenced_files:
        if rel in keep:
            continue
        try:
            io.storage.delete(rel, missing_ok=False)
        except FileNotFoundError:
            continue
        removed.append(rel)
    return removed
