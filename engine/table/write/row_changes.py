"""Row-level changes of unkeyed tables: find the rows a filter matches, remove them, append new versions, commit once.

``Table.delete(filter=...)`` and ``Table.update(...)`` on a table without a primary key (and, later, ``merge``)
are built from four steps, each a function here:

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
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

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
    TableRequirement,
    TableUpdate,
)

__all__ = ["POSITION_COLUMN", "REWRITE_FRACTION", "MatchedRows", "RowRemoval", "commit_row_changes", "find_rows",
           "plan_removal"]

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


def find_rows(io: TableIO, metadata: TableMetadata, filter: Any, *, with_rows: bool = False) -> MatchedRows:
    """The live rows of ``metadata``'s snapshot that ``filter`` matches (see the module docstring).

    ``with_rows``: also return the matched rows (every column of the current schema), for an update or a merge.
    Raises what ``Table.scan`` raises for a bad filter (``InvalidFilterError``), before anything is read."""
    schema = metadata.current_schema
    bound = bind_filter(parse_filter(filter), schema)
    columns = None if with_rows else (filter_columns(bound) or schema.names[:1])
    scan = Scan(io, metadata, columns, filter)
    candidates = [f for f in scan.files() if f.content == "data"]
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


def commit_row_changes(io: TableIO, metadata: TableMetadata, matched: MatchedRows, removal: RowRemoval,
                       new_files: Sequence[DataFile] = (), *, operation: str,
                       summary: Mapping[str, Any] | None = None) -> Snapshot:
    """One commit on ``metadata``'s head: the removal's vectors and ended files, its rewritten files and
    ``new_files`` (written in the current schema). Conflicts as the module docstring says."""
    added = (*removal.added, *new_files)
    requirements: list[TableRequirement] = [FilesPresent(io.storage, tuple(f.path for f in added))]
    updates: list[TableUpdate] = [AddFiles(added, metadata.current_schema.schema_id)]
    ended = tuple(f.file_id for f in removal.rewritten if f.file_id is not None)
    if ended:
        updates.append(RemoveFiles(ended))
    read = frozenset(f.file_id for f in matched.read if f.file_id is not None)
    updates.append(DeletionVectors(VectorCommit(frozenset(), removal.vectors, files_read=read,
                                                added_may_match=_may_match(io, matched.scan))))
    return io.catalog.commit(io.table_id, metadata.head.snapshot_id, requirements, updates, operation=operation,
                             summary={"rows_removed": removal.rows_removed, "files_rewritten": len(ended),
                                      **(summary or {})})
