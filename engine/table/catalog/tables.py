"""The catalog rows of tables (``fs_table``): name, location, properties; and the one-statement metadata read.

Every function takes a catalog connection (``dialect.Connection``) and plain values; the catalog decides
which connection or transaction they run in.
"""

from __future__ import annotations

import json
from typing import Any

from fieldshift.table.catalog.dialect import Connection

__all__ = ["holds_no_table", "insert_table", "locations", "metadata_row", "set_properties", "table_by_id",
           "table_by_name", "table_name", "table_names", "table_properties"]


def insert_table(conn: Connection, name: str, location: str, properties: dict[str, str], created_at: str) -> int:
    """Add a table's row; its new id."""
    return conn.insert_id("INSERT INTO fs_table (name, location, properties, created_at) VALUES (?, ?, ?, ?)",
                          (name, location, json.dumps(properties), created_at), "table_id")


def table_by_name(conn: Connection, name: str) -> tuple[int, str, str] | None:
    """(table id, location, properties JSON) of the table ``name``; None when there is none."""
    row = conn.execute("SELECT table_id, location, properties FROM fs_table WHERE name = ?", (name,)).fetchone()
    return None if row is None else (int(row[0]), row[1], row[2])


def table_by_id(conn: Connection, table_id: int) -> tuple[str, str] | None:
    """(name, properties JSON) of table ``table_id``; None when there is none."""
    row = conn.execute("SELECT name, properties FROM fs_table WHERE table_id = ?", (table_id,)).fetchone()
    return None if row is None else (row[0], row[1])


def table_name(conn: Connection, table_id: int) -> str | None:
    row = conn.execute("SELECT name FROM fs_table WHERE table_id = ?", (table_id,)).fetchone()
    return None if row is None else row[0]


def table_properties(conn: Connection, table_id: int) -> dict[str, Any]:
    """The table's properties (an empty text reads as none)."""
    return dict(json.loads(conn.execute("SELECT properties FROM fs_table WHERE table_id = ?",
                                        (table_id,)).fetchone()[0] or "{}"))


def locations(conn: Connection) -> list[tuple[str, str]]:
    """(name, location) of every table (a new table's location may nest with none of them)."""
    return [(r[0], r[1]) for r in conn.execute("SELECT name, location FROM fs_table")]


def table_names(conn: Connection) -> list[tuple[int, str, str]]:
    """(table id, name, location) of every table, by id."""
    return [(int(r[0]), r[1], r[2]) for r in
            conn.execute("SELECT table_id, name, location FROM fs_table ORDER BY table_id")]


def set_properties(conn: Connection, table_id: int, properties: dict[str, Any]) -> None:
    conn.execute("UPDATE fs_table SET properties = ? WHERE table_id = ?", (json.dumps(properties), table_id))


def holds_no_table(conn: Connection) -> bool:
    """Whether the database holds no table row (or no catalog tables at all)."""
    return "fs_table" not in conn.table_names() or \
        conn.execute("SELECT COUNT(*) FROM fs_table").fetchone()[0] == 0


def metadata_row(conn: Connection, table_id: int) -> tuple[Any, ...] | None:
    """One statement for ``load_metadata``: (name, location, properties JSON, head snapshot id, its parent,
    schema id, committed at, operation, summary JSON, the table's created at, its highest schema id, the
    newest begin snapshot of its specs); the last three are the layout fingerprint. None: no such table."""
    return conn.execute(
        "SELECT t.name, t.location, t.properties, s.snapshot_id, s.parent_snapshot_id, s.schema_id, "
        "s.committed_at, s.operation, s.summary, t.created_at, "
        "(SELECT MAX(c.schema_id) FROM fs_schema c WHERE c.table_id = t.table_id), "
        "(SELECT MAX(p.begin_snapshot) FROM fs_partition_spec p WHERE p.table_id = t.table_id) "
        "FROM fs_table t JOIN fs_snapshot s ON s.table_id = t.table_id "
        "WHERE t.table_id = ? ORDER BY s.snapshot_id DESC LIMIT 1", (table_id,)).fetchone()
