"""Keyed tables on Spark: merge groups (buckets) merged on the executors, upserts and deletes written there.

Reads: a merge group holding one data file and no deletes needs no merge, so its file takes the
usual routes (Spark's native scan where exact, else pyarrow); every other group becomes one task that
opens the table on an executor, evolves the group's files to the read schema and merges them by key
(``fieldshift.table.keyed.merge``) — the answer equals ``Table.scan().to_arrow()``.

Writes: ``df.write.format("fieldshift").option("operation", "upsert" | "delete")``: executors write
bucket files (upserts keep the latest row per key of their partition; deletes write the key
columns), the driver commits once. Rows of one key in two partitions are merged on read like any
two rows of one commit: the higher precombine wins.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from fieldshift.errors import InvalidOptionError, TableError
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.spark._arrow import BatchConformer
from fieldshift.spark.errors_bridge import one_line_errors
from fieldshift.spark.source_options import bool_option, table_location
from fieldshift.table.catalog.sqlite import DataFile
from fieldshift.table.evolution.on_write import WritePlan
from fieldshift.table.files.data_files import remove_files, write_side_file
from fieldshift.table.files.storage import TableStorage
from fieldshift.table.keyed.keyed_write import key_rows
from fieldshift.table.keyed.keys import KeySpec, dedupe_latest
from fieldshift.table.keyed.merge import group_files, read_group
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.partitions.partition_write import write_partitioned
from fieldshift.table.partitions.partitioning import UNPARTITIONED, PartitionSpec
from fieldshift.table.scan.table_scan import Scan
from fieldshift.table.table import Table
from fieldshift.table.write.merge_commit import fill_partial

__all__ = ["OPERATIONS", "GroupPartition", "GroupReader", "KeyedReader", "KeyedWrites", "PartialFill",
           "keyed_reader_parts", "merge_frame", "partial_fill", "split_groups"]

OPERATIONS = ("append", "upsert", "delete")


def split_groups(files: Sequence[DataFile]) -> tuple[list[DataFile], list[tuple[str, ...]]]:
    """(files readable on their own, the paths of every group that needs a merge)."""
    single, merged = [], []
    for group in group_files(list(files)):
        if len(group) == 1 and group[0].content == "data":
            single.append(group[0])
        else:
            merged.append(tuple(f.path for f in group))
    return single, merged


@dataclass
class GroupReader:
    """Picklable: reads and merges one group of a pinned snapshot on an executor."""

    location: str
    catalog: str | None
    name: str | None
    snapshot_id: int
    schema_id: int | None
    columns: tuple[str, ...]
    policy: str | None
    target: pa.Schema
    batch_size: int = 32_768

    def scan(self) -> Scan:
        table = Table.open(self.location, catalog=self.catalog, name=self.name)
        policy = CastPolicy.from_name(self.policy) if self.policy else None
        return table.scan(list(self.columns), None, self.snapshot_id, self.schema_id, policy)

    def read(self, paths: Sequence[str]) -> Iterator[pa.RecordBatch]:
        scan = self.scan()
        by_path = {f.path: f for f in scan.live_files()}
        merged = read_group(scan, [by_path[p] for p in paths]).select(list(self.columns))
        conform = BatchConformer(self.target)
        for batch in merged.to_batches(self.batch_size):
            if batch.num_rows:
                yield conform(batch)


class _GroupTasks:
    """mapInArrow function: each input row is a group index."""

    def __init__(self, reader: GroupReader, groups: list[tuple[str, ...]]) -> None:
        self.reader = reader
        self.groups = groups

    def __call__(self, batches: Any) -> Any:
        for batch in batches:
            for i in batch.column(0).to_pylist():
                yield from self.reader.read(self.groups[i])


def merge_frame(spark: Any, reader: GroupReader, groups: list[tuple[str, ...]], spark_schema: Any) -> Any:
    """A DataFrame of the merged groups, one Spark task per group (as many partitions as groups)."""
    ids = spark.range(0, len(groups), 1, numPartitions=max(1, len(groups)))
    return ids.mapInArrow(_GroupTasks(reader, groups), spark_schema)


def keyed_reader_parts(spark: Any, table: Table, snapshot_id: int, read_schema: Schema, policy: CastPolicy | None,
                       target: pa.Schema, spark_schema: Any, groups: list[tuple[str, ...]], batch_size: int) -> Any:
    """The merge part of ``fieldshift.spark.read`` for a keyed table."""
    reader = GroupReader(str(table.location), None, None, snapshot_id, read_schema.schema_id,
                         tuple(read_schema.names), policy.option_name if policy else None, target, batch_size)
    directory = table.catalog.directory  # None for a catalog in a database server
    if directory is not None and directory != table.location:  # a shared SQLite file: executors open it by name
        reader.catalog, reader.name = str(table.catalog.path), table.name
    # a server catalog: executors open the table by its location, whose marker names the catalog's URI
    return merge_frame(spark, reader, groups, spark_schema)


class GroupPartition(InputPartition):
    """The paths of one merge group's files."""

    def __init__(self, paths: tuple[str, ...]) -> None:
        super().__init__(paths)
        self.paths = paths


