"""Deletion vectors of keyed tables: per data file, the row positions a later commit superseded.

An upsert (or delete) looks up, in the live files of the buckets its keys hit, the live rows of those
keys and records their positions here, in the same transaction as its files (Iceberg v3's deletion
vectors, Delta's DVs, Paimon's deletion-vector mode). A read then drops those positions and, in a merge
group whose every file is *resolved*, needs no ranking by key at all.

Catalog rows (``fs_deletion_vector``): one per (file, snapshot range), like data files, so time travel
sees the vector of its snapshot. A file *resolved* at a snapshot has a row live there (possibly with no
positions): the commit that added it checked its keys against every live file of its bucket that could
hold them, so, once every file of a group is resolved, the group's rows left after the vectors hold each
key once and are exactly what the merge would keep. Files written without that check (Spark's executors,
older fieldshift, a commit that lost a race) have no row: their groups merge on read as before.

Concurrency: a commit that records vectors or resolves files conflicts (``on_conflict="raise"``) if any
other commit added or removed a file in one of its buckets after its base snapshot, and then recomputes
on the new head; a compaction (``on_conflict="skip"``) instead commits its files unresolved.
Unkeyed tables (``write/row_changes``: ``delete(filter=...)``, ``update``, ``merge``) record vectors too, file by file:
there a vector only removes rows (no merge by key to resolve). Such a commit names the files it read
(``VectorCommit.files_read``) and follows Iceberg's serializable validation instead of the bucket rule: it
conflicts when another commit after its base ended one of those files, changed one of their vectors, or
(``refuse_added``) added a data file still live at the head that could hold rows its filter matches (the
writer's ``added_may_match``: its filter through the scan's partition and statistics pruning at the head;
without it, any added data file conflicts; ``added_any_content``: a keyed merge's rule, any added file).
Positions are stored as a delta-coded uint32 array or, when smaller, a bitmap; zlib-compressed, as base64
text (portable SQL).
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from fieldshift.errors import CommitConflictError
from fieldshift.table.catalog.dialect import Connection

__all__ = ["DeletionVector", "VectorCommit", "commit_vectors", "decode_positions", "encode_positions",
           "expire_vectors", "load_vectors"]


def encode_positions(positions: np.ndarray) -> str:
    """Sorted unique row positions as compact text: ``a`` + a delta-coded uint32 array, or, when a bitmap
    is smaller (more than one row in 32 removed), ``b`` + a bitmap; either zlib-compressed, base64."""
    p = np.asarray(positions, dtype=np.uint32)
    if not len(p):
        return ""
    extent = int(p[-1]) + 1
    if 4 * len(p) > extent // 8:
        bits = np.zeros(extent, dtype=bool)
        bits[p] = True
        return "b" + base64.b64encode(zlib.compress(np.packbits(bits, bitorder="little").tobytes(), 1)).decode()
    deltas = np.diff(p, prepend=np.uint32(0)).astype(np.uint32)
    return "a" + base64.b64encode(zlib.compress(deltas.tobytes(), 1)).decode("ascii")


def _raw(text: str) -> np.ndarray:
    return np.frombuffer(zlib.decompress(base64.b64decode(text[1:])), dtype=np.uint8)


def decode_positions(text: str) -> np.ndarray:
    """The sorted positions ``encode_positions`` stored (uint32)."""
    if not text:
        return np.zeros(0, dtype=np.uint32)
    if text[0] == "b":
        return np.flatnonzero(np.unpackbits(_raw(text), bitorder="little")).astype(np.uint32)
    return np.cumsum(_raw(text).view(np.uint32), dtype=np.uint64).astype(np.uint32)


@dataclass
class DeletionVector:
    """A file's vector at one snapshot: how many rows it removes and (decoded on first use) which."""

    cardinality: int
    text: str
    _positions: np.ndarray | None = None

    @property
    def positions(self) -> np.ndarray:
        if self._positions is None:
            self._positions = decode_positions(self.text)
        return self._positions

    def keep_mask(self, rows: int) -> np.ndarray | None:
        """Which of a file's ``rows`` rows survive (None: all of them)."""
        if not self.cardinality:
            return None
        if self._positions is None and self.text[0] == "b":
            removed = np.unpackbits(_raw(self.text), count=rows, bitorder="little").view(bool)
            return ~removed
        mask = np.ones(rows, dtype=bool)
        mask[self.positions.astype(np.int64)] = False
        return mask


