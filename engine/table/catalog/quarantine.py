"""The catalog rows of quarantine files (``fs_quarantine_file``): rows a commit set aside instead of failing."""

from __future__ import annotations

from collections.abc import Sequence

from fieldshift.table.catalog.dialect import Connection

__all__ = ["insert_quarantine", "quarantine_files", "quarantine_paths"]


def insert_quarantine(conn: Connection, table_id: int, snapshot_id: int, files: Sequence[tuple[str, int]]) -> None:
    """Record quarantine files (path, rows) set aside by ``snapshot_id``."""
    conn.executemany("INSERT INTO fs_quarantine_file (table_id, path, snapshot_id, record_count) VALUES (?, ?, ?, ?)",
                     [(table_id, path, snapshot_id, n) for path, n in files])


def quarantine_files(conn: Connection, table_id: int) -> list[tuple[str, int]]:
    """(path, snapshot id that set the rows aside) of every quarantine file, oldest first."""
    return [(r[0], int(r[1])) for r in conn.execute(
        "SELECT path, snapshot_id FROM fs_quarantine_file WHERE table_id = ? ORDER BY file_id", (table_id,))]


def quarantine_paths(conn: Connection, table_id: int) -> set[str]:
    return {r[0] for r in conn.execute("SELECT path FROM fs_quarantine_file WHERE table_id = ?", (table_id,))}
