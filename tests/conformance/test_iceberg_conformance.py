"""Iceberg tables read through ``fs.open_table`` against two peers, at every snapshot.

- Tables PyIceberg 0.12 writes and evolves with its SQL catalog (SQLite): schema evolution (add, rename,
  drop, widen, nested), partition evolution (day, bucket, identity), deletes (PyIceberg rewrites files)
  and overwrites. Expected: PyIceberg's own ``scan(snapshot_id=...).to_arrow()`` and DuckDB 1.5.5's
  ``iceberg_scan`` of the same metadata file.
- Tables written file by file (``tests/open_tables/iceberg_tables.py``) with what PyIceberg cannot write: Parquet
  position deletes, v3 deletion vectors in Puffin, equality deletes, v3 initial defaults. Expected:
  DuckDB's ``iceberg_scan``.
- Tables from duckdb/duckdb-iceberg's test data (``data/duckdb-iceberg``: Spark-written equality deletes,
  initial defaults of every type, a Hive-migrated table without partition columns in its files, a v1
  table with a name mapping). Expected: DuckDB's ``iceberg_scan``.

Where a peer is wrong by the Iceberg spec, a test names the case and asserts the specified answer.
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from peers import duckdb_connection

import fieldshift as fs
from tests.open_tables.iceberg_tables import IcebergBuilder

pytestmark = pytest.mark.conformance

pytest.importorskip("pyiceberg", reason="the conformance suite needs pyiceberg (the conformance extra)")

UPSTREAM = Path(__file__).parent / "data" / "duckdb-iceberg"


@pytest.fixture(scope="module")
def duck() -> Any:
    conn = duckdb_connection(extensions=("avro", "iceberg"))
    conn.execute("SET TimeZone = 'UTC'")
    return conn


def _plain(v: Any) -> Any:
    """Values as both peers can agree on them: uuids as 16 bytes, aware datetimes in UTC."""
    if isinstance(v, uuid.UUID):
        return v.bytes
    if isinstance(v, str) and len(v) == 36 and v.count("-") == 4:
        try:
            return uuid.UUID(v).bytes
        except ValueError:
            return v
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.UTC)
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def canonical(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted((tuple(_plain(v) for v in row.values()) for row in table.to_pylist()), key=repr)


def duckdb_read(conn: Any, metadata: str, snapshot_id: int | None = None) -> pa.Table:
    at = f", snapshot_from_id={snapshot_id}" if snapshot_id is not None else ""
    return conn.execute(f"SELECT * FROM iceberg_scan('{metadata}'{at})").to_arrow_table()


def assert_every_snapshot(table: fs.OpenTable, metadata: str, conn: Any, pyiceberg_table: Any = None) -> int:
    """Every snapshot of the history reads as DuckDB (and PyIceberg, when given) reads it."""
    history = table.history()
    assert history
    for snap in history:
        ours = table.to_arrow(snapshot_id=snap.snapshot_id)
        expected = duckdb_read(conn, metadata, snap.snapshot_id)
        assert ours.column_names == expected.column_names, snap
        assert canonical(ours) == canonical(expected), f"snapshot {snap.snapshot_id} differs from DuckDB"
        if pyiceberg_table is not None:
            theirs = pyiceberg_table.scan(snapshot_id=snap.snapshot_id).to_arrow()
            assert canonical(ours) == canonical(theirs), f"snapshot {snap.snapshot_id} differs from PyIceberg"
        assert table.scan(snapshot_id=snap.snapshot_id).count() == expected.num_rows
    return len(history)


# -- tables PyIceberg evolves ------------------------------------------------------------------------
def _open(catalog: Any, name: str) -> fs.OpenTable:
    return fs.open_table(catalog={"name": catalog.name, "type": "sql", **catalog.properties}, name=name)


def _append(tbl: Any, data: list[dict[str, Any]]) -> None:
    tbl.append(pa.Table.from_pylist(data, schema=tbl.schema().as_arrow()))


def test_schema_evolution_reads_as_pyiceberg_and_duckdb_at_every_snapshot(catalog: Any, duck: Any) -> None:
    from pyiceberg.schema import Schema
    from pyiceberg.types import (
        DecimalType,
        DoubleType,
        FloatType,
        IntegerType,
        ListType,
        LongType,
        MapType,
        NestedField,
        StringType,
        StructType,
    )

    tbl = catalog.create_table("db.evolve", Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "n", IntegerType()),
        NestedField(3, "f", FloatType()),
        NestedField(4, "d", DecimalType(9, 2)),
        NestedField(5, "s", StructType(NestedField(6, "a", IntegerType()), NestedField(7, "b", StringType()))),
        NestedField(8, "tags", ListType(9, StructType(NestedField(10, "k", StringType())))),
        NestedField(11, "m", MapType(12, StringType(), 13, IntegerType())),
        NestedField(14, "gone", StringType()),
    ), properties={"format-version": "2"})
    d = decimal.Decimal
    _append(tbl, [{"id": 1, "n": 1, "f": 1.5, "d": d("1.25"), "s": {"a": 1, "b": "x"}, "tags": [{"k": "t"}],
                   "m": {"a": 1}, "gone": "g"},
                  {"id": 2, "n": None, "f": None, "d": None, "s": None, "tags": None, "m": None, "gone": None}])
    with tbl.update_schema() as u:
        u.update_column("n", LongType())
        u.update_column("f", DoubleType())
        u.update_column("d", DecimalType(18, 2))
        u.rename_column("s.b", "bee")
        u.add_column(("s", "c"), DoubleType())
        u.add_column(("tags", "element", "v"), IntegerType())
        u.update_column("m.value", LongType())
        u.delete_column("gone")
    _append(tbl, [{"id": 3, "n": 2**40, "f": 2.25, "d": d("123456789.01"), "s": {"a": 3, "bee": "y", "c": 0.5},
                   "tags": [{"k": "u", "v": 7}], "m": {"b": 2**35}}])
    with tbl.update_schema() as u:
        u.rename_column("s", "rec")
    with tbl.update_schema() as u:
        u.delete_column("rec.a")
        u.add_column("gone", StringType())  # a new field with a dropped field's name: a new id, old files null
        u.move_first("rec")
    _append(tbl, [{"id": 4, "n": 4, "rec": {"bee": "z", "c": 1.0}, "gone": "new"}])
    tbl.delete("id = 2")
    tbl.overwrite(pa.Table.from_pylist([{"id": 5, "n": 5, "gone": "over"}], schema=tbl.schema().as_arrow()),
                  overwrite_filter="id = 4")
    tbl = catalog.load_table("db.evolve")
    table = _open(catalog, "db.evolve")
    assert assert_every_snapshot(table, tbl.metadata_location, duck, tbl) == 6  # PyIceberg's overwrite: 2
    rows = {r["id"]: r for r in table.to_arrow().to_pylist()}
    assert rows[1]["gone"] is None and rows[1]["rec"] == {"bee": "x", "c": None}  # by id, not by name
    assert table.to_arrow(snapshot_id=table.history()[0].snapshot_id).column_names == [
        "id", "n", "f", "d", "s", "tags", "m", "gone"]


def test_partition_evolution_prunes_by_each_files_spec(catalog: Any, duck: Any) -> None:
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType, TimestampType

    tbl = catalog.create_table("db.parts", Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "ts", TimestampType()),
        NestedField(3, "cat", StringType())), properties={"format-version": "2"})
    with tbl.update_spec() as s:
        s.add_field("ts", DayTransform(), "ts_day")
    t0 = dt.datetime(2024, 3, 1, 10)
    _append(tbl, [{"id": i, "ts": t0 + dt.timedelta(days=i % 3), "cat": "abc"[i % 3]} for i in range(9)])
    with tbl.update_spec() as s:
        s.add_field("id", BucketTransform(4), "id_bucket")
    _append(tbl, [{"id": i, "ts": t0 + dt.timedelta(days=i % 3), "cat": "abc"[i % 3]} for i in range(9, 18)])
    with tbl.update_spec() as s:
        s.remove_field("ts_day")
        s.add_field("cat", IdentityTransform(), "cat")
    _append(tbl, [{"id": i, "ts": t0, "cat": "abc"[i % 3]} for i in range(18, 27)])
    tbl = catalog.load_table("db.parts")
    table = _open(catalog, "db.parts")
    assert assert_every_snapshot(table, tbl.metadata_location, duck, tbl) == 3
    assert [len(s.fields) for s in table.specs()] == [0, 1, 2, 2]  # v2 drops a removed field
    filters = [(("ts", ">=", t0 + dt.timedelta(days=2)), "ts >= '2024-03-03T10:00:00'"),
               (("cat", "==", "b"), "cat = 'b'"), (("id", "==", 13), "id = 13"),
               (("ts", "<", t0 + dt.timedelta(days=1)), "ts < '2024-03-02T10:00:00'")]
    everything = len(table.scan().files())
    for flt, text in filters:
        scan = table.scan(filter=flt)
        assert len(scan.files()) < everything, flt  # some files pruned by their own spec's values
        assert canonical(scan.to_arrow()) == canonical(tbl.scan(row_filter=text).to_arrow()), flt


def test_a_time_travel_filter_binds_to_the_snapshots_schema_where_pyiceberg_fails(catalog: Any) -> None:
    """PyIceberg 0.12 binds a time-travel scan's filter to the current schema: a column renamed or dropped
    since cannot be filtered at the snapshot that had it. The specified answer reads the snapshot's own
    schema, filter included."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, LongType, NestedField

    tbl = catalog.create_table("db.travel", Schema(NestedField(1, "id", LongType(), required=True),
                                                   NestedField(2, "score", IntegerType())))
    _append(tbl, [{"id": 1, "score": 5}, {"id": 2, "score": 50}])
    first = tbl.current_snapshot().snapshot_id
    with tbl.update_schema() as u:
        u.rename_column("score", "points")
    _append(tbl, [{"id": 3, "points": 7}])
    second = tbl.current_snapshot().snapshot_id
    with tbl.update_schema() as u:
        u.delete_column("points")
    with pytest.raises(ValueError, match="score"):
        tbl.scan(snapshot_id=first, row_filter="score > 10").to_arrow()
    with pytest.raises(ValueError, match="points"):
        tbl.scan(snapshot_id=second, row_filter="points > 6").to_arrow()
    table = _open(catalog, "db.travel")
    assert table.to_arrow(snapshot_id=first, filter=("score", ">", 10)).to_pylist() == [{"id": 2, "score": 50}]
    assert sorted(table.to_arrow(snapshot_id=second, filter=("points", ">", 6))["id"].to_pylist()) == [2, 3]


