"""What streams left in the catalog, asked by table: committed micro-batches, captured files, and the files
each snapshot added (the streaming source's unit of work). The statements are ``stream_marks``' and ``files``'."""

from __future__ import annotations

from fieldshift.table.catalog import files, stream_marks
from fieldshift.table.catalog.catalog import Catalog
from fieldshift.table.records import DataFile

__all__ = ["captured_sources", "files_added", "stream_batches", "stream_commit"]


def stream_batches(catalog: Catalog, table_id: int, stream_id: str) -> dict[int, int]:
    """batch id -> snapshot id of every committed micro-batch of ``stream_id``."""
    return catalog.read(stream_marks.stream_batches, table_id, stream_id)


def stream_commit(catalog: Catalog, table_id: int, stream_id: str, batch_id: int) -> int | None:
    """The snapshot that committed batch ``batch_id`` of ``stream_id``, or None."""
    return catalog.read(stream_marks.batch_snapshot, table_id, stream_id, batch_id)


def captured_sources(catalog: Catalog, table_id: int) -> dict[str, int]:
    """source path -> snapshot id of every file a capture committed to the table."""
    return catalog.read(stream_marks.captured_sources, table_id)


def files_added(catalog: Catalog, table_id: int, first: int, last: int) -> list[tuple[int, DataFile]]:
    """(snapshot id, file) of every data file (not delete file) snapshots ``first..last`` added, in order."""
    return catalog.read(files.files_added, table_id, first, last)
