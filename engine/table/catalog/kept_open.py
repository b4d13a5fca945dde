"""A local SQLite catalog kept open by a long-lived process that commits often (the Spark sink's commits).

When the last connection to a WAL database closes, SQLite checkpoints the WAL and deletes the ``-wal`` and
``-shm`` files, which the next connection creates again. A streaming sink opens the table and commits once
per micro-batch in a reused Python worker, and each micro-batch's ``Table`` (with its held read connections)
is collected after it, so every micro-batch paid that close (benchmarks/README, issue 35). While one idle
connection stays open in the process, closing the others is not the last close.

The kept connection is idle (autocommit, no statement running, no read transaction), so writers and
checkpoints never wait for it; commits stay durable and checkpointed as before. It is re-opened when the
catalog file is replaced (another inode) and never used by a forked child (SQLite connections must not cross
``fork``: a child sets the parent's aside unclosed and takes a new lock); at most :data:`MAX_KEPT` catalogs are
kept, oldest first out, and all are closed at exit.
"""

from __future__ import annotations

import atexit
import os
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fieldshift.table.catalog.catalog import Catalog

__all__ = ["MAX_KEPT", "keep_open", "kept", "release_all"]

MAX_KEPT = 8

_lock = threading.Lock()
_kept: OrderedDict[str, tuple[tuple[int, int, int], sqlite3.Connection]] = OrderedDict()
_inherited: list[sqlite3.Connection] = []  # a parent's connections after fork: never closed (nor used) here


def keep_open(catalog: Catalog) -> bool:
    """Keep ``catalog``'s database open in this process if it is a local SQLite file; True if it is kept."""
    dialect = getattr(catalog, "dialect", None)
    if getattr(dialect, "kind", None) != "sqlite":
        return False
    path = Path(dialect.path)
    try:
        st = os.stat(path)
    except OSError:
        return False
    ident = (os.getpid(), st.st_dev, st.st_ino)
    key = str(path)
    with _lock:
        _drop_inherited()
        held = _kept.get(key)
        if held is not None and held[0] == ident:
            _kept.move_to_end(key)
            return True
        if held is not None:
            _kept.pop(key)[1].close()  # the file was replaced: keep the new one instead
        conn = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        try:
            # the first read maps the WAL index: from here on this connection counts as open
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except sqlite3.Error:
            conn.close()
            return False
        _kept[key] = (ident, conn)
        while len(_kept) > MAX_KEPT:
            _kept.popitem(last=False)[1][1].close()
        return True


def kept() -> list[str]:
    """The catalog files this process keeps open."""
    with _lock:
        _drop_inherited()
        return list(_kept)


def release_all() -> None:
    """Close every kept connection of this process (the last close of each database checkpoints it)."""
    with _lock:
        _drop_inherited()
        while _kept:
            _kept.popitem()[1][1].close()


def _drop_inherited() -> None:
    """After fork the parent's connections are the parent's: set them aside, unclosed."""
    pid = os.getpid()
    for key in [k for k, (ident, _) in _kept.items() if ident[0] != pid]:
        _inherited.append(_kept.pop(key)[1])


def _after_fork_in_child() -> None:
    """A lock another thread held at the fork would never be released in the child: a new one, and the
    parent's connections set aside."""
    global _lock
    _lock = threading.Lock()
    _drop_inherited()


atexit.register(release_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