# -- tables written file by file ---------------------------------------------------------------------
SCHEMA = {"type": "struct", "fields": [
    {"id": 1, "name": "id", "type": "long", "required": True},
    {"id": 2, "name": "cat", "type": "string", "required": False},
    {"id": 3, "name": "n", "type": "int", "required": False},
]}


def test_position_deletes_and_deletion_vectors_read_as_duckdb_reads_them(tmp_path: Path, duck: Any) -> None:
    for version in (2, 3):
        b = IcebergBuilder(tmp_path / f"v{version}", SCHEMA, format_version=version)
        a = b.data([{"id": i, "cat": "a", "n": i} for i in range(6)])
        c = b.data([{"id": i, "cat": "c", "n": i} for i in range(10, 16)])
        b.commit([a, c])
        if version == 2:  # one file deleting from two data files; another from one
            b.commit([b.position_deletes([(a, 0), (c, 5), (a, 3)]), b.position_deletes([(c, 0)])],
                     operation="delete")
        else:  # two vectors in one Puffin file
            b.commit(b.deletion_vectors([(a, [0, 3]), (c, [0, 5])]), operation="delete")
        later = b.data([{"id": 20, "cat": "a", "n": 20}])
        b.commit([later], inherit=True)  # its sequence number is inherited from the manifest list
        b.commit(b.deletion_vectors([(later, [0])]) if version == 3 else [b.position_deletes([(later, 0)])],
                 operation="delete")
        table = fs.open_table(b.metadata_path)
        from pyiceberg.table import StaticTable

        # PyIceberg reads these too (its deletion vectors through pyroaring): a third reader agrees
        assert assert_every_snapshot(table, b.metadata_path, duck, StaticTable.from_metadata(b.metadata_path)) == 4
        assert sorted(table.to_arrow()["id"].to_pylist()) == [1, 2, 4, 5, 11, 12, 13, 14]


