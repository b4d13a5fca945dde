"""Spark reads of tables other formats wrote (DuckLake, Iceberg, Delta, Paimon, Hudi)::

    spark.read.format("fieldshift").option("format", "ducklake").option("name", "main.t").load(source)
    fieldshift.spark.read(spark, source, format="ducklake", name="main.t")   # spark/open_frame.py

The driver opens the table (``fs.open_table``: the format's metadata stays there), pins the snapshot,
and plans an ``OpenScan`` with the filters Spark pushes (translated by ``pushed_filters``: pruning only,
Spark still filters every row). Each Spark task reads one ``ScanTask`` — a data file with its deletes, or
a merge group of a keyed table (Paimon) — on an executor from the pickled scan, which evolves it by field
id exactly as ``OpenTable.scan`` does. Rows only the format's own reader produces (Hudi's merged file
slices) and a DuckLake catalog's inlined rows are read on the driver and shipped as Arrow IPC.

Options: ``format`` (required for this route), ``name``, ``snapshot_id``, ``as_of`` (a time), ``columns``
(comma-separated or a JSON list), ``batch_size``, ``pushdown`` (``false``: no ``pushFilters``),
``skip_files`` (a JSON list of data file paths as the source names them: files ``fieldshift.spark.read``
reads with Spark's native scan instead, ``spark/open_native.py``), and
``fs.open_table``'s options as flat keys (``table/open_options.py``): ``data_path`` (DuckLake),
``catalog.KEY`` (Iceberg: PyIceberg catalog properties), ``properties.KEY`` (Iceberg FileIO:
``.option("properties.s3.endpoint", url)``), ``storage_options.KEY`` (Hudi). Spark hands option keys
over in lower case, so these inner keys arrive lower-cased; ``catalog``, ``properties`` and
``storage_options`` also take a JSON object, whose keys keep their case.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from fieldshift.errors import InvalidOptionError, TableError
from fieldshift.schema.model import Schema
from fieldshift.spark._arrow import BatchConformer, spark_arrow_schema
from fieldshift.spark.errors_bridge import one_line_errors
from fieldshift.spark.pushed_filters import from_spark_filter
from fieldshift.spark.source_options import list_option
from fieldshift.spark.types import schema_to_spark
from fieldshift.table.expressions.tree import Expression, and_
from fieldshift.table.open_options import DICT_OPTIONS, open_options
from fieldshift.table.open_table import OpenTable, open_table
from fieldshift.table.scan.open_scan import OpenScan, ScanTask

__all__ = ["OpenReadSpec", "OpenTableReader", "open_schema", "open_spec", "table_options"]


@dataclass(frozen=True)
class OpenReadSpec:
    """A read of another format's table as the driver resolved it: the source, the pinned snapshot, the
    read schema (the snapshot's schema, or its ``columns``), and how to open the table again."""

    source: str | None
    format: str
    name: str | None
    snapshot_id: Any  # None: the table has no snapshot yet (an empty read)
    read_schema: Schema
    open_options: tuple[tuple[str, Any], ...] = ()
    skip_files: frozenset[str] = frozenset()  # data files another route reads

    def open(self) -> OpenTable:
        return open_table(self.source, format=self.format, name=self.name, **dict(self.open_options))


def open_spec(options: Any) -> OpenReadSpec:
    """Resolve a read from the data source's options (on the driver, once per query)."""
    source = options.get("path")
    opened = table_options(options)
    if not source and "catalog" not in opened:
        raise InvalidOptionError("give the table's source: spark.read.format('fieldshift').option('format', ...)"
                                 ".load(source), or an Iceberg catalog's catalog.KEY options")
    fmt = str(options.get("format")).strip().lower()
    name = options.get("name") or options.get("table")
    snapshot_id = options.get("snapshot_id")
    as_of = options.get("as_of")
    source = str(source) if source else None
    with open_table(source, format=fmt, name=name, **opened) as table:
        scan = table.scan(columns=list_option(options, "columns"), snapshot_id=snapshot_id, as_of=as_of)
        pinned = scan.snapshot_id if table.history() else None
        return OpenReadSpec(source, fmt, name, pinned, scan.full_schema.select(scan.columns), tuple(opened.items()),
                            frozenset(list_option(options, "skip_files") or ()))


def table_options(options: Any) -> dict[str, Any]:
    """``fs.open_table``'s keyword arguments from the data source's options: ``data_path``, the dotted
    ``catalog.``/``properties.``/``storage_options.`` keys, and ``catalog``/``properties``/``storage_options``
    as JSON objects (keys kept in their case; a dotted key overrides one). A dotted key of another prefix is
    refused by name."""
    pairs = [(str(k), v) for k, v in options.items() if "." in str(k) or str(k) == "data_path"]
    opened = open_options(pairs, "option")
    for group in DICT_OPTIONS:
        raw = options.get(group)
        if raw is None:
            continue
        try:
            given = json.loads(str(raw))
        except ValueError:
            given = None
        if not isinstance(given, dict):
            raise InvalidOptionError(f"option {group!r} takes a JSON object, not {raw!r}; or give its entries one "
                                     f"by one as {group}.KEY options")
        opened[group] = {**given, **opened.get(group, {})}
    return opened


class OpenTaskPartition(InputPartition):
    """One Spark task: a scan task read on the executor, or rows read on the driver (Arrow IPC)."""

    def __init__(self, scan: OpenScan | None = None, task: ScanTask | None = None, rows: bytes | None = None) -> None:
        super().__init__(rows)
        self.scan, self.task, self.rows = scan, task, rows


class OpenTableReader(DataSourceReader):
    """Plans the pinned snapshot's scan on the driver; each task reads one file or merge group."""

    def __init__(self, spec: OpenReadSpec, schema: StructType, batch_size: int, pushdown: bool = True) -> None:
        self.spec = spec
        self.pushdown = pushdown
        names = [f.name for f in schema.fields]
        known = {n.lower(): n for n in spec.read_schema.names}
        missing = [n for n in names if n.lower() not in known]
        if missing:
            raise TableError(f"column {missing[0]!r} is not in the table's read schema {spec.read_schema.names}")
        self.columns = [known[n.lower()] for n in names]
        self.target = spark_arrow_schema(schema)
        self.batch_size = batch_size
        self.predicates: list[Expression] = []

    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:
        for f in filters:
            if self.pushdown:
                pred = from_spark_filter(f, self.spec.read_schema)
                if pred is not None:
                    self.predicates.append(pred)
            yield f  # always handed back: Spark filters every row; the predicates only prune files

    def partitions(self) -> list[InputPartition]:
        if self.spec.snapshot_id is None:
            return []
        with self.spec.open() as table:
            scan = table.scan(columns=self.columns, filter=and_(*self.predicates), snapshot_id=self.spec.snapshot_id,
                              batch_size=self.batch_size)
            parts: list[InputPartition] = []
            for task in scan.tasks():
                if task.kind == "file" and task.files[0].path in self.spec.skip_files:
                    continue
                if task.kind in ("file", "merge"):
                    # the task's files and a detached scan holding only them: the executor needs no metadata
                    parts.append(OpenTaskPartition(scan.shipped(task), task.shipped()))
                else:  # inlined rows and the format's own reader's rows: read here, where the metadata is
                    batches = [scan.finish(b) for b in scan.task_batches(task)]
                    parts.append(OpenTaskPartition(rows=_ipc(scan.output_schema, batches)))
        return parts

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, OpenTaskPartition):  # Spark's stand-in when there is nothing to read
            return
        conform = BatchConformer(self.target)
        if partition.rows is not None:
            for batch in pa.ipc.open_stream(partition.rows):
                if batch.num_rows:
                    yield conform(batch)
            return
        scan, task = partition.scan, partition.task
        assert scan is not None and task is not None
        for batch in scan.task_batches(task):
            out = scan.finish(batch)
            if out.num_rows:
                yield conform(out)


def _ipc(schema: pa.Schema, batches: Sequence[pa.RecordBatch]) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema) as writer:
        for b in batches:
            writer.write_batch(b)
    return sink.getvalue().to_pybytes()


one_line_errors(OpenTableReader)


def open_schema(spec: OpenReadSpec) -> StructType:
    """The Spark schema of a resolved read."""
    return schema_to_spark(spec.read_schema)
