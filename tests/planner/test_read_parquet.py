"""``fs.read_parquet`` (only the columns the plan reads decoded; optionally widened on decode) against
the same read without it: ``fs.evolve(pq.read_table(path), ...)`` on the same file."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift import Field, ListType, MapType, StructType
from fieldshift.table.files.parquet_read import decode_schema

FILE = fs.Schema([
    Field(1, "a", pa.int32()), Field(2, "b", pa.float32()), Field(3, "c.d", pa.string()),
    Field(4, "gone", pa.string()), Field(5, "n", pa.int32()), Field(6, "i8", pa.int8()),
    Field(7, "st", StructType((Field(10, "x", pa.int32()), Field(11, "y", pa.string())))),
    Field(8, "li", ListType(Field(12, "element", pa.int32()))),
    Field(9, "m", MapType(Field(13, "key", pa.string(), nullable=False), Field(14, "value", pa.int32()))),
])
READ = fs.Schema([
    Field(9, "m", MapType(Field(13, "key", pa.string(), nullable=False), Field(14, "value", pa.int64()))),
    Field(1, "a_long", pa.int64()), Field(2, "b", pa.float64()), Field(3, "c.d", pa.string()),
    Field(5, "n", pa.string()), Field(6, "i8", pa.float64()),
    Field(7, "st", StructType((Field(10, "x", pa.int64()), Field(11, "y2", pa.string()),
                               Field(16, "z", pa.int32(), initial_default=3)))),
    Field(8, "li", ListType(Field(12, "element", pa.int64()))),
    Field(15, "new", pa.string(), initial_default="dflt"),
], highest_field_id=16)
ARROW = FILE.to_arrow()


def _write(tmp_path: Path, rows: int = 3000, ids: bool = True) -> Path:
    data = {
        "a": pa.array([None if i % 11 == 0 else i - 1500 for i in range(rows)], pa.int32()),
        "b": pa.array([i / 7 for i in range(rows)], pa.float32()),
        "c.d": pa.array([f"s{i}" for i in range(rows)]),
        "gone": pa.array(["x"] * rows),
        "n": pa.array([-(2**31) + i for i in range(rows)], pa.int32()),
        "i8": pa.array([i % 256 - 128 for i in range(rows)], pa.int8()),
        "st": pa.array([None if i % 5 == 0 else {"x": i, "y": str(i)} for i in range(rows)],
                       ARROW.field("st").type),
        "li": pa.array([[i, None, -i] for i in range(rows)], ARROW.field("li").type),
        "m": pa.array([[("k", i)] for i in range(rows)], ARROW.field("m").type),
    }
    table = pa.Table.from_pydict(data, schema=ARROW)
    if not ids:
        table = table.replace_schema_metadata(None).cast(pa.schema([f.remove_metadata() for f in table.schema]))
    path = tmp_path / "f.parquet"
    pq.write_table(table, path, row_group_size=700)
    return path


def test_read_parquet_equals_evolve_of_read_table(tmp_path: Path) -> None:
    path = _write(tmp_path)
    policy = fs.CastPolicy.hudi()
    got = fs.read_parquet(path, READ, policy=policy)
    want = fs.evolve(pq.read_table(path), READ, policy=policy)
    assert got.schema.equals(want.schema, check_metadata=True)
    assert got.equals(want)
    widened = decode_schema(pq.read_schema(path), READ, policy=policy, widen=True)  # cast by the scanner
    scanned = ds.dataset(path, schema=widened, format="parquet").to_table()
    assert fs.evolve(scanned, READ, policy=policy).equals(want)


def test_decode_schema_drops_unread_columns_and_widens_exactly(tmp_path: Path) -> None:
    plain = decode_schema(pq.read_schema(_write(tmp_path)), READ, policy=fs.CastPolicy.hudi())
    assert "gone" not in plain.names and plain.field("a").type == pa.int32()
    schema = decode_schema(pq.read_schema(tmp_path / "f.parquet"), READ, policy=fs.CastPolicy.hudi(), widen=True)
    assert "gone" not in schema.names
    assert schema.field("a").type == pa.int64() and schema.field("b").type == pa.float64()
    assert schema.field("i8").type == pa.float64()
    assert schema.field("n").type == pa.int32()  # int -> string is no widening: the plan does it
    assert schema.field("a").metadata == pq.read_schema(tmp_path / "f.parquet").field("a").metadata


def test_read_parquet_without_top_level_ids_decodes_the_whole_file(tmp_path: Path) -> None:
    """Only nested ids: projecting would change which columns the mapping matches, so none happens."""
    path = _write(tmp_path, ids=False)
    file_schema = pq.read_schema(path)
    assert decode_schema(file_schema, READ, policy=fs.CastPolicy.hudi(),
                         name_mapping=fs.NameMapping.from_schema(FILE)).equals(file_schema)
    mapping = fs.NameMapping.from_schema(FILE)
    policy = fs.CastPolicy.hudi()
    got = fs.read_parquet(path, READ, policy=policy, name_mapping=mapping)
    assert got.equals(fs.evolve(pq.read_table(path), READ, policy=policy, name_mapping=mapping))


def test_read_parquet_of_only_new_columns_keeps_rows(tmp_path: Path) -> None:
    path = _write(tmp_path, rows=1234)
    only_new = fs.Schema([Field(15, "new", pa.string(), initial_default="dflt")])
    got = fs.read_parquet(path, only_new)
    assert got.num_rows == 1234 and got.column(0).to_pylist() == ["dflt"] * 1234


def test_read_parquet_refuses_what_evolve_refuses(tmp_path: Path) -> None:
    path = _write(tmp_path)
    with pytest.raises(fs.SchemaMismatchError):
        fs.read_parquet(path, READ)  # lossless refuses int -> string
