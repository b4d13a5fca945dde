"""Rows DuckDB inlined into a DuckLake catalog (``ducklake_inlined_data_<table>_<schema version>``) as an
Arrow table of that schema version, field ids included, so the scan evolves them like any data file.

A row is live at snapshot ``s`` when ``begin_snapshot <= s`` and it was not deleted by then
(``end_snapshot``). A DuckDB catalog keeps the values in their own types; SQLite and PostgreSQL keep
many as text (the specification's "Type Encoding for Data Inlining"), decoded here per column type.
Nested values in those two are DuckDB's text of the value, parsed by ``ducklake_literals``.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.errors import UnsupportedFormatFeatureError
from fieldshift.open_tables.ducklake_db import MetadataDB
from fieldshift.open_tables.ducklake_literals import parse_nested
from fieldshift.open_tables.ducklake_types import decode_text
from fieldshift.schema.model import Schema

__all__ = ["inlined_table"]

_BOOKKEEPING = ("row_id", "begin_snapshot", "end_snapshot")


def inlined_table(db: MetadataDB, name: str, schema: Schema, snapshot_id: int) -> pa.Table:
    """The rows of inlined data table ``name`` live at ``snapshot_id``, in ``schema``'s Arrow form."""
    target = schema.to_arrow()
    where = "begin_snapshot <= ? AND (end_snapshot IS NULL OR end_snapshot > ?) ORDER BY row_id"
    if db.dialect == "duckdb":
        got = db.conn.execute(f"SELECT * FROM {name} WHERE {where}", [snapshot_id, snapshot_id]).arrow()
        if isinstance(got, pa.RecordBatchReader):
            got = got.read_all()
        columns = [_conform(got.column(f.name), f.type, name) for f in target]
        return pa.Table.from_arrays(columns, schema=target) if columns else _rows_only(got.num_rows, target)
    names, rows = db.columns(f"SELECT * FROM {name} WHERE {where}", (snapshot_id, snapshot_id))
    index = {n: i for i, n in enumerate(names)}
    columns = []
    for f in target:
        if f.name not in index:
            raise UnsupportedFormatFeatureError(f"inlined data table {name} has no column {f.name!r}")
        i = index[f.name]
        values = [r[i] for r in rows]
        columns.append(_decoded(values, f.type, name, f.name))
    return pa.Table.from_arrays(columns, schema=target) if columns else _rows_only(len(rows), target)


def _rows_only(count: int, target: pa.Schema) -> pa.Table:
    """A table of no columns (every column dropped) still has its rows."""
    return pa.table({"_": pa.nulls(count)}).drop_columns(["_"])


def _conform(column: pa.ChunkedArray, t: pa.DataType, table: str) -> pa.ChunkedArray:
    """A DuckDB-typed column in the schema's Arrow type (uuids come as text, nested names differ)."""
    if pa.types.is_fixed_size_binary(t) and t.byte_width == 16 and pa.types.is_string(column.type):
        return pa.chunked_array([pa.array([None if v is None else bytes.fromhex(v.replace("-", ""))
                                           for v in column.to_pylist()], t)], t)
    if column.type == t:
        return column
    try:
        return column.cast(t)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise UnsupportedFormatFeatureError(f"inlined data table {table}: a {column.type} column does not read as "
                                            f"{t} ({e})") from None


def _decoded(values: list[object], t: pa.DataType, table: str, column: str) -> pa.Array:
    nested = pa.types.is_struct(t) or pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t)
    if nested:
        parsed = [None if v is None else parse_nested(bytes(v).decode() if isinstance(v, (bytes, memoryview))
                                                      else str(v), t) for v in values]
        return pa.array(parsed, t)
    out = []
    for v in values:
        if isinstance(v, (bytes, memoryview)) and (pa.types.is_string(t)):
            v = bytes(v).decode("utf-8")  # PostgreSQL keeps text as bytea
        out.append(decode_text(v, t) if isinstance(v, str) or v is None else _native(v, t))
    arr = pa.array(out, t)
    return pc.cast(arr, t)


def _native(v: object, t: pa.DataType) -> object:
    if pa.types.is_boolean(t):
        return bool(v)
    if isinstance(v, memoryview):
        return bytes(v)
    return v
