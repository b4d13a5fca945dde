"""Primary-key tables: which columns are the key, the precombine (ordering) column, and the hidden buckets.

A table created with identifier fields is *keyed*: rows are unique by key, writes may replace
(``upsert``) or remove (``delete``) rows by key, and scans merge on read. The declaration lives in
table properties fixed at create: ``fieldshift.buckets`` (the bucket count) and
``fieldshift.precombine-id`` (the precombine column's *field id*, so renaming it is harmless). The key
columns are the schema's identifier fields, which no later schema may change.

Bucket of a row (Paimon's hidden buckets, Iceberg's hash): every key column is hashed with Iceberg's
32-bit murmur3 bucket hash (``fieldshift.kernels.murmur3``); several columns combine as
``h = h * 31 + h_i`` (mod 2**32, from h = 0, left to right in key order); the bucket is
``(h & 0x7FFFFFFF) % N`` — for a one-column key exactly Iceberg's ``bucket[N]`` transform.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.errors import IdentifierFieldChangeError, KeyDeclarationError
from fieldshift.kernels.murmur3 import iceberg_hash
from fieldshift.kernels.threads import run_parallel, split_range
from fieldshift.schema.model import Schema
from fieldshift.table.evolution.precombine_order import PRECOMBINE_PROPERTY
from fieldshift.table.records import DataFile

__all__ = ["BUCKETS_PROPERTY", "DEFAULT_BUCKETS", "PRECOMBINE_PROPERTY", "KeySpec", "bucket_numbers", "bucket_of",
           "bucket_order", "check_key_change", "dedupe_latest", "forget_key_hash", "key_hash", "key_properties",
           "key_spec", "last_of_runs", "merge_group", "remembering_keys", "sort_versions"]

BUCKETS_PROPERTY = "fieldshift.buckets"
DEFAULT_BUCKETS = 4
"""Buckets of a keyed table unless ``buckets=`` says otherwise: a merge reads one bucket's files at a time."""
MAX_BUCKETS = 1024


@dataclass(frozen=True)
class KeySpec:
    """A keyed table's key: top-level key column ids and names, the precombine column, the bucket count."""

    key_ids: tuple[int, ...]
    key_names: tuple[str, ...]
    precombine_id: int | None
    precombine_name: str | None
    buckets: int

    @property
    def merge_columns(self) -> tuple[str, ...]:
        """The columns a merge needs besides those asked for."""
        return self.key_names + ((self.precombine_name,) if self.precombine_name else ())


def merge_group(f: DataFile, by_partition: bool = True) -> tuple[Any, ...]:
    """The files merged together: one hidden bucket of one partition.

    Partition source columns belong to the key, so every version of a key lies in one partition of
    one spec. After a spec change, old and new files place a key in different partitions; until
    ``compact()`` rewrites the old ones, ``by_partition=False`` merges a bucket across partitions."""
    return (f.spec_id, f.partition, f.bucket) if by_partition else (f.bucket,)


def _keyable(t: Any) -> bool:
    T = pa.types
    return isinstance(t, pa.DataType) and (
        (T.is_integer(t) and not T.is_uint64(t)) or T.is_string(t) or T.is_large_string(t) or T.is_binary(t)
        or T.is_large_binary(t) or T.is_fixed_size_binary(t) or T.is_date(t) or T.is_timestamp(t) or T.is_time(t)
        or T.is_decimal(t))


def _orderable(t: Any) -> bool:
    return isinstance(t, pa.DataType) and (_keyable(t) or pa.types.is_floating(t))


def key_properties(schema: Schema, identifier_fields: Sequence[str], precombine: str | None,
                   buckets: int | None) -> dict[str, str]:
    """Check a keyed table's declaration at create and return the properties recording it."""
    if not identifier_fields:
        if precombine is not None or buckets is not None:
            raise KeyDeclarationError("precombine= and buckets= need a primary key: pass identifier_fields=[...]")
        return {}
    for name in identifier_fields:
        f = schema.find(name)
        if schema.parent_id(f.id) is not None:
            raise KeyDeclarationError(f"key column {name!r} is nested; keys of a keyed table are top-level columns")
        if f.nullable:
            raise KeyDeclarationError(f"key column {name!r} is nullable; declare it NOT NULL (nullable=False)")
        if not _keyable(f.type):
            raise KeyDeclarationError(f"key column {name!r} is {f.type}; keys must be integers, strings, binary, "
                                      "dates, times, timestamps or decimals (Iceberg's bucket hash has no floats, "
                                      "booleans or nested types)")
    if buckets is None:
        buckets = DEFAULT_BUCKETS
    if isinstance(buckets, bool) or not isinstance(buckets, int) or not 1 <= buckets <= MAX_BUCKETS:
        raise KeyDeclarationError(f"buckets must be an int from 1 to {MAX_BUCKETS}, not {buckets!r}")
    props = {BUCKETS_PROPERTY: str(buckets)}
    if precombine is not None:
        f = schema.find(precombine)
        if schema.parent_id(f.id) is not None or not _orderable(f.type):
            raise KeyDeclarationError(f"precombine column {precombine!r} must be a top-level orderable primitive "
                                      f"(a number, string, date or timestamp), not {f.type}")
        if f.id in schema.identifier_field_ids:
            raise KeyDeclarationError(f"precombine column {precombine!r} is a key column; pick another column")
        props[PRECOMBINE_PROPERTY] = str(f.id)
    return props


