"""Issue 27: field id 0 is a field id. Paimon numbers its fields from 0, and such Parquet files were
refused (``InvalidFieldIdError: field ids must be positive``); ids >= 0 are valid in file schemas
and table schemas alike, negative ones stay refused. Nothing may treat 0 as "no id".
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.schema.formats.arrow_conversion import fields_from_arrow
from fieldshift.schema.formats.avro import schema_from_avro
from fieldshift.schema.name_mapping import NameMapping


def _md(i: int | str) -> dict[str, str]:
    return {"PARQUET:field_id": str(i)}


PAIMON = pa.schema([pa.field("id", pa.int32(), nullable=False, metadata=_md(0)),
                    pa.field("name", pa.string(), metadata=_md(1)),
                    pa.field("s", pa.struct([pa.field("x", pa.int32(), metadata=_md(3))]), metadata=_md(2)),
                    pa.field("tags", pa.list_(pa.field("element", pa.string(), metadata=_md(5))), metadata=_md(4))])


def _paimon_rows(start: int, n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int32()), "name": [f"n{i}" for i in range(n)],
                     "s": [{"x": i} for i in range(n)], "tags": [["t"]] * n}, schema=PAIMON)


def test_a_parquet_file_numbered_from_zero_reads_by_id(tmp_path: Path) -> None:
    pq.write_table(_paimon_rows(0, 3), tmp_path / "paimon.parquet")
    data = pq.read_table(tmp_path / "paimon.parquet")
    file_schema = fs.Schema.from_arrow(data.schema)
    assert [f.id for f in file_schema.all_fields()] == [0, 1, 2, 3, 4, 5]
    assert file_schema.highest_field_id == 5
    assert fields_from_arrow(data.schema, iter(range(-1, -100, -1)).__next__, 32)[0].id == 0  # the fast path
    read = file_schema.update().rename_column("id", "key").update_column("key", pa.int64()).apply()
    out = fs.evolve(data, read)
    assert out.column("key").to_pylist() == [0, 1, 2] and out.schema.field("key").type == pa.int64()
    assert "key: renamed from 'id'; widen int -> long" in fs.plan(data.schema, read).explain()


@pytest.mark.parametrize("bad", ["-1", "abc", "", "1.5"])
def test_negative_and_unparsable_ids_stay_refused(bad: str) -> None:
    with pytest.raises(fs.InvalidFieldIdError, match="whole numbers from 0"):
        fs.Schema.from_arrow(pa.schema([pa.field("a", pa.int32(), metadata=_md(bad))]))


def test_negative_ids_are_refused_in_every_format() -> None:
    with pytest.raises(fs.InvalidFieldIdError):
        fs.Schema([fs.Field(-1, "a", pa.int32())])
    with pytest.raises(fs.NameMappingError, match="-1"):
        NameMapping.from_json('[{"field-id": -1, "names": ["a"]}]')
    with pytest.raises(fs.InvalidFieldIdError):
        fs.Schema.from_json('{"type": "struct", "fields": [{"id": -1, "name": "a", "required": false, "type": "int"}]}')


def test_id_zero_survives_every_schema_format() -> None:
    schema = fs.Schema.from_arrow(PAIMON)
    assert fs.Schema.from_json(schema.to_json()) == schema
    assert json.loads(schema.to_json())["fields"][0]["id"] == 0
    mapping = NameMapping.from_schema(schema)
    assert NameMapping.from_json(mapping.to_json()) == mapping
    bare = pa.table({"id": pa.array([0, 1], pa.int32()), "name": ["a", "b"]})  # no ids: the mapping names them
    mapped = fs.evolve(bare, schema.select([["id"], ["name"]]), name_mapping=mapping)
    assert mapped.column("id").to_pylist() == [0, 1]
    avro = schema_from_avro({"type": "record", "name": "r", "fields": [
        {"name": "id", "type": "int", "field-id": 0}, {"name": "v", "type": ["null", "string"], "field-id": 1}]})
    assert [(f.name, f.id) for f in avro.fields] == [("id", 0), ("v", 1)]
    spark = pytest.importorskip("fieldshift.spark.types")
    assert spark.spark_to_schema(spark.schema_to_spark(schema)) == schema


def test_a_table_round_trip_with_a_field_whose_id_is_zero(tmp_path: Path) -> None:
    """Read, evolve (rename, widen, add), append through the table, prune by statistics and partitions,
    reopen: field 0 is a column like any other, and new fields get ids above the highest."""
    schema = fs.Schema.from_arrow(PAIMON)
    t = fs.Table.create(tmp_path / "t", schema, partition_by=["truncate(10, id)"])
    pq.write_table(_paimon_rows(0, 5), tmp_path / "paimon.parquet")
    t.append(pq.read_table(tmp_path / "paimon.parquet"))  # the Paimon file's own columns, ids from 0
    t.append(_paimon_rows(20, 5))
    t.update_schema().rename_column("id", "key").update_column("key", pa.int64()).commit()
    t.update_schema().add_column("extra", pa.string()).commit()
    assert [(f.name, f.id) for f in t.schema.fields] == [("key", 0), ("name", 1), ("s", 2), ("tags", 4), ("extra", 6)]
    t.append({"key": pa.array([40], pa.int64()), "name": ["late"], "extra": ["e"]})
    reopened = fs.Table.open(tmp_path / "t")
    keys = sorted(reopened.to_arrow().column("key").to_pylist())
    assert keys == [0, 1, 2, 3, 4, 20, 21, 22, 23, 24, 40]
    one = reopened.scan(filter=("key", "==", 21))
    assert one.to_arrow().column("key").to_pylist() == [21] and len(one.files()) == 1  # pruned by id 0
    assert len(reopened.scan(filter=("key", ">=", 100)).files()) == 0
    old = reopened.scan(snapshot_id=1).to_arrow()
    assert old.schema.names == ["id", "name", "s", "tags"] and old.column("id").to_pylist() == [0, 1, 2, 3, 4]


def test_a_keyed_table_whose_key_is_field_zero(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "k", fs.Schema.from_arrow(PAIMON), identifier_fields=["id"])
    assert t.schema.identifier_field_ids == (0,)
    t.upsert(_paimon_rows(0, 4))
    t.upsert(pa.table({"id": pa.array([1], pa.int32()), "name": ["again"]}))
    t.delete([2])
    rows = sorted((r["id"], r["name"]) for r in t.to_arrow().to_pylist())
    assert rows == [(0, "n0"), (1, "again"), (3, "n3")]


def test_parsed_types_never_carry_a_valid_placeholder_id() -> None:
    """Types parsed from text numbered their nested fields 0 until a schema renumbered them; 0 being a valid
    id now, the placeholder is -1, which no schema takes if it leaks."""
    from fieldshift.schema.type_text import parse_type

    parsed = parse_type("struct<a: int, l: list<string>, m: map<string, int>>")
    with pytest.raises(fs.InvalidFieldIdError):
        fs.Schema([fs.Field(0, "s", parsed)])
    base = fs.Schema.from_arrow(PAIMON)
    added = base.update().add_column("n", parsed).apply()
    new_ids = [f.id for f in added.all_fields() if not base.has_field(f.id)]
    assert sorted(new_ids) == list(range(6, 6 + len(new_ids))) and len(new_ids) == 7
