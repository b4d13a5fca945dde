"""The catalog's records of a table's history: snapshots and the data files they hold.

Plain frozen values shared by the catalog (which stores them), the metadata value, scans and writers;
they import nothing of the table layer, so every module can name them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["DataFile", "Snapshot"]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One commit of a table: its id, the snapshot it followed, the schema it reads with, when (UTC, ISO
    8601), what it did (``append``, ``upsert``, ``delete``, ``overwrite``, ``schema``, ``compact``, ...)
    and a summary of it (rows, changes, stream marks)."""

    snapshot_id: int
    parent_snapshot_id: int | None
    schema_id: int
    committed_at: str
    operation: str
    summary: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DataFile:
    """A data file as the catalog records it; ``stats`` maps field id -> (values, nulls, min, max)."""

    path: str
    schema_id: int
    record_count: int
    file_size: int
    stats: dict[int, tuple[int, int, Any, Any]] = field(default_factory=dict)
    file_id: int | None = None
    content: str = "data"  # "deletes": a file of keys removed from a keyed table
    sequence: int | None = None  # the data sequence number (read back: the begin snapshot unless set)
    bucket: int | None = None  # the hidden key bucket (None for unkeyed tables)
    spec_id: int = 0
    partition: tuple[Any, ...] = ()
    """The file's partition values, one per field of its spec, as ``Transform.value`` gives them."""
