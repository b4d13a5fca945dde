"""A DuckLake table read through ``fs.open_table`` without DuckDB: a small catalog written by hand into
SQLite, and Parquet files with field ids, following the DuckLake 1.0 specification (the conformance
suite, ``make test-conformance``, compares with DuckDB's own reads of tables DuckDB wrote)."""

from __future__ import annotations

import datetime as dt
import sqlite3
import struct
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.open_tables.position_deletes import decode_deletion_vector

T0 = dt.datetime(2024, 5, 1, 12, 0, 0)

CATALOG = """
CREATE TABLE ducklake_metadata(key VARCHAR, value VARCHAR, scope VARCHAR, scope_id BIGINT);
CREATE TABLE ducklake_snapshot(snapshot_id BIGINT, snapshot_time VARCHAR, schema_version BIGINT,
    next_catalog_id BIGINT, next_file_id BIGINT);
CREATE TABLE ducklake_snapshot_changes(snapshot_id BIGINT, changes_made VARCHAR, author VARCHAR,
    commit_message VARCHAR, commit_extra_info VARCHAR);
CREATE TABLE ducklake_schema(schema_id BIGINT, schema_uuid VARCHAR, begin_snapshot BIGINT, end_snapshot BIGINT,
    schema_name VARCHAR, path VARCHAR, path_is_relative BIGINT);
CREATE TABLE ducklake_table(table_id BIGINT, table_uuid VARCHAR, begin_snapshot BIGINT, end_snapshot BIGINT,
    schema_id BIGINT, table_name VARCHAR, path VARCHAR, path_is_relative BIGINT);
CREATE TABLE ducklake_schema_versions(begin_snapshot BIGINT, schema_version BIGINT, table_id BIGINT);
CREATE TABLE ducklake_column(column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, table_id BIGINT,
    column_order BIGINT, column_name VARCHAR, column_type VARCHAR, initial_default VARCHAR, default_value VARCHAR,
    nulls_allowed BIGINT, parent_column BIGINT, default_value_type VARCHAR, default_value_dialect VARCHAR);
CREATE TABLE ducklake_data_file(data_file_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT,
    file_order BIGINT, path VARCHAR, path_is_relative BIGINT, file_format VARCHAR, record_count BIGINT,
    file_size_bytes BIGINT, footer_size BIGINT, row_id_start BIGINT, partition_id BIGINT, encryption_key VARCHAR,
    mapping_id BIGINT, partial_max BIGINT);
CREATE TABLE ducklake_delete_file(delete_file_id BIGINT, table_id BIGINT, begin_snapshot BIGINT,
    end_snapshot BIGINT, data_file_id BIGINT, path VARCHAR, path_is_relative BIGINT, format VARCHAR,
    delete_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, encryption_key VARCHAR, partial_max BIGINT);
CREATE TABLE ducklake_file_column_stats(data_file_id BIGINT, table_id BIGINT, column_id BIGINT,
    column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR,
    contains_nan BIGINT, extra_stats VARCHAR);
CREATE TABLE ducklake_inlined_data_tables(table_id BIGINT, table_name VARCHAR, schema_version BIGINT);
CREATE TABLE ducklake_inlined_data_1_2(row_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, id BIGINT,
    name VARCHAR, score VARCHAR);
CREATE TABLE ducklake_inlined_delete_1(file_id BIGINT, row_id BIGINT, begin_snapshot BIGINT);
"""


