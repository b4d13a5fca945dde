"""The catalog's one SQL definition (every dialect's tables), its format version and upgrade, and how its rows
encode values."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fieldshift.errors import CatalogFormatError
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.schema.types import type_name
from fieldshift.table.catalog.dialect import Connection, Dialect

__all__ = [
    "ADDED_COLUMNS",
    "DDL",
    "DEFAULT_POLICY",
    "FORMAT_VERSION",
    "POLICY_PROPERTY",
    "column_rows",
    "create_metadata",
    "dump_value",
    "format_version",
    "load_value",
    "locations_overlap",
    "parse_json",
    "policy_of",
    "redact_uri",
    "statements",
    "upgrade",
]

FORMAT_VERSION = 3
"""Bumped when a catalog gains tables or columns that older readers would misread (e.g. delete files; 3:
deletion vectors, which an older fieldshift's expiry would leave behind);
:meth:`Catalog.check_version` upgrades older catalogs in place and refuses newer ones."""
POLICY_PROPERTY = "fieldshift.schema.policy"
PUBLISH_PROPERTY = "fieldshift.publish"  # "iceberg": Iceberg metadata caught up after every commit
"""The table property holding the table's evolution policy (:attr:`CastPolicy.option_name`)."""
DEFAULT_POLICY = CastPolicy.onehouse()
"""A table's policy unless chosen at create (and of catalogs written before policies were recorded)."""

DDL = """
CREATE TABLE IF NOT EXISTS fs_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS fs_table (
    table_id {ID}, name TEXT NOT NULL UNIQUE, location TEXT NOT NULL,
    properties TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS fs_snapshot (
    table_id {INT} NOT NULL, snapshot_id {INT} NOT NULL, parent_snapshot_id {INT},
    schema_id {INT} NOT NULL, committed_at TEXT NOT NULL, operation TEXT NOT NULL,
    summary TEXT NOT NULL, PRIMARY KEY (table_id, snapshot_id));
CREATE TABLE IF NOT EXISTS fs_schema (
    table_id {INT} NOT NULL, schema_id {INT} NOT NULL, begin_snapshot {INT} NOT NULL,
    schema_json TEXT NOT NULL, PRIMARY KEY (table_id, schema_id));
CREATE TABLE IF NOT EXISTS fs_column (
    table_id {INT} NOT NULL, column_id {INT} NOT NULL, begin_snapshot {INT} NOT NULL,
    end_snapshot {INT}, parent_column {INT}, column_order {INT} NOT NULL, name TEXT NOT NULL,
    type TEXT NOT NULL, nullable {INT} NOT NULL, initial_default TEXT, write_default TEXT);
CREATE TABLE IF NOT EXISTS fs_data_file (
    file_id {ID}, table_id {INT} NOT NULL, path TEXT NOT NULL,
    schema_id {INT} NOT NULL, record_count {INT} NOT NULL, file_size {INT} NOT NULL,
    begin_snapshot {INT} NOT NULL, end_snapshot {INT});
CREATE INDEX IF NOT EXISTS fs_data_file_by_table ON fs_data_file (table_id, begin_snapshot);
CREATE TABLE IF NOT EXISTS fs_file_column_stats (
    file_id {INT} NOT NULL, column_id {INT} NOT NULL, value_count {INT} NOT NULL,
    null_count {INT} NOT NULL, min_value TEXT, max_value TEXT, PRIMARY KEY (file_id, column_id));
CREATE TABLE IF NOT EXISTS fs_quarantine_file (
    file_id {ID}, table_id {INT} NOT NULL, path TEXT NOT NULL,
    snapshot_id {INT} NOT NULL, record_count {INT} NOT NULL);
CREATE TABLE IF NOT EXISTS fs_partition_spec (
    table_id {INT} NOT NULL, spec_id {INT} NOT NULL, begin_snapshot {INT} NOT NULL,
    spec_json TEXT NOT NULL, PRIMARY KEY (table_id, spec_id));
CREATE TABLE IF NOT EXISTS fs_stream_commit (
    table_id {INT} NOT NULL, stream_id TEXT NOT NULL, batch_id {INT} NOT NULL,
    snapshot_id {INT} NOT NULL, PRIMARY KEY (table_id, stream_id, batch_id));
CREATE TABLE IF NOT EXISTS fs_captured_file (
    table_id {INT} NOT NULL, source TEXT NOT NULL, file_size {INT} NOT NULL, mtime_ns {INT} NOT NULL,
    record_count {INT} NOT NULL, snapshot_id {INT} NOT NULL, PRIMARY KEY (table_id, source));
CREATE TABLE IF NOT EXISTS fs_deletion_vector (
    table_id {INT} NOT NULL, file_id {INT} NOT NULL, begin_snapshot {INT} NOT NULL, end_snapshot {INT},
    cardinality {INT} NOT NULL, positions TEXT NOT NULL, PRIMARY KEY (table_id, file_id, begin_snapshot));
"""
"""The catalog tables, one definition for every dialect: ``{INT}`` is its 64-bit integer type, ``{ID}`` its
integer primary key that the database numbers (:func:`statements` fills both in)."""

ADDED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("fs_data_file", "content", "TEXT NOT NULL DEFAULT 'data'"),  # 'data' | 'deletes' (keys removed)
    ("fs_data_file", "sequence", "{INT}"),  # the data sequence number; NULL: its begin_snapshot
    ("fs_data_file", "bucket", "{INT}"),  # the hidden key bucket; NULL for unkeyed tables
    ("fs_data_file", "spec_id", "{INT} NOT NULL DEFAULT 0"),
    ("fs_data_file", "partition_values", "TEXT"),
)
"""(table, column, declaration) added after format 1; :func:`upgrade` adds the missing ones in place."""


def statements(dialect: Dialect) -> list[str]:
    """The DDL's statements in ``dialect``'s types."""
    text = DDL.format(INT=dialect.integer, ID=dialect.identity)
    return [s.strip() for s in text.split(";") if s.strip()]


def create_metadata(conn: Connection) -> None:
    """The format's own table and its version row, when the catalog has none (a new catalog)."""
    conn.execute("CREATE TABLE IF NOT EXISTS fs_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO fs_metadata VALUES ('format_version', ?) ON CONFLICT DO NOTHING",
                 (str(FORMAT_VERSION),))


def format_version(conn: Connection) -> str | None:
    """The format version the catalog records (None: none recorded)."""
    row = conn.execute("SELECT value FROM fs_metadata WHERE key = 'format_version'").fetchone()
    return None if row is None else row[0]


def upgrade(conn: Connection, dialect: Dialect) -> None:
    """Create missing catalog tables and columns, then record this format version (idempotent)."""
    for statement in statements(dialect):
        conn.execute(statement)
    for table, column, declaration in ADDED_COLUMNS:
        if column not in conn.column_names(table):
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration.format(INT=dialect.integer)}")
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
