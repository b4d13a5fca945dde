"""Issue 12 (sound table lifecycle), engine items: each numbered behaviour as a regression test."""

from __future__ import annotations

import datetime as dt
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


# -- 6: plan.apply checks the batch's types, not only its names ---------------------------------------
def test_apply_refuses_a_batch_of_other_types_by_name() -> None:
    v1 = Schema([Field(1, "id", pa.int64()), Field(2, "name", pa.string())])
    p = fs.plan(v1, v1.update().add_column("extra", pa.int32()).apply())
    with pytest.raises(fs.BatchTypeError, match=r"'name'.*int64.*string") as e:
        p.apply(pa.record_batch({"id": [1], "name": [7]}))
    assert (e.value.column, e.value.expected, e.value.actual) == ("name", "string", "int64")
    with pytest.raises(fs.BatchTypeError, match="'id'"):
        p.apply(pa.table({"id": ["x"], "name": ["a"]}))
    # other encodings of the planned values still read (dictionary, run-end encoded)
    names = pa.array(["a", "b", "a"]).dictionary_encode()
    ids = pa.RunEndEncodedArray.from_arrays(pa.array([3], pa.int32()), pa.array([5], pa.int64()))
    out = p.apply(pa.record_batch([ids, names], names=["id", "name"]))
    assert out.to_pylist() == [{"id": 5, "name": n, "extra": None} for n in "aba"]


# -- 20: casts Arrow cannot do are refused at plan time; views and run-end encoding work ----------------
def _tagged(**columns: pa.Array) -> pa.Table:
    fields = [pa.field(n, a.type, metadata={b"PARQUET:field_id": str(i).encode()})
              for i, (n, a) in enumerate(columns.items(), 1)]
    return pa.table(list(columns.values()), schema=pa.schema(fields))


def test_casts_arrow_lacks_are_refused_at_plan_time() -> None:
    data = _tagged(h=pa.array([1.5], pa.float16()))
    read = Schema([Field(1, "h", pa.decimal128(10, 2))])
    with pytest.raises(fs.SchemaMismatchError, match="Arrow has no cast"):
        fs.plan(data.schema, read, policy=fs.CastPolicy.explicit())


def test_string_view_input_casts_splits_and_quarantines(tmp_path: Path) -> None:
    data = _tagged(d=pa.array(["2020-01-02", "nope", None], pa.string_view()),
                   b=pa.array([b"x", b"y", b"z"], pa.binary_view()))
    read = Schema([Field(1, "d", pa.date32()), Field(2, "b", pa.binary())])
    p = fs.plan(data.schema, read, policy=fs.CastPolicy.explicit())
    good, bad = p.apply_split(data)
    assert good.to_pylist() == [{"d": dt.date(2020, 1, 2), "b": b"x"}, {"d": None, "b": b"z"}]
    assert bad.column("d").to_pylist() == ["nope"] and bad.column("d").type == pa.string_view()
    with pytest.raises(fs.CastValueError, match="'nope'"):
        p.apply(data)
    t = fs.Table.create(tmp_path / "t", Schema([Field(1, "id", pa.int64()), Field(2, "d", pa.date32())]))
    rows = pa.table({"id": [1, 2], "d": pa.array(["2020-01-02", "nope"], pa.string_view())})
    t.append(rows, on_incompatible="quarantine", policy=fs.CastPolicy.explicit())
    assert t.to_arrow().column("id").to_pylist() == [1]
    assert t.quarantine().num_rows == 1


def test_run_end_encoded_input_reads() -> None:
    ree = pa.RunEndEncodedArray.from_arrays(pa.array([2, 3], pa.int32()), pa.array([5, 70000], pa.int32()))
    data = _tagged(n=ree)
    read = Schema([Field(1, "n", pa.int64())])
    assert fs.evolve(data, read).column("n").to_pylist() == [5, 5, 70000]
    narrow = Schema([Field(1, "n", pa.int16())])
    good, bad = fs.plan(data.schema, narrow, policy=fs.CastPolicy.explicit()).apply_split(data)
    assert good.column("n").to_pylist() == [5, 5] and bad.num_rows == 1