def _parquet(path: Path, columns: dict[str, tuple[int, pa.Array]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = [pa.field(n, a.type, metadata={"PARQUET:field_id": str(fid)}) for n, (fid, a) in columns.items()]
    pq.write_table(pa.Table.from_arrays([a for _, a in columns.values()], schema=pa.schema(fields)), path)


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    """Snapshots: 1 create (id int32, name, old); 2 file A; 3 id -> int64, drop old, add score (initial 1.5);
    4 file B and a delete file removing A's row 1; 5 an inlined row and an inlined delete of B's row 0."""
    data = tmp_path / "lake"
    _parquet(data / "main" / "t" / "a.parquet", {
        "id": (1, pa.array([0, 1, 2, 3], pa.int32())), "name": (2, pa.array(["a", "b", "c", "d"])),
        "old": (3, pa.array(["x", "x", "x", "x"]))})
    _parquet(data / "main" / "t" / "b.parquet", {
        "id": (1, pa.array([10, 11, 12], pa.int64())), "name": (2, pa.array(["k", "l", None])),
        "score": (4, pa.array([7.0, 8.0, None]))})
    _parquet(data / "main" / "t" / "a-delete.parquet", {
        "file_path": (2147483646, pa.array([str(data / "main" / "t" / "a.parquet")])),
        "pos": (2147483645, pa.array([1], pa.int64()))})
    db = sqlite3.connect(tmp_path / "meta.sqlite")
    db.executescript(CATALOG)
    rows = {
        "ducklake_metadata": [("version", "1.0", None, None), ("data_path", f"{data}/", None, None)],
        "ducklake_snapshot": [(i, str(T0 + dt.timedelta(minutes=i)) + "+00", v, 2, 3)
                              for i, v in ((0, 0), (1, 1), (2, 1), (3, 2), (4, 2), (5, 2))],
        "ducklake_snapshot_changes": [(0, 'created_schema:"main"', None, None, None),
                                      (1, 'created_table:"main"."t"', None, None, None),
                                      (2, "inserted_into_table:1", None, None, None),
                                      (3, "altered_table:1", None, None, None),
                                      (4, "inserted_into_table:1,deleted_from_table:1", None, None, None),
                                      (5, "inlined_insert:1,inlined_delete:1", None, None, None)],
        "ducklake_schema": [(0, "u0", 0, None, "main", "main/", 1)],
        "ducklake_table": [(1, "u1", 1, None, 0, "t", "t/", 1)],
        "ducklake_schema_versions": [(1, 1, 1), (3, 2, 1)],
        "ducklake_column": [
            (1, 1, 3, 1, 1, "id", "int32", None, "NULL", 1, None, "literal", "duckdb"),
            (1, 3, None, 1, 1, "id", "int64", None, "NULL", 1, None, "literal", "duckdb"),
            (2, 1, None, 1, 2, "name", "varchar", None, "NULL", 1, None, "literal", "duckdb"),
            (3, 1, 3, 1, 3, "old", "varchar", None, "NULL", 1, None, "literal", "duckdb"),
            (4, 3, None, 1, 4, "score", "float64", "1.5", "1.5", 1, None, "literal", "duckdb")],
        "ducklake_data_file": [
            (0, 1, 2, None, None, "a.parquet", 1, "parquet", 4, 1, 1, 0, None, None, None, None),
            (1, 1, 4, None, None, "b.parquet", 1, "parquet", 3, 1, 1, 4, None, None, None, None)],
        "ducklake_delete_file": [(2, 1, 4, None, 0, "a-delete.parquet", 1, "parquet", 1, 1, 1, None, None)],
        "ducklake_file_column_stats": [(0, 1, 1, None, 4, 0, "0", "3", None, None),
                                       (1, 1, 1, None, 3, 0, "10", "12", None, None)],
        "ducklake_inlined_data_tables": [(1, "ducklake_inlined_data_1_2", 2)],
        "ducklake_inlined_data_1_2": [(7, 5, None, 20, "in", "2.5")],
        "ducklake_inlined_delete_1": [(1, 0, 5)],
    }
    for table, values in rows.items():
        db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(values[0]))})", values)
    db.commit()
    db.close()
    return tmp_path / "meta.sqlite"


def _rows(table: pa.Table) -> list[dict[str, object]]:
    return sorted(table.to_pylist(), key=lambda r: r["id"])


