"""Reading quarantined rows back, whatever types each quarantined batch arrived with.

Each quarantine file keeps its rows exactly as they arrived (their source types) plus the reason,
source schema and time. Batches of different source types cannot share one Arrow table, so
``Table.quarantine()`` lists them all in one table with each row's values rendered as a JSON object
(``_fieldshift_row``), and ``Table.quarantine(grouped=True)`` gives one table per source schema in
the source types, ready to fix and append again.

The JSON uses the forms of ``fieldshift read --format json``: decimals as strings, binary as
base64, dates, times and timestamps as ISO text (values outside Python's datetime range in Arrow's
own text form), durations in seconds, NaN and infinities as the strings ``"NaN"``, ``"Infinity"``,
``"-Infinity"``, maps as lists of ``[key, value]`` pairs.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.planner import REASON_COLUMN
from fieldshift.table.evolution.on_write import QUARANTINED_AT_COLUMN, SOURCE_SCHEMA_COLUMN
from fieldshift.table.files.data_files import data_file_errors
from fieldshift.table.files.storage import TableStorage, open_storage

__all__ = ["ROW_COLUMN", "SNAPSHOT_COLUMN", "quarantine_groups", "quarantine_table", "render_json"]

ROW_COLUMN = "_fieldshift_row"
SNAPSHOT_COLUMN = "_fieldshift_snapshot_id"
_META = (REASON_COLUMN, SOURCE_SCHEMA_COLUMN, QUARANTINED_AT_COLUMN)
T = pa.types


def _read(location: TableStorage | Path, files: Sequence[tuple[str, int]]) -> list[pa.Table]:
    parts = []
    storage = open_storage(location)
    for path, snapshot_id in files:
        with data_file_errors(storage.display(path)):
            part = storage.read_table(path)
        parts.append(part.append_column(SNAPSHOT_COLUMN, pa.array([snapshot_id] * part.num_rows, pa.int64())))
    return parts


def quarantine_groups(location: TableStorage | Path, files: Sequence[tuple[str, int]]) -> list[pa.Table]:
    """One table per source schema (in the order first quarantined), rows in their source types."""
    groups: dict[pa.Schema, list[pa.Table]] = {}
    for part in _read(location, files):
        part = part.replace_schema_metadata(None)
        for existing in groups:
            if existing.equals(part.schema):
                groups[existing].append(part)
                break
        else:
            groups[part.schema] = [part]
    return [pa.concat_tables(parts) for parts in groups.values()]


def quarantine_table(location: TableStorage | Path, files: Sequence[tuple[str, int]]) -> pa.Table:
    """Every quarantined row in one table: reason, time, snapshot, source schema and the row as JSON."""
    reasons, times, snapshots, sources, rows = [], [], [], [], []
    for part in _read(location, files):
        source = part.drop_columns([c for c in (*_META, SNAPSHOT_COLUMN) if c in part.column_names])
        reasons.append(part.column(REASON_COLUMN))
        times.append(part.column(QUARANTINED_AT_COLUMN).cast(pa.timestamp("us", tz="UTC")))
        snapshots.append(part.column(SNAPSHOT_COLUMN))
        sources.append(part.column(SOURCE_SCHEMA_COLUMN))
        rows.append(pa.array(render_json(source), pa.string()))
    columns = {
        REASON_COLUMN: (reasons, pa.string()), ROW_COLUMN: (rows, pa.string()),
        SOURCE_SCHEMA_COLUMN: (sources, pa.string()), QUARANTINED_AT_COLUMN: (times, pa.timestamp("us", tz="UTC")),
        SNAPSHOT_COLUMN: (snapshots, pa.int64()),
    }
    return pa.table({name: pa.chunked_array([c for part in parts for c in _chunks(part)], type=t)
                     for name, (parts, t) in columns.items()})


def _chunks(column: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return list(column.chunks) if isinstance(column, pa.ChunkedArray) else [column]


def render_json(table: pa.Table) -> list[str]:
    """Each row of ``table`` as a JSON object text, columns in order."""
    values = [_plain(pa.concat_arrays(_chunks(c)) if c.num_chunks else pa.array([], c.type))
              for c in table.columns]
    names = table.column_names
    return [json.dumps(dict(zip(names, row, strict=True)), ensure_ascii=False, allow_nan=False)
            for row in zip(*values, strict=True)] if names else ["{}"] * table.num_rows


def _plain(arr: pa.Array) -> list[Any]:
    """JSON-ready Python values of an array of any type (never a datetime overflow)."""
    t = arr.type
    if T.is_dictionary(t):
        return _plain(arr.dictionary_decode())
    if T.is_run_end_encoded(t):
        return _plain(arr.cast(t.value_type))
    if T.is_struct(t):
        valid = arr.is_valid().to_pylist()
        children = [_plain(arr.field(i)) for i in range(t.num_fields)]
        names = [t.field(i).name for i in range(t.num_fields)]
        return [dict(zip(names, vals, strict=True)) if ok else None
                for ok, *vals in zip(valid, *children, strict=True)]
    if T.is_map(t):  # Arrow cannot flatten a map: cut its entries by the (absolute) offsets
        entries = [None if kv is None else list(kv.values()) for kv in _plain(arr.values)]
        offsets = arr.offsets.to_pylist()
        return [entries[offsets[i]:offsets[i + 1]] if ok else None
                for i, ok in enumerate(arr.is_valid().to_pylist())]
    if T.is_list(t) or T.is_large_list(t) or T.is_fixed_size_list(t) or T.is_list_view(t) \
            or T.is_large_list_view(t):
        return _nested(arr, _plain)
    if T.is_temporal(t):
        try:
            return [None if v is None else (v.total_seconds() if isinstance(v, dt.timedelta) else v.isoformat())
                    for v in arr.to_pylist()]
        except (OverflowError, ValueError):  # outside Python's datetime range
            return pc.cast(arr, pa.string()).to_pylist()
    if T.is_decimal(t):
        return pc.cast(arr, pa.string()).to_pylist()
    if T.is_binary(t) or T.is_large_binary(t) or T.is_fixed_size_binary(t) or T.is_binary_view(t):
        return [None if v is None else base64.b64encode(v).decode() for v in arr.to_pylist()]
    if T.is_floating(t):
        return [_float(v) for v in arr.to_pylist()]
    return arr.to_pylist()


def _nested(arr: pa.Array, render: Any) -> list[Any]:
    """Lists and maps: render the flattened values once, then cut them back into rows."""
    valid = arr.is_valid().to_pylist()
    flat = arr.flatten()
    lengths = pc.fill_null(pc.list_value_length(arr), 0).to_pylist()
    items = render(flat)
    out, at = [], 0
    for ok, n in zip(valid, lengths, strict=True):
        out.append(items[at:at + n] if ok else None)
        at += n if ok else 0
    return out


def _float(v: float | None) -> float | str | None:
    if v is None or math.isfinite(v):
        return v
    return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