@dataclass
class VectorCommit:
    """What a commit records: vectors of existing files (their whole new positions) and added files it
    resolves (by path), within ``buckets``; see the module docstring for ``on_conflict``."""

    buckets: frozenset[int]
    vectors: dict[int, np.ndarray] = field(default_factory=dict)
    resolved: frozenset[str] = frozenset()
    on_conflict: Literal["raise", "skip"] = "raise"
    files_read: frozenset[int] | None = None
    """Row changes of any table (None: the keyed bucket rule): the file ids whose rows were read."""
    refuse_added: bool = True
    """With ``files_read``: a data file added after the base conflicts too (False: a compaction, which
    only rewrites the files it read)..."""
    added_may_match: Callable[[int, list[int]], bool] | None = None
    """... unless this says none of them can hold a matching row: called with the head's snapshot id and the
    added data files' ids (the writer's filter through the scan's pruning, at that head)."""
    added_any_content: bool = False
    """With ``refuse_added``: a keyed table's delete files added after the base conflict too (a keyed merge:
    they may remove a row it matched)."""


def _changed_buckets(conn: Connection, table_id: int, buckets: Iterable[int], base: int, head: int) -> list[int]:
    marks = ",".join("?" for _ in buckets)
    rows = conn.execute(
        f"SELECT DISTINCT bucket FROM fs_data_file WHERE table_id = ? AND bucket IN ({marks}) AND "
        "((begin_snapshot > ? AND begin_snapshot <= ?) OR (end_snapshot > ? AND end_snapshot <= ?))",
        (table_id, *buckets, base, head, base, head)).fetchall()
    return sorted(int(r[0]) for r in rows)


def commit_vectors(conn: Connection, table_id: int, base_snapshot_id: int, new_id: int, commit: VectorCommit) -> None:
    """Record ``commit`` inside the catalog transaction that adds snapshot ``new_id`` (after its files)."""
    if commit.files_read is not None:
        _check_files_unchanged(conn, table_id, base_snapshot_id, new_id, commit)
        _write_vectors(conn, table_id, new_id, commit.vectors)
        return
    if not commit.buckets or (not commit.vectors and not commit.resolved):
        return
    changed = _changed_buckets(conn, table_id, sorted(commit.buckets), base_snapshot_id, new_id - 1)
    if changed:
        if commit.on_conflict == "skip":
            return
        raise CommitConflictError(f"another writer changed bucket(s) {changed} after snapshot {base_snapshot_id}, "
                                  "whose rows this commit looked up to supersede; reload and retry")
    _write_vectors(conn, table_id, new_id, commit.vectors)
    if commit.resolved:
        added = conn.execute("SELECT file_id, path FROM fs_data_file WHERE table_id = ? AND begin_snapshot = ?",
                             (table_id, new_id)).fetchall()
        conn.executemany("INSERT INTO fs_deletion_vector VALUES (?, ?, ?, NULL, 0, '')",
                         [(table_id, fid, new_id) for fid, path in added if path in commit.resolved])


def _write_vectors(conn: Connection, table_id: int, new_id: int, vectors: dict[int, np.ndarray]) -> None:
    """End each file's current vector and record its whole new positions from ``new_id`` on."""
    for fid, positions in vectors.items():
        conn.execute("UPDATE fs_deletion_vector SET end_snapshot = ? WHERE table_id = ? AND file_id = ? "
                     "AND end_snapshot IS NULL", (new_id, table_id, fid))
        conn.execute("INSERT INTO fs_deletion_vector VALUES (?, ?, ?, NULL, ?, ?)",
                     (table_id, fid, new_id, len(positions), encode_positions(positions)))


