"""The catalog's SQL definition and how its rows encode values: one place for every catalog dialect."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from fieldshift.errors import CatalogFormatError, CommitConflictError, TableError
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.schema.types import type_name
from fieldshift.table.catalog.deletion_vectors import expire_vectors

__all__ = [
    "ADDED_COLUMNS",
    "DDL",
    "DEFAULT_POLICY",
    "FORMAT_VERSION",
    "POLICY_PROPERTY",
    "column_rows",
    "dump_value",
    "end_files",
    "expire_rows",
    "load_value",
    "locations_overlap",
    "parse_json",
    "policy_of",
    "redact_uri",
    "upgrade",
]

FORMAT_VERSION = 3
"""Bumped when a catalog gains tables or columns that older readers would misread (e.g. delete files; 3:
deletion vectors, which an older fieldshift's expiry would leave behind);
:meth:`SqliteCatalog.check_version` upgrades older catalogs in place and refuses newer ones."""
POLICY_PROPERTY = "fieldshift.schema.policy"
PUBLISH_PROPERTY = "fieldshift.publish"  # "iceberg": Iceberg metadata caught up after every commit
"""The table property holding the table's evolution policy (:attr:`CastPolicy.option_name`)."""
DEFAULT_POLICY = CastPolicy.onehouse()
"""A table's policy unless chosen at create (and of catalogs written before policies were recorded)."""

DDL = """
CREATE TABLE IF NOT EXISTS fs_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS fs_table (
    table_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, location TEXT NOT NULL,
    properties TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS fs_snapshot (
    table_id INTEGER NOT NULL, snapshot_id INTEGER NOT NULL, parent_snapshot_id INTEGER,
    schema_id INTEGER NOT NULL, committed_at TEXT NOT NULL, operation TEXT NOT NULL,
    summary TEXT NOT NULL, PRIMARY KEY (table_id, snapshot_id));
CREATE TABLE IF NOT EXISTS fs_schema (
    table_id INTEGER NOT NULL, schema_id INTEGER NOT NULL, begin_snapshot INTEGER NOT NULL,
    schema_json TEXT NOT NULL, PRIMARY KEY (table_id, schema_id));
CREATE TABLE IF NOT EXISTS fs_column (
    table_id INTEGER NOT NULL, column_id INTEGER NOT NULL, begin_snapshot INTEGER NOT NULL,
    end_snapshot INTEGER, parent_column INTEGER, column_order INTEGER NOT NULL, name TEXT NOT NULL,
    type TEXT NOT NULL, nullable INTEGER NOT NULL, initial_default TEXT, write_default TEXT);
CREATE TABLE IF NOT EXISTS fs_data_file (
    file_id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL, path TEXT NOT NULL,
    schema_id INTEGER NOT NULL, record_count INTEGER NOT NULL, file_size INTEGER NOT NULL,
    begin_snapshot INTEGER NOT NULL, end_snapshot INTEGER);
CREATE INDEX IF NOT EXISTS fs_data_file_by_table ON fs_data_file (table_id, begin_snapshot);
CREATE TABLE IF NOT EXISTS fs_file_column_stats (
    file_id INTEGER NOT NULL, column_id INTEGER NOT NULL, value_count INTEGER NOT NULL,
    null_count INTEGER NOT NULL, min_value TEXT, max_value TEXT, PRIMARY KEY (file_id, column_id));
CREATE TABLE IF NOT EXISTS fs_quarantine_file (
    file_id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL, path TEXT NOT NULL,
    snapshot_id INTEGER NOT NULL, record_count INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS fs_partition_spec (
    table_id INTEGER NOT NULL, spec_id INTEGER NOT NULL, begin_snapshot INTEGER NOT NULL,
    spec_json TEXT NOT NULL, PRIMARY KEY (table_id, spec_id));
CREATE TABLE IF NOT EXISTS fs_stream_commit (
    table_id INTEGER NOT NULL, stream_id TEXT NOT NULL, batch_id INTEGER NOT NULL,
    snapshot_id INTEGER NOT NULL, PRIMARY KEY (table_id, stream_id, batch_id));
CREATE TABLE IF NOT EXISTS fs_captured_file (
    table_id INTEGER NOT NULL, source TEXT NOT NULL, file_size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    record_count INTEGER NOT NULL, snapshot_id INTEGER NOT NULL, PRIMARY KEY (table_id, source));
CREATE TABLE IF NOT EXISTS fs_deletion_vector (
    table_id INTEGER NOT NULL, file_id INTEGER NOT NULL, begin_snapshot INTEGER NOT NULL, end_snapshot INTEGER,
    cardinality INTEGER NOT NULL, positions TEXT NOT NULL, PRIMARY KEY (table_id, file_id, begin_snapshot));
"""

ADDED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("fs_data_file", "content", "TEXT NOT NULL DEFAULT 'data'"),  # 'data' | 'deletes' (keys removed)
    ("fs_data_file", "sequence", "INTEGER"),  # the data sequence number; NULL: its begin_snapshot
    ("fs_data_file", "bucket", "INTEGER"),  # the hidden key bucket; NULL for unkeyed tables
    ("fs_data_file", "spec_id", "INTEGER NOT NULL DEFAULT 0"),
    ("fs_data_file", "partition_values", "TEXT"),
)
"""(table, column, declaration) added after format 1; :func:`upgrade` adds the missing ones in place."""


