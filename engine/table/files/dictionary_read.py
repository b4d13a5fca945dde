"""Dictionary-encoded string and binary column chunks decoded as Arrow dictionaries, made dense late.

Arrow's Parquet reader turns a dictionary-encoded BYTE_ARRAY chunk into a dense string column by appending value
after value. Read as an Arrow dictionary (its indices and the dictionary page), the same chunk costs a fraction of
that (benchmarks/README, issue 35's fourth part), and ``dictionary_decode`` then builds the dense column with one
gather. Decoding late also means a deletion vector's filter moves 4-byte indices, not strings.

The risk is a chunk whose writer gave up on its dictionary part way (``fallback``: the later pages plain): read as
a dictionary, its plain values are hashed into one, 8-10x the dense cost. Arrow C++, parquet-rs and parquet-mr
fall back only once the dictionary page outgrows a size limit (``dictionary_pagesize_limit``,
``parquet.dictionary.page.size``: 1 MiB by default), so the chunk then holds that many bytes of distinct values;
parquet-mr's other fallback (the first page compresses badly) writes no dictionary page at all (a writer that judges
over several pages can leave a small chunk with both: it reads right, hashing that chunk). A chunk is read as
a dictionary only when it has a dictionary page, at most ``DICTIONARY_CHUNK_BYTES`` of uncompressed pages (and
``DICTIONARY_MIN_ROWS`` values: a small chunk does not earn the set-up back), so
a writer with the default limits cannot have fallen back in it, and one with a smaller limit costs at most the
hashing of that one chunk's megabyte (the answer is the same either way). The footer cannot say more: pyarrow
exposes no page encoding statistics, and a chunk's ``encodings`` list PLAIN for the dictionary page itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

__all__ = ["DICTIONARY_CHUNK_BYTES", "DICTIONARY_MIN_ROWS", "decoded", "dictionary_candidates", "dictionary_kept",
           "open_parquet", "read_types"]

DICTIONARY_CHUNK_BYTES = 1 << 20
"""Largest uncompressed column chunk read as a dictionary: the writers' default dictionary page limit."""
DICTIONARY_MIN_ROWS = 32_768
"""Fewest values of a column chunk read as a dictionary: reading the dictionary page and the gather that makes it
dense cost a set-up per chunk that small chunks do not earn back (with many distinct values the two break even
near 16,000 rows; measured in benchmarks/README, issue 35's fourth part)."""

_OFFSET_LIMIT = 2**31 - 1  # bytes a string or binary column (32-bit offsets) can hold


def _dictionary_type(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_binary(t)


def dictionary_candidates(schema: pa.Schema) -> tuple[str, ...]:
    """The columns of ``schema`` (a file's columns to read) that may be read as dictionaries: top-level string and
    binary columns, in a schema without nested columns (a column is then its file's leaf of the same index)."""
    if any(pa.types.is_nested(t) or pa.types.is_dictionary(t) for t in schema.types):
        return ()
    return tuple(f.name for f in schema if _dictionary_type(f.type))


def dictionary_kept(metadata: pq.FileMetaData, schema: pa.Schema, names: Sequence[str]) -> list[str]:
    """Those of ``names`` whose every column chunk has a dictionary page, at most ``DICTIONARY_CHUNK_BYTES``
    uncompressed and at least ``DICTIONARY_MIN_ROWS`` values (``schema``: the file's dense columns, one leaf each)."""
    if not names or metadata.num_columns != len(schema):
        return []
    leaves = [(name, schema.get_field_index(name)) for name in names]
    kept = [(name, i) for name, i in leaves if i >= 0]
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        still = []
        for name, i in kept:
            chunk = group.column(i)
            if chunk.physical_type == "BYTE_ARRAY" and chunk.has_dictionary_page and \
                    chunk.total_uncompressed_size <= DICTIONARY_CHUNK_BYTES and chunk.num_values >= DICTIONARY_MIN_ROWS:
                still.append((name, i))
        kept = still
        if not kept:
            break
    return [name for name, _ in kept]


def open_parquet(source: Any, read_dictionary: Sequence[str] = (), **options: Any) -> pq.ParquetFile:
    """A Parquet reader of ``source`` that reads those of ``read_dictionary`` that ``dictionary_kept`` allows as
    dictionaries (the reader is opened once asking for all of them, and again over the same source with the
    parsed footer only when some column's chunks do not qualify). A file lacking a leaf of one of ``read_dictionary``
    (replaced: the column gone, renamed or nested) is opened dense, for the caller's check of its columns to name
    what is wrong (pyarrow refuses such a name with a bare ``KeyError``)."""
    if not read_dictionary:
        return pq.ParquetFile(source, **options)
    try:
        pf = pq.ParquetFile(source, read_dictionary=list(read_dictionary), **options)
    except KeyError:
        return pq.ParquetFile(source, **options)
    kept = dictionary_kept(pf.metadata, pf.schema.to_arrow_schema(), read_dictionary)
    if len(kept) == len(read_dictionary):
        return pf
    return pq.ParquetFile(source, metadata=pf.metadata, read_dictionary=kept or None, **options)


def read_types(expected: pa.Schema, read: pa.Schema) -> tuple[pa.Schema, list[int]]:
    """(``expected`` with the columns ``read`` holds as dictionaries in their dictionary type, so the read keeps
    them as they are; those columns' positions in ``expected``)."""
    positions = [i for i, f in enumerate(expected) if pa.types.is_dictionary(read.field(f.name).type)]
    if not positions:
        return expected, positions
    fields = [f.with_type(read.field(f.name).type) if i in positions else f for i, f in enumerate(expected)]
    return pa.schema(fields, metadata=expected.metadata), positions


def decoded(batch: pa.RecordBatch, positions: Sequence[int], types: Sequence[pa.DataType]) -> list[pa.RecordBatch]:
    """``batch`` with its dictionary columns at ``positions`` dense in ``types`` (the file's own types): one batch,
    or consecutive slices of it where a column's dense values could pass 2 GiB (the dense read's limit per
    column, which it meets by splitting too)."""
    if not positions or not batch.num_rows:
        return [_dense(batch, positions, types)]
    rows = batch.num_rows
    for i in positions:
        values = batch.column(i).dictionary
        if values.nbytes * batch.num_rows <= _OFFSET_LIMIT:  # no value is longer than the whole dictionary
            continue
        longest = pc.max(pc.binary_length(values)).as_py() or 0
        if longest * batch.num_rows > _OFFSET_LIMIT:
            rows = min(rows, max(1, _OFFSET_LIMIT // longest))
    if rows == batch.num_rows:
        return [_dense(batch, positions, types)]
    return [_dense(batch.slice(s, rows), positions, types) for s in range(0, batch.num_rows, rows)]


def _dense(batch: pa.RecordBatch, positions: Sequence[int], types: Sequence[pa.DataType]) -> pa.RecordBatch:
    for i, t in zip(positions, types, strict=True):
        column = batch.column(i).dictionary_decode()
        if not column.type.equals(t):
            column = column.cast(t)
        batch = batch.set_column(i, batch.schema.field(i).with_type(t), column)
    return batch
