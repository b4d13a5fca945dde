"""Versions of one key merged into one row: the open scan's merge of sorted runs (``MergeMode`` ``key``).

A format that writes changes as new versions of rows (Paimon's primary-key tables: sorted runs of an
LSM tree) leaves several rows per key across files; reading the table means keeping, per key, what its
versions add up to. The rows of one merge group arrive evolved to the read schema, with the raw columns
the mode names (a sequence number, a row kind) beside them, file after file in ascending file sequence.
Everything is vectorised: one stable sort by key and version order (Arrow), group boundaries where the key
changes, and per group the last surviving version (``latest``) or, per column, the last non-null value
of a surviving version (``latest_non_null``), found with ``numpy.maximum.reduceat`` over positions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.errors import UnsupportedFormatFeatureError
from fieldshift.open_tables.source import MergeMode

__all__ = ["merge_versions"]

_PER_KEY_NULLS = int(pa.__version__.split(".")[0]) >= 25  # null placement moved into each sort key


def _starts(rows: pa.Table, order: pa.Array, key_names: Sequence[str]) -> np.ndarray:
    """Positions (in sorted order) where a new key begins; equal nulls are one key."""
    n = len(order)
    change = np.zeros(n, dtype=bool)
    if n:
        change[0] = True
    for name in key_names:
        col = rows.column(name).take(order)
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        a, b = col.slice(1), col.slice(0, n - 1)
        differ = pc.fill_null(pc.not_equal(a, b), True)
        if col.null_count:
            differ = pc.and_(differ, pc.invert(pc.and_(pc.is_null(a), pc.is_null(b))))
        change[1:] |= differ.to_numpy(zero_copy_only=False)
    return np.flatnonzero(change)


def _single_versions(rows: pa.Table, mode: MergeMode, retract: np.ndarray | None, raw: list[str]) -> pa.Table:
    """Rows that are their key's only version: a retraction removes its row (a reset's delete too, and
    the other retractions it skips), whatever the fields mode."""
    if retract is not None:
        rows = rows.filter(pa.array(~retract))
    return rows.drop_columns(raw)


def _numpy(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col.to_numpy(zero_copy_only=False)


def _order(rows: pa.Table, mode: MergeMode, key_names: Sequence[str], order_names: Sequence[str]
           ) -> tuple[np.ndarray, np.ndarray]:
    """The sorted order of ``rows`` (by key, then version) and where each key's versions start in it.

    The common case — one numeric key, versions ordered by a sequence column, files that are sorted runs
    arriving in sequence order — is one stable numpy sort of the key, which merges the runs nearly in
    linear time, checked afterwards: where some key's versions are not in ascending sequence the general
    Arrow sort by key, order fields and sequence decides."""
    key = rows.column(key_names[0]) if len(key_names) == 1 else None
    if (key is not None and not order_names and mode.sequence_column is not None and key.null_count == 0
            and (pa.types.is_integer(key.type) or pa.types.is_temporal(key.type))):
        keys = _numpy(key)
        perm = np.argsort(keys, kind="stable")
        ordered = keys[perm]
        change = np.empty(len(perm), dtype=bool)
        change[:1] = True
        np.not_equal(ordered[1:], ordered[:-1], out=change[1:])
        if change.all():  # every key once (runs that interleave): no version order to check
            return perm, np.arange(len(perm))
        seq = _numpy(rows.column(mode.sequence_column))[perm]
        if not np.any((seq[1:] < seq[:-1]) & ~change[1:]):
            return perm, np.flatnonzero(change)
    direction = "descending" if mode.descending_order else "ascending"
    sort_keys = [(k, "ascending") for k in key_names] + [(o, direction) for o in order_names]
    if mode.sequence_column is not None:
        sort_keys.append((mode.sequence_column, "ascending"))
    order = _sort_indices(rows, sort_keys)  # stable: file order breaks ties
    return order.to_numpy(), _starts(rows, order, key_names)


def _sort_indices(rows: pa.Table, sort_keys: list[tuple[str, str]]) -> pa.Array:
    """A stable sort with nulls first (a null sequence field is the oldest version)."""
    if _PER_KEY_NULLS:
        return pc.sort_indices(rows, sort_keys=[(k, o, "at_start") for k, o in sort_keys])
    return pc.sort_indices(rows, sort_keys=sort_keys, null_placement="at_start")


def _last_where(mask: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per group, the last sorted position where ``mask`` holds (-1 where it holds nowhere)."""
    pos = np.where(mask, np.arange(len(mask), dtype=np.int64), -1)
    return np.maximum.reduceat(pos, starts)


