"""Narrow catalog reads a scan needs at scale: one snapshot row, statistics of chosen files only.

Planning a filtered scan of a table with thousands of files reads the file list, prunes partitions,
and only then loads the statistics of the files left (``load_file_stats``); the snapshot it reads is
one row (``snapshot_row``), not the table's whole history.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from fieldshift.table.catalog_sql import load_value

__all__ = ["load_file_stats", "snapshot_row"]


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
