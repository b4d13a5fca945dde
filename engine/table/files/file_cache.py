"""Per-snapshot file metadata kept across scans: the live file list, integer column bounds, and values derived
from the list (a read source's entries).

A snapshot's files never change (commits make new snapshots; expiry removes whole snapshots), so
what a scan of a 100,000-file snapshot reads from the catalog (the file rows, a column's bounds as
arrays) serves every later scan of the same snapshot in this process. Entries are keyed by the
catalog, the table, the snapshot id and its commit time (a table dropped and created again at the
same place has new commit times), and the least recently used are dropped past ``MAX_SNAPSHOTS``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fieldshift.gc_pause import paused_gc
from fieldshift.table.catalog.deletion_vectors import DeletionVector
from fieldshift.table.catalog.sqlite import DataFile, Snapshot

__all__ = ["MAX_SNAPSHOTS", "Bounds", "SnapshotFiles", "clear_file_cache", "snapshot_files"]

MAX_SNAPSHOTS = 8
"""Snapshots whose file lists are kept (a 100,000-file list is a few tens of MB)."""


@dataclass(frozen=True)
class Bounds:
    """One column's statistics over a snapshot's files, aligned with ``SnapshotFiles.files``.

    ``ok`` marks files whose stored minimum and maximum both parsed as integers."""

    present: np.ndarray  # the file has a statistics row for the column
    counts: np.ndarray
    nulls: np.ndarray
    low: np.ndarray
    high: np.ndarray
    ok: np.ndarray


@dataclass
class SnapshotFiles:
    """The data files live at one snapshot (ordered by file id), the bounds loaded for them so far, and the
    deletion vectors of a keyed table's files (None: not loaded; loaded with the file list)."""

    files: tuple[DataFile, ...]
    ids: np.ndarray
    vectors: dict[int, DeletionVector] | None = None
    bounds: dict[int, Bounds] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    derived: dict[Any, Any] = field(default_factory=dict)

    def positions(self, files: list[DataFile]) -> np.ndarray | None:
        """Where each of ``files`` (a subset of this snapshot's) sits in ``files``; None if one is foreign."""
        want = np.fromiter((-1 if f.file_id is None else f.file_id for f in files), dtype=np.int64, count=len(files))
        at = np.minimum(np.searchsorted(self.ids, want), max(len(self.ids) - 1, 0))
        if not len(self.ids) or not np.array_equal(self.ids[at], want):
            return None
        return at

    def derive(self, key: Any, build: Callable[[], Any]) -> Any:
        """A value made once from this snapshot's files and kept with them (the read source's entries: a
        snapshot's 100,000 ``DataFileEntry`` values are built once per process, not once per scan)."""
        with self.lock:
            if key not in self.derived:
                self.derived[key] = build()
            return self.derived[key]

    def column(self, field_id: int, load: Callable[[], Bounds]) -> Bounds:
        with self.lock:
            if field_id not in self.bounds:
                self.bounds[field_id] = load()
            return self.bounds[field_id]


_CACHE: OrderedDict[tuple[Any, ...], SnapshotFiles] = OrderedDict()
_LOCK = threading.Lock()


def snapshot_files(catalog: Any, table_id: int, snap: Snapshot, keyed: bool = False) -> SnapshotFiles:
    """The live files of ``snap`` (read from the catalog once per snapshot and process); ``keyed``: with their
    deletion vectors, read in the same statement (a snapshot's vectors never change either)."""
    key = (type(catalog).__name__, str(catalog.path), table_id, snap.snapshot_id, snap.committed_at)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None and (hit.vectors is not None or not keyed):
            _CACHE.move_to_end(key)
            return hit
    with paused_gc():  # 100,000 rows and files, none in a cycle (gc_pause)
        listed, raw = catalog.live_files(table_id, snap.snapshot_id, with_vectors=keyed)
        files = tuple(listed)
    ids = np.fromiter((f.file_id for f in files), dtype=np.int64, count=len(files))
    if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):  # the catalog lists files by id
        order = np.argsort(ids, kind="stable")
        files, ids = tuple(files[i] for i in order), ids[order]
    vectors = {fid: DeletionVector(n, text) for fid, (n, text) in raw.items()} if keyed else None
    entry = SnapshotFiles(files, ids, vectors=vectors)
    with _LOCK:
        _CACHE[key] = entry
        while len(_CACHE) > MAX_SNAPSHOTS:
            _CACHE.popitem(last=False)
    return entry


def clear_file_cache() -> None:
    """Forget every cached snapshot (tests compare a cold scan with a warm one)."""
    with _LOCK:
        _CACHE.clear()
