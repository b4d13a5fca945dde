"""Issue 12 (sound table lifecycle), engine items: each numbered behaviour as a regression test."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift import Field, ListType, Schema, StructType


def _write(path: Path, table: pa.Table) -> pa.Table:
    """Write ``table`` as Parquet and read it back (the footer's schema, as a reader sees it)."""
    pq.write_table(table, path)
    return pq.read_table(path)


# -- 24: nullability by data ---------------------------------------------------------------------------
def _required_read_schema() -> Schema:
    return Schema([
        Field(1, "id", pa.int64(), nullable=False),
        Field(2, "s", StructType((Field(3, "x", pa.int32(), nullable=False),))),
        Field(4, "l", ListType(Field(5, "element", pa.int32(), nullable=False))),
    ], identifier_field_ids=[1])


def _optional_file(path: Path, ids: list[int | None], xs: list[dict | None], ls: list[list | None]) -> pa.Table:
    """A file as DuckDB or Spark write it: every column optional, ids in the footer."""
    meta = [{b"PARQUET:field_id": str(i).encode()} for i in range(1, 6)]
    arrow = pa.schema([
        pa.field("id", pa.int64(), True, meta[0]),
        pa.field("s", pa.struct([pa.field("x", pa.int32(), True, meta[2])]), True, meta[1]),
        pa.field("l", pa.list_(pa.field("element", pa.int32(), True, meta[4])), True, meta[3]),
    ])
    return _write(path, pa.table({"id": ids, "s": xs, "l": ls}, schema=arrow))


def test_required_field_over_optional_file_column_reads_when_it_holds_no_nulls(tmp_path: Path) -> None:
    data = _optional_file(tmp_path / "f.parquet", [1, 2], [{"x": 1}, None], [[1], None])
    out = fs.evolve(data, _required_read_schema())
    assert out.to_pylist() == [{"id": 1, "s": {"x": 1}, "l": [1]}, {"id": 2, "s": None, "l": None}]
    assert not out.schema.field("id").nullable
    assert "checked for nulls" in fs.plan(data.schema, _required_read_schema()).explain()


@pytest.mark.parametrize(("ids", "xs", "ls", "path", "nulls", "row", "bad_rows"), [
    ([1, None, None], [None, None, None], [None, None, None], "id", 2, 1, 2),
    ([1, 2, 3], [{"x": 1}, {"x": None}, None], [None, None, None], "s.x", 1, 1, 1),
    ([1, 2, 3], [None, None, None], [[1], None, [2, None, None]], "l.element", 2, 2, 1),
])
def test_nulls_in_a_required_field_are_a_named_error(tmp_path: Path, ids: list, xs: list, ls: list, path: str,
                                                     nulls: int, row: int, bad_rows: int) -> None:
    data = _optional_file(tmp_path / "f.parquet", ids, xs, ls)
    with pytest.raises(fs.NullInRequiredFieldError) as e:
        fs.evolve(data, _required_read_schema())
    assert (e.value.path, e.value.nulls, e.value.row) == (path, nulls, row)
    assert isinstance(e.value, fs.SchemaEvolutionError)
    good, bad = fs.plan(data.schema, _required_read_schema()).apply_split(data)
    assert bad.num_rows == bad_rows and good.num_rows == len(ids) - bad_rows
    assert "null in a required field" in bad.column("_fieldshift_reason")[0].as_py()


# -- 21: nulls in a required nested field on write ---------------------------------------------------------
def _nested_required_table(tmp_path: Path) -> fs.Table:
    schema = Schema([
        Field(1, "id", pa.int64(), nullable=False),
        Field(2, "s", StructType((Field(3, "x", pa.int32(), nullable=False),))),
        Field(4, "l", ListType(Field(5, "element", pa.int32(), nullable=False))),
        Field(6, "m", fs.MapType(Field(7, "key", pa.string(), nullable=False),
                                 Field(8, "value", pa.int32(), nullable=False))),
    ])
    return fs.Table.create(tmp_path / "t", schema)


@pytest.mark.parametrize(("column", "arrow_type", "bad_value", "path"), [
    ("s", pa.struct([("x", pa.int32())]), {"x": None}, "s.x"),
    ("l", pa.list_(pa.int32()), [1, None], "l.element"),
    ("m", pa.map_(pa.string(), pa.int32()), [("k", None)], "m.value"),
])
def test_null_in_required_nested_field_on_append(tmp_path: Path, column: str, arrow_type: pa.DataType,
                                                 bad_value: object, path: str) -> None:
    t = _nested_required_table(tmp_path)
    rows = pa.Table.from_pylist([{"id": 1, column: bad_value}, {"id": 2}],
                                schema=pa.schema([("id", pa.int64()), (column, arrow_type)]))
    with pytest.raises(fs.NullInRequiredFieldError, match=f"'{path}'.*nothing was written"):
        t.append(rows)
    assert t.to_arrow().num_rows == 0
    t.append(rows, on_incompatible="quarantine")
    assert t.to_arrow().column("id").to_pylist() == [2]
    q = t.quarantine()
    assert q.num_rows == 1 and path in q.column("_fieldshift_reason")[0].as_py()


# -- 15: a missing nullable struct with a required child --------------------------------------------------
def test_missing_struct_with_required_child_is_written_and_read_as_null(tmp_path: Path) -> None:
    schema = Schema([
        Field(1, "id", pa.int64()),
        Field(2, "s", StructType((Field(3, "x", pa.int32(), nullable=False),
                                  Field(4, "t", StructType((Field(5, "y", pa.string(), nullable=False),))),
                                  Field(6, "z", pa.int32())))),
    ])
    t = fs.Table.create(tmp_path / "t", schema)
    t.append(pa.table({"id": [1, 2]}))  # s is missing: null structs
    s_type = pa.struct([("x", pa.int32()), ("t", pa.struct([("y", pa.string())])), ("z", pa.int32())])
    incoming = pa.schema([("id", pa.int64()), ("s", s_type)])
    t.append(pa.Table.from_pylist([{"id": 3, "s": None}, {"id": 4, "s": {"x": 7, "t": None, "z": None}}],
                                  schema=incoming))
    assert t.to_arrow().sort_by("id").column("s").to_pylist() == [
        None, None, None, {"x": 7, "t": None, "z": None}]
    # on read: a file without s gives null structs whose required children are valid (rewritable)
    old = _write(tmp_path / "old.parquet", pa.table({"id": pa.array([1], pa.int64())},
                                                     schema=Schema([schema.fields[0]]).to_arrow()))
    out = fs.evolve(old, schema)
    assert out.column("s").to_pylist() == [None]
    assert out.column("s").chunk(0).field(0).null_count == 0
    pq.write_table(out, tmp_path / "again.parquet")
