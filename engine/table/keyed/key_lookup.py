"""Looking keys up in a keyed table: only the buckets a batch hits, only files whose key bounds may hold it.

Used at write time, twice: an insert-only append checks its keys against the live keys of those files
(``live_keys``), and an upsert or delete finds the live rows it supersedes and records their positions as
deletion vectors (``plan_vectors``; see ``deletion_vectors``). A file whose key statistics rule out every
key of the batch in its bucket cannot hold any of them, whatever its state, so it is never read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.table.catalog.deletion_vectors import VectorCommit
from fieldshift.table.handle import TableIO
from fieldshift.table.keyed.keys import KeySpec, bucket_of, bucket_order
from fieldshift.table.keyed.merge import group_files, read_group
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.records import DataFile
from fieldshift.table.scan.table_scan import Scan

__all__ = ["BucketLookup", "KeyedPlan", "append_lookup", "candidates", "live_keys", "plan_vectors"]


@dataclass
class BucketLookup:
    """One bucket a batch hits: the batch's rows in it and the live files that may hold their keys."""

    bucket: int
    rows: np.ndarray
    files: list[DataFile]
    resolved: bool


def _bounds(column: pa.ChunkedArray | pa.Array) -> tuple[Any, Any, np.ndarray | None]:
    """(min, max, sorted integer values or None) of a batch's key column."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_integer(arr.type):
        values = np.sort(arr.to_numpy(zero_copy_only=False))
        return int(values[0]), int(values[-1]), values
    mm = pc.min_max(arr)
    return mm["min"].as_py(), mm["max"].as_py(), None


def _may_hold(stats: dict[int, tuple[int, int, Any, Any]], key_ids: Sequence[int],
              bounds: Sequence[tuple[Any, Any, np.ndarray | None]]) -> bool:
    """Whether a file's key bounds leave room for some key of the batch (per column)."""
    for fid, (lo_b, hi_b, ints) in zip(key_ids, bounds, strict=True):
        s = stats.get(fid)
        if s is None or s[2] is None or s[3] is None:
            continue
        lo, hi = s[2], s[3]
        try:
            if ints is not None:
                i = int(np.searchsorted(ints, lo, side="left"))
                if i == len(ints) or ints[i] > hi:
                    return False
            elif hi < lo_b or lo > hi_b:
                return False
        except (TypeError, OverflowError):  # bounds of another Python type (e.g. naive vs aware): keep the file
            continue
    return True


def candidates(scan: Scan, keys: pa.Table, prune: bool = True) -> list[BucketLookup]:
    """Per bucket ``keys`` (the key columns of a batch) hit: its rows and the live data and delete files of
    ``scan``'s snapshot that may hold them (``prune=False``: every live file of the bucket)."""
    spec = scan.keys
    assert spec is not None
    if not keys.num_rows:
        return []
    buckets, order = bucket_order(keys, spec)
    starts = np.flatnonzero(np.r_[True, buckets[order][1:] != buckets[order][:-1]])
    by_bucket: dict[int, list[DataFile]] = {}
    for f in scan.live_files():
        by_bucket.setdefault(f.bucket if f.bucket is not None else -1, []).append(f)
    hit = {int(buckets[order[s]]) for s in starts}
    ids = [f.file_id for b in hit for f in by_bucket.get(b, []) if f.file_id is not None]
    stats = scan.io.catalog.file_stats(ids) if prune and ids else {}
    vectors = scan.deletion_vectors()
    out = []
    for start, end in zip(starts, np.r_[starts[1:], len(order)], strict=True):
        rows = order[start:end]  # ascending: the order is a stable sort by bucket
        bucket = int(buckets[rows[0]])
        files = by_bucket.get(bucket, [])
        if prune and files:
            part = keys.take(pa.array(rows))
            bounds = [_bounds(part.column(n)) for n in spec.key_names]
            files = [f for f in files if _may_hold(stats.get(f.file_id, {}), spec.key_ids, bounds)]
        out.append(BucketLookup(bucket, rows, files, all(f.file_id in vectors for f in files)))
    return out


