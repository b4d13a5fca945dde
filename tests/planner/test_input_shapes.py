"""The engine on every input shape Arrow hands it: slices, chunks, dictionaries, large/view layouts,
`item` list children, empty and all-null data, fixed-size lists, lazy readers, C-stream objects and
real Parquet files. Expected values come from the oracle (``tests/oracle.py``) or from evolving the
unsliced data, never from the engine itself.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift import Field, ListType, Schema, StructType
from tests.engine_strategies import fixed_history, random_table
from tests.oracle import oracle_evolve

ID = b"PARQUET:field_id"
HISTORY = fixed_history()
FINAL = HISTORY.final


def meta(i: int) -> dict[bytes, bytes]:
    return {ID: str(i).encode()}


def check(out: pa.Table | pa.RecordBatch, expected_rows: list[dict[str, Any]], read: Schema = FINAL) -> None:
    out.validate(full=True)
    assert out.schema.equals(read.to_arrow(), check_metadata=True)
    assert out.to_pylist() == expected_rows


@pytest.fixture(scope="module")
def tables() -> list[pa.Table]:
    rnd = random.Random(20240601)
    return [random_table(rnd, v, 40, null_rate=0.3) for v in HISTORY.schemas]


# -- slices -----------------------------------------------------------------------------------------
SLICES = [(0, 0), (0, 1), (1, 3), (3, 9), (7, 1), (8, 8), (9, 31), (13, 20), (39, 1), (40, 0)]


@pytest.mark.parametrize("version", range(len(HISTORY.schemas)))
def test_slices_of_a_batch_evolve_like_the_unsliced_batch(tables: list[pa.Table], version: int) -> None:
    old = HISTORY.schemas[version]
    batch = tables[version].combine_chunks().to_batches()[0]
    plan = fs.plan(old, FINAL)
    whole = plan.apply(batch)
    expected = oracle_evolve(batch.to_pylist(), old, FINAL)
    check(whole, expected)
    for offset, length in SLICES:
        out = plan.apply(batch.slice(offset, length))
        check(out, expected[offset : offset + length])
        assert out.to_pylist() == whole.slice(offset, length).to_pylist()
        twice = batch.slice(offset // 2).slice(offset - offset // 2, length)  # a slice of a slice
        assert plan.apply(twice).to_pylist() == expected[offset : offset + length]


def test_slices_of_struct_list_and_map_columns_alone(tables: list[pa.Table]) -> None:
    """Each nested column sliced on its own (offsets not at 0, bit offsets not byte aligned)."""
    old = HISTORY.schemas[0]
    for name in ("st", "l", "m", "fl"):
        read = Schema([FINAL.find(name)])
        sub = Schema([old.find(name)])
        column = tables[0].column(name).combine_chunks()
        plan = fs.plan(sub, read)
        for offset, length in SLICES:
            batch = pa.RecordBatch.from_arrays([column.slice(offset, length)], schema=sub.to_arrow())
            rows = pa.Table.from_batches([batch]).to_pylist()
            check(plan.apply(batch), oracle_evolve(rows, sub, read), read)


def test_children_with_their_own_offsets() -> None:
    """Lists whose offsets start past 0 into a shared child, structs over sliced children."""
    file = Schema(
        [
            Field(1, "l", ListType(Field(2, "element", StructType((Field(3, "p", pa.int32()),))))),
            Field(4, "s", StructType((Field(5, "a", pa.int32()), Field(6, "b", pa.string())))),
        ]
    )
    read = (
        file.update()
        .update_column("l.element.p", pa.int64())
        .add_column("l.element.n", pa.int32(), default=1)
        .update_column("s.a", pa.int64())
        .add_column("s.c", pa.string(), default="c")
        .apply()
    )
    arrow = file.to_arrow()
    values = pa.array([{"p": i} for i in range(20)], arrow.field("l").type.value_type)
    lists = pa.ListArray.from_arrays(
        pa.array([5, 7, 7, 12], pa.int32()),
        values.slice(2),
        type=arrow.field("l").type,
        mask=pa.array([False, True, False]),
    )
    kids = [pa.array(range(10), pa.int32()).slice(4, 3), pa.array(list("abcdefghij")).slice(1, 3)]
    struct = pa.StructArray.from_arrays(
        kids, fields=list(arrow.field("s").type), mask=pa.array([False, False, True])
    )
    batch = pa.RecordBatch.from_arrays([lists, struct], schema=arrow)
    expected = oracle_evolve(batch.to_pylist(), file, read)
    assert expected[0]["l"] == [{"p": 7, "n": 1}, {"p": 8, "n": 1}]
    check(fs.plan(file, read).apply(batch), expected, read)
    check(fs.plan(file, read).apply(batch.slice(1)), expected[1:], read)


# -- chunks -----------------------------------------------------------------------------------------
def test_chunked_table_with_different_boundaries_per_column(tables: list[pa.Table]) -> None:
    old = HISTORY.schemas[1]
    table = tables[1]
    bounds = [[0, 40], [0, 3, 40], [0, 1, 2, 20, 40], [0, 39, 40], [0, 17, 17, 40], [0, 8, 16, 24, 32, 40]]
    columns = []
    for i, name in enumerate(table.column_names):
        col = table.column(name).combine_chunks()
        b = bounds[i % len(bounds)]
        columns.append(
            pa.chunked_array([col.slice(lo, hi - lo) for lo, hi in itertools.pairwise(b)], type=col.type)
        )
    chunked = pa.Table.from_arrays(columns, schema=table.schema)
    assert len({c.num_chunks for c in chunked.columns}) > 1
    expected = oracle_evolve(table.to_pylist(), old, FINAL)
    check(fs.plan(old, FINAL).apply(chunked), expected)
    check(fs.evolve(chunked, FINAL), expected)


def test_empty_table_without_chunks_and_with_empty_chunks(tables: list[pa.Table]) -> None:
    old = HISTORY.schemas[2]
    plan = fs.plan(old, FINAL)
    no_chunks = pa.Table.from_batches([], schema=old.to_arrow())
    check(plan.apply(no_chunks), [])
    with_empty = pa.concat_tables([tables[2].slice(0, 0), tables[2].slice(0, 5), tables[2].slice(5, 0)])
    check(plan.apply(with_empty), oracle_evolve(tables[2].slice(0, 5).to_pylist(), old, FINAL))


@pytest.mark.parametrize("version", range(len(HISTORY.schemas)))
def test_zero_row_batches(tables: list[pa.Table], version: int) -> None:
    old = HISTORY.schemas[version]
    batch = tables[version].combine_chunks().to_batches()[0].slice(0, 0)
    out = fs.plan(old, FINAL).apply(batch)
    check(out, [])
    assert isinstance(out, pa.RecordBatch)
    empty = pa.RecordBatch.from_pylist([], schema=old.to_arrow())
    check(fs.plan(old, FINAL).apply(empty), [])


def test_all_null_columns() -> None:
    old = HISTORY.schemas[0]
    rows = [{f.name: (0 if f.name == "id" else None) for f in old.fields} for _ in range(11)]
    table = pa.Table.from_pylist(rows, schema=old.to_arrow())
    out = fs.plan(old, FINAL).apply(table)
    check(out, oracle_evolve(table.to_pylist(), old, FINAL))
    assert out.column("st").null_count == 11 and out.column("l").null_count == 11
    assert out.column("ns").null_count == 0  # missing from the file: built from the children's defaults


def test_null_typed_column_reads_as_any_type() -> None:
    file = Schema([Field(1, "n", pa.null()), Field(2, "k", pa.int32())])
    read = Schema([Field(1, "n", pa.int64()), Field(2, "k", pa.int32())])
    batch = pa.RecordBatch.from_arrays(
        [pa.nulls(4), pa.array([1, 2, 3, 4], pa.int32())], schema=file.to_arrow()
    )
    check(fs.plan(file, read).apply(batch), [{"n": None, "k": i} for i in range(1, 5)], read)


def test_fixed_size_list_of_structs_with_nested_add_and_widening() -> None:
    file = Schema(
        [
            Field(
                1,
                "fl",
                ListType(Field(2, "element", StructType((Field(3, "a", pa.int16()),))), "fixed_size_list", 2),
            )
        ]
    )
    read = (
        file.update()
        .update_column("fl.element.a", pa.int64())
        .add_column("fl.element.b", pa.string(), default="d")
        .apply()
    )
    rows = [{"fl": [{"a": i}, None]} if i % 3 else {"fl": None} for i in range(17)]
    batch = pa.RecordBatch.from_pylist(rows, schema=file.to_arrow())
    plan = fs.plan(file, read)
    expected = oracle_evolve(batch.to_pylist(), file, read)
    check(plan.apply(batch), expected, read)
    for offset, length in [(1, 5), (3, 14), (9, 0), (16, 1)]:
        check(plan.apply(batch.slice(offset, length)), expected[offset : offset + length], read)


# -- dictionaries and physical layouts ------------------------------------------------------------
FLAT = Schema(
    [
        Field(1, "s", pa.string()),
        Field(2, "b", pa.binary()),
        Field(3, "n", pa.int32()),
        Field(4, "l", ListType(Field(5, "element", pa.int32()))),
    ]
)
FLAT_ROWS = [
    {"s": "a", "b": b"x", "n": 1, "l": [1, 2]},
    {"s": None, "b": None, "n": None, "l": None},
    {"s": "é", "b": b"", "n": 3, "l": []},
]


def _flat_batch(**types: pa.DataType) -> pa.RecordBatch:
    batch = pa.RecordBatch.from_pylist(FLAT_ROWS, schema=FLAT.to_arrow())
    arrays = []
    fields = []
    for f, arr in zip(batch.schema, batch.columns, strict=True):
        t = types.get(f.name)
        if t is not None:
            arr = arr.dictionary_encode() if pa.types.is_dictionary(t) else arr.cast(t)
        arrays.append(arr)
        fields.append(pa.field(f.name, arr.type, f.nullable, f.metadata))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def test_dictionary_encoded_columns_pass_through_decoded() -> None:
    batch = _flat_batch(s=pa.dictionary(pa.int32(), pa.string()), n=pa.dictionary(pa.int32(), pa.int32()))
    check(fs.evolve(batch, FLAT), FLAT_ROWS, FLAT)
    renamed = FLAT.update().rename_column("s", "text").apply()
    check(
        fs.evolve(batch, renamed),
        [{"text" if k == "s" else k: v for k, v in r.items()} for r in FLAT_ROWS],
        renamed,
    )


def test_dictionary_encoded_columns_cast() -> None:
    batch = _flat_batch(s=pa.dictionary(pa.int8(), pa.string()), n=pa.dictionary(pa.int32(), pa.int32()))
    read = FLAT.update().update_column("s", pa.binary()).update_column("n", pa.int64()).apply()
    expected = oracle_evolve(FLAT_ROWS, FLAT, read)
    assert expected[0]["s"] == b"a"
    check(fs.evolve(batch, read), expected, read)


@pytest.mark.parametrize(
    "layout",
    [
        {"s": pa.large_string(), "b": pa.large_binary()},
        {"s": pa.string_view(), "b": pa.binary_view()},
        {"l": pa.large_list(pa.field("element", pa.int32(), metadata=meta(5)))},
    ],
    ids=["large", "view", "large_list"],
)
def test_other_layouts_read_into_the_canonical_read_types(layout: dict[str, pa.DataType]) -> None:
    batch = _flat_batch(**layout)
    check(fs.evolve(batch, FLAT), FLAT_ROWS, FLAT)
    read = (
        FLAT.update()
        .rename_column("s", "text")
        .update_column("b", pa.string())
        .update_column("l.element", pa.int64())
        .apply()
    )
    check(fs.evolve(batch, read), oracle_evolve(FLAT_ROWS, FLAT, read), read)


NESTED = Schema(
    [
        Field(1, "st", StructType((Field(2, "x", pa.string()), Field(3, "y", pa.int32())))),
        Field(4, "ls", ListType(Field(5, "element", StructType((Field(6, "x", pa.string()),))))),
    ]
)
NESTED_ROWS = [
    {"st": {"x": "p", "y": 1}, "ls": [{"x": "q"}, None]},
    {"st": None, "ls": None},
    {"st": {"x": None, "y": 3}, "ls": []},
]
NESTED_RENAMED = NESTED.update().rename_column("st.x", "xx").rename_column("ls.element.x", "xx").apply()
NESTED_ADDED = (
    NESTED.update().add_column("st.z", pa.int32(), default=9).add_column("ls.element.z", pa.string()).apply()
)


def _nested_batch(string_type: pa.DataType, list_ctor: Any = pa.list_) -> pa.RecordBatch:
    def convert(t: pa.DataType) -> pa.DataType:
        if pa.types.is_struct(t):
            return pa.struct([f.with_type(convert(f.type)) for f in t])
        if pa.types.is_list(t):
            return list_ctor(t.value_field.with_type(convert(t.value_type)))
        return string_type if t == pa.string() else t

    arrow = NESTED.to_arrow()
    schema = pa.schema([f.with_type(convert(f.type)) for f in arrow])
    batch = pa.RecordBatch.from_pylist(NESTED_ROWS, schema=arrow)
    if pa.types.is_dictionary(string_type):
        x = batch.column(0).field(0).dictionary_encode()
        st = pa.StructArray.from_arrays(
            [x, batch.column(0).field(1)], fields=list(schema.field(0).type), mask=batch.column(0).is_null()
        )
        return pa.RecordBatch.from_arrays(
            [st, batch.column(1)], schema=pa.schema([schema.field(0).with_type(st.type), arrow.field(1)])
        )
    return batch.cast(schema)


LAYOUTS = [
    pytest.param(pa.large_string(), pa.list_, id="large_string"),
    pytest.param(pa.string_view(), pa.list_, id="string_view"),
    pytest.param(pa.string(), pa.large_list, id="large_list"),
    pytest.param(pa.dictionary(pa.int32(), pa.string()), pa.list_, id="dictionary"),
]


@pytest.mark.parametrize(("string_type", "list_ctor"), LAYOUTS)
def test_nested_other_layouts_pass_through_and_gain_children(
    string_type: pa.DataType, list_ctor: Any
) -> None:
    batch = _nested_batch(string_type, list_ctor)
    check(fs.evolve(batch, NESTED), NESTED_ROWS, NESTED)
    check(fs.evolve(batch, NESTED_ADDED), oracle_evolve(NESTED_ROWS, NESTED, NESTED_ADDED), NESTED_ADDED)


@pytest.mark.parametrize(("string_type", "list_ctor"), LAYOUTS)
def test_nested_other_layouts_with_a_renamed_child(string_type: pa.DataType, list_ctor: Any) -> None:
    batch = _nested_batch(string_type, list_ctor)
    check(
        fs.evolve(batch, NESTED_RENAMED), oracle_evolve(NESTED_ROWS, NESTED, NESTED_RENAMED), NESTED_RENAMED
    )


def test_list_view_input() -> None:
    lv = pa.ListViewArray.from_arrays(
        pa.array([0, 1, 1], pa.int32()), pa.array([1, 0, 2], pa.int32()), pa.array([1, 2, 3], pa.int32())
    )
    lv = lv.view(pa.list_view(pa.field("element", pa.int32(), metadata=meta(5))))
    file = Schema([Field(4, "l", ListType(Field(5, "element", pa.int32())))])
    batch = pa.RecordBatch.from_arrays([lv], schema=pa.schema([pa.field("l", lv.type, metadata=meta(4))]))
    assert batch.to_pylist() == [{"l": [1]}, {"l": []}, {"l": [2, 3]}]
    check(fs.evolve(batch, file), batch.to_pylist(), file)


ITEM_FILE = Schema(
    [
        Field(1, "ls", ListType(Field(2, "element", StructType((Field(3, "p", pa.int32()),))))),
        Field(4, "n", pa.int32()),
    ]
)
ITEM_TYPE = pa.list_(
    pa.field("item", pa.struct([pa.field("p", pa.int32(), metadata=meta(3))]), metadata=meta(2))
)
ITEM_BATCH = pa.RecordBatch.from_arrays(
    [pa.array([[{"p": 1}], None, []], ITEM_TYPE), pa.array([1, 2, 3], pa.int32())],
    schema=pa.schema(
        [pa.field("ls", ITEM_TYPE, metadata=meta(1)), pa.field("n", pa.int32(), metadata=meta(4))]
    ),
)


@pytest.mark.parametrize(
    "read",
    [
        ITEM_FILE.update().add_column("ls.element.q", pa.int32(), default=4).apply(),
        ITEM_FILE.update().update_column("ls.element.p", pa.int64()).apply(),
        ITEM_FILE.update().rename_column("n", "m").apply(),
        ITEM_FILE.update().rename_column("ls.element.p", "pp").apply(),
    ],
    ids=["nested add", "nested widen", "rename only", "nested rename"],
)
def test_iceberg_rust_2251_item_lists_read_with_element_names(read: Schema) -> None:
    """iceberg-rust PR #2251: Parquet's `item` must come out as the read schema's `element`."""
    out = fs.evolve(ITEM_BATCH, read)
    assert out.schema.field("ls").type.value_field.name == "element"
    check(out, oracle_evolve(ITEM_BATCH.to_pylist(), ITEM_FILE, read), read)