def test_global_equality_deletes_read_as_duckdb_reads_them(tmp_path: Path, duck: Any) -> None:
    b = IcebergBuilder(tmp_path / "t", SCHEMA)
    a = b.data([{"id": 1, "cat": "a", "n": 3}, {"id": 2, "cat": "b", "n": 3}, {"id": 3, "cat": None, "n": 7},
                {"id": 4, "cat": "d", "n": None}])
    b.commit([a])
    b.commit([b.equality_deletes([{"cat": "b", "n": 3}, {"cat": None, "n": 7}], [2, 3])], operation="delete")
    newer = b.data([{"id": 5, "cat": "b", "n": 3}])  # newer than the delete: kept
    single = b.equality_deletes([{"n": None}], [3])  # null matches null; same commit as id 6: 6 is kept
    b.commit([newer, single, b.data([{"id": 6, "cat": "x", "n": None}])], operation="overwrite")
    table = fs.open_table(b.metadata_path)
    assert assert_every_snapshot(table, b.metadata_path, duck) == 3
    assert sorted(table.to_arrow()["id"].to_pylist()) == [1, 5, 6]


def test_partition_scoped_equality_deletes_where_duckdb_deletes_across_partitions(tmp_path: Path,
                                                                                  duck: Any) -> None:
    """An equality delete written in partition a deletes only rows of partition a (spec, "Scan Planning":
    only a delete of an unpartitioned spec is global). DuckDB 1.5.5 applies it to every partition; the
    duckdb-iceberg repository fixed this later (its test data's equality_delete_cross_partition)."""
    b = IcebergBuilder(tmp_path / "t", SCHEMA, spec=[{"source-id": 2, "field-id": 1000, "name": "cat",
                                                       "transform": "identity"}])
    b.commit([b.data([{"id": 1, "cat": "a", "n": 3}], ("a",)), b.data([{"id": 2, "cat": "b", "n": 3}], ("b",))])
    b.commit([b.equality_deletes([{"n": 3}], [3], ("a",))], operation="delete")
    table = fs.open_table(b.metadata_path)
    assert table.to_arrow()["id"].to_pylist() == [2]
    assert duckdb_read(duck, b.metadata_path).num_rows == 0  # DuckDB 1.5.5 also deletes row 2