def test_a_hand_written_ducklake_table_reads_at_every_snapshot(lake: Path) -> None:
    with fs.open_table(lake, name="main.t") as t:  # the format is detected from the catalog file
        assert [s.snapshot_id for s in t.history()] == [1, 2, 3, 4, 5]
        assert sorted(t.schemas()) == [1, 2] and t.schema.names == ["id", "name", "score"]
        assert t.scan(snapshot_id=1).to_arrow().num_rows == 0
        at2 = t.scan(snapshot_id=2).to_arrow()
        assert at2.schema.field("id").type == pa.int32() and at2.column_names == ["id", "name", "old"]
        assert _rows(at2)[1] == {"id": 1, "name": "b", "old": "x"}
        at4 = t.scan(snapshot_id=4).to_arrow()
        assert at4.schema.field("id").type == pa.int64()
        assert _rows(at4) == [  # A without its deleted row 1, old dropped, score's initial default filled in
            {"id": 0, "name": "a", "score": 1.5}, {"id": 2, "name": "c", "score": 1.5},
            {"id": 3, "name": "d", "score": 1.5}, {"id": 10, "name": "k", "score": 7.0},
            {"id": 11, "name": "l", "score": 8.0}, {"id": 12, "name": None, "score": None}]
        latest = t.scan()
        assert [r["id"] for r in _rows(latest.to_arrow())] == [0, 2, 3, 11, 12, 20]
        assert latest.count() == 6 and t.scan(snapshot_id=4).count() == 6
        assert _rows(t.to_arrow(filter=("id", "==", 20))) == [{"id": 20, "name": "in", "score": 2.5}]


def test_a_merged_file_gives_each_snapshot_its_own_rows(lake: Path) -> None:
    """ducklake_merge_adjacent_files keeps each row's snapshot in a column; an older snapshot reads only its rows."""
    _parquet(lake.parent / "lake" / "main" / "t" / "c.parquet", {
        "id": (1, pa.array([30, 31], pa.int64())), "name": (2, pa.array(["m5", "m6"])),
        "_ducklake_internal_snapshot_id": (2147483539, pa.array([5, 6], pa.int64()))})
    db = sqlite3.connect(lake)
    db.execute("INSERT INTO ducklake_snapshot VALUES (6, '2024-05-01 12:06:00+00', 2, 2, 4)")
    db.execute("INSERT INTO ducklake_snapshot_changes VALUES (6, 'inserted_into_table:1', NULL, NULL, NULL)")
    db.execute("INSERT INTO ducklake_data_file VALUES (3, 1, 5, NULL, NULL, 'c.parquet', 1, 'parquet', 2, 1, 1, 30, "
               "NULL, NULL, NULL, 6)")
    db.commit()
    db.close()
    with fs.open_table(lake, name="t") as t:
        at5 = t.scan(snapshot_id=5)
        assert [r["id"] for r in _rows(at5.to_arrow())] == [0, 2, 3, 11, 12, 20, 30] and at5.count() == 7
        at6 = t.scan(snapshot_id=6, columns=["name"], filter=("id", ">=", 30))
        assert sorted(at6.to_arrow()["name"].to_pylist()) == ["m5", "m6"] and at6.count() == 2


def test_statistics_of_promoted_columns_prune_files(lake: Path) -> None:
    with fs.open_table(lake, format="ducklake", name="t") as t:
        scan = t.scan(columns=["name"], filter=("id", ">=", 11))
        assert [Path(f.path).name for f in scan.files()] == ["b.parquet"]  # A's int32 bounds rule it out
        assert sorted(scan.to_arrow()["name"].to_pylist(), key=str) == [None, "in", "l"]  # inlined row 20 too
        assert t.scan(filter=("id", ">", 100)).count() == 0


def test_time_travel_by_time_and_the_refusals(lake: Path) -> None:
    with fs.open_table(lake, name="main.t") as t:
        assert t.resolve(as_of=T0 + dt.timedelta(minutes=2, seconds=30)) == 2  # naive times are UTC
        assert t.resolve(as_of="2024-05-01T12:04:00+00:00") == 4
        with pytest.raises(fs.SnapshotNotFoundError, match="first is 1"):
            t.scan(as_of=T0)
        with pytest.raises(fs.SnapshotNotFoundError):
            t.scan(snapshot_id=0)
        with pytest.raises(fs.ReadOnlyTableError, match="DuckDB with the ducklake extension"):
            t.append(pa.table({"id": [1]}))
        with pytest.raises(fs.ReadOnlyTableError):
            t.upsert(pa.table({"id": [1]}))
        with pytest.raises(fs.UnknownFieldError):
            t.scan(filter=("nope", "==", 1))
    with pytest.raises(fs.InvalidOptionError, match="format"):
        fs.open_table(lake, format="nonesuch", name="t")