@pytest.mark.parametrize("shape", ["batch", "table"])
def test_iceberg_rust_2251_identity_read_relabels_item_lists(shape: str) -> None:
    data = ITEM_BATCH if shape == "batch" else pa.Table.from_batches([ITEM_BATCH])
    out = fs.evolve(data, ITEM_FILE)
    check(out, ITEM_BATCH.to_pylist(), ITEM_FILE)


@pytest.mark.parametrize(
    "read", [ITEM_FILE, ITEM_FILE.update().rename_column("n", "m").apply()], ids=["identity", "rename only"]
)
def test_output_columns_carry_the_read_schemas_child_names(read: Schema) -> None:
    """Code that reads a column's own type (not the batch schema) must see `element` too."""
    out = fs.evolve(ITEM_BATCH, read)
    for column, field in zip(out.columns, out.schema, strict=True):
        assert str(column.type) == str(field.type), field.name


# -- streams ----------------------------------------------------------------------------------------
def test_record_batch_reader_stays_lazy(tables: list[pa.Table]) -> None:
    old = HISTORY.schemas[3]
    batches = tables[3].combine_chunks().to_batches(max_chunksize=7)
    pulled: list[int] = []

    def produce() -> Iterator[pa.RecordBatch]:
        for i, b in enumerate(batches):
            pulled.append(i)
            yield b

    reader = pa.RecordBatchReader.from_batches(old.to_arrow(), produce())
    out = fs.evolve(reader, FINAL)
    assert isinstance(out, pa.RecordBatchReader)
    assert out.schema.equals(FINAL.to_arrow(), check_metadata=True)
    assert pulled == []
    first = out.read_next_batch()
    assert pulled == [0]
    expected = oracle_evolve(tables[3].to_pylist(), old, FINAL)
    assert first.to_pylist() == expected[:7]
    rest = out.read_all()
    assert len(pulled) == len(batches)
    assert rest.to_pylist() == expected[7:]


