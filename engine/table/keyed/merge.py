"""Merge-on-read for keyed tables: per merge group (a bucket), the newest row of every key.

Every file of a group is first evolved to the scan's read schema (which always holds the key and
precombine columns), so a base file in schema 1 and an update in schema 2 merge as equals. Then, per
key: a delete file with sequence ``s`` removes that key's rows of sequence ``< s`` whatever their
precombine value; of the rows left, the one with the highest (precombine, sequence, position) wins.
Rows whose key occurs once in the whole group (data and delete files) pass straight through; only
keys with several versions are ranked. A group of one data file and no deletes is a
plain read, and so is a group whose files are all *resolved* (``deletion_vectors``): their deletion
vectors, recorded at write time, already removed every superseded row. Filters on non-key columns
are applied to the merged rows only (``Scan.finish``), so a filter can never bring back an older
version of a row.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.schema.model import Schema
from fieldshift.table.catalog.deletion_vectors import DeletionVector
from fieldshift.table.catalog.sqlite import DataFile
from fieldshift.table.files.data_files import iter_file_batches
from fieldshift.table.keyed.keys import KeySpec, last_of_runs, merge_group, sort_versions

__all__ = ["MergeScan", "group_files", "merge_rows", "read_group", "resolved", "superseded_positions"]


class MergeScan(Protocol):
    """What reading a keyed table's group by ``read_group`` needs of its scan (``table.scan.Scan`` is one; the
    write-time key lookup and compaction read groups through it): the files and their vectors, each file
    evolved to the read schema. A protocol, so the scan imports the merge and not the other way round."""

    io: Any  # the table's TableIO: its storage reads delete files
    keys: Any  # the KeySpec the rows merge by (never None here)
    read_schema: Schema
    batch_size: int

    @property
    def schemas(self) -> Mapping[int, Schema]: ...

    def deletion_vectors(self) -> Mapping[int, DeletionVector]: ...

    def evolved_batches(self, f: DataFile, keep: Any = None) -> Iterator[pa.RecordBatch]: ...


_SEQ, _ORD, _ROW, _SRC = "__fs_seq", "__fs_ord", "__fs_row", "__fs_src"


def group_files(files: list[DataFile]) -> list[list[DataFile]]:
    """Files by merge group, each group oldest first (sequence, then file id)."""
    groups: dict[tuple[object, ...], list[DataFile]] = {}
    one_spec = len({f.spec_id for f in files}) <= 1
    for f in files:
        groups.setdefault(merge_group(f, by_partition=one_spec), []).append(f)
    return [sorted(g, key=lambda f: (f.sequence or 0, f.file_id or 0))
            for _, g in sorted(groups.items(), key=lambda kv: repr(kv[0]))]


def _keys_table(t: pa.Table, spec: KeySpec) -> pa.Table:
    return t.select(list(spec.key_names))


def _shared(tables: list[pa.Table], spec: KeySpec) -> list[np.ndarray]:
    """Per table: which rows hold a key that occurs more than once across all ``tables`` (data files
    and delete files of one group). Only those rows need ranking; every other row is its key's only
    version and passes straight through."""
    names = list(spec.key_names)
    if len(names) == 1 and all(pa.types.is_integer(t.schema.field(names[0]).type) for t in tables):
        columns = [t.column(names[0]).combine_chunks().cast(pa.int64()) for t in tables]
        if not any(c.null_count for c in columns):  # key columns are required: no nulls in practice
            return _shared_ints([c.to_numpy() for c in columns])
    keyed = [t.select(names).append_column(_SRC, pa.array(np.full(t.num_rows, i, dtype=np.int32)))
             .append_column(_ROW, pa.array(np.arange(t.num_rows, dtype=np.int64))) for i, t in enumerate(tables)]
    every = pa.concat_tables(keyed, promote_options="permissive")
    counted = every.select(names).group_by(names).aggregate([([], "count_all")])
    repeated_keys = counted.filter(pc.greater(counted.column("count_all"), 1)).select(names)
    hits = every.join(repeated_keys, names, join_type="left semi")
    src, row = hits.column(_SRC).to_numpy(), hits.column(_ROW).to_numpy()
    masks = [np.zeros(t.num_rows, dtype=bool) for t in tables]
    for i, mask in enumerate(masks):
        mask[row[src == i]] = True
    return masks


def _shared_ints(columns: list[np.ndarray]) -> list[np.ndarray]:
    """``_shared`` for one integer key column: counted in a table indexed by value when the keys are
    dense (most generated ids are), else found by sorting."""
    every = np.concatenate(columns)
    if not len(every):
        return [np.zeros(0, dtype=bool) for _ in columns]
    lo, hi = int(every.min()), int(every.max())
    if hi - lo < 4 * len(every) + 1024:
        counts = np.bincount(every - lo, minlength=hi - lo + 1)
        return [counts[c - lo] > 1 for c in columns]
    ordered = np.sort(every)
    repeated = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    return [np.isin(c, repeated, assume_unique=False) if len(repeated) else np.zeros(len(c), dtype=bool)
            for c in columns]


def merge_rows(data: list[tuple[int, pa.Table]], deletes: list[tuple[int, pa.Table]], spec: KeySpec) -> pa.Table:
    """The merged rows of one group: ``data`` (sequence, rows in the read schema), oldest first, and
    ``deletes`` (sequence, key columns).

    Versions are ranked on narrow tables (key, precombine, sequence, ordinal, source file, row) holding
    only the rows whose key occurs more than once in the group; the wide rows are copied once: each
    file's unique-key rows by one mask, the winners taken.
    """
    if len(data) == 1 and not deletes:
        return data[0][1]
    masks = _shared([t for _, t in data] + [t for _, t in deletes], spec)[:len(data)]
    narrow = list(spec.merge_columns)
    parts = []
    ordinal = 0
    for i, (seq, t) in enumerate(data):
        rows = np.flatnonzero(masks[i])
        part = t.select(narrow).take(pa.array(rows))
        n = part.num_rows
        parts.append(part.append_column(_SEQ, pa.array(np.full(n, seq, dtype=np.int64)))
                     .append_column(_ORD, pa.array(np.arange(ordinal, ordinal + n, dtype=np.int64)))
                     .append_column(_SRC, pa.array(np.full(n, i, dtype=np.int32)))
                     .append_column(_ROW, pa.array(rows.astype(np.int64))))
        ordinal += n
    cand = pa.concat_tables(parts)
    if deletes and cand.num_rows:
        cand = _apply_deletes(cand, deletes, spec)
    pre = cand.column(spec.precombine_name) if spec.precombine_name is not None else None
    idx = sort_versions(cand.select([*spec.key_names, _ORD]), pre, spec, [_ORD])  # ordinals follow sequences
    won = cand.take(last_of_runs(_keys_table(cand, spec).take(idx), idx))
    src = won.column(_SRC).to_numpy()
    row = won.column(_ROW).to_numpy()
    out = []
    for i, (_, t) in enumerate(data):
        keep = ~masks[i]
        keep[row[src == i]] = True
        out.append(t if keep.all() else t.filter(pa.array(keep)))
    return pa.concat_tables(out)


def _apply_deletes(cand: pa.Table, deletes: list[tuple[int, pa.Table]], spec: KeySpec) -> pa.Table:
    """Drop candidate rows older than a delete of their key."""
    keys = list(spec.key_names)
    removed = pa.concat_tables([t.select(keys).append_column(_SEQ, pa.array(np.full(t.num_rows, s, dtype=np.int64)))
                                for s, t in deletes])
    latest = removed.group_by(keys).aggregate([(_SEQ, "max")]).rename_columns([*keys, "__fs_dseq"])
    rows = _keys_table(cand, spec).append_column(_ROW, pa.array(np.arange(cand.num_rows)))
    joined = rows.join(latest, keys, join_type="inner")
    dead_rows = joined.column(_ROW).to_numpy()
    dseq = joined.column("__fs_dseq").to_numpy()
    seq = cand.column(_SEQ).to_numpy()
    keep = np.ones(cand.num_rows, dtype=bool)
    keep[dead_rows[seq[dead_rows] < dseq]] = False
    return cand.filter(pa.array(keep))


def resolved(scan: MergeScan, files: list[DataFile]) -> bool:
    """Whether a group reads without a merge: every file resolved (its deletion vector applied, each key
    is left once), or one data file alone."""
    vectors = scan.deletion_vectors()
    return all(f.file_id in vectors for f in files) or (len(files) == 1 and files[0].content == "data")


def _kept_rows(scan: MergeScan, f: DataFile) -> pa.Table:
    """A data file's rows its deletion vector keeps, evolved to the read schema (filtered before evolving)."""
    v = scan.deletion_vectors().get(f.file_id) if f.file_id is not None else None
    keep = v.keep_mask(f.record_count) if v is not None else None
    return pa.Table.from_batches(list(scan.evolved_batches(f, keep)), schema=scan.read_schema.to_arrow())


