"""The ``fieldshift`` Spark data source (Spark 4 Python data source API): read and write tables.

Reading::

    spark.read.format("fieldshift").load(location)                     # the current schema
    spark.read.format("fieldshift").option("snapshot_id", 3).load(location)   # time travel
    spark.read.format("fieldshift").option("schema_id", 1).load(location)     # as an older schema
    spark.read.format("fieldshift").option("columns", "a,b").load(location)   # column pruning

Tables other formats wrote (``spark/open_read.py``)::

    spark.read.format("fieldshift").option("format", "ducklake").option("name", "main.t").load(source)

One input partition per data file (or row-group range of a big file); executors read with pyarrow and evolve with
plans built on the driver into exactly the schema Spark expects. Spark 4's Python data source API has no column-
pruning hook: prune with the ``columns`` option (``fieldshift.spark.read`` does); pushed filters prune whole files by
their exact statistics, and Spark still evaluates every filter.

Writing::

    df.write.format("fieldshift").mode("append").save(location)
    df.write.format("fieldshift").mode("overwrite").option("on_incompatible", "quarantine").save(location)

The driver decides the write plan once (on-write evolution: widening, new nullable columns, write defaults), executors
write Parquet files with field ids, the driver commits them in one catalog transaction; a failed job commits nothing
and deletes its files. Writing where no table is creates one from the DataFrame's schema (``spark/batch_writer.py``;
keyed writes: ``spark/keyed_writer.py``).

Options: ``snapshot_id``, ``schema_id``, ``columns`` (comma-separated or a JSON list), ``catalog`` and ``table`` (a
shared catalog and the table's name in it), ``policy`` (a ``CastPolicy.from_name`` name; default: the table's own
policy, for reads and writes), ``batch_size`` (rows per Arrow batch, default 32768), ``split_size`` (bytes; bigger
files are split by row groups), ``max_partitions`` (at most this many input partitions; by default packed like Spark's
own file scans), ``schema_ids`` (read only files written with these schema ids), ``skip_deleted`` (``true``: leave
out files with deleted rows, which ``fieldshift.spark.read`` reads itself), ``pushdown`` (``false``: no
``pushFilters``); for writes ``on_incompatible`` (``fail`` | ``quarantine``), ``evolve`` (``true`` | ``false``),
``operation`` (``upsert`` | ``delete``: keyed tables). Errors leave as one-line fieldshift exceptions, the last line
of Spark's error (``errors_bridge``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from fieldshift.errors import TableError
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.spark._arrow import spark_arrow_schema
from fieldshift.spark._files import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_SPLIT_BYTES,
    FileReader,
    FileTask,
    max_split_bytes,
    pack,
    plan_tasks,
    schema_plans,
)
from fieldshift.spark.batch_writer import FieldshiftCommitMessage, FieldshiftWriter
from fieldshift.spark.errors_bridge import one_line_errors
from fieldshift.spark.keyed import KeyedReader
from fieldshift.spark.keyed_writer import writer_for
from fieldshift.spark.open_read import OpenReadSpec, OpenTableReader, open_spec
from fieldshift.spark.parallelism import default_parallelism
from fieldshift.spark.pushed_filters import from_spark_filter
from fieldshift.spark.source_options import bool_option, int_option, list_option, parse_policy, table_location
from fieldshift.spark.streaming import StreamingMixin
from fieldshift.spark.types import schema_to_spark, type_to_spark
from fieldshift.spark.workers import prepare_session
from fieldshift.table.catalog.sqlite import DataFile
from fieldshift.table.expressions.tree import Expression, and_
from fieldshift.table.scan.table_scan import Scan
from fieldshift.table.table import Table

__all__ = ["FORMAT", "FieldshiftCommitMessage", "FieldshiftDataSource", "FieldshiftReader", "FieldshiftWriter",
           "parse_policy", "register"]

FORMAT = "fieldshift"


# -- options -------------------------------------------------------------------------------------
def _open(options: Any) -> Table:
    return Table.open(table_location(options), catalog=options.get("catalog"), name=options.get("table"))


@dataclass(frozen=True)
class _ReadSpec:
    """What a read resolved to on the driver: pinned snapshot, read schema, and table coordinates."""

    location: str
    catalog: str | None
    name: str | None
    snapshot_id: int
    schema_id: int | None
    read_schema: Schema
    policy: CastPolicy | None
    schema_ids: tuple[int, ...] | None
    keyed: bool = False  # merge groups are read by keyed.KeyedReader
    skip_deleted: bool = False  # leave out files with deleted rows (fieldshift.spark.read reads them itself)


def _resolve(options: Any) -> _ReadSpec:
    table = _open(options)
    policy = parse_policy(options.get("policy")) or table.policy  # the table's own rules by default
    scan = table.scan(list_option(options, "columns"), None, int_option(options, "snapshot_id"),
                      int_option(options, "schema_id"), policy)
    ids = list_option(options, "schema_ids")
    return _ReadSpec(table_location(options), options.get("catalog"), options.get("table"), scan.snapshot_id,
                     int_option(options, "schema_id"), scan.full_schema.select(scan.columns), policy,
                     tuple(int(i) for i in ids) if ids is not None else None, scan.keys is not None,
                     bool_option(options, "skip_deleted", False))


# -- the data source -----------------------------------------------------------------------------
class FieldshiftDataSource(StreamingMixin, DataSource):
    """``spark.read.format("fieldshift")`` / ``df.write.format("fieldshift")``."""

    parallelism: int | None = None  # the session's default parallelism, baked in by register()

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def _spec(self) -> Any:
        spec = getattr(self, "_read_spec", None)
        if spec is None:
            # option("format", ...): a table another format wrote (spark/open_read.py)
            spec = open_spec(self.options) if self.options.get("format") else _resolve(self.options)
            self._read_spec = spec  # pickled with the instance, so reader() sees the same snapshot
        return spec

    def schema(self) -> StructType:
        return schema_to_spark(self._spec().read_schema)

    def reader(self, schema: StructType) -> DataSourceReader:
        spec = self._spec()
        if isinstance(spec, OpenReadSpec):
            return OpenTableReader(spec, schema, int_option(self.options, "batch_size") or DEFAULT_BATCH_SIZE,
                                   bool_option(self.options, "pushdown", True))
        if spec.keyed:
            return KeyedReader(spec, _project(spec, schema), spark_arrow_schema(schema))
        cls = FieldshiftReader if bool_option(self.options, "pushdown", True) else _PlainReader
        return cls(spec, schema, batch_size=int_option(self.options, "batch_size") or DEFAULT_BATCH_SIZE,
                   split_bytes=int_option(self.options, "split_size") or DEFAULT_SPLIT_BYTES,
                   max_partitions=int_option(self.options, "max_partitions"),
                   parallelism=self.parallelism)

    def writer(self, schema: StructType, overwrite: bool) -> FieldshiftWriter:
        return writer_for(self.options, schema, overwrite)


class FilePartition(InputPartition):
    """Some :class:`FileTask`\\ s (data files or row-group ranges), read one after the other."""

    def __init__(self, tasks: Sequence[FileTask]) -> None:
        super().__init__(tuple(tasks))
        self.tasks = tuple(tasks)


def _pack(tasks: Sequence[FileTask], limit: int | None, parallelism: int | None,
          split_bytes: int) -> list[tuple[FileTask, ...]]:
    """Input partitions: at most ``limit`` if given (balanced by rows), else packed like Spark's own
    file scans for ``parallelism`` (when known), else one per task."""
    if limit:
        if len(tasks) <= limit:
            return [(t,) for t in tasks]
        bins: list[list[FileTask]] = [[] for _ in range(limit)]
        rows = [0] * limit
        for t in sorted(tasks, key=lambda t: -t.rows):
            i = rows.index(min(rows))
            bins[i].append(t)
            rows[i] += t.rows
        return [tuple(b) for b in bins if b]
    if not parallelism:
        return [(t,) for t in tasks]
    sizes = [t.size for t in tasks]
    groups = pack(sizes, max_split_bytes(sizes, parallelism, split_bytes))
    return [tuple(tasks[i] for i in g) for g in groups]


def _project(spec: _ReadSpec, schema: StructType) -> Schema:
    """The read schema for the columns Spark asks for (a user-given ``.schema(...)`` selects columns)."""
    ours = {f.name.lower(): f for f in spec.read_schema.fields}
    names = []
    for sf in schema.fields:
        f = ours.get(sf.name.lower())
        if f is None:
            raise TableError(f"column {sf.name!r} is not in the table's read schema {spec.read_schema.names}")
        expected = type_to_spark(f.type, path=f.name)
        if _strip(expected) != _strip(sf.dataType):
            raise TableError(f"column {sf.name!r} reads as {expected.simpleString()}, not "
                             f"{sf.dataType.simpleString()}; leave .schema() out or use the table's types")
        names.append(f.name)
    if names == spec.read_schema.names:
        return spec.read_schema
    return spec.read_schema.select(names)


def _strip(t: Any) -> str:
    """A Spark type's shape without nullability or metadata, for comparisons."""
    from pyspark.sql import types as st

    if isinstance(t, st.StructType):
        return "struct<" + ",".join(f"{f.name}:{_strip(f.dataType)}" for f in t.fields) + ">"
    if isinstance(t, st.ArrayType):
        return f"array<{_strip(t.elementType)}>"
    if isinstance(t, st.MapType):
        return f"map<{_strip(t.keyType)},{_strip(t.valueType)}>"
    return t.simpleString()


