"""``fieldshift.spark.read``: a table as a DataFrame, through Spark's own Parquet scan where that is exact.

Per group of data files sharing a schema id, the plan from that schema into the read schema is
checked against what Spark's native Parquet reader reproduces value for value when it is given a
target schema whose fields carry ``parquet.field.id`` (``spark.sql.parquet.fieldId.read.enabled``).
Verified (Spark 4.x, vectorized and row readers, see ``tests/spark``): renames by id at any struct
depth, integer widening (int8/16/32 -> wider ints, uint8/16/32 -> wider signed ints), int -> double,
float -> double, decimal widening, date -> timestamp without zone, timestamp ms -> us, layout
variants (large/fixed/view -> plain), null for missing columns at any depth, and a top-level
missing column's initial default (from the ``EXISTS_DEFAULT`` metadata) for primitive types.

Not native (read on the executors with pyarrow instead): defaults of nested fields (Spark reads
them as null), binary and >18-digit decimal defaults, float16, nanosecond timestamps, times,
explicit/lossy casts (int -> string, the Hudi matrix, checked casts), unsigned -> uint64, date ->
timestamp with a zone — and any group where a column the file lacks is named like one it has (a
dropped column's name re-added): Spark's Parquet filter pushdown matches by name and prunes row
groups on the old column's statistics (observed: ``c IS NULL`` returned no rows).

Spark's scan is not given the read schema as is: each group's scan requests the columns under the
names *its files* use (with their ids), and a projection renames them. Given the read names, Spark
crashed on two columns swapping names with a widening, and its filter pushdown looked up the wrong
column; and a by-id scan would silently read renamed columns as null if
``spark.sql.parquet.fieldId.read.enabled`` were off when the DataFrame runs. Requesting the files'
names gives the same answer either way; schema ids differing only in top-level names share one scan
(``native_scan.py``). Everything the native scan cannot read goes through the
executor-side route, so the answer always equals ``fieldshift.Table.open(location).scan().to_arrow()``
(in Spark's types).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fieldshift.errors import InvalidOptionError
from fieldshift.options import ReadRoute, ReadVia, check_option
from fieldshift.planner import cached_plan
from fieldshift.schema.model import Schema, join_path
from fieldshift.schema.policy import CastPolicy
from fieldshift.spark._arrow import spark_arrow_schema
from fieldshift.spark._files import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_SPLIT_BYTES,
    FileReader,
    max_split_bytes,
    pack,
    plan_tasks,
    schema_plans,
)
from fieldshift.spark.errors_bridge import fieldshift_errors, one_line_errors
from fieldshift.spark.keyed import keyed_reader_parts, split_groups
from fieldshift.spark.native_check import OBJECT_STORE_REASON, native_reason
from fieldshift.spark.native_scan import native_frame, native_scans
from fieldshift.spark.parallelism import default_parallelism
from fieldshift.spark.read_filter import spark_condition
from fieldshift.spark.types import schema_to_spark
from fieldshift.table.catalog.sqlite import DataFile
from fieldshift.table.expressions.visitors import filter_columns
from fieldshift.table.table import Table

__all__ = ["ReadPlan", "native_reason", "plan_read", "read"]

log = logging.getLogger("fieldshift")


# ------------------------------------------------------------------------------------------------
# planning a read
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReadPlan:
    """Which files go through Spark's native scan and which through the executor-side route."""

    table: Table
    snapshot_id: int
    read_schema: Schema
    native_files: tuple[DataFile, ...]
    arrow_files: tuple[DataFile, ...]
    reasons: dict[int, str | None]  # schema id -> None (native) or why not
    schemas: dict[int, Schema]  # the table's schemas by id, read from the catalog once
    policy: CastPolicy | None = None  # the policy the plans were checked under (the table's by default)
    merge_groups: tuple[tuple[str, ...], ...] = ()  # a keyed table's groups needing a merge (file paths)
    bound: Any = None  # the bound filter, None without one (rows are filtered by spark_condition)
    deleted_files: tuple[DataFile, ...] = ()  # files with deleted rows: pyarrow with their deletion vectors
    vectors: dict[int, Any] | None = None  # the snapshot's deletion vectors (file id -> DeletionVector)

    def explain(self) -> str:
        """Which files each route reads and why: one line for the plan, one per schema version (native Parquet
        scan, or pyarrow and the reason).
        """
        lines = [f"read of snapshot {self.snapshot_id} as schema {self.read_schema.schema_id}: "
                 f"{len(self.native_files)} file(s) native, {len(self.arrow_files)} file(s) via pyarrow"]
        for sid, why in sorted(self.reasons.items()):
            lines.append(f"  schema {sid}: " + ("native Parquet scan" if why is None else f"pyarrow ({why})"))
        if self.deleted_files:
            lines.append(f"  {len(self.deleted_files)} file(s) with deleted rows: pyarrow (deletion vectors)")
        return "\n".join(lines)