class CStreamOnly:
    """An object that exposes nothing but the Arrow C stream protocol."""

    def __init__(self, table: pa.Table) -> None:
        self._table = table

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._table.__arrow_c_stream__(requested_schema)


def test_object_with_only_arrow_c_stream(tables: list[pa.Table]) -> None:
    old = HISTORY.schemas[1]
    out = fs.evolve(CStreamOnly(tables[1]), FINAL)
    assert isinstance(out, pa.RecordBatchReader)
    check(out.read_all(), oracle_evolve(tables[1].to_pylist(), old, FINAL))


def test_evolve_refuses_other_objects() -> None:
    with pytest.raises(TypeError, match="__arrow_c_stream__"):
        fs.evolve([{"a": 1}], FINAL)


def test_polars_dataframe() -> None:
    pl = pytest.importorskip("polars")
    file = Schema(
        [
            Field(1, "id", pa.int64()),
            Field(2, "name", pa.string()),
            Field(3, "l", ListType(Field(4, "element", StructType((Field(5, "p", pa.int64()),))))),
        ]
    )
    read = (
        file.update()
        .rename_column("name", "full_name")
        .add_column("l.element.q", pa.string(), default="q")
        .add_column("extra", pa.int32(), default=0)
        .apply()
    )
    df = pl.DataFrame({"id": [1, 2], "name": ["a", None], "l": [[{"p": 1}], None]})
    rows = [{"id": 1, "name": "a", "l": [{"p": 1}]}, {"id": 2, "name": None, "l": None}]
    out = fs.evolve(df, read, file_schema=file)  # polars drops field ids: the caller names the file schema
    check(out.read_all(), oracle_evolve(rows, file, read), read)
    with pytest.raises(fs.MissingFieldIdError, match="name_mapping"):
        fs.evolve(df, read)


