"""Data files: Parquet with field ids, written all-or-nothing through the table's storage, never modified."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fieldshift.errors import CommitConflictError, CommitOutcomeUnknownError, DataFileError, SchemaEvolutionError
from fieldshift.schema.model import Schema
from fieldshift.table.files.parquet_layouts import for_parquet, restore_types
from fieldshift.table.files.stats import compute_stats
from fieldshift.table.files.storage import TMP_SUFFIX, TableStorage, open_storage
from fieldshift.table.files.write_layout import DEFAULT_LAYOUT, SMALL_CHUNK_BYTES, WriteLayout
from fieldshift.table.records import DataFile

__all__ = ["FOOTER_STATS", "TMP_SUFFIX", "check_file_columns", "check_present", "data_file_errors", "iter_file_batches",
           "leaf_indices", "name_data_file", "parquet_codec", "read_columns", "remove_files",
           "removed_unless_committed", "write_data_file", "write_side_file"]

def parquet_codec(table: pa.Table) -> str:
    """The codec the default layout writes ``table`` (one file's rows) with (see ``WriteLayout.codec_for``)."""
    return DEFAULT_LAYOUT.codec_for(table, DEFAULT_LAYOUT.group_rows(table))


def _atomic_write(table: pa.Table, storage: TableStorage, rel: str, layout: WriteLayout = DEFAULT_LAYOUT,
                  footer: list[pq.FileMetaData] | None = None) -> int:
    """Write ``table`` at ``rel``; ``footer`` (a list) receives the written file's metadata."""
    rows = layout.group_rows(table)
    codec = layout.codec_for(table, rows)
    collect = {} if footer is None else {"metadata_collector": footer}
    return storage.write_parquet(rel, table, row_group_size=rows, compression=codec,
                                 use_dictionary=layout.dictionary_columns(table), **collect)


FOOTER_STATS = True
"""Take text and binary bounds from the footer the Parquet writer just built (``compute_stats``'s
``footer``) instead of computing them again; False computes every bound (the path without it, for tests)."""


# Parquet has no seconds unit: pyarrow stores timestamp[s] as milliseconds, so seconds beyond this overflow.
_MAX_SECONDS = (2**63 - 1) // 1000


def _far_seconds(table: pa.Table) -> list[str]:
    """Top-level timestamp[s] columns holding values Parquet cannot store."""
    far = []
    for f, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_timestamp(f.type) and f.type.unit == "s" and column.null_count < len(column):
            bounds = pc.min_max(column.cast(pa.int64()))
            if max(abs(bounds["min"].as_py()), abs(bounds["max"].as_py())) > _MAX_SECONDS:
                far.append(f.name)
    return far


def write_data_file(location: TableStorage | Path | str, schema: Schema, table: pa.Table, *, spec_id: int = 0,
                    partition: tuple[Any, ...] = (), directory: str = "data",
                    layout: WriteLayout = DEFAULT_LAYOUT) -> DataFile:
    """Write ``table`` (already in ``schema``'s Arrow form, ids in field metadata) as a data file.

    ``directory`` (under the table) only helps people browsing; the catalog records ``spec_id`` and
    ``partition`` and is the only truth about them. ``layout``: row groups and codec (the table's properties)."""
    far = _far_seconds(table)
    if far:
        raise SchemaEvolutionError(
            f"column(s) {far} hold timestamp[s] values beyond year 292,000,000, which Parquet cannot store (it "
            "keeps seconds as milliseconds); nothing was written. Drop or fix those values.")
    rel = f"{directory}/{uuid.uuid4().hex}.parquet"
    footer: list[pq.FileMetaData] | None = [] if FOOTER_STATS else None
    size = _atomic_write(for_parquet(table), open_storage(location), rel, layout, footer)
    stats = compute_stats(schema, table, footer[0] if footer else None)
    return DataFile(rel, schema.schema_id, table.num_rows, size, stats, spec_id=spec_id, partition=partition)


def write_side_file(location: TableStorage | Path | str, folder: str, table: pa.Table) -> str:
    """Write a non-data Parquet file (e.g. quarantined rows) atomically; returns its relative path."""
    rel = f"{folder}/{uuid.uuid4().hex}.parquet"
    for name in _far_seconds(table):  # set-aside rows keep their value as the integer seconds it is
        i = table.schema.get_field_index(name)
        table = table.set_column(i, pa.field(name, pa.int64(), metadata={b"fieldshift.unit": b"timestamp[s]"}),
                                 table.column(i).cast(pa.int64()))
    _atomic_write(for_parquet(table), open_storage(location), rel)
    return rel


def iter_file_batches(storage: TableStorage, rel: str, expected: pa.Schema,
                      batch_size: int) -> Iterator[pa.RecordBatch]:
    """Batches of ``expected``'s top-level columns (names, field ids and types as the catalog says);
    a missing, corrupt or replaced file is a DataFileError."""
    path = storage.display(rel)
    with data_file_errors(path):
        pf = storage.parquet_file(rel)
        found = pf.schema_arrow  # built anew on every access
        check_file_columns(path, found, expected)
        yield from read_columns(pf, expected.names, batch_size, restore=expected, file_schema=found)


def read_columns(pf: pq.ParquetFile, names: Sequence[str], batch_size: int,
                 row_groups: Sequence[int] | None = None, restore: pa.Schema | None = None,
                 file_schema: pa.Schema | None = None, indices: Sequence[int] | None = None
                 ) -> Iterator[pa.RecordBatch]:
    """Batches of exactly the top-level columns ``names``, in that order.

    ``restore`` gives the columns' recorded types, for layouts Parquet does not keep (parquet_layouts).

    Selected by leaf column index, never by name: pyarrow reads a name with a dot as a path, so
    selecting a column named ``a.b`` would also bring struct ``a``'s child ``b`` (and the columns come
    back in file order). With no names, batches still count rows. ``file_schema`` is ``pf.schema_arrow``
    when the caller has it already, ``indices`` the leaves of ``names`` (``leaf_indices``).
    """
    if indices is None:
        found = pf.schema_arrow if file_schema is None else file_schema
        indices = leaf_indices(found, names, pf.metadata.num_columns)
    groups = range(pf.metadata.num_row_groups) if row_groups is None else list(row_groups)
    wanted = None if restore is None else [restore.field(n).type for n in names]
    threads = _large_chunks(pf.metadata, groups)
    for batch in pf.reader.iter_batches(batch_size, row_groups=groups, column_indices=indices, use_threads=threads):
        batch = batch.select(list(names)) if batch.schema.names != list(names) else batch
        yield batch if wanted is None else restore_types(batch, wanted)


def leaf_indices(found: pa.Schema, names: Sequence[str], num_columns: int) -> list[int]:
    """The Parquet leaf columns holding the top-level columns ``names`` of a file whose columns are ``found`` (its
    Arrow schema) and whose footer counts ``num_columns`` leaves."""
    if num_columns == len(found):  # no nested column: one leaf each
        position = {name: i for i, name in enumerate(found.names)}
        return [position[name] for name in names]
    leaves, start = {}, 0
    for f in found:
        count = _leaf_count(f.type)
        leaves[f.name] = range(start, start + count)
        start += count
    return [i for name in names for i in leaves[name]]


def _large_chunks(metadata: pq.FileMetaData, groups: Sequence[int]) -> bool:
    """Whether the column chunks average 64 KiB or more: decoding small ones on Arrow's threads costs more
    in hand-offs than it saves (a 2-row file of 10,000 columns: 0.24 s threaded, 0.17 s not)."""
    if not groups or not metadata.num_columns:
        return False
    total = sum(metadata.row_group(g).total_byte_size for g in groups)
    return total >= SMALL_CHUNK_BYTES * metadata.num_columns * len(groups)


def _leaf_count(t: pa.DataType) -> int:
    """Parquet leaf columns under one Arrow field (depth first, as Parquet numbers them)."""
    if pa.types.is_struct(t):
        return sum(_leaf_count(f.type) for f in t)
    if pa.types.is_map(t):
        return _leaf_count(t.key_type) + _leaf_count(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _leaf_count(t.value_type)
    return 1


def check_file_columns(path: Path | str, found: pa.Schema, expected: pa.Schema) -> None:
    """Refuse a data file whose columns are not the ones its schema id promises (it was replaced)."""
    if found.equals(expected, check_metadata=True):  # the common case, decided in C++: same names, ids, types
        return
    problems = []
    for want in expected:
        i = found.get_field_index(want.name)
        if i < 0:
            problems.append(f"column {want.name!r} ({want.type}, field id {_field_id(want)}) is missing")
            continue
        got = found.field(i)
        if _field_id(got) != _field_id(want):
            problems.append(f"column {want.name!r} has field id {_field_id(got)}, not {_field_id(want)}")
        elif _kind(got.type) != _kind(want.type):
            problems.append(f"column {want.name!r} is {got.type}, not {want.type}")
    if problems:
        raise DataFileError(
            f"data file {path} does not hold what the catalog recorded for it: {'; '.join(problems)}. "
            f"The file was replaced or altered outside fieldshift (it has columns {found.names}); restore "
            "it from a backup."
        )


_KINDS = (
    ("boolean", pa.types.is_boolean), ("integer", pa.types.is_integer), ("float", pa.types.is_floating),
    ("decimal", pa.types.is_decimal), ("date", pa.types.is_date), ("timestamp", pa.types.is_timestamp),
    ("time", pa.types.is_time), ("duration", pa.types.is_duration), ("null", pa.types.is_null),
    ("string", lambda t: pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)),
    ("binary", lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)
     or pa.types.is_fixed_size_binary(t)),
    ("map", pa.types.is_map), ("struct", pa.types.is_struct),
    ("list", lambda t: pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
     or pa.types.is_list_view(t) or pa.types.is_large_list_view(t)),
)


