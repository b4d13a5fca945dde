"""Which files of another format's table ``fieldshift.spark.read(..., format=...)`` reads with Spark's own
Parquet scan: the rules ``fieldshift.spark.read`` applies to fieldshift tables, per data file.

A file of an ``OpenScan`` goes through the native scan when nothing but the evolution plan stands between
its rows and the answer, and Spark's field-id scan reproduces that plan (``table_read.native_reason``, the
same check as for fieldshift tables, against the schema the file's own footer carries). Anything else a
scan applies to a file's rows keeps it on the executor-side route (``spark/open_read.py``):

- deletes: position delete files, deletion vectors, deletes kept in the catalog (DuckLake's inlined
  deletes), equality deletes that apply to the file;
- rows of several snapshots in one file (DuckLake's merged files), rows merged by key (Paimon), inlined
  rows and the format's own reader's rows (read on the driver);
- columns resolved by name where Spark's by-name match could differ from the engine's (a file column named
  unlike its read field: a rename, or Delta's physical names; field ids the table does not own), a
  partition value filling a column the file lacks, INT96 timestamps and Parquet logical types Spark reads
  differently (UUID, JSON, ...), and files on object storage (pyspark ships no Hadoop connector for them).

A file without field ids whose format resolves columns by name (Delta without column mapping, Hudi,
pypaimon's files, Iceberg's name mapping) goes native when every read column it holds has the read
field's name at every depth (so Spark's by-name match picks the column the name mapping picks, whatever
the case rule) and no column the file lacks is named like one it has: its scan requests the columns
without field ids (``NativeFile.by_name``), which Spark then matches by name even with
``spark.sql.parquet.fieldId.read.enabled`` on.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from fieldshift.open_tables.source import DataFileEntry
from fieldshift.options import ReadRoute, check_option
from fieldshift.schema.field import Field
from fieldshift.schema.file_schema import file_schema_of, has_field_ids
from fieldshift.schema.formats.arrow_conversion import FIELD_ID_KEY
from fieldshift.schema.model import Schema
from fieldshift.schema.types import ListType, MapType, StructType
from fieldshift.spark.native_check import OBJECT_STORE_REASON, native_reason
from fieldshift.table.scan.open_scan import OpenScan, ScanTask

__all__ = ["NativeFile", "OpenReadPlan", "file_reason", "route_tasks"]

# Parquet logical types Spark reads with the values pyarrow gives (others, e.g. UUID or JSON, are refused
# or read differently by Spark's converter)
_NATIVE_LOGICAL = {"NONE", "STRING", "INT", "DECIMAL", "DATE", "TIMESTAMP", "LIST", "MAP"}
_TASK_REASONS = {"merge": "rows merged by key", "inlined": "inlined rows, read on the driver",
                 "reader": "the format's own reader's rows, read on the driver"}


@dataclass(frozen=True)
class NativeFile:
    """A data file Spark's native scan reads: its local path and the id of its file layout in ``OpenReadPlan``."""

    path: str
    schema_id: int
    by_name: bool = False  # the file has no field ids: its scan requests columns by name only


@dataclass(frozen=True)
class OpenReadPlan:
    """The route of every task of a Spark read of another format's table: native Parquet scans for ``native``
    files (grouped by file layout, ``layouts`` by id), the executor-side route for the rest."""

    format: str
    name: str
    snapshot_id: Any
    read_schema: Schema
    native: tuple[NativeFile, ...]
    native_paths: frozenset[str]  # the native files' paths as the source names them (the data source skips them)
    layouts: dict[int, Schema]  # file layout id -> the schema the files' footers carry
    other: int  # tasks on the executor-side route
    groups: tuple[tuple[str, int, str | None], ...]  # (what, how many, None: native / why not), in plan order

    def explain(self) -> str:
        """One line for the read, one per group of files that took a route for the same reason."""
        lines = [f"read of {self.format} table {self.name} at snapshot {self.snapshot_id}: {len(self.native)} "
                 f"file(s) by Spark's native Parquet scan, {self.other} task(s) via pyarrow on the executors"]
        for what, n, why in self.groups:
            lines.append(f"  {n} {what}: " + ("native Parquet scan" if why is None else f"pyarrow ({why})"))
        return "\n".join(lines)


