"""Table maintenance: compaction into the current schema, and snapshot expiry.

``compact`` rewrites, per merge group of a keyed table, every group holding more than one file, a
file of an older schema or a delete file into one file in the current schema (the merge applied); of
an unkeyed table, the small files and the files of older schemas. The new file's data sequence number
is the highest of the files it replaces (Iceberg's rule), so an upsert or delete committed meanwhile
stays newer; a concurrent compaction of the same files conflicts and this one retries.

``expire_snapshots`` forgets old snapshots and the catalog rows of files only they referenced;
``Table.vacuum`` then deletes those files. Time travel to an expired snapshot raises
:class:`SnapshotExpiredError`. The head is never expired.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from fieldshift.errors import CommitConflictError
from fieldshift.table.catalog import DataFile
from fieldshift.table.files import write_data_file
from fieldshift.table.merge import group_files, read_group
from fieldshift.table.scan import Scan

if TYPE_CHECKING:
    from fieldshift.table.table import Table

__all__ = ["CompactResult", "ExpireResult", "compact", "expire_snapshots"]

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


def _keyed_groups(files: list[DataFile], schema_id: int) -> list[list[DataFile]]:
    return [g for g in group_files(files)
            if len(g) > 1 or any(f.content == "deletes" or f.schema_id != schema_id for f in g)]


def _unkeyed_groups(files: list[DataFile], schema_id: int) -> list[list[DataFile]]:
    chosen = [f for f in files if f.schema_id != schema_id or f.record_count < SMALL_FILE_ROWS]
    if len(chosen) < 2 and not any(f.schema_id != schema_id for f in chosen):
        return []
    return [chosen]


def _rows(scan: Scan, group: list[DataFile]) -> pa.Table:
    if scan.keys is not None:
        return read_group(scan, group)
    arrow = scan.read_schema.to_arrow()
    return pa.Table.from_batches([b for f in group for b in scan.evolved_batches(f)], schema=arrow)


def compact(table: Table, max_file_rows: int) -> CompactResult:
    """See the module docstring."""
    for attempt in range(RETRIES):
        head = table.catalog.head(table.table_id)
        scan = Scan(table, snapshot_id=head.snapshot_id)
        files = scan.live_files()
        schema = scan.full_schema
        groups = (_keyed_groups if scan.keys is not None else _unkeyed_groups)(files, schema.schema_id)
        if not groups:
            return CompactResult(0, 0, 0, None)
        written: list[str] = []
        add: list[DataFile] = []
        remove = [f.file_id for g in groups for f in g if f.file_id is not None]
        try:
            for group in groups:
                rows = _rows(scan, group).select(schema.names)
                seq = max(f.sequence or 0 for f in group) if scan.keys is not None else None
                bucket = group[0].bucket if scan.keys is not None else None
                for start in range(0, rows.num_rows, max_file_rows):
                    f = write_data_file(table.location, schema, rows.slice(start, max_file_rows))
                    written.append(f.path)
                    add.append(DataFile(f.path, f.schema_id, f.record_count, f.file_size, f.stats,
                                        sequence=seq, bucket=bucket))
            snap = table.catalog.commit(
                table.table_id, head.snapshot_id, operation="compact", write_schema_id=schema.schema_id,
                add_files=add, remove_files=remove,
                summary={"files_removed": len(remove), "files_written": len(add),
                         "rows": sum(f.record_count for f in add)})
        except CommitConflictError:
            table._remove(written)
            if attempt == RETRIES - 1:
                raise
            time.sleep(0.01 * (attempt + 1))
            continue
        except BaseException:
            table._remove(written)
            raise
        return CompactResult(len(remove), len(add), sum(f.record_count for f in add), snap.snapshot_id)
    raise AssertionError("unreachable")


def expire_snapshots(table: Table, older_than: dt.timedelta | float, retain_last: int) -> ExpireResult:
    """See the module docstring."""
    if isinstance(older_than, (int, float)) and not isinstance(older_than, bool):
        older_than = dt.timedelta(seconds=older_than)
    if not isinstance(older_than, dt.timedelta):
        raise TypeError(f"older_than must be a datetime.timedelta or seconds, not {older_than!r}")
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