def _check_files_unchanged(conn: Connection, table_id: int, base: int, new_id: int, commit: VectorCommit) -> None:
    """The serializable rule of a row change (module docstring): nothing it read changed after ``base``, and
    (``refuse_added``) no data file was added; ``CommitConflictError`` otherwise (the writer retries)."""
    if base == new_id - 1:
        return
    read = sorted(commit.files_read or ())
    for start in range(0, len(read), 500):
        chunk = read[start:start + 500]
        marks = ",".join("?" for _ in chunk)
        ended = conn.execute(
            f"SELECT file_id FROM fs_data_file WHERE table_id = ? AND file_id IN ({marks}) AND end_snapshot IS NOT "
            "NULL AND end_snapshot > ? AND end_snapshot < ? LIMIT 1", (table_id, *chunk, base, new_id)).fetchone()
        if ended is None:
            ended = conn.execute(
                f"SELECT file_id FROM fs_deletion_vector WHERE table_id = ? AND file_id IN ({marks}) AND "
                "begin_snapshot > ? AND begin_snapshot < ? LIMIT 1", (table_id, *chunk, base, new_id)).fetchone()
        if ended is not None:
            raise CommitConflictError(f"another writer removed or changed rows of data file {ended[0]} after snapshot "
                                      f"{base}, which this commit read to find its rows; reload and retry")
    if commit.refuse_added:
        content = "" if commit.added_any_content else "content = 'data' AND "
        added = conn.execute(
            "SELECT file_id, begin_snapshot, content FROM fs_data_file WHERE table_id = ? AND begin_snapshot > ? AND "
            f"begin_snapshot < ? AND {content}(end_snapshot IS NULL OR end_snapshot > ?)",
            (table_id, base, new_id, new_id - 1)).fetchall()
        if any(r[2] != "data" for r in added) or (added and (
                commit.added_may_match is None or commit.added_may_match(new_id - 1, [int(r[0]) for r in added]))):
            raise CommitConflictError(f"snapshot {added[0][1]} added data files after snapshot {base}, which may hold "
                                      "rows this commit's filter matches; reload and retry")


def load_vectors(conn: Connection, table_id: int, snapshot_id: int) -> dict[int, DeletionVector]:
    """file id -> vector of every resolved file live at ``snapshot_id`` (a vector older than its file is
    another file's, left by an older fieldshift's expiry before the id was reused: ignored)."""
    rows = conn.execute(
        "SELECT v.file_id, v.cardinality, v.positions FROM fs_deletion_vector v JOIN fs_data_file f "
        "ON f.file_id = v.file_id AND v.begin_snapshot >= f.begin_snapshot WHERE v.table_id = ? "
        "AND v.begin_snapshot <= ? "
        "AND (v.end_snapshot IS NULL OR v.end_snapshot > ?) AND f.begin_snapshot <= ? "
        "AND (f.end_snapshot IS NULL OR f.end_snapshot > ?)",
        (table_id, snapshot_id, snapshot_id, snapshot_id, snapshot_id)).fetchall()
    return {int(fid): DeletionVector(int(n), text) for fid, n, text in rows}


def expire_vectors(conn: Connection, table_id: int, gone_files: Sequence[int]) -> None:
    """Forget the vectors of removed files and those no kept snapshot sees (inside ``expire``)."""
    conn.executemany("DELETE FROM fs_deletion_vector WHERE table_id = ? AND file_id = ?",
                     [(table_id, fid) for fid in gone_files])
    conn.execute("DELETE FROM fs_deletion_vector WHERE table_id = ? AND end_snapshot IS NOT NULL AND NOT EXISTS "
                 "(SELECT 1 FROM fs_snapshot s WHERE s.table_id = fs_deletion_vector.table_id "
                 "AND s.snapshot_id >= fs_deletion_vector.begin_snapshot "
                 "AND s.snapshot_id < fs_deletion_vector.end_snapshot)", (table_id,))