def upgrade(conn: sqlite3.Connection) -> None:
    """Create missing catalog tables and columns, then record this format version (idempotent)."""
    for statement in DDL.split(";"):
        if statement.strip():
            conn.execute(statement)
    for table, column, declaration in ADDED_COLUMNS:
        if column not in {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
    conn.execute("UPDATE fs_metadata SET value = ? WHERE key = 'format_version'", (str(FORMAT_VERSION),))


def column_rows(schema: Schema) -> Iterator[tuple[int, tuple[Any, ...]]]:
    order: dict[int | None, int] = {}
    for f in schema.all_fields():
        parent = schema.parent_id(f.id)
        order[parent] = order.get(parent, -1) + 1
        yield f.id, (parent, order[parent], f.name, type_name(f.type), int(f.nullable),
                     dump_value(f.initial_default), dump_value(f.write_default))


def locations_overlap(a: str, b: str) -> bool:
    """Whether two table locations are the same directory or one lies inside the other."""
    if "://" in a or "://" in b:  # object-store URIs: compared as text, by whole path segments
        x, y = a.rstrip("/") + "/", b.rstrip("/") + "/"
        return x.startswith(y) or y.startswith(x)
    pa_, pb = Path(a).resolve(), Path(b).resolve()
    return pa_ == pb or pa_ in pb.parents or pb in pa_.parents


def redact_uri(uri: str) -> str:
    """A catalog URI without its password: for messages and for the markers left in table directories."""
    return re.sub(r"(://[^:/@?]*):[^@/?]*@", r"\1@", uri)


def parse_json(text: str, what: str) -> Any:
    """Parse a JSON text the catalog stores; a corrupt one is a CatalogFormatError saying which."""
    try:
        return json.loads(text)
    except (TypeError, ValueError) as e:
        raise CatalogFormatError(f"{what} in the catalog is corrupt ({e}); restore the catalog from a backup") \
            from None


def policy_of(name: str, properties: dict[str, str]) -> CastPolicy:
    text = properties.get(POLICY_PROPERTY)
    if text is None:
        return DEFAULT_POLICY
    try:
        return CastPolicy.from_name(text)
    except ValueError as e:
        raise CatalogFormatError(f"table {name!r} records an unreadable policy: {e}") from None


def dump_value(value: Any) -> str | None:
    if value is None:  # most columns have no default: skip the import below
        return None
    from fieldshift.table.files.stats import encode_value

    return json.dumps(encode_value(value))


_INT_PREFIX = '{"int": "'  # how dump_value writes an integer: read back without a JSON parse (scan planning)


def load_value(text: str | None) -> Any:
    from fieldshift.table.files.stats import decode_value

    if text is None:
        return None
    if text.startswith(_INT_PREFIX) and text.endswith('"}'):
        return int(text[len(_INT_PREFIX):-2])
    return decode_value(json.loads(text))


def end_files(conn: Any, table_id: int, file_ids: Sequence[int], snapshot_id: int) -> None:
    """End ``file_ids`` in ``snapshot_id``; a file another commit already ended is a conflict."""
    for fid in file_ids:
        cur = conn.execute("UPDATE fs_data_file SET end_snapshot = ? WHERE table_id = ? AND file_id = ? "
                           "AND end_snapshot IS NULL", (snapshot_id, table_id, fid))
        if cur.rowcount != 1:
            raise CommitConflictError(f"data file {fid} was removed by a concurrent commit (a compaction or "
                                      "an overwrite); reload the table and retry")


def expire_rows(conn: Any, table_id: int, snapshot_ids: Sequence[int]) -> list[str]:
    """Delete snapshot rows (never the head's), then the rows of files no kept snapshot references."""
    head = conn.execute("SELECT MAX(snapshot_id) FROM fs_snapshot WHERE table_id = ?", (table_id,)).fetchone()[0]
    if head in snapshot_ids:
        raise TableError(f"snapshot {head} is the table's head and cannot be expired")
    conn.executemany("DELETE FROM fs_snapshot WHERE table_id = ? AND snapshot_id = ?",
                     [(table_id, s) for s in snapshot_ids])
    gone = conn.execute(
        "SELECT file_id, path FROM fs_data_file f WHERE table_id = ? AND end_snapshot IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM fs_snapshot s WHERE s.table_id = f.table_id "
        "AND s.snapshot_id >= f.begin_snapshot AND s.snapshot_id < f.end_snapshot)", (table_id,)).fetchall()
    conn.executemany("DELETE FROM fs_file_column_stats WHERE file_id = ?", [(fid,) for fid, _ in gone])
    conn.executemany("DELETE FROM fs_data_file WHERE file_id = ?", [(fid,) for fid, _ in gone])
    expire_vectors(conn, table_id, [fid for fid, _ in gone])
    return [path for _, path in gone]
