"""Reading a table's data files on executors: tasks planned on the driver, plans shipped with them.

A :class:`FileTask` is one data file, or a range of its row groups when the file is big. A
:class:`FileReader` holds, per schema id, the file columns to read and the frozen plan from that
schema into the read schema (built on the driver), plus the exact Arrow schema Spark expects; it
reads a task with ``pq.ParquetFile.iter_batches`` and yields evolved batches in that schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from fieldshift.errors import SchemaEvolutionError
from fieldshift.planner import EvolutionPlan, cached_plan
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.spark._arrow import BatchConformer
from fieldshift.table.catalog.deletion_vectors import DeletionVector
from fieldshift.table.catalog.sqlite import DataFile
from fieldshift.table.files.data_files import check_file_columns, data_file_errors, name_data_file, read_columns
from fieldshift.table.files.storage import TableStorage, open_storage

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_SPLIT_BYTES",
    "OPEN_COST",
    "FileReader",
    "FileTask",
    "max_split_bytes",
    "pack",
    "plan_tasks",
    "schema_plans",
]

DEFAULT_BATCH_SIZE = 32_768
DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024
OPEN_COST = 4 * 1024 * 1024  # Spark's spark.sql.files.openCostInBytes default


@dataclass(frozen=True, slots=True)
class FileTask:
    """One unit of executor work: a data file (absolute path, or its URI on an object store), or some of
    its row groups."""

    path: str
    schema_id: int
    rows: int
    row_groups: tuple[int, ...] | None = None
    size: int = 0  # bytes on disk (the row groups' share of the file for a range)
    storage: TableStorage | None = None  # an object store's (the executor opens its filesystem), else None
    rel: str = ""
    deleted: str = ""  # the file's deletion vector (encoded positions): a whole-file task drops those rows

    def open(self) -> pq.ParquetFile:
        if self.storage is None:
            return pq.ParquetFile(self.path, pre_buffer=True)
        return self.storage.parquet_file(self.rel, pre_buffer=True)


def plan_tasks(location: TableStorage | Path, files: Iterable[DataFile],
               split_bytes: int = DEFAULT_SPLIT_BYTES,
               vectors: Mapping[int, DeletionVector] | None = None) -> list[FileTask]:
    """One task per file; files bigger than ``split_bytes`` are split into row-group ranges, except files
    with deleted rows (``vectors``: the snapshot's deletion vectors), read whole with their positions.

    Only the footers of big files are read (on the driver), to find their row groups.
    """
    tasks = []
    storage = open_storage(location)
    remote = None if storage.is_local else storage
    for f in files:
        path = storage.display(f.path)
        v = vectors.get(f.file_id) if vectors and f.file_id is not None else None
        if v is not None and v.cardinality:
            tasks.append(FileTask(path, f.schema_id, f.record_count, None, f.file_size, remote, f.path, v.text))
            continue
        if f.file_size <= split_bytes:
            tasks.append(FileTask(path, f.schema_id, f.record_count, None, f.file_size, remote, f.path))
            continue
        meta = storage.parquet_file(f.path).metadata
        group: list[int] = []
        size = rows = 0
        for i in range(meta.num_row_groups):
            rg = meta.row_group(i)
            if group and size + rg.total_byte_size > split_bytes:
                tasks.append(FileTask(path, f.schema_id, rows, tuple(group), size, remote, f.path))
                group, size, rows = [], 0, 0
            group.append(i)
            size += rg.total_byte_size
            rows += rg.num_rows
        if group or not tasks:
            tasks.append(FileTask(path, f.schema_id, rows, tuple(group), size, remote, f.path))
    return tasks


def max_split_bytes(sizes: Sequence[int], parallelism: int, max_bytes: int = DEFAULT_SPLIT_BYTES,
                    open_cost: int = OPEN_COST) -> int:
    """Spark's ``maxSplitBytes``: ``min(max_bytes, max(open_cost, total / parallelism))``."""
    total = sum(size + open_cost for size in sizes)
    return min(max_bytes, max(open_cost, total // max(1, parallelism)))


def pack(sizes: Sequence[int], split: int, open_cost: int = OPEN_COST) -> list[list[int]]:
    """Group items (by index) into partitions the way Spark's file scans do.

    Items sorted by size, descending; a partition is closed when the next item would overflow
    ``split`` bytes, each item counting ``open_cost`` extra (``FilePartition.getFilePartitions``).
    """
    bins: list[list[int]] = []
    used = 0
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        if not bins or (bins[-1] and used + sizes[i] > split):
            bins.append([])
            used = 0
        bins[-1].append(i)
        used += sizes[i] + open_cost
    return bins


def schema_plans(schemas: dict[int, Schema], schema_ids: Iterable[int], read_schema: Schema,
                 policy: CastPolicy | None) -> dict[int, tuple[tuple[str, ...], EvolutionPlan]]:
    """Per file schema id: the top-level file columns to read and the plan into ``read_schema``.

    Built on the driver; a schema that cannot be read raises ``SchemaMismatchError`` here.
    """
    wanted = {f.id for f in read_schema.all_fields()}
    out = {}
    for sid in sorted(set(schema_ids)):
        file_schema = schemas[sid]
        names = tuple(f.name for f in file_schema.fields if f.id in wanted)
        out[sid] = (names, cached_plan(file_schema.select(names), read_schema, policy))
    return out


class FileReader:
    """Reads :class:`FileTask`s with pyarrow and evolves them into ``target`` (picklable)."""

    def __init__(self, plans: dict[int, tuple[tuple[str, ...], EvolutionPlan]], target: pa.Schema,
                 batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        self.plans = plans
        self.target = target
        self.batch_size = batch_size

    def read(self, task: FileTask) -> Iterator[pa.RecordBatch]:
        names, plan = self.plans[task.schema_id]
        conform = BatchConformer(self.target)
        keep = DeletionVector(1, task.deleted).keep_mask(task.rows) if task.deleted else None
        offset = 0
        for batch in _iter_batches(task, names, plan.input_schema, self.batch_size):
            if keep is not None:  # rows deletes and updates removed (a whole-file task)
                offset, batch = offset + batch.num_rows, batch.filter(pa.array(keep[offset:offset + batch.num_rows]))
            try:
                out = plan.apply(batch)
            except SchemaEvolutionError as e:
                name_data_file(e, task.path, task.schema_id)
                raise
            yield conform(out)

    def read_all(self, tasks: Sequence[FileTask]) -> Iterator[pa.RecordBatch]:
        for task in tasks:
            yield from self.read(task)

    def __getstate__(self) -> dict[str, Any]:
        return {"plans": self.plans, "target": self.target, "batch_size": self.batch_size}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def _iter_batches(task: FileTask, names: Sequence[str], expected: pa.Schema | None,
                  batch_size: int) -> Iterator[pa.RecordBatch]:
    with data_file_errors(task.path), task.open() as pf:
        if expected is not None:
            check_file_columns(task.path, pf.schema_arrow, expected)
        # with no columns (every read column is a constant in this file) batches still count rows
        yield from read_columns(pf, names, batch_size, task.row_groups, restore=expected)

