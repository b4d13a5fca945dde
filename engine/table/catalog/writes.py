"""The rows a commit writes: its snapshot, a new schema (with its column history) and its files."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from fieldshift.errors import CommitConflictError
from fieldshift.schema.model import Schema
from fieldshift.table.catalog.metadata_cache import remember_schema
from fieldshift.table.catalog.specs import encode_partition
from fieldshift.table.catalog.sql import column_rows, dump_value
from fieldshift.table.records import DataFile, Snapshot

__all__ = ["insert_files", "insert_schema", "insert_snapshot", "now"]


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


def insert_snapshot(conn: sqlite3.Connection, table_id: int, snapshot_id: int, parent: int | None,
                    schema_id: int, operation: str, summary: dict[str, Any]) -> Snapshot:
    """Add the snapshot row; the snapshot as a load reads it back (its time and summary as stored)."""
    committed_at, text = now(), json.dumps(summary)
    conn.execute("INSERT INTO fs_snapshot VALUES (?, ?, ?, ?, ?, ?, ?)",
                 (table_id, snapshot_id, parent, schema_id, committed_at, operation, text))
    return Snapshot(snapshot_id, parent, schema_id, committed_at, operation, json.loads(text))

def insert_schema(conn: sqlite3.Connection, table_id: int, schema: Schema, snapshot_id: int) -> None:
    if conn.execute("SELECT 1 FROM fs_schema WHERE table_id = ? AND schema_id = ?",
                    (table_id, schema.schema_id)).fetchone():
        raise CommitConflictError(f"schema id {schema.schema_id} already exists; reload and retry")
    text = schema.to_json()
    conn.execute("INSERT INTO fs_schema VALUES (?, ?, ?, ?)", (table_id, schema.schema_id, snapshot_id, text))
    remember_schema(text, schema)  # keyed by the text: right whether or not this transaction commits
    open_rows = {
        r[0]: r[1:] for r in conn.execute(
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


def insert_files(conn: sqlite3.Connection, table_id: int, snapshot_id: int, files: Sequence[DataFile]) -> None:
    """The rows of files added in ``snapshot_id``: the file and its column statistics."""
    for f in files:
        cur = conn.execute(
            "INSERT INTO fs_data_file (table_id, path, schema_id, record_count, file_size, "
            "begin_snapshot, content, sequence, bucket, spec_id, partition_values) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (table_id, f.path, f.schema_id, f.record_count, f.file_size, snapshot_id, f.content, f.sequence,
             f.bucket, f.spec_id, encode_partition(f.partition)))
        conn.executemany(
            "INSERT INTO fs_file_column_stats VALUES (?, ?, ?, ?, ?, ?)",
            [(cur.lastrowid, cid, vc, nc, dump_value(lo), dump_value(hi))
             for cid, (vc, nc, lo, hi) in f.stats.items()])
