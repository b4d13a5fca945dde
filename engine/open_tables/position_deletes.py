"""Deleted row positions from the files other formats write: Parquet position-delete files and deletion
vectors (Iceberg v3's ``deletion-vector-v1`` blob, bare or inside a Puffin container; Delta's vector
files through ``delta_dv``).

Both come back as a sorted, unique int64 array of 0-based row positions of one data file, the one form
the scan applies (a keep-mask per batch). A file that is not what it claims to be is a DataFileError
naming it; a variant we do not read is an UnsupportedFormatFeatureError, never a file read as if it
deleted nothing.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fieldshift.errors import DataFileError, UnsupportedFormatFeatureError
from fieldshift.open_tables.delta_dv import read_dv_file
from fieldshift.open_tables.roaring import roaring64_positions
from fieldshift.open_tables.source import DeleteFile

__all__ = ["decode_deletion_vector", "read_position_groups", "read_positions"]

SNAPSHOT_COLUMN = "_ducklake_internal_snapshot_id"  # DuckLake's per-row deleting snapshot (partial delete files)
_DV_MAGIC = b"\xd1\xd3\x39\x64"
_PUFFIN_MAGIC = b"PFA1"


def read_positions(delete: DeleteFile, open_input: Callable[[str], Any]) -> np.ndarray:
    """The positions ``delete`` removes from its data file (``open_input(path)`` opens a file for reading)."""
    if delete.format == "parquet":
        return _parquet_positions(delete, open_input)
    if delete.format == "puffin":
        try:
            with open_input(delete.path) as f:
                if delete.offset is None:
                    return decode_deletion_vector(f.read(), delete.path)
                if f.read(4) != _PUFFIN_MAGIC:
                    raise UnsupportedFormatFeatureError(
                        f"deletion vector file {delete.path} is not a Puffin file (no PFA1 magic at its start): a "
                        "bare deletion-vector blob, as older DuckDB versions wrote them; the Iceberg spec keeps "
                        "deletion vectors in Puffin files, so fieldshift does not guess. Rewrite the deletes")
                f.seek(delete.offset)
                blob = f.read(delete.length) if delete.length is not None else f.read()
        except FileNotFoundError:
            raise DataFileError(f"deletion vector file {delete.path} is missing; the table references it, so the "
                                "rows it deletes cannot be known. Restore it from a backup.") from None
        if delete.length is not None and len(blob) != delete.length:
            raise DataFileError(f"deletion vector in {delete.path} at offset {delete.offset}: the file ends after "
                                f"{len(blob)} of its {delete.length} bytes")
        return decode_deletion_vector(blob, delete.path)
    if delete.format == "deletion-vector":
        return read_dv_file(delete.path, delete.offset, delete.length, delete.record_count, open_input)
    raise UnsupportedFormatFeatureError(f"delete file {delete.path}: format {delete.format!r} is not one fieldshift "
                                        "reads (parquet position deletes, puffin and Delta deletion vectors)")


def read_position_groups(delete: DeleteFile, open_input: Callable[[str], Any]) -> dict[str, np.ndarray]:
    """Every data file's deleted positions in one Parquet position-delete file, read once (a delete file
    of a format that names data files may cover many of them; scans share this)."""
    table = _read_delete_table(delete, open_input, ["file_path", "pos"])
    if "file_path" not in table.column_names:
        raise DataFileError(f"delete file {delete.path} has no 'file_path' column (it has {table.column_names}); "
                            "it is not a position-delete file")
    if not table.num_rows:
        return {}
    order = pc.sort_indices(table, [("file_path", "ascending"), ("pos", "ascending")])
    table = table.take(order)
    paths = table["file_path"].combine_chunks()
    pos = table["pos"].to_numpy().astype(np.int64, copy=False)
    runs = pc.run_end_encode(paths)
    ends = runs.run_ends.to_numpy()
    starts = np.concatenate([[0], ends[:-1]])
    return {name: np.unique(pos[s:e]) for name, s, e in zip(runs.values.to_pylist(), starts, ends, strict=True)}


def _read_delete_table(delete: DeleteFile, open_input: Callable[[str], Any], wanted: list[str]) -> pa.Table:
    try:
        with open_input(delete.path) as f:
            pf = pq.ParquetFile(f)
            names = pf.schema_arrow.names
            if "pos" not in names:
                raise DataFileError(f"delete file {delete.path} has no 'pos' column (it has {names}); "
                                    "it is not a position-delete file")
            return pf.read(columns=[c for c in wanted if c in names])
    except FileNotFoundError:
        raise DataFileError(f"delete file {delete.path} is missing; the catalog references it, so the rows it "
                            "deletes cannot be known. Restore it from a backup.") from None
    except (pa.ArrowInvalid, OSError) as e:
        raise DataFileError(f"delete file {delete.path} is unreadable (corrupt or not Parquet): {e}") from None


def _parquet_positions(delete: DeleteFile, open_input: Callable[[str], Any]) -> np.ndarray:
    try:
        with open_input(delete.path) as f:
            pf = pq.ParquetFile(f)
            names = pf.schema_arrow.names
            if "pos" not in names:
                raise DataFileError(f"delete file {delete.path} has no 'pos' column (it has {names}); "
                                    "it is not a position-delete file")
            wanted = ["pos"]
            if delete.data_file_path is not None and "file_path" in names:
                wanted.append("file_path")
            limit = delete.up_to_snapshot is not None and SNAPSHOT_COLUMN in names
            if limit:
                wanted.append(SNAPSHOT_COLUMN)
            table = pf.read(columns=wanted)
    except FileNotFoundError:
        raise DataFileError(f"delete file {delete.path} is missing; the catalog references it, so the rows it "
                            "deletes cannot be known. Restore it from a backup.") from None
    except (pa.ArrowInvalid, OSError) as e:
        raise DataFileError(f"delete file {delete.path} is unreadable (corrupt or not Parquet): {e}") from None
    mask = None
    if limit:
        mask = pc.less_equal(table[SNAPSHOT_COLUMN], delete.up_to_snapshot)
    if "file_path" in wanted:  # a delete file may cover several data files (Iceberg)
        same = pc.equal(table["file_path"], delete.data_file_path)
        mask = same if mask is None else pc.and_(mask, same)
    pos = table["pos"] if mask is None else table["pos"].filter(mask)
    return np.unique(pos.to_numpy().astype(np.int64, copy=False))


def decode_deletion_vector(data: bytes, path: str) -> np.ndarray:
    """Positions of a ``deletion-vector-v1`` blob, or of every such blob of a Puffin file (their union)."""
    if data[:4] == _PUFFIN_MAGIC:
        blobs = [data[o:o + n] for o, n in _puffin_blobs(data, path)]
    else:
        blobs = [data]
    parts = [_blob_positions(b, path) for b in blobs]
    return np.unique(np.concatenate(parts)) if parts else np.empty(0, np.int64)


def _puffin_blobs(data: bytes, path: str) -> list[tuple[int, int]]:
    """(offset, length) of the deletion-vector blobs a Puffin file's footer lists."""
    if len(data) < 16 or data[-4:] != _PUFFIN_MAGIC:
        raise DataFileError(f"deletion vector file {path} is not a complete Puffin file (no footer magic)")
    size, flags = struct.unpack("<ii", data[-12:-4])
    if flags & 1:
        raise UnsupportedFormatFeatureError(f"deletion vector file {path} has a compressed Puffin footer, which "
                                            "fieldshift does not read")
    try:
        footer = json.loads(data[-12 - size:-12])
    except ValueError:
        raise DataFileError(f"deletion vector file {path}: the Puffin footer is not JSON") from None
    out = []
    for blob in footer.get("blobs", []):
        if blob.get("type") != "deletion-vector-v1":
            raise UnsupportedFormatFeatureError(f"deletion vector file {path} holds a {blob.get('type')!r} blob; "
                                                "fieldshift reads deletion-vector-v1 blobs")
        if blob.get("compression-codec") not in (None, "none"):
            raise UnsupportedFormatFeatureError(f"deletion vector file {path}: compressed blobs are not read")
        out.append((int(blob["offset"]), int(blob["length"])))
    return out


def _blob_positions(blob: bytes, path: str) -> np.ndarray:
    """One blob: big-endian length, magic, a 64-bit portable roaring bitmap, big-endian CRC-32."""
    if len(blob) < 12:
        raise DataFileError(f"deletion vector in {path} is truncated ({len(blob)} bytes)")
    (length,) = struct.unpack(">I", blob[:4])
    body = blob[4:4 + length]
    if body[:4] != _DV_MAGIC or len(body) != length or len(blob) < 8 + length:
        raise DataFileError(f"deletion vector in {path} is not a deletion-vector-v1 blob (bad magic or length)")
    (crc,) = struct.unpack(">I", blob[4 + length:8 + length])
    if zlib.crc32(body) != crc:
        raise DataFileError(f"deletion vector in {path} fails its CRC check (the file is corrupt)")
    # pyroaring comes with the iceberg extra (PyIceberg needs it too) and the ducklake one
    return roaring64_positions(body[4:], f"deletion vector in {path}", "iceberg")