@pytest.mark.parametrize("target", [pa.int64(), pa.date32(), pa.float64(), pa.decimal128(10, 2)])
def test_casts_of_empty_and_sliced_list_children_do_not_crash(target: pa.DataType) -> None:
    fsch = Schema([Field(1, "l", ListType(Field(2, "element", pa.string())))])
    rsch = Schema([Field(1, "l", ListType(Field(2, "element", target)))])
    p = fs.plan(fsch, rsch, policy=fs.CastPolicy.explicit("null"))
    arr = pa.array([[], None, ["1", None], []] * 3, pa.list_(pa.field("element", pa.string())))
    for part in (arr.slice(0, 0), arr.slice(1), arr.slice(4, 2), arr.slice(len(arr))):
        out = p.apply(pa.record_batch([part], schema=fsch.to_arrow()))
        assert out.num_rows == len(part)


# -- 4 + 5: plan and constant caches keyed by value --------------------------------------------------
def test_plan_cache_keys_name_mappings_by_content() -> None:
    read = Schema([Field(1, "a", pa.int64()), Field(2, "b", pa.int64())])
    data = pa.table({"x": [1], "y": [2]})
    for i in range(20):  # new mappings at (often) recycled addresses
        first = i % 2 == 0
        mapping = fs.NameMapping.from_json([{"field-id": 1, "names": ["x" if first else "y"]},
                                            {"field-id": 2, "names": ["y" if first else "x"]}])
        out = fs.evolve(data, read, name_mapping=mapping)
        assert out.to_pylist() == [{"a": 1, "b": 2} if first else {"a": 2, "b": 1}]
        del mapping


@pytest.mark.parametrize("value", [0.0, -0.0, float("nan"), float("inf")])
def test_float_defaults_and_constants_keep_their_bits(value: float) -> None:
    import math

    v0 = Schema([Field(1, "id", pa.int64())])
    other = -value if value == 0 else 1.0
    for first, second in ((other, value), (value, other)):
        for default in (first, second):
            v1 = v0.update().add_column("f", pa.float64(), default=default).apply()
            got = fs.evolve(pa.table({"id": [1]}, schema=v0.to_arrow()), v1).column("f")[0].as_py()
            assert math.copysign(1, got) == math.copysign(1, default) and (got == default or math.isnan(default))
        for constant in (first, second):
            v1 = v0.update().add_column("f", pa.float64()).apply()
            got = fs.plan(v0, v1, constants={"f": constant}).apply(
                pa.table({"id": [1]}, schema=v0.to_arrow())).column("f")[0].as_py()
            assert math.copysign(1, got) == math.copysign(1, constant)
            assert got == constant or math.isnan(constant)


# -- 11: names with any character work everywhere; empty and duplicate names are refused --------------
ODD_NAMES = ["`x`", "a.b", "a``b", "sp ace", "ü.`.", "."]


def test_split_and_join_path_round_trip_every_name() -> None:
    from fieldshift.schema.model import join_path, split_path

    for name in ODD_NAMES:
        for parts in ((name,), ("top", name), (name, name + "2", "z")):
            assert split_path(join_path(parts)) == parts
            assert split_path(list(parts)) == parts
    for bad in ("", "a..b", "a.", "`a", "a`b", ["a", ""], []):
        with pytest.raises(fs.InvalidNameError):
            split_path(bad)


@pytest.mark.parametrize("name", ODD_NAMES)
def test_odd_names_work_in_schema_builders(name: str) -> None:
    from fieldshift.schema.model import join_path

    v0 = Schema([Field(1, "id", pa.int64()), Field(2, "s", StructType((Field(3, "x", pa.int32()),)))])
    v1 = v0.update().add_column([name], pa.int32()).add_column(["s", name], pa.string()).apply()
    assert v1.find([name]).id == 4 and v1.find(join_path([name])).id == 4
    assert v1.find(["s", name]).id == 5 and v1.find(join_path(["s", name])).id == 5
    assert v1.select([name]).names == [name]
    v2 = v1.update().rename_column(["s", name], name + "!").update_column([name], pa.int64()).apply()
    assert v2.find(["s", name + "!"]).id == 5 and v2.find([name]).type == pa.int64()
    assert v2.update().drop_column([name]).drop_column(join_path(["s", name + "!"])).apply().names == ["id", "s"]


