"""The database a DuckLake catalog lives in — a DuckDB file, a SQLite file or a PostgreSQL server — behind
one small reading surface: ``rows(sql, params)`` with ``?`` placeholders, and the names of its tables.

The catalog is opened read-only where the database allows it (DuckDB's ``read_only``, SQLite's
``mode=ro``), so reading can never change it. DuckDB holds a lock on its file: a DuckDB process that has
the catalog attached for writing must detach it first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fieldshift.errors import (
    CatalogConnectionError,
    CatalogFormatError,
    MissingDependencyError,
    StorageLocationError,
)

__all__ = ["MetadataDB", "open_metadata"]

_SQLITE_MAGIC = b"SQLite format 3\x00"
_DUCKDB_MAGIC = b"DUCK"  # bytes 8..12 of a DuckDB database file


class MetadataDB:
    """A read-only connection to a DuckLake catalog database; ``dialect`` is duckdb, sqlite or postgres."""

    def __init__(self, conn: Any, dialect: str, where: str) -> None:
        self.conn, self.dialect, self.where = conn, dialect, where
        self._tables: set[str] | None = None

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if self.dialect == "postgres":
            sql = sql.replace("?", "%s")
        try:
            if self.dialect == "duckdb":
                return self.conn.execute(sql, list(params)).fetchall()
            cur = self.conn.cursor()
            cur.execute(sql, tuple(params))
            return list(cur.fetchall())
        except Exception as e:  # each driver has its own error classes
            if self.dialect == "postgres":
                with contextlib.suppress(Exception):
                    self.conn.rollback()
            raise CatalogFormatError(f"DuckLake catalog {self.where}: a catalog query failed ({e}); is it a DuckLake "
                                     "catalog of specification 1.0?") from None

    def columns(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Column names and rows of a query (inlined data tables, whose columns depend on the table)."""
        if self.dialect == "postgres":
            sql = sql.replace("?", "%s")
        if self.dialect == "duckdb":
            rel = self.conn.execute(sql, list(params))
            return [d[0] for d in rel.description], rel.fetchall()
        cur = self.conn.cursor()
        cur.execute(sql, tuple(params))
        return [d[0] for d in cur.description], list(cur.fetchall())

    def tables(self) -> set[str]:
        """Names of the catalog database's tables (inlined data tables come and go with the table)."""
        if self._tables is None:
            if self.dialect == "sqlite":
                found = self.rows("SELECT name FROM sqlite_master WHERE type = 'table'")
            elif self.dialect == "duckdb":
                found = self.rows("SELECT table_name FROM information_schema.tables WHERE table_catalog = "
                                  "current_database()")
            else:
                found = self.rows("SELECT table_name FROM information_schema.tables WHERE table_schema = "
                                  "ANY (current_schemas(false))")
            self._tables = {name for name, in found}
        return self._tables

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


def open_metadata(source: str | Path) -> MetadataDB:
    """Open the catalog database ``source`` names: a ``postgresql://`` URI, or a DuckDB or SQLite file (told
    apart by their first bytes; ``ducklake:``, ``sqlite:`` and ``duckdb:`` prefixes are accepted)."""
    text = str(source)
    if text.startswith("ducklake:"):
        text = text[len("ducklake:"):]
    if text.startswith(("postgresql://", "postgres://")):
        return _postgres(text)
    if text.startswith("postgres:"):
        raise StorageLocationError(f"DuckLake catalog {text!r}: give the PostgreSQL catalog as a URI "
                                   "(postgresql://user@host/dbname), not a libpq keyword string")
    for prefix in ("sqlite:", "duckdb:"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    path = Path(text)
    if not path.is_file():
        raise StorageLocationError(f"DuckLake catalog {path} does not exist (give the catalog database: a DuckDB "
                                   "or SQLite file, or a postgresql:// URI)")
    with open(path, "rb") as f:
        head = f.read(16)
    if head == _SQLITE_MAGIC:
        import sqlite3

        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        return MetadataDB(conn, "sqlite", str(path))
    if head[8:12] == _DUCKDB_MAGIC:
        return _duckdb(path)
    raise CatalogFormatError(f"{path} is neither a DuckDB nor a SQLite database, so it holds no DuckLake catalog")


def _duckdb(path: Path) -> MetadataDB:
    try:
        import duckdb
    except ImportError:
        raise MissingDependencyError(f"DuckLake catalog {path} is a DuckDB database; reading it needs the duckdb "
                                     "package: pip install 'fieldshift[ducklake]'") from None
    try:
        conn = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as e:
        raise CatalogConnectionError(f"DuckLake catalog {path} cannot be opened ({e}); a DuckDB process that has it "
                                     "attached for writing holds its lock: DETACH it there first") from None
    return MetadataDB(conn, "duckdb", str(path))


def _postgres(uri: str) -> MetadataDB:
    try:
        import psycopg
    except ImportError:
        raise MissingDependencyError("a PostgreSQL DuckLake catalog needs psycopg: pip install "
                                     "'fieldshift[postgres]'") from None
    try:
        conn = psycopg.connect(uri)
        conn.read_only = True
    except psycopg.Error as e:
        raise CatalogConnectionError(f"the PostgreSQL DuckLake catalog cannot be reached ({e})") from None
    shown = uri.split("@")[-1] if "@" in uri else uri
    return MetadataDB(conn, "postgres", f"postgresql://…@{shown}" if "@" in uri else uri)
