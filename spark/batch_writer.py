"""The batch writer of the ``fieldshift`` data source: ``df.write.format("fieldshift").save(location)``.

The driver decides the write plan once (on-write evolution: widening, new nullable columns, write defaults), executors
write Parquet files with field ids, the driver commits them in one catalog transaction; a failed job commits nothing
and deletes its files. Writing where no table is creates one from the DataFrame's schema. Keyed writes
(``spark/keyed_writer.py``) and the streaming sink (``spark/stream_sink.py``) subclass it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from fieldshift.errors import CommitOutcomeUnknownError, StorageLocationError, TableError
from fieldshift.schema.model import Schema
from fieldshift.schema.nullability import with_nullability
from fieldshift.spark._arrow import BatchConformer, spark_arrow_schema
from fieldshift.spark.errors_bridge import one_line_errors
from fieldshift.spark.partitioned_write import write_partition_files, writer_spec
from fieldshift.spark.source_options import bool_option, parse_policy, table_location
from fieldshift.spark.types import spark_to_schema
from fieldshift.table.catalog.sqlite import DataFile
from fieldshift.table.evolution.on_write import WritePlan, plan_write
from fieldshift.table.files.data_files import remove_files, write_side_file
from fieldshift.table.files.storage import TableStorage, location_key, open_storage
from fieldshift.table.keyed.keys import KeySpec
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.table import MAX_FILE_ROWS, Table
from fieldshift.table.write.write_commit import FilesCommit, file_updates

__all__ = ["FieldshiftCommitMessage", "FieldshiftWriter"]


@dataclass
class FieldshiftCommitMessage(WriterCommitMessage):
    """What one write task produced: data files (not yet committed) and quarantine files."""

    files: list[DataFile] = field(default_factory=list)
    quarantine: list[tuple[str, int]] = field(default_factory=list)
    rows: int = 0


class FieldshiftWriter(DataSourceArrowWriter):
    """Decides the write plan on the driver, writes files on executors, commits once on the driver."""

    def __init__(self, options: Any, schema: StructType, overwrite: bool) -> None:
        self.location = table_location(options)
        self.catalog = options.get("catalog")
        self.name = options.get("table")
        self.overwrite = overwrite
        self.policy = parse_policy(options.get("policy"))
        on_incompatible = str(options.get("on_incompatible", "fail")).lower()
        evolve = bool_option(options, "evolve", True)
        self.incoming = spark_arrow_schema(schema)
        try:
            table = Table.open(self.location, catalog=self.catalog, name=self.name)
        except StorageLocationError:
            raise  # an object-store location without a catalog: say so before any task writes
        except TableError:
            table = None
        with table.catalog.one_connection() if table is not None else contextlib.nullcontext():
            self._plan(options, (table.metadata(), str(table.location)) if table is not None else None, schema,
                       on_incompatible, evolve)

    def _plan(self, options: Any, found: tuple[TableMetadata, str] | None, schema: StructType,
              on_incompatible: str, evolve: bool) -> None:
        """The write plan against the table's head (``found``: its metadata and location; None: no table yet)."""
        metadata = found[0] if found is not None else None
        if found is None or metadata is None:
            # a new table's columns are all nullable: Spark's non-null flags describe one query, not the table
            self.new_schema: Schema | None = with_nullability(spark_to_schema(schema, assign_ids=True),
                                                                  lambda _f: True)
            self.table_location = str(location_key(self.location))
            self.base_snapshot_id = 0
            base = self.new_schema
        else:
            self.policy = self.policy or metadata.policy  # the table's own rules by default
            self.new_schema = None
            self.table_location = found[1]
            self.base_snapshot_id = metadata.head.snapshot_id
            base = metadata.current_schema
        self.keys: KeySpec | None = metadata.keys_in(base) if metadata is not None else None
        self.plan: WritePlan = plan_write(self.incoming, base, evolve=evolve, on_incompatible=on_incompatible,
                                          policy=self.policy)
        self.spec = writer_spec(metadata, base, self.plan, options)  # tasks split their rows by it

    # -- executors ------------------------------------------------------------------------------
    def write(self, iterator: Iterator[pa.RecordBatch]) -> FieldshiftCommitMessage:
        message = FieldshiftCommitMessage()
        location = open_storage(self.table_location)
        conform = BatchConformer(self.incoming)
        buffered: list[pa.RecordBatch] = []
        count = 0
        try:
            for batch in iterator:
                if not batch.num_rows:
                    continue
                buffered.append(conform(batch))
                count += batch.num_rows
                if count >= MAX_FILE_ROWS:
                    self._flush(buffered, location, message)
                    buffered, count = [], 0
            if buffered:
                self._flush(buffered, location, message)
        except BaseException:
            remove_files(location, _paths(message))
            raise
        return message

    def _flush(self, batches: Sequence[pa.RecordBatch], location: TableStorage,
               message: FieldshiftCommitMessage) -> None:
        data = pa.Table.from_batches(batches, schema=self.incoming)
        good, bad = self.plan.split(data)
        if good.num_rows:
            message.files.extend(write_partition_files(location, self.plan, self.spec, good))
            message.rows += good.num_rows
        if bad is not None and bad.num_rows:
            message.quarantine.append((write_side_file(location, "quarantine", bad), bad.num_rows))

    # -- driver ---------------------------------------------------------------------------------
    def commit(self, messages: list[FieldshiftCommitMessage | None]) -> None:
        done = [m for m in messages if m is not None]
        files = [f for m in done for f in m.files]
        quarantine = [q for m in done for q in m.quarantine]
        location = open_storage(self.table_location)
        try:
            if self.new_schema is not None:
                table = Table.create(self.location, self.new_schema, catalog=self.catalog, name=self.name,
                                     policy=self.policy, partition_by=self.spec)
            else:
                table = Table.open(self.location, catalog=self.catalog, name=self.name)
            plan = self.plan
            operation = "overwrite" if self.overwrite else "append"
            requirements, updates = file_updates(table.io, table.metadata(), FilesCommit(
                plan.schema, plan.evolved, files, quarantine, operation))
            table.catalog.commit(
                table.table_id, self.base_snapshot_id, requirements, updates, operation=operation,
                summary={"rows": sum(m.rows for m in done), "quarantined": sum(n for _, n in quarantine),
                         "changes": list(plan.changes), "writer": "spark"})
        except CommitOutcomeUnknownError:
            raise  # the commit may have landed: its files stay (vacuum removes them if it did not)
        except BaseException:
            remove_files(location, [f.path for f in files] + [p for p, _ in quarantine])
            raise

    def abort(self, messages: list[FieldshiftCommitMessage | None]) -> None:
        for m in messages:
            if m is not None:
                remove_files(open_storage(self.table_location), _paths(m))


def _paths(message: FieldshiftCommitMessage) -> list[str]:
    return [f.path for f in message.files] + [p for p, _ in message.quarantine]


one_line_errors(FieldshiftWriter)
