"""Row-level changes of unkeyed tables: find the rows a filter matches, remove them, append new versions, commit once.

``Table.delete(filter=...)``, ``Table.update(...)`` and ``Table.merge`` on a table without a primary key are
built from four steps, each a function here (the last one's conflict rule, :func:`row_change_rule`, serves
keyed merges too):

1. :func:`find_rows` — the rows of the current snapshot a filter matches, as per-file row positions. Only the
   files the scan pipeline's pruning keeps (partition values, then statistics) are read; a file whose
   partition values prove every row matches is not read at all (unless the rows themselves are wanted).
   The filter is evaluated on rows evolved into the current schema, after the file's deletion vector.
2. :func:`plan_removal` — how those rows go: recorded as deletion vectors (``catalog/deletion_vectors``), or,
   when a file would keep fewer than :data:`REWRITE_FRACTION` of its rows, the file is rewritten without
   them (its surviving rows, in the current schema and spec) and ended; a file left with no rows is ended.
3. the caller writes any new rows (an update's new versions) with ``write_partitioned``;
4. :func:`commit_row_changes` — one commit of vectors, ended files and added files, under the serializable
   rule of ``deletion_vectors``: a concurrent commit that ended or changed a file read here, or added a data
   file the filter's pruning keeps, is a :class:`CommitConflictError` (the caller's ``with_retries`` runs
   everything again on the new head).

Files written here are the caller's to remove when the commit does not land (``written``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from fieldshift.errors import CommitConflictError
from fieldshift.schema.model import Schema
from fieldshift.table.catalog.deletion_vectors import DeletionVector, VectorCommit
from fieldshift.table.expressions.filters import bind_filter, parse_filter
from fieldshift.table.expressions.visitors import filter_columns
from fieldshift.table.handle import TableIO
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.partitions.partition_write import MAX_FILE_ROWS, write_partitioned
from fieldshift.table.records import DataFile, Snapshot
from fieldshift.table.scan.table_scan import Scan
from fieldshift.table.updates import (
    AddFiles,
    DeletionVectors,
    FilesPresent,
    RemoveFiles,
    SetSchema,
    TableRequirement,
    TableUpdate,
)

__all__ = ["POSITION_COLUMN", "REWRITE_FRACTION", "MatchedRows", "RowRemoval", "check_unit_live", "commit_row_changes",
           "find_rows", "plan_removal", "row_change_rule"]

REWRITE_FRACTION = 0.5
"""A file whose deletes would leave it fewer than this share of its rows is rewritten without them instead of
getting a deletion vector (more than half its rows gone: reading it through a vector wastes more than the
rewrite costs once; exactly half keeps a vector). A file left with no rows is simply ended."""

POSITION_COLUMN = "_fieldshift_position"
"""The column :func:`find_rows` adds to matched rows: the row's position in its file (with ``file_ids``)."""


@dataclass
class MatchedRows:
    """What a filter matched at a snapshot: per data file read, the positions of its live rows that match."""

    scan: Scan
    read: list[DataFile]
    """Every file whose rows were considered (the pruning kept it): what the commit's conflict rule guards."""
    positions: dict[int, np.ndarray] = field(default_factory=dict)
    """file id -> sorted positions (int64) of the matched rows; files without a match are absent."""
    rows: pa.Table | None = None
    """With ``with_rows``: the matched rows in the current schema, file by file in position order, with
    :data:`POSITION_COLUMN`; ``file_ids`` says each row's file."""
    file_ids: np.ndarray | None = None

    @property
    def count(self) -> int:
        return int(sum(len(p) for p in self.positions.values()))

    @property
    def vectors(self) -> dict[int, DeletionVector]:
        return self.scan.deletion_vectors()


def _live_positions(f: DataFile, v: DeletionVector | None) -> tuple[np.ndarray | None, np.ndarray]:
    keep = v.keep_mask(f.record_count) if v is not None else None
    live = np.arange(f.record_count, dtype=np.int64) if keep is None else np.flatnonzero(keep).astype(np.int64)
    return keep, live


