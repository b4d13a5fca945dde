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

from fieldshift.errors import TableError
from fieldshift.table.catalog.fork_guard import ForkGuarded

__all__ = ["ReadConnections", "SqliteConnection", "SqliteDialect", "file_identity", "open_catalog_file"]

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


def open_catalog_file(path: Path, check_same_thread: bool = True, *, create: bool = False) -> sqlite3.Connection:
    """A connection to the catalog file; only ``prepare`` (``create``) may make the file. Anything else opens it
    read-write (``mode=rw``): a catalog deleted under an open handle (its table dropped, its directory removed)
    is a ``TableError`` naming it, not a new empty database at its path."""
    # timeout= is SQLite's busy timeout (sqlite3_busy_timeout): no PRAGMA statement per connection;
    # isolation_level=None: autocommit, so a read is one statement's implicit transaction and no more
    if create:
        return sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=check_same_thread)
    try:
        return sqlite3.connect(f"{path.absolute().as_uri()}?mode=rw", uri=True, timeout=60, isolation_level=None,
                               check_same_thread=check_same_thread)
    except sqlite3.OperationalError:
        if path.exists():
            raise
        raise TableError(f"the catalog file {path} is gone (its table was dropped or its directory deleted "
                         "since it was opened); open the table again, or create it") from None


def file_identity(path: Path) -> tuple[int, int] | None:
    """Which file is at ``path`` (device, inode; None: none): a held connection reads the file it opened,
    even after another took its path."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class _Held:
    """One thread's read connection: ``busy`` counts the reads running on it; a ``close`` while it is busy
    marks it ``doomed`` and the owner closes it when its last read ends. ``file``: the file at the path when
    it was opened."""

    __slots__ = ("busy", "closed", "conn", "doomed", "file", "thread")

    def __init__(self, thread: threading.Thread, raw: sqlite3.Connection, file: tuple[int, int] | None) -> None:
        self.thread, self.conn, self.file = thread, SqliteConnection(raw), file
        self.busy, self.doomed, self.closed = 0, False, False

    def shut(self) -> None:
        self.closed = True
        self.conn.raw.close()


class ReadConnections(ForkGuarded):
    """One held connection per thread to one catalog file, for reads.

    Safe across ``fork`` (``fork_guard``: a child leaves the parent's connections alone and opens its own),
    across threads (each thread its own connection; those of threads that ended are closed when the next one
    opens) and closed by ``close`` (or when the dialect holding it is collected) from any thread: an idle
    connection at once, one in the middle of a read (``use``) by its own thread when that read ends. Holds no
    reference to its dialect, so the dialect's finalizer can close it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._open: list[_Held] = []
        super().__init__()

    def _held_connections(self) -> list[sqlite3.Connection]:
        return [h.conn.raw for h in self._open]

    def _start_over(self) -> None:
        self._open, self._local = [], threading.local()

    def get(self) -> SqliteConnection:
        """This thread's held connection (opened on first use in a thread and process, after ``close``, and when
        the file at the path is another one: a table dropped and created again there, a catalog file put back).
        Which connection it is, not a read: a read goes through ``use``, which a ``close`` on another thread waits
        for (one through ``get`` may find its connection closed under it)."""
        held: _Held | None = getattr(self._local, "held", None)
        if held is not None and not held.closed and not self._forked() and held.file == file_identity(self.path):
            return held.conn
        with self._lock:
            return self._mine().conn

    @contextlib.contextmanager
    def use(self) -> Iterator[SqliteConnection]:
        """This thread's held connection for the block: a ``close`` from another thread meanwhile leaves it
        open until the block (the outermost, when nested) ends."""
        with self._lock:
            held = self._mine()
            held.busy += 1
        try:
            yield held.conn
        finally:
            with self._lock:
                held.busy -= 1
                if not held.busy and held.doomed and not held.closed:
                    held.shut()

    def _mine(self) -> _Held:
        """With ``_lock`` held: this thread's open connection, opened if it has none (or it was closed)."""
        self._check_fork()
        held: _Held | None = getattr(self._local, "held", None)
        file = file_identity(self.path)  # before opening: a file replaced meanwhile is noticed at the next read
        if held is not None and not held.closed:
            if held.file == file:
                return held
            if held in self._open:  # (a close() meanwhile took it out already)
                self._open.remove(held)  # it reads a file no longer at the path: closed once no read runs on it
            if held.busy:
                held.doomed = True
            else:
                held.shut()
        ended = [h for h in self._open if not h.thread.is_alive()]
        if ended:  # a thread that ended left its connection here: close it from this one
            self._open = [h for h in self._open if h.thread.is_alive()]
            for h in ended:
                h.shut()
        # check_same_thread=False only so another thread may close it (close(), an ended thread's)
        held = _Held(threading.current_thread(), open_catalog_file(self.path, check_same_thread=False), file)
        self._open.append(held)
        self._local.held = held
        return held

    @property
    def count(self) -> int:
        """Connections open in this process (tests)."""
        with self._lock:
            self._check_fork()
            return len(self._open)

    def close(self) -> None:
        """Close every thread's connection (each thread's next read opens one again). One in the middle of a
        read on another thread is closed by that thread when the read ends, never under it."""
        with self._lock:
            self._check_fork()
            held, self._open = self._open, []
            for h in held:
                if h.busy:
                    h.doomed = True
                else:
                    h.shut()


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
        raw = open_catalog_file(self.path, create=True)
        try:
            raw.execute("PRAGMA journal_mode = WAL")
        finally:
            raw.close()

    @contextlib.contextmanager
    def connect(self) -> Iterator[SqliteConnection]:
        """This thread's held connection (autocommit: every read sees the latest commit)."""
        if self.hold_reads:
            with self.reads.use() as conn:
                yield conn
            return
        raw = open_catalog_file(self.path)
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
            with self.reads.use() as conn:
                yield from self._commit(conn)
            return
        raw = open_catalog_file(self.path)
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
        """Close the held read connections, a busy one when its read ends (``ReadConnections.close``)."""
        self.reads.close()

    def retrying(self, commit: Callable[[], T]) -> T:
        return commit()  # a local file has no connection to drop
