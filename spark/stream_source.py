"""The Structured Streaming source: ``spark.readStream.format("fieldshift").load(location)``.

It emits the rows that appends add, file by file, from the snapshot after the query's first trigger
(or ``startingSnapshotId``), evolved by field id into the schema the query started with. A schema
change committed while the query runs does not stop it: a renamed column keeps flowing under the
name the query knows, a new column is not emitted until the query restarts, a dropped one reads
null, and a widened one is read back into the query's type, checked per value (a value that no
longer fits fails the query, naming it; restarting picks up the wider type). Delta's and Iceberg's
streaming sources stop on such changes instead.

Snapshots that add no rows (create, schema, policy, compaction) are passed over; one that changes
or removes rows (overwrite, upsert, delete, update) fails the query unless ``skipChangeCommits`` is true.
Offsets are ``{"snapshot": s, "file": k}``: every row before the k-th file snapshot s added was
emitted. Rate limits: ``maxFilesPerTrigger`` and ``maxRowsPerTrigger`` (at least one file per batch).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxFiles,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from fieldshift.errors import (
    CastValueError,
    InvalidOptionError,
    SchemaMismatchError,
    StreamChangeCommitError,
    StreamOffsetExpiredError,
)
from fieldshift.planner import EvolutionPlan
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.spark._arrow import spark_arrow_schema
from fieldshift.spark._files import DEFAULT_BATCH_SIZE, FileReader, FileTask, plan_tasks, schema_plans
from fieldshift.spark.source_options import parse_policy
from fieldshift.table.catalog.stream_log import files_added
from fieldshift.table.handle import TableIO
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.records import DataFile
from fieldshift.table.table import Table

__all__ = ["APPEND_OPERATIONS", "NO_ROW_OPERATIONS", "FieldshiftStreamReader", "StreamPartition"]

APPEND_OPERATIONS = frozenset({"append"})
"""Snapshot operations whose files are new rows, emitted by the source."""
NO_ROW_OPERATIONS = frozenset({"create", "schema", "policy", "partition-spec", "compact"})
"""Snapshot operations that add no new rows (a compaction rewrites rows already emitted)."""


@dataclass(frozen=True, slots=True)
class _Pending:
    snapshot_id: int
    index: int
    file: DataFile


class StreamPartition(InputPartition):
    """Some files of one micro-batch and the plans that read them into the query's schema."""

    def __init__(self, tasks: Sequence[FileTask], reader: FileReader) -> None:
        super().__init__(tuple(t.path for t in tasks))
        self.tasks = tuple(tasks)
        self.reader = reader


def _positive(options: Any, key: str) -> int | None:
    raw = options.get(key)
    if raw is None or str(raw).strip() == "":
        return None
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = 0
    if value < 1:
        raise InvalidOptionError(f"option {key!r} must be a positive integer, got {raw!r}")
    return value


def _flag(options: Any, key: str) -> bool:
    raw = str(options.get(key, "false")).strip().lower()
    if raw not in ("true", "false"):
        raise InvalidOptionError(f"option {key!r} must be true or false, got {raw!r}")
    return raw == "true"


class FieldshiftStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets, planning and reading of the fieldshift streaming source (no state but the options)."""

    def __init__(self, options: Any, schema: StructType, read_schema: Schema) -> None:
        path = options.get("path")
        if not path:
            raise InvalidOptionError("give the table's location: spark.readStream.format('fieldshift').load(location)")
        self.location = str(path)
        self.catalog = options.get("catalog")
        self.name = options.get("table")
        self.read_schema = read_schema
        self.target = spark_arrow_schema(schema)
        self.policy = parse_policy(options.get("policy"))
        starting = options.get("startingSnapshotId")
        if starting is not None and not str(starting).strip().isdigit():
            raise InvalidOptionError(f"option 'startingSnapshotId' must be a snapshot id (0 or more), got {starting!r}")
        self.starting = None if starting is None else int(str(starting).strip())
        self.max_files = _positive(options, "maxFilesPerTrigger")
        self.max_rows = _positive(options, "maxRowsPerTrigger")
        self.skip_changes = _flag(options, "skipChangeCommits")
        self.batch_size = _positive(options, "batch_size") or DEFAULT_BATCH_SIZE
        self.available_now: int | None = None

    def _table(self) -> Table:
        return Table.open(self.location, catalog=self.catalog, name=self.name)

    def _io(self) -> TableIO:
        return self._table().io

    # -- offsets (driver) -----------------------------------------------------------------------
    def initialOffset(self) -> dict[str, int]:
        table = self._table()
        head = table.current_snapshot.snapshot_id
        if self.starting is None:
            return {"snapshot": head + 1, "file": 0}
        ids = {s.snapshot_id for s in table.history()}
        if self.starting not in ids and self.starting <= head:
            raise StreamOffsetExpiredError(
                f"startingSnapshotId {self.starting} is not a snapshot of table {table.name} (it holds "
                f"{min(ids)}..{head}); start from one of those, or leave the option out to read new snapshots")
        return {"snapshot": self.starting, "file": 0}

    def prepareForTriggerAvailableNow(self) -> None:
        self.available_now = self._table().current_snapshot.snapshot_id

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.max_files is not None:
            return ReadMaxFiles(self.max_files)
        if self.max_rows is not None:
            return ReadMaxRows(self.max_rows)
        return ReadAllAvailable()

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        pending = self._pending(self._io(), start)
        max_files = limit.max_files if isinstance(limit, ReadMaxFiles) else None
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        if not isinstance(limit, ReadAllAvailable):  # both options: the default limit carries the files one
            max_files, max_rows = max_files or self.max_files, max_rows or self.max_rows
        chosen: list[_Pending] = []
        rows = 0
        for p in pending:
            if (max_files is not None and len(chosen) >= max_files) or \
                    (max_rows is not None and chosen and rows + p.file.record_count > max_rows):
                break
            chosen.append(p)
            rows += p.file.record_count
        if not chosen:
            return start
        return {"snapshot": chosen[-1].snapshot_id, "file": chosen[-1].index + 1}

    def _pending(self, io: TableIO, start: dict[str, int], end: dict[str, int] | None = None) -> list[_Pending]:
        """The appended files after ``start`` (up to ``end``, else the head or the availableNow target)."""
        first, skip = int(start["snapshot"]), int(start["file"])
        snapshots = io.catalog.snapshots(io.table_id)
        head = snapshots[-1].snapshot_id
        if first < snapshots[0].snapshot_id or (first <= head and first not in {s.snapshot_id for s in snapshots}):
            raise StreamOffsetExpiredError(
                f"the query's offset is snapshot {first} of table {io.metadata().name}, which has been expired (the "
                f"oldest is {snapshots[0].snapshot_id}); restart the query with a new checkpointLocation, "
                f"with option startingSnapshotId >= {snapshots[0].snapshot_id} to read from there")
        last = head if end is None else int(end["snapshot"])
        if end is None and self.available_now is not None:
            last = min(last, self.available_now)
        if first > last:
            return []
        added: dict[int, list[DataFile]] = {}
        for sid, f in files_added(io.catalog, io.table_id, first, last):
            added.setdefault(sid, []).append(f)
        out = []
        for snap in snapshots:
            sid = snap.snapshot_id
            if sid < first or sid > last or snap.operation in NO_ROW_OPERATIONS:
                continue
            if snap.operation not in APPEND_OPERATIONS:
                if self.skip_changes:
                    continue
                if out:  # emit what came before; the next micro-batch stops here
                    return out
                raise StreamChangeCommitError(
                    f"snapshot {sid} of table {io.metadata().name} is an {snap.operation!r}, which changes or removes "
                    "rows an append-only stream has already emitted; set .option('skipChangeCommits', 'true') "
                    "to pass over such snapshots (their added rows are not emitted)")
            for i, f in enumerate(added.get(sid, [])):
                if (sid == first and i < skip) or (end is not None and sid == last and i >= int(end["file"])):
                    continue
                out.append(_Pending(sid, i, f))
        return out

    # -- planning (driver) and reading (executors) ----------------------------------------------
    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        io = self._io()
        files = [p.file for p in self._pending(io, start, end)]
        if not files:
            return []
        plans = self._plans(io.metadata(), {f.schema_id for f in files})
        reader = FileReader(plans, self.target, self.batch_size)
        tasks = plan_tasks(io.storage, files)
        n = max(1, min(len(tasks), os.cpu_count() or 1))
        bins: list[list[FileTask]] = [[] for _ in range(n)]
        for i, t in enumerate(tasks):
            bins[i % n].append(t)
        return [StreamPartition(b, reader) for b in bins if b]

    def _plans(self, metadata: TableMetadata,
               schema_ids: set[int]) -> dict[int, tuple[tuple[str, ...], EvolutionPlan]]:
        """Plans into the query's schema; a type widened since the query started is read back into the
        query's narrower type, checked per value."""
        schemas = dict(metadata.schemas)
        policy = self.policy or metadata.policy
        plans = {}
        for sid in schema_ids:
            try:
                plans.update(schema_plans(schemas, [sid], self.read_schema, policy))
            except SchemaMismatchError:
                plans.update(schema_plans(schemas, [sid], self.read_schema, CastPolicy.explicit("raise")))
        return plans

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, StreamPartition):
            return
        try:
            yield from partition.reader.read_all(partition.tasks)
        except CastValueError as e:
            e.add_note("A column was widened after this streaming query started and a value no longer fits "
                       "the query's type; restart the query to read with the table's current schema.")
            raise

    def commit(self, end: dict[str, int]) -> None:
        return None

