"""Reading what streams left in the catalog: committed micro-batches, captured files, and the files each
snapshot added (the streaming source's unit of work). Plain SQL on the catalog's own connection."""

from __future__ import annotations

from typing import Any

from fieldshift.table.catalog.specs import decode_partition
from fieldshift.table.catalog.sqlite import DataFile, SqliteCatalog

__all__ = ["captured_sources", "files_added", "stream_batches", "stream_commit"]


def stream_batches(catalog: SqliteCatalog, table_id: int, stream_id: str) -> dict[int, int]:
    """batch id -> snapshot id of every committed micro-batch of ``stream_id``."""
    return catalog.run_read(lambda conn: {int(b): int(s) for b, s in conn.execute(
        "SELECT batch_id, snapshot_id FROM fs_stream_commit WHERE table_id = ? AND stream_id = ?",
        (table_id, stream_id))})


def stream_commit(catalog: SqliteCatalog, table_id: int, stream_id: str, batch_id: int) -> int | None:
    """The snapshot that committed batch ``batch_id`` of ``stream_id``, or None."""
    row = catalog.run_read(lambda conn: conn.execute(
        "SELECT snapshot_id FROM fs_stream_commit WHERE table_id = ? AND stream_id = ? AND batch_id = ?",
        (table_id, stream_id, batch_id)).fetchone())
    return None if row is None else int(row[0])


def captured_sources(catalog: SqliteCatalog, table_id: int) -> dict[str, int]:
    """source path -> snapshot id of every file a capture committed to the table."""
    return catalog.run_read(lambda conn: {s: int(n) for s, n in conn.execute(
        "SELECT source, snapshot_id FROM fs_captured_file WHERE table_id = ?", (table_id,))})


def files_added(catalog: SqliteCatalog, table_id: int, first: int, last: int) -> list[tuple[int, DataFile]]:
    """(snapshot id, file) of every data file (not delete file) snapshots ``first..last`` added, in order."""
    def query(conn: Any) -> list[Any]:
        return conn.execute(
            "SELECT begin_snapshot, file_id, path, schema_id, record_count, file_size, content, "
            "COALESCE(sequence, begin_snapshot), bucket, spec_id, partition_values FROM fs_data_file "
            "WHERE table_id = ? AND begin_snapshot BETWEEN ? AND ? AND content = 'data' "
            "ORDER BY begin_snapshot, file_id", (table_id, first, last)).fetchall()

    return [(int(r[0]), DataFile(r[2], int(r[3]), int(r[4]), int(r[5]), {}, int(r[1]), r[6], r[7], r[8], r[9],
                                 decode_partition(r[10]))) for r in catalog.run_read(query)]