def plan_read(table: Table, *, snapshot_id: int | None = None, schema_id: int | None = None,
              columns: Sequence[str] | None = None, policy: CastPolicy | None = None,
              route: ReadRoute = "auto", filter: Any = None) -> ReadPlan:
    """Decide, per schema id, the route of each group of files (plans are checked here, on the driver)."""
    check_option("route", route, ReadRoute)
    policy = policy or table.policy  # the table's own rules by default
    scan = table.scan(columns, filter, snapshot_id, schema_id, policy)
    files = scan.files()  # pruned on the driver: partitions through every spec, then statistics
    schemas = scan.schemas
    read_schema = scan.read_schema
    groups: list[tuple[str, ...]] = []
    if scan.keys is not None:  # groups that need a merge are merged on executors (keyed.py)
        files, groups = split_groups(files)  # (a keyed scan prunes files by key predicates only)
        # the filter's columns are read too: Spark applies it to the merged rows, never to a file's versions
        read_schema = scan.full_schema.select(list(dict.fromkeys([*scan.columns, *filter_columns(scan.bound)])))
    reasons: dict[int, str | None] = {}
    wanted = {f.id for f in read_schema.all_fields()}
    for sid in sorted({f.schema_id for f in files}):
        file_schema = schemas[sid]
        names = [f.name for f in file_schema.fields if f.id in wanted]
        cached_plan(file_schema.select(names), read_schema, policy)  # raises like the engine would
        if route == "arrow":
            reasons[sid] = "route='arrow'"
        elif not table.storage.is_local:
            reasons[sid] = OBJECT_STORE_REASON
        else:
            reasons[sid] = native_reason(file_schema, read_schema)
        if route == "native" and reasons[sid] is not None:
            raise ValueError(f"schema {sid} cannot be read natively: {reasons[sid]}")
    if not table.storage.is_local and files and route != "arrow":
        log.warning("fieldshift.spark.read of %s: %s, so its %d file(s) go via pyarrow on the executors",
                    table.storage.display(), OBJECT_STORE_REASON, len(files))
    # Spark's native Parquet scan knows nothing of deletion vectors: files with deleted rows never take it
    vectors = scan.deletion_vectors()
    deleted = tuple(f for f in files if f.file_id in vectors and vectors[f.file_id].cardinality)
    gone = {f.file_id for f in deleted}
    native = tuple(f for f in files if reasons[f.schema_id] is None and f.file_id not in gone)
    other = tuple(f for f in files if reasons[f.schema_id] is not None and f.file_id not in gone)
    return ReadPlan(table, scan.snapshot_id, read_schema, native, other, reasons, schemas, policy, tuple(groups),
                    scan.bound if scan.filtered else None, deleted, vectors)