class KeyedReader(DataSourceReader):
    """The data source's reader for a keyed table: one input partition per merge group."""

    def __init__(self, spec: Any, read_schema: Schema, target: pa.Schema) -> None:
        policy = spec.policy.option_name if spec.policy is not None else None
        self.reader = GroupReader(spec.location, spec.catalog, spec.name, spec.snapshot_id, spec.schema_id,
                                  tuple(read_schema.names), policy, target)

    def partitions(self) -> list[InputPartition]:
        return [GroupPartition(tuple(f.path for f in g)) for g in group_files(self.reader.scan().files())]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, GroupPartition):
            return iter(())
        return self.reader.read(partition.paths)


@dataclass(frozen=True)
class PartialFill:
    """Executor side of a partial-column upsert (option ``partial``): the columns the input does not carry
    are taken from each key's live row at the snapshot the driver planned on (``merge_commit.fill_partial``,
    as ``Table.upsert(partial=True)``; a new key gets each column's write default, else null; a carried null
    stays null)."""

    location: str
    catalog: str | None
    name: str | None
    snapshot_id: int
    carried: tuple[str, ...]

    def __call__(self, rows: pa.Table, schema: Schema) -> pa.Table:
        table = Table.open(self.location, catalog=self.catalog, name=self.name)
        return fill_partial(table.io, table.io.metadata(self.snapshot_id), rows, list(self.carried), schema)


@dataclass
class KeyedWrites:
    """Executor side of ``operation=upsert|delete``: a task's rows as files per table partition and
    hidden key bucket (the partition spec is fixed on the driver; ``partial``: an upsert's fill)."""

    operation: str
    spec: KeySpec
    partition_spec: PartitionSpec = UNPARTITIONED
    partial: PartialFill | None = None

    @classmethod
    def of(cls, operation: str, metadata: TableMetadata | None) -> KeyedWrites:
        spec = metadata.keys if metadata is not None else None
        if metadata is None or spec is None:
            raise TableError(f"operation={operation!r} needs an existing keyed table (created with "
                             "identifier_fields=[...]); an unkeyed or missing table has no primary key")
        return cls(operation, spec, metadata.spec)

    def files(self, location: TableStorage, schema: Any, good: pa.Table, written: list[str]) -> list[DataFile]:
        if self.operation == "delete":
            keys = key_rows(good.select(list(self.spec.key_names)), schema, self.spec)
            return write_partitioned(location, schema, self.partition_spec, keys, written, keys=self.spec,
                                     content="deletes")
        rows = good if self.operation == "append" else dedupe_latest(good, self.spec)
        return write_partitioned(location, schema, self.partition_spec, rows, written, keys=self.spec)

    def write_planned(self, location: TableStorage, plan: WritePlan, data: pa.Table, message: Any) -> None:
        """A task's rows through the driver's write plan: bucket files of the rows that fit, a quarantine
        file of the rest, both added to ``message`` (a failure removes what this call wrote)."""
        written: list[str] = []
        try:
            good, bad = plan.split(data)
            if self.partial is not None and good.num_rows:
                good = self.partial(good, plan.schema)
            files = self.files(location, plan.schema, good, written)
            if bad is not None and bad.num_rows:
                message.quarantine.append((write_side_file(location, "quarantine", bad), bad.num_rows))
        except BaseException:
            remove_files(location, written)
            raise
        message.files.extend(files)
        message.rows += sum(f.record_count for f in files)


def partial_fill(options: Any, operation: str, base_snapshot_id: int, schema: Schema | None,
                 incoming: Sequence[str]) -> PartialFill | None:
    """The fill of option ``partial`` (true: an upsert's only; refused for other operations), planned on
    ``base_snapshot_id`` with ``schema`` (the write plan's), carrying the ``incoming`` columns it names."""
    if not bool_option(options, "partial", False):
        return None
    if operation != "upsert":
        raise InvalidOptionError(f"option 'partial' is an upsert's (a partial-column upsert keeps the columns the "
                                 f"rows do not carry); operation is {operation!r}")
    assert schema is not None
    return PartialFill(table_location(options), options.get("catalog"), options.get("table"), base_snapshot_id,
                       tuple(n for n in schema.names if n in incoming))


one_line_errors(_GroupTasks, KeyedReader)  # a failing merge: the fieldshift message is Spark's last line
