"""Data files: Parquet with field ids, written under a temporary name and renamed, never modified."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from fieldshift.errors import DataFileError
from fieldshift.schema import Schema
from fieldshift.table.catalog import DataFile
from fieldshift.table.stats import compute_stats

__all__ = ["TMP_SUFFIX", "data_file_errors", "iter_file_batches", "write_data_file", "write_side_file"]

TMP_SUFFIX = ".tmp"
ROW_GROUP_SIZE = 131_072


def _atomic_write(table: pa.Table, final: Path) -> int:
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}{TMP_SUFFIX}")
    pq.write_table(table, tmp, row_group_size=ROW_GROUP_SIZE, compression="zstd")
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, final)
    return final.stat().st_size


def write_data_file(location: Path, schema: Schema, table: pa.Table) -> DataFile:
    """Write ``table`` (already in ``schema``'s Arrow form, ids in field metadata) as a data file."""
    rel = f"data/{uuid.uuid4().hex}.parquet"
    size = _atomic_write(table, location / rel)
    return DataFile(rel, schema.schema_id, table.num_rows, size, compute_stats(schema, table))


def write_side_file(location: Path, folder: str, table: pa.Table) -> str:
    """Write a non-data Parquet file (e.g. quarantined rows) atomically; returns its relative path."""
    rel = f"{folder}/{uuid.uuid4().hex}.parquet"
    _atomic_write(table, location / rel)
    return rel


def iter_file_batches(path: Path, columns: Sequence[str], batch_size: int) -> Iterator[pa.RecordBatch]:
    """Batches of the named top-level columns; a missing or corrupt file is a DataFileError."""
    with data_file_errors(path):
        pf = pq.ParquetFile(path)
        yield from pf.iter_batches(batch_size=batch_size, columns=list(columns), use_threads=True)


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