def merge_versions(rows: pa.Table, mode: MergeMode, key_names: Sequence[str], order_names: Sequence[str],
                   where: str, *, unique: bool = False) -> pa.Table:
    """The rows that ``rows`` (every version in one merge group) read as, with the mode's raw columns
    (``sequence_column``, ``kind_column``) dropped. ``where`` names the table and group for messages.
    ``unique``: no key occurs twice in ``rows`` (one sorted run), so each row is its key's only version
    and only its row kind matters: nothing is sorted."""
    raw = [c for c in (mode.sequence_column, mode.kind_column) if c is not None]
    if rows.num_rows == 0:
        return rows.drop_columns(raw)
    retract = None
    if mode.kind_column is not None and mode.retract_kinds:
        retract = np.isin(_numpy(rows.column(mode.kind_column)), mode.retract_kinds)
        if not retract.any():
            retract = None
        elif mode.on_retract == "error":
            raise UnsupportedFormatFeatureError(
                f"{where}: {int(retract.sum())} row(s) retract or delete their key, which a partial update accepts "
                "only with 'ignore-delete' or 'partial-update.remove-record-on-delete' set (Paimon's readers refuse "
                "them too)")
        elif mode.on_retract == "ignore":
            rows, retract = rows.filter(pa.array(~retract)), None
    if unique:
        return _single_versions(rows, mode, retract, raw)
    perm, starts = _order(rows, mode, key_names, order_names)
    n = len(perm)
    if retract is None and mode.fields == "latest" and len(starts) == n:
        return rows.drop_columns(raw)  # every row its key's only version: nothing to drop, nothing to sort
    order = pa.array(perm)
    alive = np.ones(n, dtype=bool)
    if retract is not None:
        sorted_retract = retract[perm]
        if mode.on_retract == "reset":
            deletes = pc.equal(rows.column(mode.kind_column).take(order), mode.retract_kinds[-1]) \
                .to_numpy(zero_copy_only=False)
            last_delete = _last_where(deletes, starts)
            group_of = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n)))
            alive = (np.arange(n) > last_delete[group_of]) & ~sorted_retract
    last = np.append(starts[1:], n) - 1 if retract is None else _last_where(alive, starts)
    kept = last >= 0
    if retract is not None and mode.on_retract == "delete":
        kept &= ~sorted_retract[np.maximum(last, 0)]
    if mode.fields == "latest":
        if kept.all() and len(starts) == n:  # every row its key's only version: nothing to drop
            return rows.drop_columns(raw)
        mask = np.zeros(n, dtype=bool)
        mask[perm[last[kept]]] = True
        return rows.filter(pa.array(mask)).drop_columns(raw)
    columns = []
    for name in rows.column_names:
        if name in raw:
            continue
        col = rows.column(name)
        if name in key_names:
            columns.append(col.take(pa.array(perm[last[kept]])))
            continue
        valid = alive & col.is_valid().take(order).to_numpy(zero_copy_only=False)
        found = _last_where(valid, starts)[kept]
        index = pa.array(np.where(found >= 0, perm[np.maximum(found, 0)], 0), mask=found < 0)
        columns.append(col.take(index))
    return pa.table(columns, schema=pa.schema([f for f in rows.schema if f.name not in raw]))
