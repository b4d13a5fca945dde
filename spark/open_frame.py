"""``fieldshift.spark.read(spark, source, format=..., name=...)``: a table another format wrote, as a DataFrame.

The table is opened once on the driver to pin its snapshot, check the columns and bind the filter; the
DataFrame is then a read of the ``fieldshift`` data source with ``option("format", ...)``, whose
reader (``spark/open_read.py``) reads and evolves the files on the executors.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fieldshift.errors import InvalidOptionError
from fieldshift.spark.datasource import FORMAT, register
from fieldshift.spark.errors_bridge import fieldshift_errors
from fieldshift.spark.read_filter import spark_condition
from fieldshift.table.open_table import open_table

__all__ = ["read_open"]


def read_open(spark: Any, source: str | Path | None, *, format: str, name: str | None = None, snapshot_id: Any = None,
              as_of: Any = None, columns: Sequence[str] | None = None, filter: Any = None,
              batch_size: int | None = None, data_path: str | None = None,
              catalog: dict[str, Any] | None = None, properties: dict[str, Any] | None = None,
              storage_options: dict[str, Any] | None = None) -> Any:
    """``fieldshift.spark.read(spark, source, format=..., name=...)``: the table as a DataFrame equal to
    ``fs.open_table(source, format, name).scan(...).to_arrow()`` in Spark's types. ``filter`` (as
    ``OpenTable.scan``'s) becomes a Spark condition that Spark pushes back to the scan, so it prunes files."""
    with fieldshift_errors():
        opened: dict[str, Any] = {}
        if data_path is not None:
            opened["data_path"] = data_path
        for group, value in (("catalog", catalog), ("properties", properties), ("storage_options", storage_options)):
            if value is not None:
                if not isinstance(value, dict):
                    raise InvalidOptionError(f"{group}= takes a dict, not {value!r}")
                opened[group] = value
        with open_table(None if source is None else str(source), format=format, name=name, **opened) as table:
            scan = table.scan(columns=columns, filter=filter, snapshot_id=snapshot_id, as_of=as_of)
            out_names = list(scan.columns)
            needed = list(dict.fromkeys([*out_names, *scan.filter.columns]))
            bound = scan.filter.bound if scan.filter.filtered else None
            pinned = scan.snapshot_id
            has_snapshots = bool(table.history())
        register(spark)
        reader = spark.read.format(FORMAT).option("format", format).option("columns", json.dumps(needed))
        if name:
            reader = reader.option("name", name)
        if has_snapshots:
            reader = reader.option("snapshot_id", str(pinned))
        if data_path is not None:
            reader = reader.option("data_path", data_path)
        for group in ("catalog", "properties", "storage_options"):
            if group in opened:  # JSON: the keys keep their case (Spark lower-cases option keys)
                reader = reader.option(group, json.dumps(opened[group]))
        if batch_size is not None:
            reader = reader.option("batch_size", batch_size)
        frame = reader.load(str(source)) if source is not None else reader.load()
        if bound is not None:
            frame = frame.filter(spark_condition(bound))
        return frame.select(*[f"`{n}`" for n in out_names]) if needed != out_names else frame
