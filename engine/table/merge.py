"""Merge-on-read for keyed tables: per merge group (a bucket), the newest row of every key.

Every file of a group is first evolved to the scan's read schema (which always holds the key and
precombine columns), so a base file in schema 1 and an update in schema 2 merge as equals. Then, per
key: a delete file with sequence ``s`` removes that key's rows of sequence ``< s`` whatever their
precombine value; of the rows left, the one with the highest (precombine, sequence, position) wins.
Rows of the group's largest data file whose key appears in no other file of the group pass straight
through (``pc.is_in``); only the others are sorted. A group of one data file and no deletes is a
plain read. Filters on non-key columns are applied to the merged rows only (``Scan.finish``), so a
filter can never bring back an older version of a row.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.table.catalog import DataFile
from fieldshift.table.files import iter_file_batches
from fieldshift.table.keys import KeySpec, last_of_runs, merge_group, sort_versions

if TYPE_CHECKING:
    from fieldshift.table.scan import Scan

__all__ = ["group_files", "merge_rows", "merged_arrow", "merged_batches", "merged_count", "read_group"]

_SEQ, _ORD, _ROW = "__fs_seq", "__fs_ord", "__fs_row"


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


def _in_others(big: pa.Table, others: list[pa.Table], spec: KeySpec) -> np.ndarray:
    """Per row of ``big``: whether its key appears in any of ``others`` (key-only tables)."""
    if not others or not any(o.num_rows for o in others):
        return np.zeros(big.num_rows, dtype=bool)
    if len(spec.key_names) == 1:
        name = spec.key_names[0]
        values = pa.chunked_array([o.column(name) for o in others]).combine_chunks()
        return pc.is_in(big.column(name), value_set=values).to_numpy(zero_copy_only=False)
    other = pa.concat_tables(others).group_by(list(spec.key_names)).aggregate([])
    mine = _keys_table(big, spec).append_column(_ROW, pa.array(np.arange(big.num_rows)))
    hit = mine.join(other, list(spec.key_names), join_type="left semi").column(_ROW).to_numpy()
    mask = np.zeros(big.num_rows, dtype=bool)
    mask[hit] = True
    return mask


def merge_rows(data: list[tuple[int, pa.Table]], deletes: list[tuple[int, pa.Table]], spec: KeySpec) -> pa.Table:
    """The merged rows of one group: ``data`` (sequence, rows in the read schema), oldest first, and
    ``deletes`` (sequence, key columns)."""
    if len(data) == 1 and not deletes:
        return data[0][1]
    big = max(range(len(data)), key=lambda i: data[i][1].num_rows)
    others = [_keys_table(t, spec) for i, (_, t) in enumerate(data) if i != big] + [t for _, t in deletes]
    touched = _in_others(data[big][1], others, spec)
    passing = data[big][1].filter(pa.array(~touched))
    parts = []
    ordinal = 0
    for i, (seq, t) in enumerate(data):
        part = t.filter(pa.array(touched)) if i == big else t
        n = part.num_rows
        parts.append(part.append_column(_SEQ, pa.array(np.full(n, seq, dtype=np.int64)))
                     .append_column(_ORD, pa.array(np.arange(ordinal, ordinal + n, dtype=np.int64))))
        ordinal += n
    cand = pa.concat_tables(parts)
    if deletes and cand.num_rows:
        cand = _apply_deletes(cand, deletes, spec)
    pre = cand.column(spec.precombine_name) if spec.precombine_name is not None else None
    idx = sort_versions(cand.select([*spec.key_names, _SEQ, _ORD]), pre, spec, [_SEQ, _ORD])
    winners = cand.take(last_of_runs(_keys_table(cand, spec).take(idx), idx)).drop_columns([_SEQ, _ORD])
    return pa.concat_tables([passing, winners]) if passing.num_rows else winners


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


def read_group(scan: Scan, files: list[DataFile]) -> pa.Table:
    """The merged rows of one group's files, in the scan's read schema, before its row filter."""
    data, deletes = [], []
    for f in files:
        if f.content == "deletes":
            names = list(scan.keys.key_names)  # key columns never change name or type
            expected = scan.schemas[f.schema_id].select(names).to_arrow()
            batches = list(iter_file_batches(scan.table.location / f.path, expected, scan.batch_size))
            deletes.append((f.sequence or 0, pa.Table.from_batches(batches, schema=expected)))
        else:
            batches = list(scan.evolved_batches(f))
            data.append((f.sequence or 0, pa.Table.from_batches(batches, schema=scan.read_schema.to_arrow())))
    if not data:
        return scan.read_schema.to_arrow().empty_table()
    return merge_rows(data, deletes, scan.keys)


def _finished(scan: Scan, merged: pa.Table) -> pa.Table:
    return pa.Table.from_batches([scan.finish(b) for b in merged.to_batches(scan.batch_size)], scan.output_schema)


def merged_batches(scan: Scan) -> Iterator[pa.RecordBatch]:
    """Stream the merged rows group by group (memory bounded by one group)."""
    for group in group_files(scan.files()):
        for batch in _finished(scan, read_group(scan, group)).to_batches(scan.batch_size):
            if batch.num_rows:
                yield batch


def merged_arrow(scan: Scan, workers: int) -> pa.Table:
    """All merged rows; groups merge in parallel."""
    groups = group_files(scan.files())
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(groups)))) as pool:
        parts = list(pool.map(lambda g: _finished(scan, read_group(scan, g)), groups))
    return pa.concat_tables([scan.output_schema.empty_table(), *parts])


def merged_count(scan: Scan) -> int:
    """Rows after the merge: groups of one data file and no deletes are counted from the catalog."""
    total = 0
    for group in group_files(scan.files()):
        if len(group) == 1 and group[0].content == "data" and not scan.predicates:
            total += group[0].record_count
        else:
            total += _finished(scan, read_group(scan, group)).num_rows
    return total
