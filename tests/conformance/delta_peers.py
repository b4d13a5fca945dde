"""Reading a Delta table three ways for the conformance tests: fieldshift (``fs.open_table``), delta-rs
(its DataFusion ``QueryBuilder``, which applies column mapping and deletion vectors; ``to_pyarrow_table``
does not) and DuckDB's ``delta_scan`` (the pinned ``duckdb-extension-delta``, loaded from its package).
Rows compare as sorted lists of plain Python values, columns by name and order."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pyarrow as pa
from peers import duckdb_connection

import fieldshift as fs

__all__ = ["delta_rs_read", "duckdb_read", "fieldshift_read", "plain_rows", "write_versions"]


def fieldshift_read(path: str | Path, version: int | None = None) -> pa.Table:
    with fs.open_table(str(path), format="delta") as t:
        return t.scan(snapshot_id=version).to_arrow()


def delta_rs_read(path: str | Path, version: int | None = None) -> pa.Table:
    from deltalake import DeltaTable, QueryBuilder

    table = DeltaTable(str(path), version=version)
    return pa.table(QueryBuilder().register("t", table).execute("SELECT * FROM t").read_all())


_DUCKDB: list[Any] = []


def duckdb_read(path: str | Path, version: int | None = None) -> pa.Table:
    if not _DUCKDB:
        _DUCKDB.append(duckdb_connection(extensions=("delta",)))
    conn = _DUCKDB[0]
    args = f"'{path}'" + ("" if version is None else f", version => {int(version)}")
    return conn.execute(f"SELECT * FROM delta_scan({args})").to_arrow_table()


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"  # equal to itself, so rows with NaN compare
    if isinstance(value, dict):
        return tuple(sorted((k, _plain(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_plain(v) for v in value)
    return value


def plain_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    """The rows as sorted tuples of plain values (string views, large types and field metadata ignored;
    maps as sorted pairs, NaN equal to NaN)."""
    rows = [tuple(_plain(r[n]) for n in table.column_names) for r in table.to_pylist()]
    return sorted(rows, key=repr)


def write_versions(path: str | Path) -> int:
    """A partitioned table written by deltalake through appends, a merged-in column, a delete, an
    update, a merge, another new column, a checkpoint, a partition overwrite and an append; returns
    its latest version."""
    import datetime as dt

    from deltalake import DeltaTable, write_deltalake

    p = str(path)
    i32 = pa.int32()
    write_deltalake(p, pa.table({"id": pa.array([1, 2, 3], i32), "name": ["a", "b", "c"], "part": ["x", "y", "x"]}),
                    partition_by=["part"])
    write_deltalake(p, pa.table({"id": pa.array([4, 5], i32), "name": ["d", None], "part": ["y", None],
                                 "score": [1.5, 2.5]}), mode="append", schema_mode="merge")
    DeltaTable(p).delete("id = 2")
    DeltaTable(p).update(updates={"name": "'zz'"}, predicate="id = 3")
    source = pa.table({"id": pa.array([3, 6], i32), "name": ["m3", "m6"], "part": ["x", "z"], "score": [9.0, 6.0]})
    (DeltaTable(p).merge(source, "t.id = s.id", source_alias="s", target_alias="t")
     .when_matched_update_all().when_not_matched_insert_all().execute())
    stamp = pa.array([dt.datetime(2024, 1, 2, 3, 4, 5)], pa.timestamp("us", tz="UTC"))
    write_deltalake(p, pa.table({"id": pa.array([7], i32), "name": ["g"], "part": ["x"], "score": [7.0],
                                 "ts": stamp}), mode="append", schema_mode="merge")
    DeltaTable(p).create_checkpoint()
    write_deltalake(p, pa.table({"id": pa.array([8], i32), "name": ["h"], "part": ["x"], "score": [8.0],
                                 "ts": stamp}), mode="overwrite", predicate="part = 'x'")
    write_deltalake(p, pa.table({"id": pa.array([9], i32), "name": ["i"], "part": ["q"], "score": [None],
                                 "ts": pa.array([None], stamp.type)}), mode="append")
    return DeltaTable(p).version()