class _PlainReader(DataSourceReader):
    """Reads the pinned snapshot's files (no filter pushdown)."""

    def __init__(self, spec: _ReadSpec, schema: StructType, *, batch_size: int, split_bytes: int,
                 max_partitions: int | None = None, parallelism: int | None = None) -> None:
        self.spec = spec
        self.max_partitions = max_partitions
        self.parallelism = parallelism
        self.read_schema = _project(spec, schema)
        self.split_bytes = split_bytes
        self.predicates: list[Expression] = []  # pushed filters Spark gave (all must hold)
        table = Table.open(spec.location, catalog=spec.catalog, name=spec.name)
        self._table: Table | None = table
        scan = self._scan(table)
        self._files: list[DataFile] | None = scan.files()
        schema_ids = {f.schema_id for f in self._files}
        # Plans are built here, on the driver, for every schema id in the snapshot; a file schema that
        # cannot be read as the read schema fails the query now, not in a task.
        plans = schema_plans(table.schemas_by_id(), schema_ids, self.read_schema, spec.policy)
        self.file_reader = FileReader(plans, spark_arrow_schema(schema), batch_size)

    def _scan(self, table: Table) -> Scan:
        return table.scan(self.read_schema.names, and_(*self.predicates), self.spec.snapshot_id,
                          self.spec.schema_id, self.spec.policy)

    def partitions(self) -> list[InputPartition]:
        table = self._table or Table.open(self.spec.location, catalog=self.spec.catalog, name=self.spec.name)
        scan = self._scan(table)
        files = scan.files() if self.predicates or self._files is None else self._files
        if self.spec.schema_ids is not None:
            keep = set(self.spec.schema_ids)
            files = [f for f in files if f.schema_id in keep]
        # files that lost rows to deletes or updates are read whole, their deletion vectors applied
        vectors = scan.deletion_vectors()
        if self.spec.skip_deleted:
            files = [f for f in files if f.file_id not in vectors or not vectors[f.file_id].cardinality]
        tasks = plan_tasks(table.storage, files, self.split_bytes, vectors)
        return [FilePartition(group)
                for group in _pack(tasks, self.max_partitions, self.parallelism, self.split_bytes)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, FilePartition):  # Spark's stand-in when filters ruled out every file
            return iter(())
        return self.file_reader.read_all(partition.tasks)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_table"] = None
        state["_files"] = None
        return state


class FieldshiftReader(_PlainReader):
    """Reads the pinned snapshot's files; pushed filters prune files by exact statistics."""

    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:
        for f in filters:
            pred = from_spark_filter(f, self.read_schema)
            if pred is not None:
                self.predicates.append(pred)
            # Always handed back: pruning by stats only skips files no row of which can match;
            # Spark still evaluates the filter on every row read, with its own semantics.
            yield f


one_line_errors(FieldshiftDataSource, _PlainReader, FieldshiftReader)


def register(spark: Any) -> None:
    """Register the ``fieldshift`` format with ``spark`` (and enable Python filter pushdown); over Spark
    Connect, first check that the server's Python workers import fieldshift (``SparkWorkerImportError``)."""
    prepare_session(spark)
    parallelism = default_parallelism(spark)  # None over Spark Connect without the conf: a partition per file
    # A subclass made here (not importable by name) is pickled by value, so the planning workers see
    # the session's parallelism and pack small files into partitions the way Spark's scans do.
    registered = type("RegisteredFieldshiftDataSource", (FieldshiftDataSource,),
                      {"parallelism": parallelism, "__module__": __name__})
    spark.dataSource.register(registered)
