"""Every seed scenario replayed on a real table (SQLite file + Parquet files)."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs


def _rows(table: fs.Table, **scan: object) -> list[dict]:
    return sorted(table.scan(**scan).to_arrow().to_pylist(), key=repr)


def test_table_store_drop_then_add_reads_null(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "T", pa.schema([("a", pa.string()), ("b", pa.string()), ("c", pa.string())]))
    t.append({"a": ["a1"], "b": ["b1"], "c": ["c1"]})
    t.update_schema().drop_column("c").commit()
    t.update_schema().add_column("c", pa.string()).commit()
    t.append({"a": ["a2"], "b": ["b2"], "c": ["c2"]})
    assert _rows(t) == [{"a": "a1", "b": "b1", "c": None}, {"a": "a2", "b": "b2", "c": "c2"}]
    # the data files are tagged with the schema they were written with, and carry field ids
    files = t.scan().files()
    assert [f.schema_id for f in files] == [0, 2]
    ids = [f.metadata[b"PARQUET:field_id"] for f in pq.read_schema(t.location / files[1].path)]
    assert ids == [b"1", b"2", b"4"]


def test_hudi_trips_add_new_field_and_int_to_long(tmp_path: Path) -> None:
    schema = pa.schema([("rowId", pa.string()), ("preComb", pa.int64()), ("intToLong", pa.int32())])
    t = fs.Table.create(tmp_path / "trips", schema)
    t.append(pa.table({"rowId": ["row_1"], "preComb": [0], "intToLong": pa.array([0], pa.int32())}))
    r = t.append(pa.table({"rowId": ["row_5"], "preComb": [5], "intToLong": pa.array([2**33], pa.int64()),
                           "newField": ["newField_1"]}))
    assert r.schema_evolved and r.schema_id == 1
    assert t.schema.find("intToLong").type == pa.int64()
    assert t.schema.names == ["rowId", "preComb", "intToLong", "newField"]
    assert _rows(t) == [
        {"rowId": "row_1", "preComb": 0, "intToLong": 0, "newField": None},
        {"rowId": "row_5", "preComb": 5, "intToLong": 2**33, "newField": "newField_1"},
    ]


def test_ducklake_default_nested_and_promotion_chain(tmp_path: Path) -> None:
    schema = pa.schema([("c", pa.int8()), ("f", pa.float32()), ("s", pa.struct([("x", pa.int32())]))])
    t = fs.Table.create(tmp_path / "tbl", schema)
    t.append(pa.table({"c": pa.array([-1], pa.int8()), "f": pa.array([0.5], pa.float32()), "s": [{"x": 1}]},
                      schema=schema))
    (t.update_schema().add_column("v", pa.string(), default="my_default")
     .add_column("s.new_field", pa.int32()).rename_column("s.x", "y").commit())
    for target in (pa.int16(), pa.int32(), pa.int64()):
        t.update_schema().update_column("c", target).commit()
    t.update_schema().update_column("f", pa.float64()).commit()
    assert _rows(t) == [{"c": -1, "f": 0.5, "s": {"y": 1, "new_field": None}, "v": "my_default"}]
    t.update_schema().drop_column("s.new_field").commit()
    assert _rows(t) == [{"c": -1, "f": 0.5, "s": {"y": 1}, "v": "my_default"}]


def test_onehouse_int_then_long_widens_and_string_is_quarantined(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "oh", pa.schema([("k", pa.string()), ("col1", pa.int32())]))
    t.append(pa.table({"k": ["r1"], "col1": pa.array([2**40], pa.int64())}))
    assert t.schema.find("col1").type == pa.int64()
    t.append(pa.table({"k": ["r2"], "col1": pa.array([3], pa.int32())}))
    with pytest.raises(fs.IncompatibleTypeError, match="col1"):
        t.append(pa.table({"k": ["r3"], "col1": ["text"]}))
    r = t.append(pa.table({"k": ["r3", "r4"], "col1": ["text", "12"]}), on_incompatible="quarantine")
    assert (r.rows_written, r.rows_quarantined) == (0, 2)  # a String where the table has an Int: both rows
    (q,) = t.quarantine(grouped=True)  # one source schema: the rows in their source types
    assert q.column("k").to_pylist() == ["r3", "r4"]
    assert "col1" in q.column("_fieldshift_reason")[0].as_py()
    assert "incoming string cannot be written into table type" in q.column("_fieldshift_reason")[1].as_py()
    assert q.column("_fieldshift_source_schema")[0].as_py().startswith("k: string")
    assert isinstance(q.column("_fieldshift_quarantined_at")[0].as_py(), dt.datetime)
    assert _rows(t) == [{"k": "r1", "col1": 2**40}, {"k": "r2", "col1": 3}]
    r = t.append(pa.table({"k": ["r5"], "col1": pa.array([None], pa.string())}), on_incompatible="quarantine")
    assert (r.rows_written, r.rows_quarantined) == (1, 0)  # a null carries no String value: written


def test_a_type_that_cannot_fit_at_all_quarantines_the_whole_batch(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "oh", pa.schema([("k", pa.string()), ("col1", pa.int32())]))
    r = t.append(pa.table({"k": ["a", "b"], "col1": [[1], [2]]}), on_incompatible="quarantine")
    assert (r.rows_written, r.rows_quarantined) == (0, 2)
    assert t.scan().count() == 0 and t.quarantine().num_rows == 2


def test_missing_columns_get_write_default_not_initial_default(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "d", pa.schema([("k", pa.string())]))
    t.append({"k": ["old"]})
    t.update_schema().add_column("v", pa.int64(), default=1).commit()
    t.update_schema().set_write_default("v", 2).commit()
    t.append({"k": ["new"]})
    assert _rows(t) == [{"k": "new", "v": 2}, {"k": "old", "v": 1}]


def test_nested_on_write_evolution_adds_struct_child_and_widens(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "n", pa.schema([("s", pa.struct([("a", pa.int32())]))]))
    t.append(pa.table({"s": pa.array([{"a": 1}], pa.struct([("a", pa.int32())]))}))
    t.append(pa.table({"s": pa.array([{"a": 2**40, "b": "x"}])}))
    assert t.schema.find("s.a").type == pa.int64() and t.schema.find("s.b").type == pa.string()
    assert _rows(t) == [{"s": {"a": 1, "b": None}}, {"s": {"a": 2**40, "b": "x"}}]


def test_time_travel_and_schema_targets(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "tt", pa.schema([("a", pa.int32()), ("b", pa.string())]))
    t.append(pa.table({"a": pa.array([1], pa.int32()), "b": ["x"]}))
    t.update_schema().rename_column("b", "bee").update_column("a", pa.int64()).commit()
    t.append(pa.table({"a": pa.array([2], pa.int64()), "bee": ["y"]}))
    assert _rows(t, snapshot_id=1) == [{"a": 1, "b": "x"}]
    assert _rows(t, snapshot_id=1, schema_id=1) == [{"a": 1, "bee": "x"}]
    assert _rows(t) == [{"a": 1, "bee": "x"}, {"a": 2, "bee": "y"}]
    assert [s.schema_id for s in t.schemas()] == [0, 1]
    assert [s.operation for s in t.history()] == ["create", "append", "schema", "append"]


def test_scan_projection_filter_count_and_streaming(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "s", pa.schema([("a", pa.int32()), ("b", pa.string())]))
    for i in range(4):
        t.append(pa.table({"a": pa.array(range(i * 10, i * 10 + 10), pa.int32()), "b": [f"f{i}"] * 10}))
    t.update_schema().update_column("a", pa.int64()).commit()
    scan = t.scan(columns=["b"], filter=[("a", ">=", 25), ("a", "<", 32)])
    assert len(scan.files()) == 2  # pruned by the int32 stats with the literal converted exactly
    assert sorted(scan.to_arrow().column("b").to_pylist()) == ["f2"] * 5 + ["f3"] * 2
    assert scan.to_arrow().schema.names == ["b"]
    assert t.scan().count() == 40 and scan.count() == 7
    assert sum(b.num_rows for b in t.scan().to_batches()) == 40
    assert t.scan().to_reader().read_all().num_rows == 40


@pytest.mark.parametrize(
    ("literal", "expected"),
    [(2.5, 1), (2, 1), (2**40, 0), (decimal.Decimal("2.0"), 1)],
    ids=["float-literal-not-exact", "int-literal", "out-of-range", "decimal-literal"],
)
def test_pruning_never_drops_a_matching_row(tmp_path: Path, literal: object, expected: int) -> None:
    t = fs.Table.create(tmp_path / "p", pa.schema([("a", pa.int32())]))
    t.append(pa.table({"a": pa.array([1, 2, 3], pa.int32())}))
    t.update_schema().update_column("a", pa.float64()).commit()  # stats stay int32 in the old file
    got = t.scan(filter=("a", ">", literal)).to_arrow().column("a").to_pylist()
    assert len(got) == expected


def test_shared_catalog_holds_many_tables(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    one = fs.Table.create(tmp_path / "one", pa.schema([("a", pa.int32())]), catalog=uri, name="one")
    two = fs.Table.create(tmp_path / "two", pa.schema([("b", pa.string())]), catalog=uri, name="two")
    one.append(pa.table({"a": pa.array([1], pa.int32())}))
    two.append({"b": ["x"]})
    assert fs.Table.open(tmp_path / "one", catalog=uri, name="one").to_arrow().num_rows == 1
    assert fs.Table.open(tmp_path / "two", catalog=uri, name="two").schema.names == ["b"]


def test_second_and_millisecond_units_survive_parquet(tmp_path: Path) -> None:
    """Parquet stores timestamp[s] as ms: the scan must convert, never reinterpret the values."""
    schema = pa.schema([("t", pa.timestamp("s")), ("tm", pa.time32("s"))])
    t = fs.Table.create(tmp_path / "units", schema)
    when = dt.datetime(2020, 1, 2, 3, 4, 5)
    t.append(pa.table({"t": pa.array([when], pa.timestamp("s")), "tm": pa.array([dt.time(3, 4, 5)], pa.time32("s"))}))
    out = t.to_arrow()
    assert out.schema.types == [pa.timestamp("s"), pa.time32("s")]
    assert out.to_pylist() == [{"t": when, "tm": dt.time(3, 4, 5)}]


def test_hudi_long_to_double_rounds_instead_of_failing() -> None:
    file = fs.Schema.from_arrow(pa.schema([("x", pa.int64())]), assign_ids=True)
    read = file.update(policy=fs.CastPolicy.hudi()).update_column("x", pa.float64()).apply()
    data = pa.table({"x": [2**60 + 1]}, schema=file.to_arrow())
    assert fs.plan(file, read, policy=fs.CastPolicy.hudi()).apply(data).to_pylist() == [{"x": float(2**60)}]
