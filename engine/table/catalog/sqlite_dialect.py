"""The catalog in one SQLite file: connections, ``BEGIN IMMEDIATE`` commits, WAL mode.

Every commit is one ``BEGIN IMMEDIATE`` transaction, so writers in separate processes serialise on the
database lock and a commit either happens whole or not at all. SQLite takes the record modules'
statements as they are (``?`` placeholders, ``INTEGER PRIMARY KEY``, ``lastrowid``).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["SqliteConnection", "SqliteDialect"]

T = TypeVar("T")


class SqliteConnection:
    """A sqlite3 connection with the record modules' few extra questions."""

    __slots__ = ("raw",)

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self.raw.execute(sql, params)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.raw.executemany(sql, rows)

    def insert_id(self, sql: str, params: Sequence[Any], id_column: str) -> int:
        return int(self.raw.execute(sql, params).lastrowid)  # type: ignore[arg-type]

    def column_names(self, table: str) -> set[str]:
        return {r[1] for r in self.raw.execute(f"PRAGMA table_info({table})")}

    def table_names(self) -> set[str]:
        return {r[0] for r in self.raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


class SqliteDialect:
    """One SQLite database file (the table directory's own catalog, or a shared one)."""

    kind = "sqlite"
    integer = "INTEGER"  # SQLite's integers are 64-bit
    identity = "INTEGER PRIMARY KEY"  # the rowid: lastrowid reads it back
    format_errors: tuple[type[Exception], ...] = (sqlite3.DatabaseError,)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        self.directory: Path | None = path.parent
        self._held: SqliteConnection | None = None

    def exists(self) -> bool:
        return self.path.exists()

    def prepare(self) -> None:
        """Make the catalog file's directory and switch it to WAL (readers never wait for a writer)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.connect() as conn:
            conn.execute("PRAGMA journal_mode = WAL")

    @contextlib.contextmanager
    def connect(self) -> Iterator[SqliteConnection]:
        if self._held is not None:
            yield self._held
            return
        # timeout= is SQLite's busy timeout (sqlite3_busy_timeout): no PRAGMA statement per connection
        raw = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        try:
            yield SqliteConnection(raw)
        finally:
            raw.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[SqliteConnection]:
        with self.connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextlib.contextmanager
    def one_connection(self) -> Iterator[None]:
        """A stream's micro-batch makes a dozen catalog calls, and each open and close of a WAL database
        creates and checkpoints files. Autocommit: every read stays fresh."""
        if self._held is not None:  # an outer block already holds one
            yield
            return
        with self.connect() as conn:
            self._held = conn
            try:
                yield
            finally:
                self._held = None

    def retrying(self, commit: Callable[[], T]) -> T:
        return commit()  # a local file has no connection to drop