def _kind(t: pa.DataType) -> str:
    """A type's family: Parquet may hand back another unit or width (seconds come back as ms)."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    return next((name for name, test in _KINDS if test(t)), str(t))


def _field_id(f: pa.Field) -> str | None:
    meta = f.metadata or {}
    raw = meta.get(b"PARQUET:field_id")
    return raw.decode() if raw is not None else None


def name_data_file(error: BaseException, path: Path | str, schema_id: int) -> BaseException:
    """Put the data file (and its schema id) into ``error``'s message, keeping its class."""
    where = f"data file {path} (written with schema {schema_id}): "
    if error.args and isinstance(error.args[0], str) and not error.args[0].startswith(where):
        error.args = (where + error.args[0], *error.args[1:])
    return error


@contextlib.contextmanager
def data_file_errors(path: Path | str) -> Iterator[None]:
    """Turn a missing or unreadable data file into a DataFileError that names it."""
    try:
        yield
    except FileNotFoundError:
        raise DataFileError(
            f"data file {path} is missing; the catalog references it, so the table cannot be read "
            "whole. Restore the file from a backup."
        ) from None
    except (pa.ArrowInvalid, OSError) as e:
        raise DataFileError(f"data file {path} is unreadable (corrupt or not Parquet): {e}") from None