def test_polars_dataframe_with_a_renamed_struct_child() -> None:
    pl = pytest.importorskip("polars")
    file = Schema([Field(1, "st", StructType((Field(2, "x", pa.string()), Field(3, "y", pa.int64()))))])
    read = file.update().rename_column("st.x", "xx").apply()
    df = pl.DataFrame({"st": [{"x": "p", "y": 1}]})
    check(fs.evolve(df, read, file_schema=file).read_all(), [{"st": {"xx": "p", "y": 1}}], read)


# -- Parquet ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def parquet_files(tables: list[pa.Table], tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("parquet")
    paths = []
    for i, table in enumerate(tables):
        path = root / f"v{i}.parquet"
        pq.write_table(table, path, row_group_size=9)
        paths.append(path)
    return paths


@pytest.mark.parametrize(
    "version",
    range(len(HISTORY.schemas)),
)
def test_parquet_files_keep_ids_and_read_like_the_oracle(
    tables: list[pa.Table], parquet_files: list[Path], version: int
) -> None:
    old = HISTORY.schemas[version]
    expected = oracle_evolve(tables[version].to_pylist(), old, FINAL)
    table = pq.read_table(parquet_files[version])
    assert Schema.from_arrow(table.schema).logically_equal(old)
    check(fs.evolve(table, FINAL), expected)

    pf = pq.ParquetFile(parquet_files[version])
    plan = fs.plan(pf.schema_arrow, FINAL)
    got: list[dict[str, Any]] = []
    for batch in pf.iter_batches(batch_size=4):
        out = plan.apply(batch)
        assert out.schema.equals(FINAL.to_arrow(), check_metadata=True)
        got.extend(out.to_pylist())
    assert got == expected
    lazy = fs.evolve(pa.RecordBatchReader.from_batches(pf.schema_arrow, pf.iter_batches(batch_size=6)), FINAL)
    assert lazy.read_all().to_pylist() == expected