def test_empty_and_duplicate_names_are_refused() -> None:
    with pytest.raises(fs.InvalidNameError):
        Field(1, "", pa.int32())
    with pytest.raises(fs.DuplicateFieldError):
        Schema([Field(1, "a", pa.int32()), Field(2, "a", pa.int32())])
    with pytest.raises(fs.DuplicateFieldError):
        Schema.from_arrow(pa.schema([("a", pa.int32()), ("a", pa.int64())]), assign_ids=True)
    v0 = Schema([Field(1, "a", pa.int32())])
    with pytest.raises(fs.InvalidNameError):
        v0.update().rename_column("a", "")


@pytest.mark.parametrize("name", ["`x`", "a.b", "k``"])
def test_on_write_adds_a_column_under_exactly_its_name(tmp_path: Path, name: str) -> None:
    t = fs.Table.create(tmp_path / "t", Schema([Field(1, "id", pa.int64()),
                                                Field(2, "s", StructType((Field(3, "x", pa.int32()),)))]))
    rows = pa.table({"id": [1], name: [7], "s": pa.array([{"x": 1, name: "v"}])})
    t.append(rows)
    assert name in t.schema.names and t.schema.find(["s", name]).type == pa.string()
    out = t.to_arrow()
    assert out.column(name).to_pylist() == [7] and out.column("s").to_pylist() == [{"x": 1, name: "v"}]


# -- 17: dropping the parent struct of an identifier field is refused -----------------------------------
def test_dropping_a_struct_that_holds_an_identifier_field_is_refused() -> None:
    inner = StructType((Field(4, "k", pa.int64(), nullable=False),))
    v0 = Schema([Field(1, "id", pa.int64(), nullable=False),
                 Field(2, "outer", StructType((Field(3, "inner", inner, nullable=False),)), nullable=False)],
                identifier_field_ids=[4])
    for path in ("outer", "outer.inner", ["outer", "inner"], "outer.inner.k"):
        with pytest.raises(fs.IdentifierFieldChangeError, match=r"outer\.inner\.k"):
            v0.update().drop_column(path)
    assert v0.update().set_identifier_fields("id").drop_column("outer").apply().names == ["id"]


# -- 22: defaults are typed by the field, never re-inferred ---------------------------------------------
def test_uint64_default_above_int64_range_survives_update_column() -> None:
    v0 = Schema([Field(1, "u", pa.uint64(), initial_default=2**64 - 1, write_default=2**63)])
    v1 = v0.update().update_column("u", doc="unsigned").apply()
    assert v1.find("u").initial_default == 2**64 - 1
    v2 = v0.update(policy=fs.CastPolicy.hudi()).update_column("u", pa.float64()).apply()
    assert v2.find("u").write_default == float(2**63)
    small = Schema([Field(1, "i", pa.int32(), initial_default=70000)])
    with pytest.raises(fs.InvalidDefaultError, match="70000"):
        small.update(policy=fs.CastPolicy.explicit()).update_column("i", pa.int16())
    with pytest.raises(fs.InvalidDefaultError):
        Field(1, "u", pa.uint8(), initial_default=256)


# -- 25: no-op changes record nothing -------------------------------------------------------------------
def test_no_op_updates_return_the_base_schema() -> None:
    v0 = Schema([Field(1, "id", pa.int64(), nullable=False), Field(2, "a", pa.int32(), doc="d")],
                schema_id=3, identifier_field_ids=[1])
    for build in (
        lambda u: u,
        lambda u: u.update_column("id", nullable=False),
        lambda u: u.update_column("a", pa.int32()),
        lambda u: u.update_column("a", doc="d"),
        lambda u: u.rename_column("a", "a"),
        lambda u: u.move_first("id"),
        lambda u: u.move_after("a", "id"),
        lambda u: u.set_identifier_fields("id"),
        lambda u: u.set_write_default("a", None),
        lambda u: u.rename_column("a", "b").rename_column("b", "a"),
    ):
        update = build(v0.update())
        assert update.apply() is v0
    update = v0.update().update_column("id", nullable=False).update_column("a", pa.int32())
    assert update.changes == []
    assert v0.update().update_column("a", pa.int64()).apply().schema_id == 4


# -- 19: failure reports render values outside Python's datetime range --------------------------------
def _far_timestamps() -> tuple[Schema, pa.Table]:
    file = Schema([Field(1, "id", pa.int64()), Field(2, "t", pa.timestamp("s"))])
    data = pa.table({"id": [1, 2], "t": pa.array([10**12, 0], pa.timestamp("s"))}, schema=file.to_arrow())
    return file, data


