"""The SQLite catalog: snapshots, schema versions, columns with begin/end snapshots, data files.

Modelled on DuckLake's catalog tables so another SQL database can hold it later: plain SQL, ``?``
parameters, no SQLite-only types. Every commit is one ``BEGIN IMMEDIATE`` transaction, so writers
in separate processes serialise on the database lock and a commit either happens whole or not at all.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fieldshift.errors import CatalogFormatError, CommitConflictError, TableError
from fieldshift.schema import Schema
from fieldshift.types import type_name

__all__ = ["FORMAT_VERSION", "DataFile", "Snapshot", "SqliteCatalog", "open_catalog"]

FORMAT_VERSION = 1

_DDL = """
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
CREATE TABLE IF NOT EXISTS fs_file_column_stats (
    file_id INTEGER NOT NULL, column_id INTEGER NOT NULL, value_count INTEGER NOT NULL,
    null_count INTEGER NOT NULL, min_value TEXT, max_value TEXT, PRIMARY KEY (file_id, column_id));
CREATE TABLE IF NOT EXISTS fs_quarantine_file (
    file_id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL, path TEXT NOT NULL,
    snapshot_id INTEGER NOT NULL, record_count INTEGER NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class Snapshot:
    snapshot_id: int
    parent_snapshot_id: int | None
    schema_id: int
    committed_at: str
    operation: str
    summary: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DataFile:
    """A data file as the catalog records it; ``stats`` maps field id -> (values, nulls, min, max)."""

    path: str
    schema_id: int
    record_count: int
    file_size: int
    stats: dict[int, tuple[int, int, Any, Any]] = field(default_factory=dict)
    file_id: int | None = None


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


class SqliteCatalog:
    """One SQLite database holding one or many tables."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    # -- connections ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout = 60000")
            yield conn
        finally:
            conn.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def initialize(self) -> None:
        """Create the catalog tables (idempotent) and check the format version."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(_DDL)
            conn.execute("INSERT OR IGNORE INTO fs_metadata VALUES ('format_version', ?)", (str(FORMAT_VERSION),))
        self.check_version()

    def check_version(self) -> None:
        try:
            with self._connect() as conn:
                row = conn.execute("SELECT value FROM fs_metadata WHERE key = 'format_version'").fetchone()
        except sqlite3.DatabaseError as e:
            raise CatalogFormatError(f"{self.path} is not a fieldshift catalog ({e})") from None
        if row is None:
            raise CatalogFormatError(f"{self.path} is not a fieldshift catalog (no format_version)")
        if int(row[0]) > FORMAT_VERSION:
            raise CatalogFormatError(
                f"catalog {self.path} has format version {row[0]}, but this fieldshift reads up to "
                f"version {FORMAT_VERSION}; upgrade fieldshift to open it"
            )

    # -- tables ---------------------------------------------------------------------------------
    def create_table(self, name: str, location: str, schema: Schema, properties: dict[str, str]) -> int:
        with self._transaction() as conn:
            if conn.execute("SELECT 1 FROM fs_table WHERE name = ?", (name,)).fetchone():
                raise TableError(f"a table named {name!r} already exists in catalog {self.path}; "
                                 "open it with Table.open() or pick another name")
            cur = conn.execute(
                "INSERT INTO fs_table (name, location, properties, created_at) VALUES (?, ?, ?, ?)",
                (name, location, json.dumps(properties), _now()),
            )
            table_id = int(cur.lastrowid)
            self._insert_snapshot(conn, table_id, 0, None, schema.schema_id, "create", {})
            self._insert_schema(conn, table_id, schema, 0)
        return table_id

    def table_id(self, name: str) -> tuple[int, str, dict[str, str]]:
        with self._connect() as conn:
            row = conn.execute("SELECT table_id, location, properties FROM fs_table WHERE name = ?",
                               (name,)).fetchone()
        if row is None:
            raise TableError(f"no table named {name!r} in catalog {self.path}")
        return int(row[0]), row[1], json.loads(row[2])

    # -- reads ----------------------------------------------------------------------------------
    def snapshots(self, table_id: int) -> list[Snapshot]:
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT snapshot_id, parent_snapshot_id, schema_id, committed_at, operation, summary "
                "FROM fs_snapshot WHERE table_id = ? ORDER BY snapshot_id", (table_id,)).fetchall()
        return [Snapshot(r[0], r[1], r[2], r[3], r[4], json.loads(r[5])) for r in rows]

    def head(self, table_id: int) -> Snapshot:
        return self.snapshots(table_id)[-1]

    def schemas(self, table_id: int) -> dict[int, Schema]:
        with self._connect() as conn:
            rows = conn.execute("SELECT schema_id, schema_json FROM fs_schema WHERE table_id = ? "
                                "ORDER BY schema_id", (table_id,)).fetchall()
        return {int(r[0]): Schema.from_json(r[1]) for r in rows}

    def data_files(self, table_id: int, snapshot_id: int, with_stats: bool = True) -> list[DataFile]:
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT file_id, path, schema_id, record_count, file_size FROM fs_data_file "
                "WHERE table_id = ? AND begin_snapshot <= ? AND (end_snapshot IS NULL OR end_snapshot > ?) "
                "ORDER BY file_id", (table_id, snapshot_id, snapshot_id)).fetchall()
            stats: dict[int, dict[int, tuple[int, int, Any, Any]]] = {}
            if with_stats and rows:
                for fid, cid, vc, nc, lo, hi in conn.execute(
                    "SELECT s.file_id, column_id, value_count, null_count, min_value, max_value "
                    "FROM fs_file_column_stats s JOIN fs_data_file f ON f.file_id = s.file_id "
                    "WHERE f.table_id = ?", (table_id,)):
                    stats.setdefault(fid, {})[cid] = (vc, nc, _load(lo), _load(hi))
        return [DataFile(r[1], r[2], r[3], r[4], stats.get(r[0], {}), r[0]) for r in rows]

    def all_paths(self, table_id: int) -> set[str]:
        """Every data and quarantine file any snapshot references (vacuum keeps these)."""
        with self._connect() as conn:
            data = conn.execute("SELECT path FROM fs_data_file WHERE table_id = ?", (table_id,)).fetchall()
            quar = conn.execute("SELECT path FROM fs_quarantine_file WHERE table_id = ?",
                                (table_id,)).fetchall()
        return {r[0] for r in data + quar}

    def quarantine_files(self, table_id: int) -> list[str]:
        with self._connect() as conn:
            rows = conn.execute("SELECT path FROM fs_quarantine_file WHERE table_id = ? ORDER BY file_id",
                                (table_id,)).fetchall()
        return [r[0] for r in rows]

    # -- commits --------------------------------------------------------------------------------
    def commit(
        self,
        table_id: int,
        base_snapshot_id: int,
        *,
        operation: str,
        schema: Schema | None = None,
        write_schema_id: int | None = None,
        add_files: Sequence[DataFile] = (),
        quarantine: Sequence[tuple[str, int]] = (),
        replace_all: bool = False,
        summary: dict[str, Any] | None = None,
        compatible: Any = None,
    ) -> Snapshot:
        """Commit atomically on top of ``base_snapshot_id``.

        If another writer committed first: a schema change (``schema``) or an overwrite conflicts;
        an append is replayed on the new head when ``compatible(head_schema)`` says its files are
        still readable under the head's schema.
        """
        with self._transaction() as conn:
            head_id, head_schema_id = conn.execute(
                "SELECT snapshot_id, schema_id FROM fs_snapshot WHERE table_id = ? "
                "ORDER BY snapshot_id DESC LIMIT 1", (table_id,)).fetchone()
            if head_id != base_snapshot_id:
                if schema is not None or replace_all:
                    raise CommitConflictError(
                        f"another writer committed snapshot {head_id} after snapshot {base_snapshot_id}, "
                        f"on which this {operation} was based; reload the table and retry"
                    )
                if write_schema_id != head_schema_id and compatible is not None:
                    head_schema = Schema.from_json(conn.execute(
                        "SELECT schema_json FROM fs_schema WHERE table_id = ? AND schema_id = ?",
                        (table_id, head_schema_id)).fetchone()[0])
                    compatible(head_schema)
            new_id = head_id + 1
            schema_id = schema.schema_id if schema is not None else head_schema_id
            if replace_all:
                conn.execute("UPDATE fs_data_file SET end_snapshot = ? WHERE table_id = ? AND "
                             "end_snapshot IS NULL", (new_id, table_id))
            self._insert_snapshot(conn, table_id, new_id, head_id, schema_id, operation, summary or {})
            if schema is not None:
                self._insert_schema(conn, table_id, schema, new_id)
            for f in add_files:
                cur = conn.execute(
                    "INSERT INTO fs_data_file (table_id, path, schema_id, record_count, file_size, "
                    "begin_snapshot) VALUES (?, ?, ?, ?, ?, ?)",
                    (table_id, f.path, f.schema_id, f.record_count, f.file_size, new_id))
                conn.executemany(
                    "INSERT INTO fs_file_column_stats VALUES (?, ?, ?, ?, ?, ?)",
                    [(cur.lastrowid, cid, vc, nc, _dump(lo), _dump(hi)) for cid, (vc, nc, lo, hi) in f.stats.items()])
            conn.executemany(
                "INSERT INTO fs_quarantine_file (table_id, path, snapshot_id, record_count) VALUES (?, ?, ?, ?)",
                [(table_id, path, new_id, n) for path, n in quarantine])
        return Snapshot(new_id, head_id, schema_id, _now(), operation, summary or {})

    @staticmethod
    def _insert_snapshot(conn: sqlite3.Connection, table_id: int, snapshot_id: int, parent: int | None,
                         schema_id: int, operation: str, summary: dict[str, Any]) -> None:
        conn.execute("INSERT INTO fs_snapshot VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (table_id, snapshot_id, parent, schema_id, _now(), operation, json.dumps(summary)))

    @staticmethod
    def _insert_schema(conn: sqlite3.Connection, table_id: int, schema: Schema, snapshot_id: int) -> None:
        if conn.execute("SELECT 1 FROM fs_schema WHERE table_id = ? AND schema_id = ?",
                        (table_id, schema.schema_id)).fetchone():
            raise CommitConflictError(f"schema id {schema.schema_id} already exists; reload and retry")
        conn.execute("INSERT INTO fs_schema VALUES (?, ?, ?, ?)",
                     (table_id, schema.schema_id, snapshot_id, schema.to_json()))
        open_rows = {
            r[0]: r[1:] for r in conn.execute(
                "SELECT column_id, parent_column, column_order, name, type, nullable, initial_default, "
                "write_default FROM fs_column WHERE table_id = ? AND end_snapshot IS NULL", (table_id,))
        }
        current = dict(_column_rows(schema))
        for cid, row in open_rows.items():
            if current.get(cid) != row:
                conn.execute("UPDATE fs_column SET end_snapshot = ? WHERE table_id = ? AND column_id = ? "
                             "AND end_snapshot IS NULL", (snapshot_id, table_id, cid))
        for cid, row in current.items():
            if open_rows.get(cid) != row:
                conn.execute("INSERT INTO fs_column VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?)",
                             (table_id, cid, snapshot_id, *row))


def _column_rows(schema: Schema) -> Iterator[tuple[int, tuple[Any, ...]]]:
    order: dict[int | None, int] = {}
    for f in schema.all_fields():
        parent = schema.parent_id(f.id)
        order[parent] = order.get(parent, -1) + 1
        yield f.id, (parent, order[parent], f.name, type_name(f.type), int(f.nullable),
                     _dump(f.initial_default), _dump(f.write_default))


def _dump(value: Any) -> str | None:
    from fieldshift.table.stats import encode_value

    return None if value is None else json.dumps(encode_value(value))


def _load(text: str | None) -> Any:
    from fieldshift.table.stats import decode_value

    return None if text is None else decode_value(json.loads(text))


def open_catalog(uri_or_path: str | Path) -> SqliteCatalog:
    """``sqlite:///abs/path.db``, ``sqlite://rel/path.db`` or a plain path."""
    text = str(uri_or_path)
    if text.startswith("sqlite://"):
        text = text[len("sqlite://"):]
    elif "://" in text:
        raise TableError(f"unsupported catalog URI {uri_or_path!r}; only sqlite:// catalogs exist so far")
    return SqliteCatalog(text)
