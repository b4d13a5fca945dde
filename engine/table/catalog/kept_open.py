"""A local SQLite catalog kept open by a long-lived process that commits often (the Spark sink's commits).

When the last connection to a WAL database closes, SQLite checkpoints the WAL and deletes the ``-wal`` and
``-shm`` files, which the next connection creates again. A streaming sink opens the table and commits once
per micro-batch in a reused Python worker, and each micro-batch's ``Table`` (with its held read connections)
is collected after it, so every micro-batch paid that close (benchmarks/README, issue 35). While one idle
connection stays open in the process, closing the others is not the last close.

The kept connection is idle (autocommit, no statement running, no read transaction), so writers and
checkpoints never wait for it; commits stay durable and checkpointed as before. It is re-opened when the
catalog file is replaced (another inode) and never used by a forked child (``fork_guard``: a child sets the
parent's aside unclosed and takes a new lock); at most :data:`MAX_KEPT` catalogs are kept, oldest first out,
and all are closed at exit.
"""

from __future__ import annotations

import atexit
import sqlite3
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

from fieldshift.errors import TableError
from fieldshift.table.catalog.fork_guard import ForkGuarded
from fieldshift.table.catalog.sqlite_dialect import file_identity, open_catalog_file

if TYPE_CHECKING:
    from fieldshift.table.catalog.catalog import Catalog

__all__ = ["MAX_KEPT", "keep_open", "kept", "release_all"]

MAX_KEPT = 8


class _Kept(ForkGuarded):
    """This process's kept connections by catalog file, with the file's (device, inode) when opened."""

    def __init__(self) -> None:
        self.by_path: OrderedDict[str, tuple[tuple[int, int], sqlite3.Connection]] = OrderedDict()
        super().__init__()

    def _held_connections(self) -> list[sqlite3.Connection]:
        return [conn for _, conn in self.by_path.values()]

    def _start_over(self) -> None:
        self.by_path = OrderedDict()

    def keep(self, path: Path, ident: tuple[int, int]) -> bool:
        key = str(path)
        with self._lock:
            self._check_fork()
            held = self.by_path.get(key)
            if held is not None and held[0] == ident:
                self.by_path.move_to_end(key)
                return True
            if held is not None:
                self.by_path.pop(key)[1].close()  # the file was replaced: keep the new one instead
            try:  # never created: a catalog dropped since the stat is not made again, empty, at its path
                conn = open_catalog_file(path, check_same_thread=False)
            except (sqlite3.Error, TableError):
                return False
            try:
                # the first read maps the WAL index: from here on this connection counts as open
                conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
            except sqlite3.Error:
                conn.close()
                return False
            self.by_path[key] = (ident, conn)
            while len(self.by_path) > MAX_KEPT:
                self.by_path.popitem(last=False)[1][1].close()
            return True

    def paths(self) -> list[str]:
        with self._lock:
            self._check_fork()
            return list(self.by_path)

    def release(self) -> None:
        with self._lock:
            self._check_fork()
            while self.by_path:
                self.by_path.popitem()[1][1].close()


_KEPT = _Kept()


def keep_open(catalog: Catalog) -> bool:
    """Keep ``catalog``'s database open in this process if it is a local SQLite file; True if it is kept."""
    dialect = getattr(catalog, "dialect", None)
    if getattr(dialect, "kind", None) != "sqlite":
        return False
    path = Path(dialect.path)
    ident = file_identity(path)
    return ident is not None and _KEPT.keep(path, ident)


def kept() -> list[str]:
    """The catalog files this process keeps open."""
    return _KEPT.paths()


def release_all() -> None:
    """Close every kept connection of this process (the last close of each database checkpoints it)."""
    _KEPT.release()


atexit.register(release_all)
