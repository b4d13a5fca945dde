"""Whether any commit after a base snapshot changed a table's rows: a merge's conflict rule asks it.

A file added or ended after the base, or a deletion vector recorded after it, may have added a row a
merge could match or changed one it read; commits that change no rows (schema, policy, spec,
properties) touch neither table.
"""

from __future__ import annotations

from typing import Any

__all__ = ["rows_changed_since"]


def rows_changed_since(conn: Any, table_id: int, base_snapshot_id: int) -> bool:
    """Whether a commit after ``base_snapshot_id`` added or ended a file or recorded a deletion vector."""
    base = base_snapshot_id
    return bool(conn.execute(
        "SELECT 1 FROM fs_data_file WHERE table_id = ? AND (begin_snapshot > ? OR end_snapshot > ?) LIMIT 1",
        (table_id, base, base)).fetchone() or conn.execute(
        "SELECT 1 FROM fs_deletion_vector WHERE table_id = ? AND begin_snapshot > ? LIMIT 1",
        (table_id, base)).fetchone())