def _local(path: str) -> str | None:
    """The local path of a data file, or None for an object-store URI."""
    if "://" not in path:
        return path
    if path.startswith("file:"):
        fs, inner = pafs.FileSystem.from_uri(path)
        return inner if isinstance(fs, pafs.LocalFileSystem) else None
    return None


def file_reason(scan: OpenScan, f: DataFileEntry) -> str | None:
    """Why the scan's rows of ``f`` are not the evolved rows of the whole file (None: they are, so a native
    scan may read it); checked from the metadata alone."""
    if f.file_format != "parquet":
        return f"{f.file_format} data file"
    if _local(f.path) is None:
        return OBJECT_STORE_REASON
    kinds = sorted({"deletion vectors" if d.format != "parquet" else "position delete files" for d in f.delete_files})
    if kinds:
        return " and ".join(kinds)
    if f.positions is not None and len(f.positions):
        return "deletes kept in the catalog"
    if scan.equality is not None and scan.equality_deletes(f):
        return "equality deletes"
    if f.snapshot_column is not None:
        return "rows of several snapshots in one file"
    if not f.ids_in_file and f.name_mapping is None:
        return "columns resolved by name (the file's field ids are not the table's)"
    return None


def _footer_reason(scan: OpenScan, f: DataFileEntry, read_schema: Schema) -> tuple[Schema | None, str | None, bool]:
    """(the file's schema from its footer, None, by name) when the file's layout may go native, else (None,
    why not, False); the schema of a file without field ids (by name) is the one its name mapping gives."""
    pf = pq.ParquetFile(_local(f.path), arrow_extensions_enabled=False)
    found = pf.schema_arrow
    by_name = False
    if not f.ids_in_file and has_field_ids(found):
        return None, "columns resolved by name (the file's field ids are not the table's)", False
    if not has_field_ids(found) and f.name_mapping is not None:
        by_name = True  # resolved through the name mapping, as Spark resolves names
    elif not f.ids_in_file:
        return None, "columns without field ids and no name mapping", False
    elif not _all_ids(found):
        return None, "columns without field ids (resolved by name or name mapping)", False
    for i in range(len(pf.schema)):
        col = pf.schema.column(i)
        if col.physical_type == "INT96":
            return None, f"{col.path}: INT96 timestamps", False
        if col.logical_type.type not in _NATIVE_LOGICAL:
            return None, f"{col.path}: Parquet {col.logical_type.type} values", False
    file_schema = file_schema_of(found, name_mapping=f.name_mapping if by_name else None)
    if by_name and (why := _names_differ(file_schema.fields, read_schema.fields, "")) is not None:
        return None, why, False
    for pv in f.partition:
        if pv.transform == "identity" and pv.value is not None and read_schema.has_field(pv.source_id) \
                and not file_schema.has_field(pv.source_id):
            return None, f"{read_schema.field(pv.source_id).name}: filled from the partition value", False
    scan.file_plan(f)  # the engine's plan exists (a cast the format's readers refuse raises here, as it would there)
    return file_schema, None, by_name


def _names_differ(file_fields: Sequence[Field], read_fields: Sequence[Field], prefix: str) -> str | None:
    """Why Spark's by-name match may pick other columns than the name mapping did (None: it picks the same):
    a read field the file holds under another name, at any struct depth (list elements and map entries
    match by position)."""
    by_id = {f.id: f for f in file_fields}
    for rf in read_fields:
        ff = by_id.get(rf.id)
        if ff is None:
            continue
        if ff.name != rf.name:
            return f"{prefix}{rf.name}: the file names it {ff.name!r} (Spark matches columns by name here)"
        if (why := _nested_names_differ(ff.type, rf.type, f"{prefix}{rf.name}.")) is not None:
            return why
    return None


