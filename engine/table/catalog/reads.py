"""Narrow catalog reads a scan needs at scale: one snapshot row, a snapshot's files (with a keyed table's
deletion vectors, in the same statement), statistics of chosen files only.

Planning a filtered scan of a table with thousands of files reads the file list, prunes partitions,
and only then loads the statistics of the files left (``load_file_stats``); the snapshot it reads is
one row (``snapshot_row``), not the table's whole history.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from fieldshift.gc_pause import paused_gc
from fieldshift.table.catalog.specs import decode_partitions
from fieldshift.table.catalog.sql import load_value
from fieldshift.table.records import DataFile

__all__ = ["live_files", "load_file_stats", "snapshot_row"]


_CHUNK = 500  # ids per IN (...) list, well under SQLite's parameter limit


def snapshot_row(conn: sqlite3.Connection, table_id: int, snapshot_id: int | None) -> tuple[Any, ...] | None:
    """(id, parent, schema id, committed at, operation, summary JSON) of one snapshot (None: the head)."""
    where = "ORDER BY snapshot_id DESC LIMIT 1" if snapshot_id is None else "AND snapshot_id = ?"
    return conn.execute("SELECT snapshot_id, parent_snapshot_id, schema_id, committed_at, operation, summary "
                        f"FROM fs_snapshot WHERE table_id = ? {where}",
                        (table_id,) if snapshot_id is None else (table_id, snapshot_id)).fetchone()


Stats = dict[int, tuple[int, int, Any, Any]]


def load_file_stats(conn: sqlite3.Connection, file_ids: Sequence[int]) -> dict[int, Stats]:
    """file id -> field id -> (value count, null count, min, max) for the given files."""
    stats: dict[int, Stats] = {}
    ids = list(file_ids)
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start:start + _CHUNK]
        for fid, cid, vc, nc, lo, hi in conn.execute(
                "SELECT file_id, column_id, value_count, null_count, min_value, max_value FROM "
                f"fs_file_column_stats WHERE file_id IN ({', '.join('?' * len(chunk))})", chunk):
            stats.setdefault(fid, {})[cid] = (vc, nc, load_value(lo), load_value(hi))
    return stats


def live_files(conn: sqlite3.Connection, table_id: int, snapshot_id: int, with_vectors: bool
               ) -> tuple[list[DataFile], dict[int, tuple[int, str]]]:
    """The files live at ``snapshot_id`` (by file id, no statistics) and, ``with_vectors``, file id ->
    (cardinality, encoded positions) of the deletion vector each has at the snapshot: one statement."""
    columns = ("f.file_id, f.path, f.schema_id, f.record_count, f.file_size, f.content, "
               "COALESCE(f.sequence, f.begin_snapshot), f.bucket, f.spec_id, f.partition_values")
    live = ("f.table_id = ? AND f.begin_snapshot <= ? AND (f.end_snapshot IS NULL OR f.end_snapshot > ?) "
            "ORDER BY f.file_id")
    if with_vectors:
        rows = conn.execute(
            f"SELECT {columns}, v.cardinality, v.positions FROM fs_data_file f LEFT JOIN fs_deletion_vector v "
            "ON v.table_id = f.table_id AND v.file_id = f.file_id AND v.begin_snapshot >= f.begin_snapshot "
            f"AND v.begin_snapshot <= ? AND (v.end_snapshot IS NULL OR v.end_snapshot > ?) WHERE {live}",
            (snapshot_id, snapshot_id, table_id, snapshot_id, snapshot_id)).fetchall()
    else:
        rows = conn.execute(f"SELECT {columns} FROM fs_data_file f WHERE {live}",
                            (table_id, snapshot_id, snapshot_id)).fetchall()
    with paused_gc():  # 100,000 files are 100,000 objects, none in a cycle (gc_pause)
        partitions = decode_partitions([r[9] for r in rows])
        files = [DataFile(r[1], r[2], r[3], r[4], {}, r[0], r[5], r[6], r[7], r[8], p)
                 for r, p in zip(rows, partitions, strict=True)]
    vectors = {int(r[0]): (int(r[10]), r[11]) for r in rows if r[10] is not None} if with_vectors else {}
    return files, vectors