def test_initial_defaults_read_as_duckdb_reads_them(tmp_path: Path, duck: Any) -> None:
    b = IcebergBuilder(tmp_path / "t", SCHEMA, format_version=3)
    b.commit([b.data([{"id": 1, "cat": "a", "n": 1}])])
    fields = [*SCHEMA["fields"], {"id": 4, "name": "score", "type": "double", "required": False,
                                  "initial-default": 2.5, "write-default": 2.5},
              {"id": 5, "name": "label", "type": "string", "required": False, "initial-default": "old"}]
    b.evolve({"type": "struct", "fields": fields})
    b.commit([b.data([{"id": 2, "cat": "b", "n": 2, "score": 9.0, "label": None}])])
    table = fs.open_table(b.metadata_path)
    assert assert_every_snapshot(table, b.metadata_path, duck) == 2
    assert canonical(table.to_arrow()) == [(1, "a", 1, 2.5, "old"), (2, "b", 2, 9.0, None)]


# -- tables from duckdb/duckdb-iceberg's test data ---------------------------------------------------
UPSTREAM_TABLES = [
    "equality_deletes/warehouse/mydb/mytable_partitioned/metadata/v6.metadata.json",
    "equality_delete_extra_column/warehouse/ns/t/metadata/vfinal.metadata.json",
    "add_columns_with_defaults/default.db/add_columns_with_defaults/metadata/"
    "00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json",
    "hive_partitioned_table/metadata/v4.metadata.json",
    "name_mapping/warehouse_1/mydb/t1/metadata/v7.metadata.json",
]


