"""``fieldshift.spark.read(spark, source, format=..., name=...)``: a table another format wrote, as a DataFrame.

The table is opened once on the driver to pin its snapshot, check the columns, bind the filter and route each
task (``spark/open_native.py``): data files nothing but an evolution plan separates from the answer, with a
plan Spark's field-id Parquet scan reproduces, are read by Spark's own scan (``native_scan.py``, as for
fieldshift tables); the rest is a read of the ``fieldshift`` data source with ``option("format", ...)``,
whose reader (``spark/open_read.py``) reads and evolves them on the executors, skipping the native files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fieldshift.errors import InvalidOptionError
from fieldshift.options import ReadRoute
from fieldshift.spark.datasource import FORMAT, register
from fieldshift.spark.errors_bridge import fieldshift_errors
from fieldshift.spark.native_scan import native_frame, native_scans
from fieldshift.spark.open_native import OpenReadPlan, route_tasks
from fieldshift.spark.read_filter import spark_condition
from fieldshift.spark.types import schema_to_spark
from fieldshift.table.open_table import open_table
from fieldshift.table.scan.open_scan import OpenScan

__all__ = ["plan_open_read", "read_open"]

_GROUPS = ("catalog", "properties", "storage_options")


def _opened(data_path: str | None, groups: dict[str, Any]) -> dict[str, Any]:
    opened: dict[str, Any] = {}
    if data_path is not None:
        opened["data_path"] = data_path
    for group, value in groups.items():
        if value is not None:
            if not isinstance(value, dict):
                raise InvalidOptionError(f"{group}= takes a dict, not {value!r}")
            opened[group] = value
    return opened


@contextmanager
def _planned(source: str | Path | None, format: str, name: str | None, snapshot_id: Any, as_of: Any,
             columns: Sequence[str] | None, filter: Any, route: ReadRoute,
             opened: dict[str, Any]) -> Iterator[tuple[OpenScan, list[str], OpenReadPlan | None]]:
    """(the scan, the columns read: output then filter's, the routes; None: the table has no snapshot)."""
    with open_table(None if source is None else str(source), format=format, name=name, **opened) as table:
        scan = table.scan(columns=columns, filter=filter, snapshot_id=snapshot_id, as_of=as_of)
        needed = list(dict.fromkeys([*scan.columns, *scan.filter.columns]))
        plan = route_tasks(scan, scan.full_schema.select(needed), route) if table.history() else None
        yield scan, needed, plan


def plan_open_read(source: str | Path | None, *, format: str, name: str | None = None, snapshot_id: Any = None,
                   as_of: Any = None, columns: Sequence[str] | None = None, filter: Any = None,
                   route: ReadRoute = "auto", data_path: str | None = None, catalog: dict[str, Any] | None = None,
                   properties: dict[str, Any] | None = None,
                   storage_options: dict[str, Any] | None = None) -> OpenReadPlan | None:
    """How ``fieldshift.spark.read(spark, source, format=..., ...)`` reads the table: which files Spark's native
    Parquet scan reads and why the others are not (``.explain()``); None for a table with no snapshot."""
    opened = _opened(data_path, {"catalog": catalog, "properties": properties, "storage_options": storage_options})
    with fieldshift_errors(), _planned(source, format, name, snapshot_id, as_of, columns, filter, route,
                                       opened) as (_, _, plan):
        return plan


def read_open(spark: Any, source: str | Path | None, *, format: str, name: str | None = None, snapshot_id: Any = None,
              as_of: Any = None, columns: Sequence[str] | None = None, filter: Any = None,
              batch_size: int | None = None, data_path: str | None = None,
              catalog: dict[str, Any] | None = None, properties: dict[str, Any] | None = None,
              storage_options: dict[str, Any] | None = None, route: ReadRoute = "auto") -> Any:
    """``fieldshift.spark.read(spark, source, format=..., name=...)``: the table as a DataFrame equal to
    ``fs.open_table(source, format, name).scan(...).to_arrow()`` in Spark's types. ``filter`` (as
    ``OpenTable.scan``'s) prunes files on the driver and becomes a Spark condition on the rows (which Spark
    also pushes back to the data source). ``route``: ``"auto"`` (native where exact), ``"native"`` (raise
    where not), ``"arrow"`` (the executor-side route only)."""
    with fieldshift_errors():
        opened = _opened(data_path, {"catalog": catalog, "properties": properties,
                                     "storage_options": storage_options})
        with _planned(source, format, name, snapshot_id, as_of, columns, filter, route, opened) as (scan, needed,
                                                                                                      plan):
            out_names = list(scan.columns)
            bound = scan.filter.bound if scan.filter.filtered else None
            pinned = scan.snapshot_id
        parts = []
        if plan is not None and plan.native:
            spark_schema = schema_to_spark(plan.read_schema)
            for one in native_scans(_ROOT, plan.native, plan.layouts, plan.read_schema, spark_schema):
                parts.append(native_frame(spark, spark_schema, one))
        if plan is None or plan.other or not parts:
            register(spark)
            reader = spark.read.format(FORMAT).option("format", format).option("columns", json.dumps(needed))
            if name:
                reader = reader.option("name", name)
            if plan is not None:
                reader = reader.option("snapshot_id", str(pinned))
                if plan.native_paths:
                    reader = reader.option("skip_files", json.dumps(sorted(plan.native_paths)))
            if data_path is not None:
                reader = reader.option("data_path", data_path)
            for group in _GROUPS:
                if group in opened:  # JSON: the keys keep their case (Spark lower-cases option keys)
                    reader = reader.option(group, json.dumps(opened[group]))
            if batch_size is not None:
                reader = reader.option("batch_size", batch_size)
            parts.append(reader.load(str(source)) if source is not None else reader.load())
        frame = parts[0]
        for other in parts[1:]:
            frame = frame.union(other)  # every part has the read columns, in order
        if bound is not None:
            frame = frame.filter(spark_condition(bound))
        return frame.select(*[f"`{n}`" for n in out_names]) if needed != out_names else frame


_ROOT = Path("/")  # native files' paths are absolute: native_scans joins them to this