def remove_files(location: TableStorage | Path | str, paths: Iterable[str]) -> None:
    """Delete files a writer wrote and did not commit (one already gone is fine: vacuum may have run)."""
    storage = open_storage(location)
    for p in paths:
        storage.delete(p)


@contextlib.contextmanager
def removed_unless_committed(location: TableStorage | Path | str, written: list[str]) -> Iterator[list[str]]:
    """The files a writer lists in ``written`` inside the block are deleted when the block fails before its
    commit landed; when the commit's outcome is unknown they stay (it may have landed: a retry finds it, or
    vacuum removes them)."""
    try:
        yield written
    except CommitOutcomeUnknownError:
        raise
    except BaseException:
        remove_files(location, written)
        raise


def check_present(location: TableStorage | Path | str, paths: Iterable[str]) -> None:
    """Every file a commit is about to reference still exists: called under the catalog's commit lock, which
    ``Table.vacuum`` holds while it deletes, so a file vacuumed before its commit makes the writer retry.
    Local files only (a stat each): on an object store it would be a request per file inside the lock, and
    vacuum there keeps to its age margin."""
    storage = open_storage(location)
    if storage.local_path is None:
        return
    gone = [p for p in paths if not storage.exists(p)]
    if gone:
        raise CommitConflictError(f"{len(gone)} file(s) written for this commit were deleted before it landed "
                                  f"(a concurrent vacuum with a short older_than?), first {storage.display(gone[0])}; "
                                  "nothing was committed, retry the write")