def test_unknown_types_and_newer_specifications_are_named(lake: Path) -> None:
    db = sqlite3.connect(lake)
    db.execute("INSERT INTO ducklake_column VALUES (5, 5, NULL, 1, 5, 'g', 'geometry', NULL, NULL, 1, NULL, "
               "'literal', 'duckdb')")
    db.execute("INSERT INTO ducklake_schema_versions VALUES (5, 3, 1)")
    db.commit()
    with fs.open_table(lake, name="t") as t, pytest.raises(fs.UnsupportedFormatFeatureError, match=r"'t\.g'.*geometry"):
        t.scan()
    db.execute("UPDATE ducklake_metadata SET value = '2.0' WHERE key = 'version'")
    db.commit()
    db.close()
    with pytest.raises(fs.UnsupportedFormatFeatureError, match=r"specification 2\.0"):
        fs.open_table(lake, name="t")


def _roaring32(containers: list[tuple[int, str, list[int]]]) -> bytes:
    """A 32-bit portable roaring bitmap with array and run containers (the run cookie)."""
    n = len(containers)
    runs = sum(1 << i for i, (_, kind, _) in enumerate(containers) if kind == "run")
    out = struct.pack("<I", 12347 | ((n - 1) << 16)) + bytes([runs]) * ((n + 7) // 8)
    bodies = b""
    for key, kind, values in containers:
        if kind == "run":  # values: [start, length - 1, ...]
            card = sum(values[1::2]) + len(values) // 2
            bodies += struct.pack("<H", len(values) // 2) + struct.pack(f"<{len(values)}H", *values)
        else:
            card = len(values)
            bodies += struct.pack(f"<{len(values)}H", *values)
        out += struct.pack("<HH", key, card - 1)
    return out + bodies  # fewer than 4 containers: no offsets section


def test_deletion_vector_blobs_decode_bare_and_in_puffin() -> None:
    bitmap = struct.pack("<Q", 1) + struct.pack("<I", 0) + _roaring32([(0, "array", [1, 5]), (2, "run", [3, 2])])
    body = b"\xd1\xd3\x39\x64" + bitmap
    blob = struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))
    want = [1, 5, (2 << 16) + 3, (2 << 16) + 4, (2 << 16) + 5]
    assert decode_deletion_vector(blob, "dv").tolist() == want
    footer = (b'{"blobs": [{"type": "deletion-vector-v1", "fields": [], "snapshot-id": -1, "sequence-number": -1, '
              b'"offset": 4, "length": %d}]}' % len(blob))
    puffin = b"PFA1" + blob + b"PFA1" + footer + struct.pack("<ii", len(footer), 0) + b"PFA1"
    assert np.array_equal(decode_deletion_vector(puffin, "dv.puffin"), want)
    with pytest.raises(fs.DataFileError, match="CRC"):
        decode_deletion_vector(blob[:-1] + b"\x00", "dv")


def test_nested_values_inlined_as_duckdb_text_parse_back() -> None:
    """The text DuckDB 1.5.5 stores for inlined nested values in SQLite catalogs (strings quoted only when needed)."""
    from fieldshift.open_tables.ducklake_literals import parse_nested

    struct = pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.float64())])
    assert parse_nested("{'a': 1, 'b': 'it''s, {x}: [y]', 'c': 1.5}", struct) == \
        {"a": 1, "b": "it's, {x}: [y]", "c": 1.5}
    assert parse_nested("[a, NULL, b c, '', 'NULL']", pa.list_(pa.string())) == ["a", None, "b c", "", "NULL"]
    assert parse_nested("{'k\\'1'=1, k2=NULL}", pa.map_(pa.string(), pa.int32())) == [("k'1", 1), ("k2", None)]
    nested = pa.struct([("x", pa.list_(pa.int32())), ("y", pa.struct([("z", pa.string())]))])
    assert parse_nested("{'x': [1, 2], 'y': {'z': 'q'}}", nested) == {"x": [1, 2], "y": {"z": "q"}}
    assert parse_nested("['2024-01-01 00:00:00']", pa.list_(pa.timestamp("us"))) == [dt.datetime(2024, 1, 1)]
    with pytest.raises(fs.UnsupportedFormatFeatureError, match="no field 'q'"):
        parse_nested("{'q': 1}", struct)
    with pytest.raises(fs.UnsupportedFormatFeatureError, match="not a int32"):
        parse_nested("[x]", pa.list_(pa.int32()))
