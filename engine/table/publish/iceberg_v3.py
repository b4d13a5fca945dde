"""Iceberg format v3 pieces of publishing (its writers are in ``iceberg_writers``): row lineage
(``first_row_id`` of manifests and files, a snapshot's ``first-row-id`` and ``added-rows``), and deletion
vectors as Puffin files (``deletion-vector-v1`` blobs).

A table is published as v3 when one of its schemas has initial or write defaults (v2 cannot say them);
once v3 it stays v3. Row ids follow the spec's simple assignment: each data manifest without a
``first_row_id`` gets the running id when the manifest list is written, which then grows by the manifest's
added and existing rows; files ADDED in a manifest carry no id of their own (inherited from the manifest),
files a rewritten manifest carries as EXISTING keep the id they inherited where they were added."""

from __future__ import annotations

import io
import json
import struct
import uuid
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from fieldshift.extras import require
from fieldshift.table.files.storage import TableStorage

__all__ = ["DV_BLOB_TYPE", "as_v3_manifest", "file_row_ids", "manifest_first_row_id", "read_manifest_list_v3",
           "write_deletion_vectors"]

DV_BLOB_TYPE = "deletion-vector-v1"
_PUFFIN_MAGIC = b"PFA1"
_DV_MAGIC = bytes([0xD1, 0xD3, 0x39, 0x64])
_ROW_POSITION_ID = 2147483645  # the reserved _pos column a deletion vector's blob names as its field


def _index(fields: Any, name: str) -> int:
    return next(i for i, f in enumerate(fields) if f.name == name)


def manifest_first_row_id(manifest: Any) -> int | None:
    """A manifest-list entry's ``first_row_id`` (None for a v2 entry, or one of a delete manifest)."""
    from pyiceberg.manifest import MANIFEST_LIST_FILE_SCHEMAS

    i = _index(MANIFEST_LIST_FILE_SCHEMAS[3].fields, "first_row_id")
    return manifest[i] if len(manifest) > i else None


def as_v3_manifest(manifest: Any, first_row_id: int | None = None) -> Any:
    """A manifest-list entry with v3's fields (a v2 entry read or written by PyIceberg lacks ``first_row_id``)."""
    from pyiceberg.manifest import MANIFEST_LIST_FILE_SCHEMAS, ManifestFile

    n = len(MANIFEST_LIST_FILE_SCHEMAS[3].fields)
    data = [manifest[i] for i in range(len(manifest))][:n]
    data += [None] * (n - len(data))
    if first_row_id is not None:
        data[_index(MANIFEST_LIST_FILE_SCHEMAS[3].fields, "first_row_id")] = first_row_id
    return ManifestFile(*data)


def read_manifest_list_v3(input_file: Any) -> list[Any]:
    """A manifest list read with v3's schema (a v2 list reads with ``first_row_id`` None)."""
    from pyiceberg.avro.file import AvroFile
    from pyiceberg.manifest import MANIFEST_LIST_FILE_SCHEMAS, ManifestContent, ManifestFile, PartitionFieldSummary

    with AvroFile[ManifestFile](input_file, MANIFEST_LIST_FILE_SCHEMAS[3],
                                read_types={-1: ManifestFile, 508: PartitionFieldSummary},
                                read_enums={517: ManifestContent}) as reader:
        return list(reader)


def file_row_ids(manifest: Any, input_file: Any) -> dict[str, int | None]:
    """Data file path -> its ``first_row_id`` in ``manifest``: its own, else inherited (the manifest's id
    plus the records of the files before it that inherit too); None where the manifest has no id."""
    from pyiceberg.avro.file import AvroFile
    from pyiceberg.manifest import (
        DATA_FILE_TYPE,
        MANIFEST_ENTRY_SCHEMAS,
        DataFile,
        DataFileContent,
        FileFormat,
        ManifestEntry,
        ManifestEntryStatus,
    )

    own = _index(DATA_FILE_TYPE[3].fields, "first_row_id")
    running = manifest_first_row_id(manifest)
    out: dict[str, int | None] = {}
    with AvroFile[ManifestEntry](input_file, MANIFEST_ENTRY_SCHEMAS[3], read_types={-1: ManifestEntry, 2: DataFile},
                                 read_enums={0: ManifestEntryStatus, 101: FileFormat, 134: DataFileContent}) as reader:
        for entry in reader:
            if entry.status == ManifestEntryStatus.DELETED:
                continue
            df = entry.data_file
            found = df[own] if len(df) > own else None
            if found is None and running is not None:
                found = running
                running += df.record_count
            out[df.file_path] = found
    return out


def _blob(positions: np.ndarray) -> bytes:
    """One ``deletion-vector-v1`` blob: big-endian length of magic and vector, the magic, the positions as a
    portable 64-bit roaring bitmap, a big-endian CRC-32 of magic and vector."""
    roaring = require("pyroaring", "iceberg", "publishing deletion vectors as Iceberg v3 Puffin files")
    bitmap = roaring.BitMap64(np.asarray(positions, dtype=np.uint64).tolist())
    bitmap.run_optimize()
    body = _DV_MAGIC + bitmap.serialize()
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def write_deletion_vectors(storage: TableStorage, vectors: Sequence[tuple[str, np.ndarray]], snapshot_id: int,
                           directory: str) -> tuple[str, int, list[tuple[str, int, int, int]]]:
    """One Puffin file of ``deletion-vector-v1`` blobs (``vectors``: absolute data file path, positions);
    returns (its relative path, its size, [(data file path, blob offset, blob length, cardinality)])."""
    out = io.BytesIO()
    out.write(_PUFFIN_MAGIC)
    blobs, placed = [], []
    for path, positions in vectors:
        blob = _blob(positions)
        offset = out.tell()
        out.write(blob)
        cardinality = len(np.unique(positions))
        blobs.append({"type": DV_BLOB_TYPE, "fields": [_ROW_POSITION_ID], "snapshot-id": -1, "sequence-number": -1,
                      "offset": offset, "length": len(blob),
                      "properties": {"referenced-data-file": path, "cardinality": str(cardinality)}})
        placed.append((path, offset, len(blob), cardinality))
    footer = json.dumps({"blobs": blobs, "properties": {"created-by": "fieldshift"}}, separators=(",", ":")).encode()
    out.write(_PUFFIN_MAGIC)
    out.write(footer)
    out.write(struct.pack("<I", len(footer)))
    out.write(b"\x00\x00\x00\x00")  # flags: the footer is not compressed
    out.write(_PUFFIN_MAGIC)
    data = out.getvalue()
    rel = f"{directory}/{uuid.uuid4().hex}-s{snapshot_id}-dv.puffin"
    storage.put(rel, data)
    return rel, len(data), placed