def check_unit_live(scan: Scan, unit: Sequence[DataFile], what: str) -> None:
    """Every file of ``unit`` is live at ``scan``'s snapshot (a binary search of its sorted file ids), else a
    ``CommitConflictError`` naming the first gone. Callers list units and read them at one pinned snapshot, so
    this guards that invariant (a unit read at another snapshot than it was listed at) rather than a race."""
    if scan.snapshot_files().positions(list(unit)) is not None:
        return
    live = scan.snapshot_files()
    gone = next(f for f in unit if live.positions([f]) is None)
    raise CommitConflictError(
        f"file {gone.path} of {what} is not live at snapshot {scan.snapshot_id}: its units were listed at another "
        f"snapshot; run it again")


def find_rows(io: TableIO, metadata: TableMetadata, filter: Any, *, with_rows: bool = False,
              columns: Sequence[str] | None = None, only: Collection[int] | None = None) -> MatchedRows:
    """The live rows of ``metadata``'s snapshot that ``filter`` matches (None: every row; see the module docstring).

    ``with_rows``: also return the matched rows (every column of the current schema, or ``columns``), for an
    update or a merge. ``only``: consider just these file ids (a merge reading whole rows of the files it matched).
    Raises what ``Table.scan`` raises for a bad filter (``InvalidFilterError``), before anything is read."""
    schema = metadata.current_schema
    bound = bind_filter(parse_filter(filter), schema)
    wanted = list(columns) if with_rows and columns is not None else None
    if not with_rows:
        read_columns: list[str] | None = filter_columns(bound) or schema.names[:1]
    elif wanted is not None:
        read_columns = [*wanted, *(n for n in filter_columns(bound) if n not in wanted)]
    else:
        read_columns = None
    scan = Scan(io, metadata, read_columns, filter)
    candidates = [f for f in scan.files() if f.content == "data" and (only is None or f.file_id in only)]
    vectors = scan.deletion_vectors()
    pruner = scan.partition_pruner() if scan.filtered else None
    pipeline = scan.pipeline()
    arrow = scan.read_schema.to_arrow()

    def match(f: DataFile) -> tuple[np.ndarray, pa.Table | None]:
        keep, live = _live_positions(f, vectors.get(f.file_id) if f.file_id is not None else None)
        if not with_rows and (pruner is None or pruner.all_match(f)):
            return live, None  # every row matches: the file is not read
        batches = list(scan.evolved_batches(f, keep))
        table = pa.Table.from_batches(batches, schema=arrow) if batches else arrow.empty_table()
        table = table.append_column(POSITION_COLUMN, pa.array(live, pa.int64()))
        hit = pa.Table.from_batches([pipeline.filter.apply(b) for b in table.to_batches()],
                                    schema=table.schema) if scan.filtered else table
        if with_rows and wanted is not None and len(wanted) + 1 != hit.num_columns:
            hit = hit.select([*wanted, POSITION_COLUMN])
        return hit.column(POSITION_COLUMN).to_numpy(), (hit if with_rows else None)

    if candidates:
        workers = max(1, min(os.cpu_count() or 1, len(candidates)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(match, candidates))
    else:
        results = []
    found = MatchedRows(scan, candidates)
    parts, ids = [], []
    for f, (positions, rows) in zip(candidates, results, strict=True):
        if len(positions) and f.file_id is not None:
            found.positions[f.file_id] = np.asarray(positions, dtype=np.int64)
            if rows is not None:
                parts.append(rows)
                ids.append(np.full(rows.num_rows, f.file_id, dtype=np.int64))
    if with_rows:
        empty = arrow.append(pa.field(POSITION_COLUMN, pa.int64())).empty_table()
        if wanted is not None:
            empty = empty.select([*wanted, POSITION_COLUMN])
        found.rows = pa.concat_tables([empty, *parts]) if parts else empty
        found.file_ids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    return found


@dataclass
class RowRemoval:
    """How matched rows leave the table: new deletion vectors (file id -> every removed position), files
    ended (``rewritten``; their surviving rows in ``added``), and how many rows go."""

    vectors: dict[int, np.ndarray] = field(default_factory=dict)
    rewritten: list[DataFile] = field(default_factory=list)
    added: list[DataFile] = field(default_factory=list)
    rows_removed: int = 0


def plan_removal(io: TableIO, metadata: TableMetadata, matched: MatchedRows, written: list[str], *,
                 rewrite_fraction: float | None = None) -> RowRemoval:
    """Vectors for the matched rows, or rewrites of the files they would mostly empty (``rewrite_fraction``,
    by default :data:`REWRITE_FRACTION` as set when called: 0 never rewrites a file that keeps a row, 1 always
    does). Rewritten files land in ``written``."""
    if rewrite_fraction is None:
        rewrite_fraction = REWRITE_FRACTION
    removal = RowRemoval(rows_removed=matched.count)
    vectors = matched.vectors
    by_id = {f.file_id: f for f in matched.read}
    rewrite: list[tuple[DataFile, np.ndarray]] = []
    for fid, positions in matched.positions.items():
        f = by_id[fid]
        v = vectors.get(fid)
        had = v.positions.astype(np.int64) if v is not None and v.cardinality else np.zeros(0, dtype=np.int64)
        gone = np.union1d(had, positions)
        left = f.record_count - len(gone)
        if left <= 0:
            removal.rewritten.append(f)
        elif left < rewrite_fraction * f.record_count:
            rewrite.append((f, gone))
        else:
            removal.vectors[fid] = gone.astype(np.uint32)
    if rewrite:
        scan = Scan(io, metadata)  # every column of the current schema: the surviving rows are written whole
        arrow = scan.read_schema.to_arrow()
        parts = []
        for f, gone in rewrite:
            keep = np.ones(f.record_count, dtype=bool)
            keep[gone] = False
            parts.append(pa.Table.from_batches(list(scan.evolved_batches(f, keep)), schema=arrow))
            removal.rewritten.append(f)
        rows = pa.concat_tables(parts)
        removal.added = write_partitioned(io.storage, metadata.current_schema, metadata.spec, rows, written,
                                          MAX_FILE_ROWS)
    return removal


def _may_match(io: TableIO, scan: Scan) -> Callable[[int, list[int]], bool]:
    """Whether files another commit added may hold rows ``scan``'s filter matches: its partition and
    statistics pruning at the head (read inside the commit, on the catalog's own reader; anything it cannot
    decide, such as a filter no longer binding after a concurrent rename, counts as a match)."""

    def may_match(head_id: int, added: list[int]) -> bool:
        if not scan.filtered:
            return True
        try:
            kept = Scan(io, io.metadata(head_id), scan.columns, scan.filter).files()
        except Exception:
            return True
        return bool({f.file_id for f in kept} & set(added))

    return may_match


def row_change_rule(io: TableIO, scan: Scan, read: Sequence[DataFile], vectors: Mapping[int, np.ndarray] | None = None,
                    *, any_content: bool = False) -> DeletionVectors:
    """The conflict rule of every delete, update and merge (module docstring), with the vectors it records:
    the files ``read`` must be unchanged at commit, and no data file (``any_content``: no file at all, a keyed
    table's delete files too) may have been added that ``scan``'s filter could match (no filter: any)."""
    ids = frozenset(f.file_id for f in read if f.file_id is not None)
    return DeletionVectors(VectorCommit(frozenset(), dict(vectors or {}), files_read=ids,
                                        added_may_match=_may_match(io, scan), added_any_content=any_content))


def commit_row_changes(io: TableIO, metadata: TableMetadata, matched: MatchedRows, removal: RowRemoval,
                       new_files: Sequence[DataFile] = (), *, operation: str,
                       summary: Mapping[str, Any] | None = None, schema: Schema | None = None) -> Snapshot:
    """One commit on ``metadata``'s head: the removal's vectors and ended files, its rewritten files and
    ``new_files`` (written in ``schema``, by default the current one; a new schema is committed with them).
    Conflicts as the module docstring says."""
    head = metadata.current_schema
    schema = schema or head
    added = (*removal.added, *new_files)
    requirements: list[TableRequirement] = [FilesPresent(io.storage, tuple(f.path for f in added))]
    if schema.schema_id == head.schema_id:
        updates: list[TableUpdate] = [AddFiles(added, head.schema_id)]
    else:
        updates = [AddFiles(tuple(new_files), schema.schema_id), SetSchema(schema)]
        if removal.added:
            updates.append(AddFiles(tuple(removal.added), head.schema_id))
    ended = tuple(f.file_id for f in removal.rewritten if f.file_id is not None)
    if ended:
        updates.append(RemoveFiles(ended))
    updates.append(row_change_rule(io, matched.scan, matched.read, removal.vectors))
    return io.catalog.commit(io.table_id, metadata.head.snapshot_id, requirements, updates, operation=operation,
                             summary={"rows_removed": removal.rows_removed, "files_rewritten": len(ended),
                                      **(summary or {})})