def key_spec(properties: dict[str, str], schema: Schema) -> KeySpec | None:
    """The table's key, or None for an unkeyed table (identifier fields alone do not make a table keyed)."""
    if BUCKETS_PROPERTY not in properties:
        return None
    ids = tuple(schema.identifier_field_ids)
    pre = properties.get(PRECOMBINE_PROPERTY)
    pre_id = int(pre) if pre is not None else None
    pre_name = schema.field(pre_id).name if pre_id is not None and schema.has_field(pre_id) else None
    return KeySpec(ids, tuple(schema.field(i).name for i in ids), pre_id, pre_name, int(properties[BUCKETS_PROPERTY]))


def check_key_change(spec: KeySpec | None, new: Schema) -> None:
    """A keyed table's key and precombine columns survive every schema change (Paimon's rule)."""
    if spec is None:
        return
    if tuple(new.identifier_field_ids) != spec.key_ids:
        raise IdentifierFieldChangeError(
            f"the primary key of a keyed table cannot change (it is {list(spec.key_names)}); create a new table "
            "with the new key and copy the rows")
    if spec.precombine_id is not None and not new.has_field(spec.precombine_id):
        raise KeyDeclarationError(f"cannot drop precombine column {spec.precombine_name!r}: merges order rows by "
                                  "it; it may be renamed or widened")


# -- buckets ----------------------------------------------------------------------------------------
_PARALLEL_ROWS = 1 << 18
"""Columns of at least twice this many rows are hashed in row ranges on ``get_threads()`` threads (the hash
kernels release the GIL)."""