def live_keys(io: TableIO, metadata: TableMetadata, keys: pa.Table, prune: bool = True) -> pa.Table:
    """The live keys (after the merge) at ``metadata``'s snapshot of the files that may hold one of ``keys`` —
    a superset of the table's keys among ``keys``, read from the buckets they hit only."""
    spec = metadata.keys
    assert spec is not None
    scan = Scan(io, metadata, list(spec.key_names))
    names = list(spec.key_names)
    return _read_keys(scan, candidates(scan, keys.select(names), prune), names)


def _read_keys(scan: Scan, looked: Sequence[BucketLookup], names: list[str]) -> pa.Table:
    """The live key columns of the files ``looked`` found (merged per group)."""
    files = [f for b in looked for f in b.files]
    parts = [read_group(scan, g).select(names) for g in group_files(files)]
    return pa.concat_tables([scan.output_schema.empty_table(), *parts])


def append_lookup(io: TableIO, metadata: TableMetadata, data: pa.Table) -> tuple[pa.Table, KeyedPlan]:
    """An insert-only append's one lookup: the live keys that may clash with ``data``'s (``live_keys``) and
    the plan its files commit with (``plan_vectors(..., "append")``: the buckets they resolve), from one
    reading of the files, statistics and vectors of the buckets ``data`` hits."""
    spec = metadata.keys
    assert spec is not None
    names = list(spec.key_names)
    scan = Scan(io, metadata, names)
    looked = candidates(scan, data.select(names))
    return _read_keys(scan, looked, names), KeyedPlan(data, frozenset(b.bucket for b in looked if b.resolved))


@dataclass
class KeyedPlan:
    """What a keyed write commits besides its files: the rows to write (an upsert's rows that lose to a
    live row of higher precombine value are left out) and the deletion vectors of the rows it supersedes."""

    rows: pa.Table
    resolved_buckets: frozenset[int] = frozenset()
    vectors: dict[int, np.ndarray] = field(default_factory=dict)
    replaced: int | None = None
    """How many live rows the rows replace, when every bucket they hit was looked up (None: some merge on
    read, so the count is not known without reading them)."""

    def commit(self, files: Sequence[DataFile], on_conflict: Literal["raise", "skip"] = "raise") -> VectorCommit:
        """The catalog's part, once the files are written (they resolve their bucket if it was resolved)."""
        resolved = frozenset(f.path for f in files if f.bucket in self.resolved_buckets)
        return VectorCommit(self.resolved_buckets, self.vectors, resolved, on_conflict)


def plan_vectors(io: TableIO, metadata: TableMetadata, data: pa.Table, mode: Literal["upsert", "delete", "append"],
                 *, replace_all: bool = False) -> KeyedPlan:
    """Look ``data``'s keys up at ``metadata``'s snapshot (one row per key; a delete's key columns only).

    A bucket is looked up only when every file that may hold its keys is resolved; else its rows are
    written unresolved and merge on read. ``append`` (keys already checked new) and ``replace_all`` need
    no reading."""
    spec = metadata.keys
    assert spec is not None
    if replace_all:
        return KeyedPlan(data, frozenset(int(b) for b in np.unique(bucket_of(data, spec))))
    scan = Scan(io, metadata, list(spec.key_names))
    looked = candidates(scan, data.select(list(spec.key_names)))
    resolved = [b for b in looked if b.resolved]
    plan = KeyedPlan(data, frozenset(b.bucket for b in resolved))
    files = [f for b in resolved for f in b.files if f.content == "data"]
    everything = len(resolved) == len(looked)
    if mode == "append" or not files:
        plan.replaced = 0 if everything else None
        return plan
    rows = np.sort(np.concatenate([b.rows for b in resolved]))
    old, fids, positions = _live_rows(scan, files)
    o, n = _match(old, data.select(list(spec.key_names)).take(pa.array(rows)), spec)
    n = rows[n]
    lose = np.zeros(len(o), dtype=bool)
    if mode == "upsert" and spec.precombine_name is not None:
        lose = _old_wins(old.column(spec.precombine_name).take(pa.array(o)),
                         data.column(spec.precombine_name).take(pa.array(n)))
    if lose.any():
        keep = np.ones(data.num_rows, dtype=bool)
        keep[n[lose]] = False
        plan.rows = data.filter(pa.array(keep))
    superseded_files, superseded_rows = fids[o[~lose]], positions[o[~lose]]
    plan.replaced = int((~lose).sum()) if everything else None
    vectors = scan.deletion_vectors()
    for fid in np.unique(superseded_files):
        new = superseded_rows[superseded_files == fid]
        had = vectors[int(fid)].positions if int(fid) in vectors else np.zeros(0, dtype=np.uint32)
        plan.vectors[int(fid)] = np.union1d(had, new.astype(np.uint32))
    return plan


