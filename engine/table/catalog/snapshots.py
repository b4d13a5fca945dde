"""The catalog rows of snapshots (``fs_snapshot``): one per commit, and their expiry with the rows of the
files, statistics and deletion vectors no kept snapshot references."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from fieldshift.errors import TableError
from fieldshift.table.catalog.deletion_vectors import expire_vectors
from fieldshift.table.catalog.dialect import Connection
from fieldshift.table.catalog.files import remove_unreferenced
from fieldshift.table.records import Snapshot

__all__ = ["commit_head", "expire_rows", "insert_snapshot", "now", "publish_rows", "snapshot_row", "snapshot_rows"]

_COLUMNS = "snapshot_id, parent_snapshot_id, schema_id, committed_at, operation, summary"


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


def insert_snapshot(conn: Connection, table_id: int, snapshot_id: int, parent: int | None,
                    schema_id: int, operation: str, summary: dict[str, Any]) -> Snapshot:
    """Add the snapshot row; the snapshot as a load reads it back (its time and summary as stored)."""
    committed_at, text = now(), json.dumps(summary)
    conn.execute("INSERT INTO fs_snapshot VALUES (?, ?, ?, ?, ?, ?, ?)",
                 (table_id, snapshot_id, parent, schema_id, committed_at, operation, text))
    return Snapshot(snapshot_id, parent, schema_id, committed_at, operation, json.loads(text))


def snapshot_row(conn: Connection, table_id: int, snapshot_id: int | None) -> tuple[Any, ...] | None:
    """(id, parent, schema id, committed at, operation, summary JSON) of one snapshot (None: the head)."""
    where = "ORDER BY snapshot_id DESC LIMIT 1" if snapshot_id is None else "AND snapshot_id = ?"
    return conn.execute(f"SELECT {_COLUMNS} FROM fs_snapshot WHERE table_id = ? {where}",
                        (table_id,) if snapshot_id is None else (table_id, snapshot_id)).fetchone()


def snapshot_rows(conn: Connection, table_id: int) -> list[Any]:
    """The rows of every kept snapshot (as ``snapshot_row``), oldest first."""
    return conn.execute(f"SELECT {_COLUMNS} FROM fs_snapshot WHERE table_id = ? ORDER BY snapshot_id",
                        (table_id,)).fetchall()


def publish_rows(conn: Connection, table_id: int) -> list[Any]:
    """The kept snapshots without their summaries (a long history's summaries would be parsed for nothing)."""
    return conn.execute("SELECT snapshot_id, parent_snapshot_id, schema_id, committed_at, operation FROM fs_snapshot "
                        "WHERE table_id = ? ORDER BY snapshot_id", (table_id,)).fetchall()


def commit_head(conn: Connection, table_id: int) -> tuple[int, int, str]:
    """(snapshot id, schema id, committed at) of the head, as a commit transaction reads it."""
    head_id, schema_id, committed_at = conn.execute(
        "SELECT snapshot_id, schema_id, committed_at FROM fs_snapshot WHERE table_id = ? "
        "ORDER BY snapshot_id DESC LIMIT 1", (table_id,)).fetchone()
    return int(head_id), int(schema_id), committed_at


def expire_rows(conn: Connection, table_id: int, snapshot_ids: Sequence[int]) -> list[str]:
    """Delete snapshot rows (never the head's), then the rows of files no kept snapshot references; their paths."""
    head = conn.execute("SELECT MAX(snapshot_id) FROM fs_snapshot WHERE table_id = ?", (table_id,)).fetchone()[0]
    if head in snapshot_ids:
        raise TableError(f"snapshot {head} is the table's head and cannot be expired")
    conn.executemany("DELETE FROM fs_snapshot WHERE table_id = ? AND snapshot_id = ?",
                     [(table_id, s) for s in snapshot_ids])
    gone = remove_unreferenced(conn, table_id)
    expire_vectors(conn, table_id, [fid for fid, _ in gone])
    return [path for _, path in gone]