def test_parquet_legacy_item_lists(tmp_path: Path) -> None:
    """A Parquet file written with non-compliant (`item`) list names reads into `element` lists."""
    old = HISTORY.schemas[0]
    table = random_table(random.Random(3), old, 12)
    path = tmp_path / "legacy.parquet"

    def item(t: pa.DataType) -> pa.DataType:
        if pa.types.is_struct(t):
            return pa.struct([f.with_type(item(f.type)) for f in t])
        if pa.types.is_list(t):
            return pa.list_(t.value_field.with_name("item").with_type(item(t.value_type)))
        if pa.types.is_fixed_size_list(t):
            return pa.list_(t.value_field.with_name("item").with_type(item(t.value_type)), t.list_size)
        if pa.types.is_map(t):
            return pa.map_(t.key_field, t.item_field.with_type(item(t.item_type)))
        return t

    legacy = table.cast(pa.schema([f.with_type(item(f.type)) for f in table.schema]))
    pq.write_table(legacy, path, use_compliant_nested_type=False, store_schema=False)
    back = pq.read_table(path)
    assert back.schema.field("tags").type.value_field.name == "item"
    check(fs.evolve(back, FINAL), oracle_evolve(table.to_pylist(), old, FINAL))


def test_parquet_read_dictionary_with_renamed_nested_children(
    tables: list[pa.Table], parquet_files: list[Path]
) -> None:
    old, read = HISTORY.schemas[3], HISTORY.schemas[4]  # renames st.x and l.element.q, nothing else there
    table = pq.read_table(parquet_files[3], read_dictionary=["st.x", "l.list.element.q"])
    assert pa.types.is_dictionary(table.schema.field("st").type.field("x").type)
    check(fs.evolve(table, read), oracle_evolve(tables[3].to_pylist(), old, read), read)


@pytest.mark.parametrize("version", range(len(HISTORY.schemas)))
def test_parquet_read_dictionary_nested_into_the_final_schema(
    tables: list[pa.Table], parquet_files: list[Path], version: int
) -> None:
    old = HISTORY.schemas[version]
    table = pq.read_table(parquet_files[version], read_dictionary=["st.x", "l.list.element.q"])
    check(fs.evolve(table, FINAL), oracle_evolve(tables[version].to_pylist(), old, FINAL))


def test_parquet_read_dictionary_top_level(tables: list[pa.Table], parquet_files: list[Path]) -> None:
    old = HISTORY.schemas[0]
    table = pq.read_table(parquet_files[0], read_dictionary=["name"])
    assert pa.types.is_dictionary(table.schema.field("name").type)
    check(fs.evolve(table, FINAL), oracle_evolve(tables[0].to_pylist(), old, FINAL))
