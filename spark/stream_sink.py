"""The Structured Streaming sink: ``df.writeStream.format("fieldshift")``, exactly once per micro-batch.

PySpark creates a writer on the driver for every micro-batch (pickled to the executors, which write
Parquet files) and another for every commit, and hands ``commit`` only the batch id. So nothing is
kept between commits: each writer plans against the table's head when it is made (on-write evolution
per micro-batch), the executors' commit messages say which schema their files were written with, and
the commit records (stream id, batch id) in the catalog in the same transaction as the snapshot. The
stream id is the query id in the checkpoint's ``metadata`` file (a new checkpoint is a new stream),
else the checkpoint's absolute path. A replayed batch commits nothing and deletes its files; an empty
micro-batch still records its batch id. On a keyed table, ``operation`` ``upsert`` writes hidden-bucket
files whose latest row per key wins on read; ``append`` is insert-only (``DuplicateKeyError``); the
mark is in the upsert's own transaction, so a replayed upsert commits nothing either. Option ``partial``
(upserts): each micro-batch is a partial-column upsert filled from the snapshot it planned on; a commit
by another writer landing in between fails the batch (``CommitConflictError``: restart the query).

PySpark's commit runs on a writer of its own (``streamWriter`` again, never pickled), which needs none of the
plan: a writer plans when it is pickled for the tasks (still on the driver, before any task runs), and the
commit takes what it needs from the tasks' messages (the planned schema, its changes, where the files are),
so a micro-batch plans once, not twice (a table open, a metadata read and ``plan_write`` fewer per batch).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamArrowWriter
from pyspark.sql.types import StructType

from fieldshift.errors import (
    AlreadyCommittedError,
    CommitConflictError,
    CommitOutcomeUnknownError,
    DuplicateKeyError,
    FieldshiftError,
    InvalidOptionError,
    NotKeyedError,
    TableError,
)
from fieldshift.options import check_option
from fieldshift.schema.model import Schema
from fieldshift.spark.batch_writer import FieldshiftCommitMessage, FieldshiftWriter
from fieldshift.spark.errors_bridge import one_line
from fieldshift.spark.keyed import KeyedWrites, partial_fill
from fieldshift.spark.source_options import bool_option, table_location
from fieldshift.table.catalog.kept_open import keep_open
from fieldshift.table.catalog.stream_log import stream_commit
from fieldshift.table.catalog.stream_marks import StreamMark
from fieldshift.table.commits import Attempt, with_retries
from fieldshift.table.evolution.on_write import prepare_append
from fieldshift.table.files.data_files import remove_files
from fieldshift.table.files.storage import TableStorage, open_storage
from fieldshift.table.handle import TableIO
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.partitions.partition_write import write_partitioned
from fieldshift.table.records import DataFile
from fieldshift.table.table import Table
from fieldshift.table.write.write_commit import (
    FilesCommit,
    check_evolution,
    check_new_keys,
    commit_files,
    resolve_written,
)

__all__ = ["FieldshiftStreamWriter", "SinkOperation", "StreamCommitMessage", "stream_id_of"]

SinkOperation = Literal["append", "upsert"]
"""What each micro-batch does: append (insert-only on a keyed table) or upsert (keyed tables only)."""


def stream_id_of(options: Any) -> str:
    """The stream's identity: the query id in ``checkpointLocation``/metadata, else that path, absolute."""
    raw = options.get("checkpointLocation")
    if not raw or not str(raw).strip():
        raise InvalidOptionError(
            "the fieldshift streaming sink needs a checkpoint to commit each micro-batch exactly once: "
            "add .option('checkpointLocation', '/some/dir') to writeStream")
    text = str(raw).strip()
    if text.startswith("file:"):
        text = text[len("file:"):]
        while text.startswith("//"):
            text = text[1:]
    path = Path(text).resolve()
    try:
        first = (path / "metadata").read_text().splitlines()[0]
        return f"query:{json.loads(first)['id']}"
    except (OSError, IndexError, ValueError, KeyError, TypeError):
        return f"path:{path}"


class _FilledFromAnOlderSnapshot(Exception):
    """A partial upsert's rows were filled at a snapshot that is no longer the head (retrying cannot help)."""


@dataclass
class StreamCommitMessage(FieldshiftCommitMessage):
    """A task's files, and the table state its writer planned against (commit keeps no state)."""

    base_snapshot_id: int = 0
    schema_json: str = ""
    changes: tuple[str, ...] = ()  # the plan's schema changes (the commit's summary when it evolves the table)
    table_location: str = ""  # where the files are (the commit removes them on failure or replay)


