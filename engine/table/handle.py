"""Where one table lives: its catalog (the records) and its storage (the files), and the metadata read from it.

Scans, writers and maintenance take a ``TableIO`` plus a ``TableMetadata`` instead of a ``Table``: the
handle says where to read and commit, the metadata what the table is at the moment the operation began.
"""

from __future__ import annotations

from dataclasses import dataclass

from fieldshift.errors import SnapshotExpiredError, SnapshotNotFoundError
from fieldshift.table.catalog.catalog import Catalog
from fieldshift.table.files.storage import TableStorage
from fieldshift.table.metadata import TableMetadata

__all__ = ["TableIO"]


@dataclass(frozen=True, slots=True)
class TableIO:
    """A table's catalog handle, its id there, and the storage its files go through."""

    catalog: Catalog
    storage: TableStorage
    table_id: int

    def metadata(self, snapshot_id: int | None = None) -> TableMetadata:
        """The table as of ``snapshot_id`` (None: the head), read fresh from the catalog.

        Raises:
            TypeError: ``snapshot_id`` is not an int.
            SnapshotExpiredError: the snapshot was expired.
            SnapshotNotFoundError: the table never had it.
        """
        if snapshot_id is not None and (isinstance(snapshot_id, bool) or not isinstance(snapshot_id, int)):
            raise TypeError(f"snapshot_id must be an int, not {snapshot_id!r} ({type(snapshot_id).__name__})")
        metadata = self.catalog.load_metadata(self.table_id)
        if snapshot_id is None or snapshot_id == metadata.head.snapshot_id:
            return metadata
        snap = self.catalog.snapshot(self.table_id, snapshot_id)  # one row, not the whole history
        if snap is None:
            known = sorted(s.snapshot_id for s in self.catalog.snapshots(self.table_id))
            if known and 0 <= snapshot_id < min(known):
                raise SnapshotExpiredError(f"snapshot {snapshot_id} of table {metadata.name!r} was expired "
                                           f"(expire_snapshots); the oldest kept is {min(known)}")
            shown = known if len(known) <= 12 else f"{known[:5]} ... {known[-5:]} ({len(known)} in all)"
            raise SnapshotNotFoundError(f"table {metadata.name!r} has no snapshot {snapshot_id}; its snapshots are "
                                        f"{shown} (table.history() lists them)")
        return metadata.at(snap)
