"""``df.write.format("fieldshift").option("operation", "upsert" | "delete")``: keyed writes from Spark.

Executors write bucket files (see ``keyed.KeyedWrites``); the driver commits them in one snapshot of
operation ``upsert`` or ``delete``. An upsert evolves the table on write exactly as an append does
(its write plan decided once on the driver); a delete takes the key columns of its rows. Option
``partial`` (true): a partial-column upsert, as ``Table.upsert(partial=True)`` — each task fills the
columns its rows do not carry from the live rows at the snapshot the driver planned on, so any commit
landing meanwhile makes it fail with ``CommitConflictError`` (run it again).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from fieldshift.errors import SnapshotExpiredError, TableError
from fieldshift.schema.model import Schema
from fieldshift.spark._arrow import spark_arrow_schema
from fieldshift.spark.batch_writer import FieldshiftCommitMessage, FieldshiftWriter
from fieldshift.spark.errors_bridge import one_line_errors
from fieldshift.spark.keyed import OPERATIONS, KeyedWrites, partial_fill
from fieldshift.table.catalog.deletion_vectors import VectorCommit
from fieldshift.table.files.data_files import remove_files
from fieldshift.table.files.storage import TableStorage, open_storage
from fieldshift.table.handle import TableIO
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.records import DataFile
from fieldshift.table.table import Table
from fieldshift.table.write.write_commit import FilesCommit, check_new_keys, file_updates, resolve_written

__all__ = ["KeyedWriter", "writer_for"]


def _location(options: Any) -> str:
    path = options.get("path")
    if not path:
        raise ValueError("give the table's location: df.write.format('fieldshift').save(location)")
    return str(path)


def writer_for(options: Any, schema: Any, overwrite: bool) -> FieldshiftWriter:
    """The writer for ``options``' ``operation``: the plain writer for appends to unkeyed tables."""
    operation = str(options.get("operation", "append")).lower()
    if operation not in OPERATIONS:
        raise ValueError(f"operation must be one of {list(OPERATIONS)}, not {operation!r}")
    if operation != "upsert":
        partial_fill(options, operation, 0, None, ())  # refuses option partial
    try:
        table = Table.open(_location(options), catalog=options.get("catalog"), name=options.get("table"))
    except TableError:
        table = None
    found = (table.metadata(), str(table.location)) if table is not None else None
    if operation == "append" and (found is None or found[0].keys is None):
        return FieldshiftWriter(options, schema, overwrite)
    return KeyedWriter(options, schema, overwrite, operation, found)


class KeyedWriter(FieldshiftWriter):
    """Upserts, deletes and (insert-only) appends of keyed tables: bucket files on executors, one commit."""

    def __init__(self, options: Any, schema: Any, overwrite: bool, operation: str,
                 found: tuple[TableMetadata, str] | None) -> None:
        """``found``: the table's metadata and location (None: no table, refused)."""
        self.keyed = KeyedWrites.of(operation, found[0] if found is not None else None)
        assert found is not None
        metadata, table_location = found
        if overwrite:
            raise TableError(f"operation={operation!r} on a keyed table cannot be combined with "
                             "mode('overwrite'); use mode('append')")
        self.base_schema = metadata.current_schema
        if operation != "delete":
            super().__init__(options, schema, overwrite)
            self.keyed.partial = partial_fill(options, operation, self.base_snapshot_id, self.plan.schema,
                                              self.incoming.names)
            return
        # a delete takes the key columns of its rows: no write plan, no evolution
        self.location, self.catalog, self.name = _location(options), options.get("catalog"), options.get("table")
        self.overwrite, self.policy, self.new_schema = False, metadata.policy, None
        self.incoming = spark_arrow_schema(schema)
        self.table_location = table_location
        self.base_snapshot_id = metadata.head.snapshot_id

    def _flush(self, batches: Sequence[pa.RecordBatch], location: TableStorage,
               message: FieldshiftCommitMessage) -> None:
        data = pa.Table.from_batches(batches, schema=self.incoming)
        if self.keyed.operation != "delete":
            self.keyed.write_planned(location, self.plan, data, message)
            return
        written: list[str] = []
        try:
            files = self.keyed.files(location, self.base_schema, data, written)
        except BaseException:
            remove_files(location, written)
            raise
        message.files.extend(files)
        message.rows += sum(f.record_count for f in files)

    def commit(self, messages: list[FieldshiftCommitMessage | None]) -> None:
        done = [m for m in messages if m is not None]
        files = [f for m in done for f in m.files]
        quarantine = [q for m in done for q in m.quarantine]
        upsert = self.keyed.operation != "delete"
        schema = self.plan.schema if upsert else self.base_schema
        try:
            table = Table.open(self.location, catalog=self.catalog, name=self.name)
            vectors = self._vectors(table.io, schema, files)
            requirements, updates = file_updates(table.io, table.metadata(), FilesCommit(
                schema, upsert and self.plan.evolved, files, quarantine, self.keyed.operation, vectors=vectors,
                exclusive=self.keyed.partial is not None))  # filled from the base: a commit meanwhile conflicts
            table.catalog.commit(
                table.table_id, self.base_snapshot_id, requirements, updates, operation=self.keyed.operation,
                summary={"rows": sum(m.rows for m in done), "quarantined": sum(n for _, n in quarantine),
                         "changes": list(self.plan.changes) if upsert else [], "writer": "spark"})
        except BaseException:
            remove_files(open_storage(self.table_location), [f.path for f in files] + [p for p, _ in quarantine])
            raise

    def _vectors(self, io: TableIO, schema: Schema, files: list[DataFile]) -> VectorCommit | None:
        """What the files record besides themselves, looked up at the base snapshot the tasks wrote for."""
        if self.keyed.operation == "append":  # insert-only: no key twice, none the table holds
            return check_new_keys(io, io.metadata(self.base_snapshot_id), files)
        if self.keyed.operation != "delete" and self.plan.evolved:  # the lookup reads in the files' schema
            return None
        try:  # the rows they supersede, as Table.upsert/delete record them
            metadata = io.metadata(self.base_snapshot_id)
        except SnapshotExpiredError:
            return None  # another writer committed and expired the base meanwhile: the files merge on read
        return resolve_written(io, metadata, schema, files, self.keyed.operation)  # type: ignore[arg-type]


one_line_errors(KeyedWriter)