def test_cast_failure_on_a_far_timestamp_is_reported_not_overflowed() -> None:
    file, data = _far_timestamps()
    read = Schema([Field(1, "id", pa.int64()), Field(2, "t", pa.timestamp("ns"))])
    p = fs.plan(file, read, policy=fs.CastPolicy.explicit())
    with pytest.raises(fs.CastValueError, match="1000000000000 s") as e:
        p.apply(data)
    assert e.value.row == 0
    good, bad = p.apply_split(data)
    assert good.column("id").to_pylist() == [2]
    assert "1000000000000 s" in bad.column("_fieldshift_reason")[0].as_py()


def test_on_write_quarantines_far_timestamps(tmp_path: Path) -> None:
    _, data = _far_timestamps()
    t = fs.Table.create(tmp_path / "t", Schema([Field(1, "id", pa.int64()), Field(2, "t", pa.timestamp("ns"))]))
    with pytest.raises(fs.SchemaEvolutionError, match="1000000000000 s"):
        t.append(data, policy=fs.CastPolicy.explicit())
    t.append(data, on_incompatible="quarantine", policy=fs.CastPolicy.explicit())
    assert t.to_arrow().column("id").to_pylist() == [2]
    assert t.quarantine().num_rows == 1


# -- 7: field ids are 0 or more and unique wherever a schema is built (0: Paimon numbers from it) --------
@pytest.mark.parametrize("bad_id", [-1, -7])
def test_negative_field_ids_are_refused_everywhere(bad_id: int) -> None:
    with pytest.raises(fs.InvalidFieldIdError, match=str(bad_id)):
        Schema([Field(bad_id, "a", pa.int32())])
    with pytest.raises(fs.InvalidFieldIdError):
        Schema([Field(1, "s", StructType((Field(bad_id, "x", pa.int32()),)))])
    tagged = pa.schema([pa.field("a", pa.int32(), metadata={b"PARQUET:field_id": str(bad_id).encode()})])
    with pytest.raises(fs.InvalidFieldIdError, match="'a'"):
        Schema.from_arrow(tagged)
    with pytest.raises(fs.InvalidFieldIdError):
        fs.plan(tagged, Schema([Field(1, "a", pa.int32())]))
    with pytest.raises(fs.InvalidFieldIdError):
        Schema.from_json({"type": "struct", "schema-id": 0,
                          "fields": [{"id": bad_id, "name": "a", "required": False, "type": "int"}]})
    with pytest.raises(fs.SchemaEvolutionError, match="negative ids are not valid"):
        fs.NameMapping.from_json([{"field-id": bad_id, "names": ["a"]}])


def test_duplicate_ids_are_refused_in_name_mappings_and_schemas() -> None:
    with pytest.raises(fs.SchemaEvolutionError, match="mapped twice"):
        fs.NameMapping.from_json([{"field-id": 1, "names": ["a"]},
                                  {"field-id": 2, "names": ["s"], "fields": [{"field-id": 1, "names": ["x"]}]}])
    with pytest.raises(fs.DuplicateFieldError):
        Schema([Field(1, "a", pa.int32()), Field(1, "b", pa.int32())])


def test_unmapped_file_columns_never_collide_with_read_fields() -> None:
    read = Schema([Field(1, "a", pa.int64())])
    data = pa.table({"a": [1], "stray": ["x"]})
    mapping = fs.NameMapping.from_json([{"field-id": 1, "names": ["a"]}])
    assert fs.evolve(data, read, name_mapping=mapping).to_pylist() == [{"a": 1}]


# -- 13: a nesting-depth limit both Parquet's writer and reader honour ------------------------------------
def _nested_arrow(depth: int, kind: str = "struct") -> tuple[pa.DataType, object]:
    t: pa.DataType = pa.int32()
    v: object = 1
    for _ in range(depth):
        if kind == "struct":
            t, v = pa.struct([pa.field("c", t)]), {"c": v}
        else:
            t, v = pa.list_(t), [v]
    return t, v


