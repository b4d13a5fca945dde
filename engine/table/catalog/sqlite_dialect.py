"""The catalog in one SQLite file: held read connections, ``BEGIN IMMEDIATE`` commits, WAL mode.

Every commit is one ``BEGIN IMMEDIATE`` transaction, so writers in separate processes serialise on the
database lock and a commit either happens whole or not at all. SQLite takes the record modules'
statements as they are (``?`` placeholders, ``INTEGER PRIMARY KEY``, ``lastrowid``).

Reads go through a connection each thread holds (``ReadConnections``): opening the WAL file and running
its first statement costs many times a statement on a held connection, and planning a scan reads the
catalog twice. A held connection is in autocommit mode and every statement runs to its end, so no
read transaction stays open between calls and each read sees the latest commit.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["ReadConnections", "SqliteConnection", "SqliteDialect"]

T = TypeVar("T")

_INHERITED: list[sqlite3.Connection] = []
"""Connections a forked process inherited from its parent: never used or closed here (SQLite's files and
locks are the parent's), only kept from being collected, whose close would touch them."""


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


def _open(path: Path, check_same_thread: bool = True) -> sqlite3.Connection:
    # timeout= is SQLite's busy timeout (sqlite3_busy_timeout): no PRAGMA statement per connection;
    # isolation_level=None: autocommit, so a read is one statement's implicit transaction and no more
    return sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=check_same_thread)


class ReadConnections:
    """One held connection per thread to one catalog file, for reads.

    Safe across ``fork`` (a process whose id changed opens its own and leaves the parent's alone), across
    threads (each thread its own connection; those of threads that ended are closed when the next one
    opens) and closed by ``close`` (or when the dialect holding it is collected). Holds no reference to
    its dialect, so the dialect's finalizer can close it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._pid = os.getpid()
        _EVERY.add(self)

    def forget_parent(self) -> None:
        """In a forked child (one thread, before any other runs): drop the parent's connections unused and
        unclosed, and a lock another of its threads may have held at the fork."""
        _INHERITED.extend(raw for _, raw in self._open)
        self._open, self._pid, self._local, self._lock = [], os.getpid(), threading.local(), threading.Lock()

    def get(self) -> SqliteConnection:
        """This thread's held connection (opened on first use in a thread and process, and again when the file
        at the path is another one: a table dropped and created again there, a catalog file put back)."""
        held: SqliteConnection | None = getattr(self._local, "conn", None)
        if held is not None and self._pid == os.getpid() and self._local.file == _file_of(self.path):
            return held
        return self._connect()

    def _connect(self) -> SqliteConnection:
        with self._lock:
            self._after_fork()
            stale = getattr(self._local, "conn", None)
            ended = [raw for thread, raw in self._open if not thread.is_alive() or (stale and raw is stale.raw)]
            if ended:  # a thread that ended left its connection here, or this thread's reads another file: close it
                self._open = [(t, raw) for t, raw in self._open if not any(raw is e for e in ended)]
                for raw in ended:
                    raw.close()
            self._local.file = _file_of(self.path)  # before opening: a file replaced meanwhile is noticed next time
            # check_same_thread=False only so another thread may close it (close(), an ended thread's)
            raw = _open(self.path, check_same_thread=False)
            self._open.append((threading.current_thread(), raw))
            conn = self._local.conn = SqliteConnection(raw)
            return conn

    def _after_fork(self) -> None:
        if os.getpid() != self._pid:  # forked without os.fork's hooks (they call forget_parent)
            _INHERITED.extend(raw for _, raw in self._open)
            self._open, self._pid, self._local = [], os.getpid(), threading.local()

    @property
    def count(self) -> int:
        """Connections open in this process (tests)."""
        with self._lock:
            self._after_fork()
            return len(self._open)

    def close(self) -> None:
        """Close every thread's connection (the next read opens one again): not while another thread reads."""
        with self._lock:
            self._after_fork()
            held, self._open, self._local = self._open, [], threading.local()
            for _, raw in held:
                raw.close()


def _file_of(path: Path) -> tuple[int, int] | None:
    """Which file is at ``path`` (device, inode; None: none): a held connection reads the file it opened,
    even after another took its path."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


_EVERY: weakref.WeakSet[ReadConnections] = weakref.WeakSet()


def _forget_parents() -> None:
    for reads in list(_EVERY):
        reads.forget_parent()


os.register_at_fork(after_in_child=_forget_parents)


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
        self.reads = ReadConnections(path)
        self.hold_reads = True  # False: a connection per read (tests and benchmarks compare the two)
        self._pinned = threading.local()  # on: inside one_connection, this thread's commits use its read connection
        self._finalizer = weakref.finalize(self, self.reads.close)

    def exists(self) -> bool:
        return self.path.exists()

    def prepare(self) -> None:
        """Make the catalog file's directory and switch it to WAL (readers never wait for a writer)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.connect() as conn:
            conn.execute("PRAGMA journal_mode = WAL")

    @contextlib.contextmanager
    def connect(self) -> Iterator[SqliteConnection]:
        """This thread's held connection (autocommit: every read sees the latest commit)."""
        if self.hold_reads:
            yield self.reads.get()
            return
        raw = _open(self.path)
        try:
            yield SqliteConnection(raw)
        finally:
            raw.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[SqliteConnection]:
        """A commit on a connection of its own (a read connection never holds a write lock or a failed
        transaction), or on ``one_connection``'s. The commit is checkpointed into the database file: with held
        read connections open, closing the writer's connection no longer does it (SQLite checkpoints when the
        last connection closes), and a catalog file is linked into place and copied as a file."""
        if getattr(self._pinned, "on", False):
            yield from self._commit(self.reads.get())
            return
        raw = _open(self.path)
        try:
            yield from self._commit(SqliteConnection(raw))
        finally:
            raw.close()

    @staticmethod
    def _commit(conn: SqliteConnection) -> Iterator[SqliteConnection]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        with contextlib.suppress(sqlite3.Error):  # committed already: a checkpoint that fails changes nothing
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    @contextlib.contextmanager
    def one_connection(self) -> Iterator[None]:
        """A stream's micro-batch makes a dozen catalog calls, and each open and close of a WAL database
        creates and checkpoints files: its commits run on this thread's read connection too. Autocommit: every
        read stays fresh."""
        if getattr(self._pinned, "on", False):  # an outer block already holds one
            yield
            return
        self._pinned.on = True
        try:
            yield
        finally:
            self._pinned.on = False

    def close(self) -> None:
        """Close the held read connections (the next read opens one again)."""
        self.reads.close()

    def retrying(self, commit: Callable[[], T]) -> T:
        return commit()  # a local file has no connection to drop