# ------------------------------------------------------------------------------------------------
# building the DataFrame
# ------------------------------------------------------------------------------------------------
def read(spark: Any, location: str | Path, *, snapshot_id: int | None = None, schema_id: int | None = None,
         columns: Sequence[str] | None = None, policy: CastPolicy | None = None, catalog: str | None = None,
         name: str | None = None, route: ReadRoute = "auto", via: ReadVia = "files",
         batch_size: int = DEFAULT_BATCH_SIZE, filter: Any = None, format: str | None = None, as_of: Any = None,
         data_path: str | None = None, properties: dict[str, Any] | None = None,
         storage_options: dict[str, Any] | None = None) -> Any:
    """The table at ``location`` as a DataFrame in the read schema, by the fastest exact route.

    ``format=`` (``ducklake``, ``iceberg``, ``delta``, ``paimon``, ``hudi``) reads a table another format wrote
    (``location`` is its source, ``name`` its name there, ``as_of`` a time, ``data_path`` DuckLake's, ``catalog``
    an Iceberg catalog's properties as a dict, ``properties`` Iceberg's FileIO properties, ``storage_options``
    Hudi's; as ``fs.open_table`` takes them): files without deletes whose plan Spark's native scan reproduces
    are read by it, the rest through the fieldshift data source, whose executors read and evolve them
    (``spark/open_native.py``, ``spark/open_read.py``; ``plan_open_read(...).explain()`` says which took
    which route); the result equals ``fs.open_table(...).scan(...).to_arrow()``.

    Files whose plan Spark's native Parquet scan reproduces exactly are read natively (one scan per
    set of file column names, top-level renames sharing one); the rest are read and evolved on the
    executors with pyarrow, ``via``
    ``"files"`` (a ``mapInArrow`` over the file list) or ``"datasource"`` (the fieldshift data
    source). ``route="native"`` or ``"arrow"`` forces one route (native raises if it cannot).
    The result equals ``Table.open(location).scan(...).to_arrow()`` in Spark's types; columns are
    nullable wherever Spark's file scan is used (Spark reads every file column as nullable).

    The native scans request each group's columns under the names its files use (with their
    ``parquet.field.id``) and rename them with a projection, so the answer is the same whether
    ``spark.sql.parquet.fieldId.read.enabled`` is on or off when the DataFrame runs.
    ``filter`` (as ``Table.scan``'s) prunes partitions and files on the driver; Spark filters the rows.
    """
    if format is not None:
        given = {"schema_id": schema_id, "policy": policy}
        for key, value in given.items():
            if value is not None:
                raise InvalidOptionError(f"{key}= is for fieldshift tables; a {format} table reads in its snapshot's "
                                         "schema with its format's casts")
        if via != "files":
            raise InvalidOptionError(f"via= is for fieldshift tables; a {format} table's files that Spark's native "
                                     "scan does not read go through the fieldshift data source")
        from fieldshift.spark.open_frame import read_open

        return read_open(spark, location, format=format, name=name, snapshot_id=snapshot_id, as_of=as_of,
                         columns=columns, filter=filter, batch_size=batch_size, data_path=data_path,
                         catalog=catalog, properties=properties,  # type: ignore[arg-type]
                         storage_options=storage_options, route=route)
    if properties is not None or storage_options is not None or data_path is not None:
        raise InvalidOptionError("data_path=, properties= and storage_options= are for tables another format wrote "
                                 "(with format=)")
    if as_of is not None:
        if snapshot_id is not None:
            raise InvalidOptionError("give snapshot_id or as_of, not both")
    with fieldshift_errors():  # a Spark error carrying a fieldshift error: raised as that error
        check_option("via", via, ReadVia)
        table = Table.open(location, catalog=catalog, name=name)
        if as_of is not None:
            snapshot_id = table.snapshot_at(as_of).snapshot_id
        rp = plan_read(table, snapshot_id=snapshot_id, schema_id=schema_id, columns=columns, policy=policy,
                       route=route, filter=filter)
        if rp.bound is not None:
            frame = _read_frame(spark, rp, location, catalog, name, via, batch_size)
            frame = frame.filter(spark_condition(rp.bound))
            return frame.select(*[join_path([n]) for n in (columns or [f.name for f in rp.read_schema.fields])])
        return _read_frame(spark, rp, location, catalog, name, via, batch_size)


