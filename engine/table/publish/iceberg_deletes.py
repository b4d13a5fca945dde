"""Deletion vectors (a keyed table's; an unkeyed table's deletes and updates) as Iceberg v2 position deletes:
per published snapshot, the row positions fieldshift's scan of it drops, in Parquet position-delete files
(``file_path``, ``pos``) one per partition, listed by a delete manifest (``iceberg_writers``).

A bucket whose every file is resolved (the write-time key lookup recorded their vectors) publishes its
vectors: exactly the rows the key merge would drop. A bucket written without the lookup (Spark's
executors, a commit that lost a race) is resolved here, at publish time: the key merge a scan of the
snapshot runs (``keyed.merge.superseded_positions``) says which rows it drops, and those are published
(in the published metadata only: no fieldshift snapshot is written)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from fieldshift.table.catalog.deletion_vectors import load_vectors
from fieldshift.table.files.storage import TableStorage

__all__ = ["DELETES_DIR", "snapshot_deletes", "write_position_deletes"]

DELETES_DIR = "metadata/deletes"
_FILE_PATH_ID, _POS_ID = 2147483546, 2147483545  # Iceberg's reserved field ids of position deletes


def snapshot_deletes(catalog: Any, table_id: int, storage: TableStorage, snapshot_id: int, live: Sequence[Any]
                     ) -> dict[int, Any]:
    """Data file id -> the positions fieldshift's scan of ``snapshot_id`` drops from it; ``live``: the files
    (data and key-delete files) live there."""
    vectors = catalog.read(load_vectors, table_id, snapshot_id)
    buckets: dict[Any, list[Any]] = {}
    for f in live:
        if f.bucket is not None:
            buckets.setdefault(f.bucket, []).append(f)
    out = {f.file_id: vectors[f.file_id].positions for f in live
           if f.content == "data" and f.file_id in vectors and vectors[f.file_id].cardinality}
    if any(not (len(files) == 1 and files[0].content == "data") and not all(f.file_id in vectors for f in files)
           for files in buckets.values()):
        out.update(_merged_deletes(catalog, table_id, storage, snapshot_id))
    return {k: v for k, v in out.items() if len(v)}


def _merged_deletes(catalog: Any, table_id: int, storage: TableStorage, snapshot_id: int) -> dict[int, Any]:
    """The positions the key merge drops in each merge group a scan of ``snapshot_id`` would merge (only the
    key and precombine columns are read)."""
    from fieldshift.table.handle import TableIO
    from fieldshift.table.keyed.merge import group_files, resolved, superseded_positions
    from fieldshift.table.scan.table_scan import Scan

    io = TableIO(catalog, storage, table_id)
    metadata = io.metadata(snapshot_id)
    keys = metadata.keys_in(metadata.schema)  # as the snapshot's schema names them
    assert keys is not None  # only keyed tables have key buckets
    scan = Scan(io, metadata, columns=list(keys.key_names))
    out: dict[int, Any] = {}
    for group in group_files(scan.live_files()):
        if not resolved(scan, group):
            out.update(superseded_positions(scan, group))
    return out


def write_position_deletes(storage: TableStorage, groups: dict[Any, list[tuple[str, np.ndarray]]],
                           snapshot_id: int) -> dict[Any, tuple[str, int, int]]:
    """One position-delete file per group (``group -> [(absolute data file path, positions)]``); returns
    group -> (relative path, rows, size)."""
    schema = pa.schema([pa.field("file_path", pa.string(), nullable=False,
                                 metadata={b"PARQUET:field_id": str(_FILE_PATH_ID).encode()}),
                        pa.field("pos", pa.int64(), nullable=False,
                                 metadata={b"PARQUET:field_id": str(_POS_ID).encode()})])
    out = {}
    for key, entries in groups.items():
        entries = sorted(entries, key=lambda e: e[0])
        paths = pa.array(np.concatenate([np.full(len(p), path, dtype=object) for path, p in entries]), pa.string())
        pos = pa.array(np.concatenate([np.sort(p.astype(np.int64)) for _, p in entries]), pa.int64())
        table = pa.table([paths, pos], schema=schema)
        rel = f"{DELETES_DIR}/{uuid.uuid4().hex}-s{snapshot_id}.parquet"
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        data = sink.getvalue()
        storage.put(rel, data)
        out[key] = (rel, table.num_rows, data.size)
    return out