def _column_hash(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    ranges = split_range(len(column), _PARALLEL_ROWS)
    if len(ranges) < 2:
        return _range_hash(column)
    return np.concatenate(run_parallel(lambda lo, hi: _range_hash(column.slice(lo, hi - lo)), ranges))


def _range_hash(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return iceberg_hash(column).to_numpy(zero_copy_only=False).view(np.uint32)


def _identity(columns: Sequence[pa.ChunkedArray]) -> tuple[Any, ...]:
    """What makes two key-column sets hold the same values without reading them: the same buffers (Arrow
    buffers are immutable), offsets, lengths and types."""
    return tuple((str(c.type), tuple((a.offset, len(a), tuple(b.address if b is not None else 0 for b in a.buffers()))
                                     for a in c.chunks)) for c in columns)


# The last key hash computed, with the columns it was computed from (held, so their buffers cannot be
# freed and their addresses reused while the entry lives). One write hashes the same keys up to four
# times (uniqueness, the lookup of live keys, the deletion-vector plan, the bucket split). Only remembered
# inside ``remembering_keys`` (a write in progress), and dropped when the outermost such block ends.
_LAST_HASH: list[tuple[tuple[Any, ...], list[pa.ChunkedArray], np.ndarray]] = []
_HASH_LOCK = threading.Lock()
_WRITES = 0  # ``remembering_keys`` blocks open in this process


@contextlib.contextmanager
def remembering_keys() -> Iterator[None]:
    """Inside the block (one write's key checks, lookups and bucket split) ``key_hash`` and ``bucket_order``
    remember their last answer for the calls that follow; when the last open block ends the answers and the
    key columns they hold are dropped, refused write or not. Outside every block nothing is remembered, so a
    long-lived process (a Spark worker writing one batch's bucket files) keeps no batch's keys alive."""
    global _WRITES
    with _HASH_LOCK:
        _WRITES += 1
    try:
        yield
    finally:
        with _HASH_LOCK:
            _WRITES -= 1
            if not _WRITES:
                _LAST_HASH.clear()
                _LAST_ORDER.clear()


def _key_columns(data: pa.Table, spec: KeySpec) -> tuple[list[pa.ChunkedArray], tuple[Any, ...] | None]:
    """The key columns and their identity (None: not to be remembered)."""
    columns = [data.column(name) for name in spec.key_names]
    # a dictionary column's values live outside its buffers (in its dictionary): never remembered
    return columns, None if any(pa.types.is_dictionary(c.type) for c in columns) else _identity(columns)


def key_hash(data: pa.Table, spec: KeySpec) -> np.ndarray:
    """The combined key hash of every row (uint32, before the bucket modulo; see the module docstring).

    Read-only (callers must not write to it): the result is shared by the calls that hash the same key
    columns one after another."""
    columns, ident = _key_columns(data, spec)
    with _HASH_LOCK:
        if ident is not None and _LAST_HASH and _LAST_HASH[0][0] == ident:
            return _LAST_HASH[0][2]
    h = np.zeros(data.num_rows, dtype=np.uint32)
    for column in columns:
        with np.errstate(over="ignore"):
            h = h * np.uint32(31) + _column_hash(column)
    h.flags.writeable = False
    if ident is not None:
        with _HASH_LOCK:
            if _WRITES:
                _LAST_HASH[:] = [(ident, columns, h)]
    return h


def forget_key_hash() -> None:
    """Drop the remembered key hash and bucket order (and the key columns they hold) now, even inside a
    ``remembering_keys`` block (tests; a write lets go when its block ends)."""
    with _HASH_LOCK:
        _LAST_HASH.clear()
        _LAST_ORDER.clear()


# The last bucket order computed (key identity, bucket count, the columns, buckets, order): the live-key
# lookup and the bucket split of one write order the same rows by bucket.
_LAST_ORDER: list[tuple[tuple[Any, ...], int, list[pa.ChunkedArray], np.ndarray, np.ndarray]] = []


def bucket_order(data: pa.Table, spec: KeySpec) -> tuple[np.ndarray, np.ndarray]:
    """``bucket_of(data, spec)`` and the rows in bucket order: a stable sort, so each bucket's rows are in
    ascending row order (numpy's radix sort of int16: buckets < MAX_BUCKETS). Read-only, shared like
    ``key_hash``'s result."""
    columns, ident = _key_columns(data, spec)
    with _HASH_LOCK:
        if ident is not None and _LAST_ORDER and _LAST_ORDER[0][:2] == (ident, spec.buckets):
            return _LAST_ORDER[0][3], _LAST_ORDER[0][4]
    buckets = bucket_of(data, spec)
    order = np.argsort(buckets.astype(np.int16), kind="stable")
    buckets.flags.writeable = order.flags.writeable = False
    if ident is not None:
        with _HASH_LOCK:
            if _WRITES:
                _LAST_ORDER[:] = [(ident, spec.buckets, columns, buckets, order)]
    return buckets, order


def bucket_of(data: pa.Table, spec: KeySpec) -> np.ndarray:
    """The bucket of every row of ``data`` (int32); the hash is documented in the module docstring."""
    h = key_hash(data, spec)
    return bucket_numbers(h, spec.buckets)


def bucket_numbers(h: np.ndarray, buckets: int) -> np.ndarray:
    """``(h & 0x7FFFFFFF) % buckets`` as int32; a power-of-two count is a mask of the low bits (the same
    numbers, without numpy's integer modulo, the dearer operation)."""
    if buckets & (buckets - 1) == 0:
        return (h & np.uint32(buckets - 1)).view(np.int32)
    return ((h & np.uint32(0x7FFFFFFF)) % np.uint32(buckets)).astype(np.int32)


def dedupe_latest(data: pa.Table, spec: KeySpec) -> pa.Table:
    """One row per key: the highest precombine value wins, the later row on ties (Hudi's precombine)."""
    if data.num_rows < 2:
        return data
    ranked = data.select(list(spec.key_names)).append_column("__pos", pa.array(np.arange(data.num_rows)))
    idx = sort_versions(ranked, data.column(spec.precombine_name) if spec.precombine_name else None, spec,
                        ["__pos"])
    return data.take(last_of_runs(data.select(list(spec.key_names)).take(idx), idx))


def sort_versions(table: pa.Table, precombine: pa.ChunkedArray | None, spec: KeySpec,
                  then: Sequence[str]) -> pa.Array:
    """Indices ordering ``table`` by key, then precombine (null lowest), then the columns ``then``.

    Every sort column becomes a numpy array of ranks or values and ``np.lexsort`` orders them (a
    multi-column Arrow sort was several times slower on merge candidates)."""
    columns = [table.column(n) for n in spec.key_names]
    if precombine is not None:
        columns += [pc.is_valid(precombine), precombine]
    columns += [table.column(n) for n in then]
    arrays = [_sortable(c) for c in columns]
    return pa.array(np.lexsort(arrays[::-1]))


def _sortable(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A numpy array ordering like ``column`` (nulls anywhere: callers order them by a validity column)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    t = column.type
    if column.null_count == 0:
        if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
            return column.to_numpy(zero_copy_only=False)
        if pa.types.is_temporal(t) and not pa.types.is_interval(t):
            return column.cast(pa.int64() if t.bit_width == 64 else pa.int32()).to_numpy(zero_copy_only=False)
    return pc.rank(column, sort_keys="ascending", tiebreaker="dense").to_numpy()


def last_of_runs(sorted_keys: pa.Table, idx: pa.Array) -> pa.Array:
    """Of indices ``idx`` whose rows ``sorted_keys`` are sorted by key, those of the last row of each key."""
    n = sorted_keys.num_rows
    if n == 0:
        return idx
    last = np.zeros(n, dtype=bool)
    last[-1] = True
    for column in sorted_keys.columns:
        col = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        differs = pc.not_equal(col.slice(0, n - 1), col.slice(1)).to_numpy(zero_copy_only=False)
        last[:-1] |= differs
    return pc.take(idx, pa.array(np.flatnonzero(last)))
