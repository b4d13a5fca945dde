"""A keyed table's deletion vectors as Iceberg v2 position deletes: per published snapshot, the row
positions fieldshift's scan of it drops, in Parquet position-delete files (``file_path``, ``pos``) one per
partition, listed by a delete manifest (PyIceberg's manifest writer with the deletes content).

Only buckets whose every file is resolved (the write-time key lookup recorded their vectors) are
published: their vectors are exactly the rows the key merge would drop. A bucket written without the
lookup (Spark's executors, a commit that lost a race) would need the merge itself: refused by name."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from fieldshift.table.catalog.deletion_vectors import load_vectors
from fieldshift.table.files.storage import TableStorage

__all__ = ["DELETES_DIR", "delete_manifest_writer", "snapshot_deletes", "write_position_deletes"]

DELETES_DIR = "metadata/deletes"
_FILE_PATH_ID, _POS_ID = 2147483546, 2147483545  # Iceberg's reserved field ids of position deletes


def snapshot_deletes(catalog: Any, table_id: int, snapshot_id: int, live: Sequence[Any]
                     ) -> tuple[dict[int, Any], list[str]]:
    """(data file id -> positions its vector drops, problems) at ``snapshot_id``; ``live``: the files
    (data and key-delete files) live there."""
    vectors = catalog.read(load_vectors, table_id, snapshot_id)
    buckets: dict[Any, list[Any]] = {}
    for f in live:
        if f.bucket is not None:
            buckets.setdefault(f.bucket, []).append(f)
    problems = []
    for bucket, files in sorted(buckets.items()):
        single = len(files) == 1 and files[0].content == "data"
        if not single and not all(f.file_id in vectors for f in files):
            problems.append(f"snapshot {snapshot_id}, key bucket {bucket}: written without the key lookup (Spark "
                            "executors, or a commit that lost a race), so its rows merge by key on read, which "
                            "publishing does not compute yet; run compact() to resolve it")
    out = {f.file_id: vectors[f.file_id].positions for f in live
           if f.content == "data" and f.file_id in vectors and vectors[f.file_id].cardinality}
    return out, problems


def delete_manifest_writer(spec: Any, schema: Any, output: Any, snapshot_id: int) -> Any:
    """PyIceberg's v2 manifest writer, writing a delete manifest (0.12 has none of its own)."""
    from pyiceberg.manifest import ManifestContent, ManifestWriterV2

    class DeleteManifestWriter(ManifestWriterV2):
        def content(self) -> ManifestContent:
            return ManifestContent.DELETES

        @property
        def _meta(self) -> dict[str, str]:
            return {**super()._meta, "content": "deletes"}

    return DeleteManifestWriter(spec, schema, output, snapshot_id, "null")


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