def _read_frame(spark: Any, rp: ReadPlan, location: str | Path, catalog: str | None, name: str | None,
                via: ReadVia, batch_size: int) -> Any:
    spark_schema = schema_to_spark(rp.read_schema)
    scans = native_scans(rp.table.storage.location, rp.native_files, rp.schemas, rp.read_schema, spark_schema)
    parts = [native_frame(spark, spark_schema, scan) for scan in scans]
    if rp.arrow_files:
        if via == "files":
            parts.append(_files_frame(spark, rp, rp.policy, spark_schema, batch_size))
        else:
            parts.append(_datasource_frame(spark, rp, location, catalog, name, rp.policy, batch_size))
    if rp.deleted_files:  # whatever ``via``: the data source reads by schema id, these go by file
        parts.append(_files_frame(spark, rp, rp.policy, spark_schema, batch_size, rp.deleted_files))
    if rp.merge_groups:
        target = spark_arrow_schema(spark_schema, spark.conf.get("spark.sql.session.timeZone"))
        parts.append(keyed_reader_parts(spark, rp.table, rp.snapshot_id, rp.read_schema, rp.policy, target,
                                        spark_schema, list(rp.merge_groups), batch_size))
    if not parts:
        return spark.createDataFrame([], spark_schema)
    df = parts[0]
    for other in parts[1:]:
        df = df.union(other)  # every part has the read schema's columns, in order
    return df


def _native_partitions(spark: Any, files: Sequence[DataFile]) -> int:
    """How many partitions Spark's file scan would make of ``files`` (its maxSplitBytes rule)."""
    conf = spark.conf
    min_parts = conf.get("spark.sql.files.minPartitionNum", None)
    parallelism = int(min_parts) if min_parts else (default_parallelism(spark) or max(1, len(files)))
    max_bytes = _bytes(conf.get("spark.sql.files.maxPartitionBytes", "128m"))
    open_cost = _bytes(conf.get("spark.sql.files.openCostInBytes", "4m"))
    split = max_split_bytes([f.file_size for f in files], parallelism, max_bytes, open_cost)
    pieces = [min(split, f.file_size - at) for f in files for at in range(0, max(1, f.file_size), split)]
    return max(1, len(pack(pieces, split, open_cost)))


def _bytes(text: str) -> int:
    text = str(text).strip().lower().rstrip("b")
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def _files_frame(spark: Any, rp: ReadPlan, policy: CastPolicy | None, spark_schema: Any,
                 batch_size: int, files: Sequence[DataFile] | None = None) -> Any:
    files = rp.arrow_files if files is None else files
    tasks = plan_tasks(rp.table.storage, files, DEFAULT_SPLIT_BYTES, rp.vectors)
    schema_ids = {f.schema_id for f in files}
    plans = schema_plans(rp.schemas, schema_ids, rp.read_schema, policy)
    tz = spark.conf.get("spark.sql.session.timeZone")
    reader = _TaskReader(FileReader(plans, spark_arrow_schema(spark_schema, tz), batch_size), tasks)
    # as many tasks as Spark's own scan would make of these files, each reading whole files in turn
    parts = min(len(tasks), _native_partitions(spark, files))
    ids = spark.range(0, len(tasks), 1, numPartitions=max(1, parts))
    return ids.mapInArrow(reader, spark_schema)


class _TaskReader:
    """mapInArrow function: each input row is a task index; reads and evolves that task's file."""

    def __init__(self, reader: FileReader, tasks: list[Any]) -> None:
        self.reader = reader
        self.tasks = tasks

    def __call__(self, batches: Any) -> Any:
        for batch in batches:
            for i in batch.column(0).to_pylist():
                yield from self.reader.read(self.tasks[i])


def _datasource_frame(spark: Any, rp: ReadPlan, location: Any, catalog: str | None, name: str | None,
                      policy: CastPolicy | None, batch_size: int) -> Any:
    from fieldshift.spark.datasource import FORMAT, register

    register(spark)
    ids = sorted({f.schema_id for f in rp.arrow_files})
    reader = (spark.read.format(FORMAT).option("snapshot_id", rp.snapshot_id)
              .option("schema_id", rp.read_schema.schema_id)
              .option("columns", _json_list(rp.read_schema.names))
              .option("schema_ids", ",".join(map(str, ids))).option("batch_size", batch_size)
              .option("skip_deleted", "true"))  # read by _files_frame with their deletion vectors
    if catalog:
        reader = reader.option("catalog", catalog)
    if name:
        reader = reader.option("table", name)
    if policy is not None:
        reader = reader.option("policy", policy.option_name)
    return reader.load(str(location))


def _json_list(names: Sequence[str]) -> str:
    import json

    return json.dumps(list(names))


one_line_errors(_TaskReader)