@pytest.mark.parametrize("path", UPSTREAM_TABLES, ids=lambda p: p.split("/")[0])
def test_upstream_tables_read_as_duckdb_reads_them(path: str, duck: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(UPSTREAM)  # the tables record paths relative to that repository's root
    metadata = f"data/persistent/{path}"
    assert assert_every_snapshot(fs.open_table(metadata), metadata, duck) >= 1


def test_upstream_equality_deletes_with_an_expired_manifest_list(duck: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """mytable's log names a snapshot whose manifest list is gone: both readers refuse it; the rest agree."""
    monkeypatch.chdir(UPSTREAM)
    metadata = "data/persistent/equality_deletes/warehouse/mydb/mytable/metadata/v7.metadata.json"
    table = fs.open_table(metadata)
    readable = 0
    for snap in table.history():
        try:
            expected = duckdb_read(duck, metadata, snap.snapshot_id)
        except Exception:  # DuckDB's IO error for the missing manifest list
            with pytest.raises(fs.CatalogFormatError, match=r"manifest list .* is missing"):
                table.to_arrow(snapshot_id=snap.snapshot_id)
            continue
        assert canonical(table.to_arrow(snapshot_id=snap.snapshot_id)) == canonical(expected)
        readable += 1
    assert readable >= 4


def test_upstream_cross_partition_equality_delete(duck: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """duckdb-iceberg's own expected answer (test/sql/local/equality_delete_cross_partition.test): the
    delete of key 100 in partition 0 keeps (1, 100). DuckDB 1.5.5 deletes both rows of key 100."""
    monkeypatch.chdir(UPSTREAM)
    metadata = "data/persistent/equality_delete_cross_partition/warehouse/ns/t/metadata/vfinal.metadata.json"
    specified = [(0, 999, "p0-k999"), (1, 100, "p1-k100"), (1, 888, "p1-k888")]
    assert canonical(fs.open_table(metadata).to_arrow(columns=["part", "key", "val"])) == specified
    duckdb_rows = duck.execute(f"SELECT part, key, val FROM iceberg_scan('{metadata}')").fetchall()
    assert sorted(duckdb_rows) == [(0, 999, "p0-k999"), (1, 888, "p1-k888")]


def test_upstream_v1_manifest_entries_without_sequence_numbers(duck: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A v1 table's manifests carry no sequence numbers (the spec: they are 0), also after an upgrade to v3
    that wrote no snapshot. duckdb-iceberg's expected rows (iceberg_v1_existing_manifest_entry.test); DuckDB
    1.5.5 reads the v1 metadata and refuses the upgraded one ("required field 'sequence_number' is NULL")."""
    monkeypatch.chdir(UPSTREAM)
    base = "data/persistent/iceberg_v1_repro/repro/merch_v1/metadata/"
    expected = [(2, "nba", 20), (3, "mlb", 30), (4, "nhl", 40), (6, "nba", 60)]
    v1 = base + "00003-8d01e4aa-d143-49c9-898e-b5e477577b70.metadata.json"
    assert canonical(fs.open_table(v1).to_arrow()) == expected == canonical(duckdb_read(duck, v1))
    upgraded = base + "00004-v3-upgraded-v1-null-counts.metadata.json"
    assert canonical(fs.open_table(upgraded).to_arrow()) == expected
    with pytest.raises(Exception, match="sequence_number"):
        duckdb_read(duck, upgraded)


def test_upstream_bare_deletion_vector_is_refused_by_both(duck: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deletion vector written as a bare blob, not inside a Puffin file (older DuckDB wrote these): the
    spec keeps vectors in Puffin files; DuckDB 1.5.5 and fieldshift both refuse to guess."""
    monkeypatch.chdir(UPSTREAM)
    metadata = ("data/persistent/legacy_bare_deletion_vector/warehouse/default/legacy_bare_deletion_vector/"
                "metadata/00002-legacy-bare-dv.metadata.json")
    table = fs.open_table(metadata)
    first, last = table.history()
    assert canonical(table.to_arrow(snapshot_id=first.snapshot_id)) == canonical(
        duckdb_read(duck, metadata, first.snapshot_id))
    with pytest.raises(fs.UnsupportedFormatFeatureError, match="not a Puffin file"):
        table.to_arrow(snapshot_id=last.snapshot_id)
    with pytest.raises(Exception, match="Puffin"):
        duckdb_read(duck, metadata, last.snapshot_id)