class FieldshiftStreamWriter(FieldshiftWriter, DataSourceStreamArrowWriter):
    """One micro-batch: plan against the head (driver), write files (executors), commit once (driver)."""

    def __init__(self, options: Any, schema: StructType, overwrite: bool) -> None:
        self.stream_id = stream_id_of(options)
        operation = str(options.get("operation", "append")).strip().lower()
        check_option("operation", operation, SinkOperation)
        if overwrite:
            raise InvalidOptionError("the fieldshift streaming sink appends; use outputMode('append'), "
                                     "not 'complete'")
        self.operation: SinkOperation = operation  # type: ignore[assignment]
        self.location = table_location(options)
        self.catalog = options.get("catalog")
        self.name = options.get("table")
        self._options, self._schema = options, schema
        self._partial = bool_option(options, "partial", False)
        self._planned = False  # planned when pickled for the tasks, or when a commit needs the plan
        self.filled_at: int | None = None  # the snapshot a partial upsert's tasks filled their rows at

    def plan_now(self) -> None:
        """Plan against the table's head (on-write evolution for this micro-batch), once."""
        if self._planned:
            return
        super().__init__(self._options, self._schema, overwrite=False)
        # a keyed table's tasks write hidden-bucket files (upserts: the latest row per key of the task)
        self.keyed = KeyedWrites(self.operation, self.keys, self.spec) if self.keys is not None else None
        partial = partial_fill(self._options, self.operation, self.base_snapshot_id, self.plan.schema,
                               self.incoming.names)
        if self.keyed is not None:
            self.keyed.partial = partial
        if self.operation == "upsert" and self.keyed is None:
            raise NotKeyedError(f"operation 'upsert' needs a keyed table at {self.location}; create it first with "
                                "Table.create(..., identifier_fields=[...]) (fieldshift create --key)")
        self._planned = True

    def __getstate__(self) -> dict[str, Any]:
        """Pickled for the tasks (on the driver): plan first, so every task writes by the same plan."""
        try:
            self.plan_now()
        except FieldshiftError as e:
            raise one_line(e).with_traceback(None) from None
        return dict(self.__dict__)

    # -- executors ------------------------------------------------------------------------------
    def write(self, iterator: Iterator[pa.RecordBatch]) -> StreamCommitMessage:
        self.plan_now()  # planned already when it came pickled from the driver
        done = super().write(iterator)
        return StreamCommitMessage(done.files, done.quarantine, done.rows, self.base_snapshot_id,
                                   self.plan.schema.to_json(), tuple(self.plan.changes), self.table_location)

    def _flush(self, batches: Sequence[pa.RecordBatch], location: TableStorage,
               message: FieldshiftCommitMessage) -> None:
        if self.keyed is None:
            super()._flush(batches, location, message)
        else:
            self.keyed.write_planned(location, self.plan, pa.Table.from_batches(batches, schema=self.incoming),
                                     message)

    # -- driver ---------------------------------------------------------------------------------
    def commit(self, messages: Sequence[FieldshiftCommitMessage | None], batchId: int) -> None:  # type: ignore[override]
        done = [m for m in messages if m is not None]
        files = [f for m in done for f in m.files]
        quarantine = [q for m in done for q in m.quarantine]
        written = [f.path for f in files] + [p for p, _ in quarantine]
        plan_schema, changes = self._planned_schema(done)
        self.filled_at = next((m.base_snapshot_id for m in done if isinstance(m, StreamCommitMessage)), None)
        location = open_storage(self._files_location(done))
        mark = StreamMark(self.stream_id, int(batchId))
        try:
            table = self._table(plan_schema)
            keep_open(table.catalog)  # this worker commits every micro-batch: no checkpoint and WAL files per close
            with table.catalog.one_connection():
                if stream_commit(table.catalog, table.table_id, self.stream_id, int(batchId)) is not None:
                    remove_files(location, written)  # a replay after a crash or restart: already in the table
                    return
                new_files = self._commit(table.io, plan_schema, changes, files, quarantine, mark)
            if new_files is not files:
                remove_files(location, [f.path for f in files])
        except AlreadyCommittedError:
            remove_files(location, written)
        except CommitOutcomeUnknownError:
            raise  # the commit may have landed: its files stay (the replay finds the batch recorded, or vacuum)
        except BaseException:
            remove_files(location, written)
            raise

    def abort(self, messages: Sequence[FieldshiftCommitMessage | None], batchId: int) -> None:  # type: ignore[override]
        if not any(m is not None and (m.files or m.quarantine) for m in messages):
            return  # nothing was written: no table to open, no plan to make
        location = open_storage(self._files_location([m for m in messages if m is not None]))
        for m in messages:
            if m is not None:
                remove_files(location, [f.path for f in m.files] + [p for p, _ in m.quarantine])

    def _planned_schema(self, done: Sequence[FieldshiftCommitMessage]) -> tuple[Schema, tuple[str, ...]]:
        """The schema the tasks wrote by and its changes: from their messages, else (an empty micro-batch)
        this writer's own plan."""
        for m in done:
            if isinstance(m, StreamCommitMessage) and m.schema_json:
                return Schema.from_json(m.schema_json), tuple(m.changes)
        self.plan_now()
        return self.plan.schema, tuple(self.plan.changes)

    def _files_location(self, done: Sequence[FieldshiftCommitMessage]) -> str:
        for m in done:
            if isinstance(m, StreamCommitMessage) and m.table_location:
                return m.table_location
        self.plan_now()
        return self.table_location

    def _table(self, plan_schema: Schema) -> Table:
        try:
            return Table.open(self.location, catalog=self.catalog, name=self.name)
        except TableError:
            self.plan_now()  # no table yet: this writer's plan says how to create it
            if self.new_schema is None:
                raise
        try:
            return Table.create(self.location, plan_schema, catalog=self.catalog, name=self.name,
                                policy=self.policy)
        except TableError:  # created meanwhile (a replay of the first batch)
            return Table.open(self.location, catalog=self.catalog, name=self.name)

    def _commit(self, io: TableIO, plan_schema: Schema, changes: tuple[str, ...], files: list[DataFile],
                quarantine: list[tuple[str, int]], mark: StreamMark) -> list[DataFile]:
        """Commit on the current head (``commits.with_retries``), evolving the table to ``plan_schema`` if no
        one has; files whose schema id now means another schema (a concurrent change) are rewritten for the
        head first."""
        current, schema = files, plan_schema

        def attempt(_now: Attempt) -> list[DataFile]:
            nonlocal current, schema
            metadata = io.metadata()
            # a partial upsert (option partial, checked when the tasks' plan was made) of a keyed table
            partial = self._partial and metadata.keys is not None and self.filled_at is not None
            if partial and metadata.head.snapshot_id != self.filled_at:  # filled from an older snapshot
                raise _FilledFromAnOlderSnapshot(f"batch {mark.batch_id} of the stream is a partial upsert filled from "
                                          f"snapshot {self.filled_at}, and the table moved on meanwhile; restart "
                                          "the query to run the batch again")
            known = metadata.schemas.get(schema.schema_id)
            if known is not None and known.fields != schema.fields:
                current, schema = self._rebase(io, metadata, current)
                known = metadata.schemas.get(schema.schema_id)
            evolve = known is None
            if evolve:
                check_evolution(io, metadata, schema, "a stream")
            vectors = None
            if self.operation == "append" and metadata.keys is not None:  # insert-only: checked against head
                try:
                    vectors = check_new_keys(io, metadata, current)
                except DuplicateKeyError as e:
                    raise DuplicateKeyError(f"batch {mark.batch_id} of the stream: {e} (a stream upserts with "
                                            ".option('operation', 'upsert'))") from None
            elif self.operation == "upsert" and not evolve:  # the rows it supersedes, as Table.upsert
                vectors = resolve_written(io, metadata, schema, current, "upsert")
            commit_files(io, metadata, FilesCommit(
                schema, evolve, current, quarantine, self.operation, mark,
                {"changes": list(changes) if evolve else [], "writer": "spark-stream",
                 "stream": mark.stream_id, "batch": mark.batch_id}, vectors, exclusive=partial))
            return current

        try:
            return with_retries(attempt)
        except _FilledFromAnOlderSnapshot as e:  # no retry can help: the tasks filled the rows at filled_at
            raise CommitConflictError(str(e)) from None

    def _rebase(self, io: TableIO, metadata: TableMetadata, files: list[DataFile]) -> tuple[list[DataFile], Schema]:
        """Rewrite files written as another schema for ``metadata``'s head schema (on-write evolution by name)."""
        head_schema = metadata.current_schema
        if not files:
            return [], head_schema
        data = pa.concat_tables([io.storage.read_table(f.path) for f in files])
        prepared = prepare_append(data, head_schema, evolve=True, on_incompatible="fail", policy=metadata.policy)
        rewritten = write_partitioned(io.storage, prepared.schema, metadata.spec, prepared.data, [],
                                      keys=metadata.keys)
        return rewritten, prepared.schema


