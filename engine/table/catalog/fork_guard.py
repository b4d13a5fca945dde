"""SQLite connections held across calls, and ``fork``: one rule for every holder in this process.

A forked child must neither use nor close a connection its parent opened: SQLite's locks and WAL index are
the parent's, and closing the copy would drop the parent's POSIX locks. A holder (``sqlite_dialect``'s
per-thread read connections, ``kept_open``'s idle connections) subclasses :class:`ForkGuarded`. In a child
its connections are set aside in :data:`INHERITED` (kept referenced so no finalizer closes them, never used)
and it starts empty with a new lock (a lock another thread held at the fork would never be released there).
That happens in ``os.register_at_fork``'s child hook, or at the holder's next use when the process id
changed without the hook running (a fork from C code).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref

__all__ = ["INHERITED", "ForkGuarded"]

INHERITED: list[sqlite3.Connection] = []
"""Connections this process inherited from its parent: never used or closed here, only kept from being
collected (a collected connection is closed)."""


class ForkGuarded:
    """A holder of SQLite connections made in one process; ``_lock`` guards its state.

    Subclasses say what they hold (``_held_connections``) and how to start empty (``_start_over``), and call
    ``_check_fork`` holding ``_lock`` before using their state."""

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._lock = threading.Lock()
        _EVERY.add(self)

    def _held_connections(self) -> list[sqlite3.Connection]:
        raise NotImplementedError

    def _start_over(self) -> None:
        raise NotImplementedError

    def _forked(self) -> bool:
        return self._pid != os.getpid()

    def _check_fork(self) -> None:
        """With ``_lock`` held: in a process forked without the hooks, set the parent's connections aside."""
        if self._forked():
            self._set_aside()

    def _set_aside(self) -> None:
        INHERITED.extend(self._held_connections())
        self._start_over()
        self._pid = os.getpid()

    def _after_fork_in_child(self) -> None:
        """In a forked child, one thread, before any other runs."""
        self._set_aside()
        self._lock = threading.Lock()


_EVERY: weakref.WeakSet[ForkGuarded] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for holder in list(_EVERY):
        holder._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