@pytest.mark.parametrize(("kind", "deepest_ok"), [("struct", 98), ("list", 49)])
def test_nesting_limit_is_parquets_own(tmp_path: Path, kind: str, deepest_ok: int) -> None:
    ok_type, ok_value = _nested_arrow(deepest_ok, kind)
    schema = Schema.from_arrow(pa.schema([("x", ok_type)]), assign_ids=True)
    t = fs.Table.create(tmp_path / "t", schema)
    t.append(pa.table({"x": pa.array([ok_value], ok_type)}))
    assert t.to_arrow().num_rows == 1  # what is accepted reads back
    deep_type, deep_value = _nested_arrow(deepest_ok + 1, kind)
    pq.write_table(pa.table({"x": pa.array([deep_value], deep_type)}), tmp_path / "deep.parquet")
    with pytest.raises(OSError, match="too deeply nested"):  # the limit is the reader's
        pq.read_table(tmp_path / "deep.parquet")
    with pytest.raises(fs.NestingDepthError):
        Schema.from_arrow(pa.schema([("x", deep_type)]), assign_ids=True)
    with pytest.raises(fs.NestingDepthError):
        t.append(pa.table({"y": pa.array([deep_value], deep_type)}))
    assert t.to_arrow().num_rows == 1 and t.schema.names == ["x"]


def test_depth_200_is_a_named_error_everywhere_never_a_recursion_error() -> None:
    deep, _ = _nested_arrow(200)
    arrow = pa.schema([("x", deep)])
    with pytest.raises(fs.NestingDepthError):
        Schema.from_arrow(arrow, assign_ids=True)
    with pytest.raises(fs.NestingDepthError):
        fs.plan(arrow, Schema([Field(1, "y", pa.int32())]), match="name")
    with pytest.raises(fs.NestingDepthError):
        Schema([Field(1, "y", pa.int32())]).update().add_column("z", "struct<c: " * 200 + "int" + ">" * 200)
    with pytest.raises(fs.NestingDepthError):
        Schema([Field(1, "y", pa.int32())]).update().add_column("z", deep)
    doc: dict = {"type": "int"}
    for i in range(200):
        doc = {"type": "struct", "fields": [{"id": i + 2, "name": "c", "required": False, "type": doc}]}
    with pytest.raises(fs.NestingDepthError):
        Schema.from_json({"type": "struct", "schema-id": 0,
                          "fields": [{"id": 1, "name": "x", "required": False, "type": doc}]})
    field = Field(300, "leaf", pa.int32())
    for i in range(120):
        field = Field(299 - i, "c", StructType((field,)))
    with pytest.raises(fs.NestingDepthError):
        Schema([field])


# -- 14: types validated in the type model ---------------------------------------------------------------
@pytest.mark.parametrize("text", ["decimal(5,9)", "fixed[0]", "struct<a: decimal(5, 9)>", "list<fixed[0]>"])
def test_invalid_types_are_refused_up_front_from_ddl(text: str) -> None:
    from fieldshift.schema.type_text import parse_type

    with pytest.raises(fs.InvalidTypeError):
        parse_type(text)
    with pytest.raises(fs.InvalidTypeError):
        Schema([Field(1, "id", pa.int32())]).update().add_column("x", text)


@pytest.mark.parametrize("arrow_type", [pa.decimal128(5, 9), pa.decimal128(10, -2), pa.binary(0)])
def test_invalid_types_are_refused_from_arrow_and_json(arrow_type: pa.DataType) -> None:
    with pytest.raises(fs.InvalidTypeError):
        Schema.from_arrow(pa.schema([("x", arrow_type)]), assign_ids=True)
    with pytest.raises(fs.InvalidTypeError):
        Field(1, "x", arrow_type)
    if pa.types.is_decimal(arrow_type):
        with pytest.raises(fs.InvalidTypeError):
            Schema.from_json({"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "x", "required": False,
                 "type": f"decimal({arrow_type.precision}, {arrow_type.scale})"}]})


# -- 26: hints that cannot mislead; the README's tour runs as written ------------------------------------
def test_missing_field_id_hint_names_the_schema_the_data_was_written_with() -> None:
    v1 = Schema([Field(1, "id", pa.int64()), Field(2, "name", pa.string())])
    v2 = v1.update().rename_column("name", "full_name").apply()
    data = pa.table({"id": [1], "name": ["ada"]})
    with pytest.raises(fs.MissingFieldIdError, match="WRITTEN with") as e:
        fs.evolve(data, v2)
    assert "file_schema=" in str(e.value) and "match='name'" not in str(e.value)
    assert fs.evolve(data, v2, file_schema=v1).to_pylist() == [{"id": 1, "full_name": "ada"}]