def _live_rows(scan: Scan, files: list[DataFile]) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """The key and precombine columns of ``files``' rows their vectors keep, with file ids and positions."""
    vectors = scan.deletion_vectors()

    def read(f: DataFile) -> tuple[pa.Table, np.ndarray, np.ndarray]:
        v = vectors.get(f.file_id) if f.file_id is not None else None
        keep = v.keep_mask(f.record_count) if v is not None else None
        pos = np.arange(f.record_count, dtype=np.int64) if keep is None else np.flatnonzero(keep)
        t = pa.Table.from_batches(list(scan.evolved_batches(f, keep)), schema=scan.read_schema.to_arrow())
        return t, np.full(len(pos), f.file_id, dtype=np.int64), pos

    with ThreadPoolExecutor(max_workers=max(1, min(os.cpu_count() or 1, len(files)))) as pool:
        parts = list(pool.map(read, files))
    return (pa.concat_tables([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))


def _match(old: pa.Table, new: pa.Table, spec: KeySpec) -> tuple[np.ndarray, np.ndarray]:
    """(old row, new row) pairs of equal keys (keys are unique on both sides)."""
    names = list(spec.key_names)
    if len(names) == 1 and pa.types.is_integer(old.schema.field(names[0]).type):
        return _match_ints(old.column(names[0]).combine_chunks().to_numpy(zero_copy_only=False),
                           new.column(names[0]).combine_chunks().to_numpy(zero_copy_only=False))
    if len(names) == 1:
        idx = pc.index_in(old.column(names[0]).combine_chunks(), value_set=new.column(names[0]).combine_chunks())
        found = pc.is_valid(idx).to_numpy(zero_copy_only=False)
        o = np.flatnonzero(found)
        return o, pc.filter(idx, pa.array(found)).to_numpy(zero_copy_only=False).astype(np.int64)
    left = old.select(names).append_column("__fs_o", pa.array(np.arange(old.num_rows, dtype=np.int64)))
    right = new.select(names).append_column("__fs_n", pa.array(np.arange(new.num_rows, dtype=np.int64)))
    joined = left.join(right, names, join_type="inner")
    return joined.column("__fs_o").to_numpy(), joined.column("__fs_n").to_numpy()


def _match_ints(old: np.ndarray, new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_match`` for one integer key column: a table indexed by value when the new keys are dense, else
    a binary search in the sorted new keys."""
    if not len(old) or not len(new):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    lo, hi = int(new.min()), int(new.max())
    inside = np.flatnonzero((old >= lo) & (old <= hi))
    if hi - lo < 4 * (len(old) + len(new)) + 1024:
        where = np.full(hi - lo + 1, -1, dtype=np.int64)
        where[new - lo] = np.arange(len(new))
        n = where[old[inside] - lo]
    else:
        order = np.argsort(new, kind="stable")
        at = np.minimum(np.searchsorted(new[order], old[inside]), len(new) - 1)
        n = np.where(new[order][at] == old[inside], order[at], -1)
    hit = n >= 0
    return inside[hit].astype(np.int64), n[hit].astype(np.int64)


def _old_wins(old: pa.ChunkedArray, new: pa.ChunkedArray) -> np.ndarray:
    """Where a live row's precombine value beats the incoming one (null lowest; a tie goes to the new row)."""
    old = old.cast(new.type) if old.type != new.type else old
    greater = pc.greater(old, new)
    if pa.types.is_floating(new.type):  # NaN orders highest, as the merge's sort orders it
        greater = pc.or_kleene(greater, pc.and_kleene(pc.is_nan(old), pc.invert(pc.is_nan(new))))
    wins = pc.and_kleene(pc.is_valid(old), pc.or_kleene(pc.is_null(new), greater))
    return pc.fill_null(wins, False).to_numpy(zero_copy_only=False).astype(bool)
