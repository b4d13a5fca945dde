"""The catalog rows of schemas: every schema version as JSON (``fs_schema``) and the columns' history with
begin/end snapshots (``fs_column``, DuckLake's layout)."""

from __future__ import annotations

from typing import Any

from fieldshift.errors import CommitConflictError
from fieldshift.schema.model import Schema
from fieldshift.table.catalog.dialect import Connection
from fieldshift.table.catalog.metadata_cache import remember_schema
from fieldshift.table.catalog.sql import column_rows

__all__ = ["insert_schema", "layout_rows", "schema_rows"]


def insert_schema(conn: Connection, table_id: int, schema: Schema, snapshot_id: int) -> None:
    """Record ``schema`` as of ``snapshot_id`` and end or begin the column rows it changed; an id a
    concurrent writer took is a conflict."""
    if conn.execute("SELECT 1 FROM fs_schema WHERE table_id = ? AND schema_id = ?",
                    (table_id, schema.schema_id)).fetchone():
        raise CommitConflictError(f"schema id {schema.schema_id} already exists; reload and retry")
    text = schema.to_json()
    conn.execute("INSERT INTO fs_schema VALUES (?, ?, ?, ?)", (table_id, schema.schema_id, snapshot_id, text))
    remember_schema(text, schema)  # keyed by the text: right whether or not this transaction commits
    open_rows = {
        r[0]: tuple(r[1:]) for r in conn.execute(
            "SELECT column_id, parent_column, column_order, name, type, nullable, initial_default, "
            "write_default FROM fs_column WHERE table_id = ? AND end_snapshot IS NULL", (table_id,))
    }
    current = dict(column_rows(schema))
    for cid, row in open_rows.items():
        if current.get(cid) != row:
            conn.execute("UPDATE fs_column SET end_snapshot = ? WHERE table_id = ? AND column_id = ? "
                         "AND end_snapshot IS NULL", (snapshot_id, table_id, cid))
    for cid, row in current.items():
        if open_rows.get(cid) != row:
            conn.execute("INSERT INTO fs_column VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?)",
                         (table_id, cid, snapshot_id, *row))


def schema_rows(conn: Connection, table_id: int) -> list[tuple[int, Any]]:
    """(schema id, stored JSON) of every schema version, by id."""
    return [(int(r[0]), r[1]) for r in conn.execute(
        "SELECT schema_id, schema_json FROM fs_schema WHERE table_id = ? ORDER BY schema_id", (table_id,))]


def layout_rows(conn: Connection, table_id: int) -> tuple[list[tuple[int, Any]], list[tuple[Any, Any, Any]]]:
    """Every schema (id, JSON) and every spec (id, begin snapshot, JSON) in one statement: what
    ``load_metadata`` reads when the layout fingerprint changed."""
    rows = conn.execute(
        "SELECT 0, schema_id, schema_json, 0 FROM fs_schema WHERE table_id = ? UNION ALL "
        "SELECT 1, spec_id, spec_json, begin_snapshot FROM fs_partition_spec WHERE table_id = ? "
        "ORDER BY 1, 4, 2", (table_id, table_id)).fetchall()
    return ([(int(r[1]), r[2]) for r in rows if r[0] == 0], [(r[1], r[3], r[2]) for r in rows if r[0] == 1])
