"""A data file's live rows after its deleted positions (deletion vectors, position deletes), copying as little
as the positions allow.

A filter copies every live row of every column, a good part of what decoding them costs. Where the deleted
positions are clustered (an upsert of a range of keys, a delete of a day), the live rows are a few long runs,
and zero-copy slices of the decoded batch are the same rows in the same order for no copy at all; a row group
without a live row is not decoded. Where they are scattered (the random 10% of an upsert of random keys) one
filter stays the cheapest: a slice costs a pass of the evolution plan and of the row filter of its own (the
cost of copying a few thousand rows).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

__all__ = ["MIN_SLICE_ROWS", "live_batch_size", "live_extent", "live_parts", "live_row_groups"]

MIN_SLICE_ROWS = 4096
"""Slices are used when the live runs of a batch average at least this many rows (else one filter)."""


def live_row_groups(group_rows: Sequence[int], deleted: np.ndarray | None
                    ) -> tuple[list[int] | None, np.ndarray | None]:
    """(the row groups holding a live row, ``deleted`` renumbered to the rows of those groups read one after
    another); (None, ``deleted``) when every group has one. ``deleted``: sorted distinct row positions of
    the file."""
    if deleted is None or not len(deleted) or not len(group_rows):
        return None, deleted
    ends = np.cumsum(np.asarray(group_rows, np.int64))
    starts = ends - np.asarray(group_rows, np.int64)
    lo, hi = np.searchsorted(deleted, starts), np.searchsorted(deleted, ends)
    dead = (hi - lo) == np.asarray(group_rows, np.int64)
    if not dead.any():
        return None, deleted
    keep = [i for i in range(len(group_rows)) if not dead[i]]
    # each kept group's deleted positions move down by the rows of the skipped groups before it
    shift = np.cumsum(np.where(dead, np.asarray(group_rows, np.int64), 0)) - \
        np.where(dead, np.asarray(group_rows, np.int64), 0)
    parts = [deleted[lo[i]:hi[i]] - shift[i] for i in keep]
    return keep, np.concatenate(parts) if parts else deleted[:0]


def live_parts(batch: pa.RecordBatch, removed: np.ndarray, slices: bool = True) -> list[pa.RecordBatch]:
    """The rows of ``batch`` not at ``removed`` (sorted distinct positions within the batch), in order: the batch
    itself, zero-copy slices of its live runs when they average ``MIN_SLICE_ROWS`` rows or more (``slices``),
    else one filtered copy."""
    n = batch.num_rows
    if not len(removed):
        return [batch]
    if len(removed) == n:
        return []
    # removed runs end at removed[gaps], the next starts after; live runs number at least the removed ones - 1
    gaps = np.flatnonzero(np.diff(removed) != 1) if slices else None
    if gaps is not None and len(gaps) * MIN_SLICE_ROWS <= n - len(removed):
        run_starts = np.concatenate(([removed[0]], removed[gaps + 1]))
        run_ends = np.concatenate((removed[gaps], [removed[-1]])) + 1
        live_starts, live_ends = np.concatenate(([0], run_ends)), np.concatenate((run_starts, [n]))
        nonempty = live_ends > live_starts
        if int(nonempty.sum()) * MIN_SLICE_ROWS <= n - len(removed):
            return [batch.slice(s, e - s) for s, e in
                    zip(live_starts[nonempty].tolist(), live_ends[nonempty].tolist(), strict=True)]
    keep = np.ones(n, dtype=bool)
    keep[removed] = False
    return [batch.filter(pa.array(keep))]


def live_extent(rows: int, deleted: np.ndarray | None) -> int:
    """How many of ``rows`` come before the run of deleted positions that ends the file (all of them when the
    last row is live): no row after it needs decoding."""
    if deleted is None or not len(deleted) or int(deleted[-1]) != rows - 1:
        return rows
    gaps = np.flatnonzero(np.diff(deleted) != 1)
    return int(deleted[gaps[-1] + 1]) if len(gaps) else int(deleted[0])


def live_batch_size(extent: int, batch_size: int) -> int:
    """A batch size of at most ``batch_size`` rows whose batches end at ``extent`` or a few rows after it (fewer
    than the batches it takes to get there), so a read can stop there."""
    if extent <= 0:
        return batch_size
    count = -(-extent // batch_size)
    return -(-extent // count)