def _delete_keys(scan: MergeScan, f: DataFile) -> tuple[int, pa.Table]:
    """A delete file's (sequence, key columns)."""
    names = list(scan.keys.key_names)  # key columns never change name or type
    expected = scan.schemas[f.schema_id].select(names).to_arrow()
    batches = list(iter_file_batches(scan.io.storage, f.path, expected, scan.batch_size))
    return f.sequence or 0, pa.Table.from_batches(batches, schema=expected)


def read_group(scan: MergeScan, files: list[DataFile]) -> pa.Table:
    """The merged rows of one group's files, in the scan's read schema, before its row filter.

    Deletion vectors apply first (the rows they remove never win a merge); a resolved group is then
    read as it is, any other merged by key."""
    plain = resolved(scan, files)
    data, deletes = [], []
    for f in files:
        if f.content == "deletes":
            if not plain:  # resolved deletes are in the vectors already
                deletes.append(_delete_keys(scan, f))
        else:
            data.append((f.sequence or 0, _kept_rows(scan, f)))
    if not data:
        return scan.read_schema.to_arrow().empty_table()
    if plain:
        return pa.concat_tables([t for _, t in data])
    return merge_rows(data, deletes, scan.keys)


_POS, _FILE = "__fs_pos", "__fs_file"


def superseded_positions(scan: MergeScan, files: list[DataFile]) -> dict[int, np.ndarray]:
    """Per data file of one group (by file id): the sorted row positions ``read_group`` drops — its deletion
    vector's and the versions the key merge supersedes or a delete file removes. What an Iceberg reader,
    which applies position deletes and never merges keys, must be told to drop (publishing)."""
    vectors = scan.deletion_vectors()
    data, deletes, counts = [], [], {}
    for f in files:
        if f.content == "deletes":
            deletes.append(_delete_keys(scan, f))
            continue
        v = vectors.get(f.file_id) if f.file_id is not None else None
        keep = v.keep_mask(f.record_count) if v is not None else None
        positions = np.flatnonzero(keep) if keep is not None else np.arange(f.record_count)
        rows = _kept_rows(scan, f)
        rows = (rows.append_column(_POS, pa.array(positions.astype(np.int64)))
                .append_column(_FILE, pa.array(np.full(rows.num_rows, len(counts), dtype=np.int64))))
        counts[f.file_id] = f.record_count
        data.append((f.sequence or 0, rows))
    if not data:
        return {}
    merged = merge_rows(data, deletes, scan.keys)
    which, kept = merged.column(_FILE).to_numpy(), merged.column(_POS).to_numpy()
    out = {}
    for i, (file_id, count) in enumerate(counts.items()):
        dropped = np.ones(count, dtype=bool)
        dropped[kept[which == i]] = False
        out[file_id] = np.flatnonzero(dropped)
    return out