def _nested_names_differ(ft: Any, rt: Any, prefix: str) -> str | None:
    if isinstance(rt, StructType) and isinstance(ft, StructType):
        return _names_differ(ft.fields, rt.fields, prefix)
    if isinstance(rt, ListType) and isinstance(ft, ListType):
        return _nested_names_differ(ft.element.type, rt.element.type, f"{prefix}element.")
    if isinstance(rt, MapType) and isinstance(ft, MapType):
        return (_nested_names_differ(ft.key.type, rt.key.type, f"{prefix}key.")
                or _nested_names_differ(ft.value.type, rt.value.type, f"{prefix}value."))
    return None  # a shape change is native_reason's to name


def _all_ids(schema: pa.Schema) -> bool:
    def ok(field: pa.Field) -> bool:
        if FIELD_ID_KEY not in (field.metadata or {}):
            return False
        t = field.type
        if pa.types.is_struct(t):
            return all(ok(t.field(i)) for i in range(t.num_fields))
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            return ok(t.value_field)
        if pa.types.is_map(t):
            return ok(t.key_field) and ok(t.item_field)
        return True
    return all(ok(schema.field(i)) for i in range(len(schema)))


def route_tasks(scan: OpenScan, read_schema: Schema, route: ReadRoute = "auto",
                tasks: Sequence[ScanTask] | None = None) -> OpenReadPlan:
    """The route of each of ``scan``'s tasks for a read into ``read_schema`` (the scan's columns and its filter's);
    ``route="native"`` raises when some task cannot be read natively, ``"arrow"`` reads none natively."""
    check_option("route", route, ReadRoute)
    tasks = list(scan.tasks() if tasks is None else tasks)
    first: dict[int, str | None] = {}  # task index -> why a file is not native from its metadata alone
    for i, task in enumerate(tasks):
        if task.kind == "file":
            first[i] = "route='arrow'" if route == "arrow" else file_reason(scan, task.files[0])
    candidates = [i for i, why in first.items() if why is None]
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(candidates)))) as pool:  # footers, read in parallel
        footers = dict(zip(candidates, pool.map(lambda i: _footer_reason(scan, tasks[i].files[0], read_schema),
                                                candidates), strict=True))
    native: list[NativeFile] = []
    native_paths: set[str] = set()
    layouts: dict[str, tuple[int, Schema, str | None]] = {}  # by name? + footer schema JSON -> (id, schema, why not)
    groups: dict[tuple[str, str | None], int] = {}
    other = 0
    for i, task in enumerate(tasks):
        if task.kind != "file":
            why: str | None = _TASK_REASONS[task.kind]
            what = "merge group(s)" if task.kind == "merge" else "task(s)"
        else:
            f = task.files[0]
            what = "file(s)"
            file_schema, why, by_name = footers.get(i, (None, first[i], False))
            if file_schema is not None:
                key = ("name:" if by_name else "id:") + file_schema.to_json()
                if key not in layouts:
                    layouts[key] = (len(layouts), file_schema, native_reason(file_schema, read_schema))
                layout, file_schema, why = layouts[key]
                what = f"file(s) of layout {layout} ({', '.join(file_schema.names)}{', by name' if by_name else ''})"
                if why is None:
                    native.append(NativeFile(str(_local(f.path)), layout, by_name))
                    native_paths.add(f.path)
        if why is not None:
            if route == "native":
                where = f"data file {task.files[0].path}" if task.kind == "file" else f"a {task.kind} task"
                raise ValueError(f"{scan.source.format} table {scan.source.name}: {where} cannot be read natively: "
                                 f"{why}")
            other += 1
        groups[(what, why)] = groups.get((what, why), 0) + 1
    return OpenReadPlan(scan.source.format, scan.source.name, scan.snapshot_id, read_schema, tuple(native),
                        frozenset(native_paths), {i: schema for i, schema, _ in layouts.values()}, other,
                        tuple((what, n, why) for (what, why), n in groups.items()))
