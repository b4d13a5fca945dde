"""Each semantic rule of the README's Semantics section, and one regression test per pitfall peers'
users hit (Iceberg, Delta, Hudi, Paimon, DuckLake, Spark issues), named after the peer issue it guards
against. Expected values are written out by hand or come from the oracle (``tests/oracle.py``).
"""

from __future__ import annotations

import datetime as dt
import pickle
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift import CastPolicy, Field, ListType, MapType, Schema, StructType
from tests.oracle import oracle_evolve

ID = b"PARQUET:field_id"


def table(schema: Schema, rows: list[dict[str, Any]]) -> pa.Table:
    """Rows written with ``schema`` (field ids in the Arrow metadata)."""
    return pa.Table.from_pylist(rows, schema=schema.to_arrow())


def read(old: Schema, new: Schema, rows: list[dict[str, Any]], **kw: Any) -> list[dict[str, Any]]:
    """Evolve rows written with ``old`` into ``new``; also checks the output schema is exactly ``new``'s."""
    out = fs.plan(old, new, **kw).apply(table(old, rows))
    assert out.schema.equals(new.to_arrow(), check_metadata=True)
    return out.to_pylist()


def schema(**columns: pa.DataType) -> Schema:
    return Schema.from_arrow(pa.schema(list(columns.items())), assign_ids=True)


# -- ids, adds, drops, renames --------------------------------------------------------------------
def test_new_ids_are_highest_plus_one_and_never_reused() -> None:
    v0 = schema(a=pa.int32(), b=pa.int32(), s=pa.struct([("x", pa.int32()), ("y", pa.int32())]))
    assert v0.highest_field_id == 5
    v1 = v0.update().drop_column("b").drop_column("s.y").apply()
    assert v1.highest_field_id == 5
    v2 = v1.update().add_column("b", pa.int32()).add_column("s.y", pa.int32()).apply()
    assert [v2.find("b").id, v2.find("s.y").id] == [6, 7]
    assert v2.highest_field_id == 7


def test_rename_keeps_values_at_every_depth() -> None:
    v0 = Schema.from_arrow(
        pa.schema(
            [
                pa.field("a", pa.int32()),
                pa.field("s", pa.struct([("x", pa.int32())])),
                pa.field("l", pa.list_(pa.struct([("p", pa.string())]))),
                pa.field("m", pa.map_(pa.string(), pa.struct([("q", pa.int32())]))),
            ]
        ),
        assign_ids=True,
    )
    v1 = (
        v0.update()
        .rename_column("a", "a2")
        .rename_column("s.x", "x2")
        .rename_column("l.element.p", "p2")
        .rename_column("m.value.q", "q2")
        .rename_column("m", "m2")
        .apply()
    )
    rows = [{"a": 1, "s": {"x": 2}, "l": [{"p": "3"}], "m": [("k", {"q": 4})]}]
    assert read(v0, v1, rows) == [{"a2": 1, "s": {"x2": 2}, "l": [{"p2": "3"}], "m2": [("k", {"q2": 4})]}]
    assert fs.plan(v0, v1).rename_only


def test_paimon_8126_drop_readd_reads_null() -> None:
    """Paimon's DDLWithHiveCatalogTestBase: (1, 1, {1,1,1}); drop b, add b, drop c.f2, add c.f2."""
    v0 = schema(
        a=pa.int32(), b=pa.int32(), c=pa.struct([("f1", pa.int32()), ("f2", pa.int32()), ("f3", pa.int32())])
    )
    v1 = (
        v0.update()
        .drop_column("b")
        .add_column("b", pa.int32())
        .drop_column("c.f2")
        .add_column("c.f2", pa.int32())
        .apply()
    )
    rows = [{"a": 1, "b": 1, "c": {"f1": 1, "f2": 1, "f3": 1}}]
    assert read(v0, v1, rows) == [{"a": 1, "c": {"f1": 1, "f3": 1, "f2": None}, "b": None}]
    # ... and the re-added column's own initial default when it has one
    v2 = v0.update().drop_column("b").add_column("b", pa.int32(), default=42).apply()
    assert read(v0, v2, rows)[0]["b"] == 42


def test_hudi_7040_drop_then_rename_into_dropped_name() -> None:
    v0 = schema(col1=pa.int32(), col2=pa.string(), col3=pa.string())
    v1 = v0.update().drop_column("col3").rename_column("col2", "col3").apply()
    rows = [{"col1": 1, "col2": "two", "col3": "stale"}]
    assert read(v0, v1, rows) == [{"col1": 1, "col3": "two"}]


def test_iceberg_rust_2617_nested_add_in_list_struct() -> None:
    """A struct, list-of-struct or map-of-struct that gains a child is evolved by id, not cast by position."""
    v0 = Schema.from_arrow(
        pa.schema(
            [
                pa.field("s", pa.struct([("a", pa.string())])),
                pa.field("l", pa.list_(pa.struct([("a", pa.string())]))),
                pa.field("m", pa.map_(pa.string(), pa.struct([("a", pa.string())]))),
            ]
        ),
        assign_ids=True,
    )
    v1 = (
        v0.update()
        .add_column("s.b", pa.int32(), first=True)
        .add_column("l.element.b", pa.int32(), first=True)
        .add_column("m.value.b", pa.int32(), default=7, first=True)
        .apply()
    )
    rows = [{"s": {"a": "x"}, "l": [{"a": "y"}, None], "m": [("k", {"a": "z"})]}]
    assert read(v0, v1, rows) == [
        {"s": {"b": None, "a": "x"}, "l": [{"b": None, "a": "y"}, None], "m": [("k", {"b": 7, "a": "z"})]}
    ]
    # the second half: drop + re-add of a nested name must not keep the old values
    v2 = v1.update().drop_column("l.element.a").add_column("l.element.a", pa.string()).apply()
    assert read(v0, v2, rows)[0]["l"] == [{"b": None, "a": None}, None]


def test_iceberg_14043_field_added_to_struct_in_map_value() -> None:
    v0 = Schema.from_arrow(
        pa.schema([pa.field("m", pa.map_(pa.int32(), pa.struct([("x", pa.int32())])))]), assign_ids=True
    )
    v1 = (
        v0.update()
        .add_column("m.value.y", pa.string(), default="d")
        .update_column("m.key", pa.int64())
        .apply()
    )
    rows = [{"m": [(1, {"x": 1}), (2, None)]}, {"m": None}, {"m": []}]
    assert read(v0, v1, rows) == [{"m": [(1, {"x": 1, "y": "d"}), (2, None)]}, {"m": None}, {"m": []}]


def test_delta_rs_3339_list_of_structs_and_structs_gain_fields() -> None:
    v0 = Schema.from_arrow(
        pa.schema(
            [
                pa.field("l", pa.list_(pa.struct([("a", pa.int32())]))),
                pa.field("s", pa.struct([("a", pa.int32())])),
            ]
        ),
        assign_ids=True,
    )
    v1 = v0.update().add_column("l.element.b", pa.string()).add_column("s.b", pa.string()).apply()
    rows = [{"l": [{"a": 1}], "s": {"a": 2}}]
    out = read(v0, v1, rows)
    assert out == [{"l": [{"a": 1, "b": None}], "s": {"a": 2, "b": None}}]
    # batches of the old and the new files concatenate: both come out in the read schema exactly
    new_file = fs.plan(v1, v1).apply(table(v1, out))
    old_file = fs.plan(v0, v1).apply(table(v0, rows))
    assert pa.concat_tables([old_file, new_file]).num_rows == 2


def test_delta_rs_4501_struct_and_child_share_a_name() -> None:
    v0 = schema(a=pa.struct([("a", pa.int32())]))
    v1 = v0.update().add_column("a.b", pa.int32(), default=1).rename_column("a.a", "c").apply()
    assert read(v0, v1, [{"a": {"a": 5}}]) == [{"a": {"c": 5, "b": 1}}]


def test_iceberg_961_added_optional_struct_with_required_child_reads_null() -> None:
    v0 = schema(id=pa.int32())
    v1 = v0.update().add_column("s", pa.struct([pa.field("r", pa.int32(), nullable=False)])).apply()
    assert read(v0, v1, [{"id": 1}]) == [{"id": 1, "s": None}]


def test_spark_53535_struct_keeps_nullness_when_all_children_missing() -> None:
    v0 = schema(s=pa.struct([("a", pa.int32())]))
    v1 = (
        v0.update()
        .add_column("s.b", pa.int32())
        .add_column("s.c", pa.string(), default="c")
        .drop_column("s.a")
        .apply()
    )
    rows = [{"s": {"a": 1}}, {"s": None}, {"s": {"a": None}}]
    assert read(v0, v1, rows) == [{"s": {"b": None, "c": "c"}}, {"s": None}, {"s": {"b": None, "c": "c"}}]


def test_iceberg_rust_1750_missing_column_null_filled_and_required_int_reads_as_optional_long() -> None:
    v0 = Schema([Field(1, "id", pa.int32(), nullable=False)])
    v1 = v0.update().update_column("id", pa.int64(), nullable=True).add_column("extra", pa.string()).apply()
    assert read(v0, v1, [{"id": 1}, {"id": 2}]) == [{"id": 1, "extra": None}, {"id": 2, "extra": None}]


def test_columns_not_in_the_read_schema_are_ignored() -> None:
    v0 = schema(a=pa.int32(), big=pa.string(), c=pa.int32())
    v1 = v0.update().drop_column("big").update_column("c", pa.int64()).apply()
    plan = fs.plan(v0, v1)
    assert read(v0, v1, [{"a": 1, "big": "x" * 100, "c": 3}]) == [{"a": 1, "c": 3}]
    assert plan.needed_input_columns() == ["a", "c"]


def test_needed_input_columns_includes_evolved_maps() -> None:
    v0 = schema(a=pa.int32(), m=pa.map_(pa.string(), pa.int32()))
    v1 = v0.update().update_column("m.value", pa.int64()).apply()
    assert fs.plan(v0, v1).needed_input_columns() == ["a", "m"]


# -- missing fields: constants, defaults, nulls ---------------------------------------------------
def test_constants_beat_initial_defaults_beat_null() -> None:
    v0 = schema(id=pa.int32())
    v1 = (
        v0.update()
        .add_column("p", pa.int32(), default=1)
        .add_column("q", pa.int32(), default=2)
        .add_column("r", pa.string())
        .add_column("s", pa.struct([("x", pa.int32())]))
        .apply()
    )
    out = read(v0, v1, [{"id": 9}], constants={"p": 100, v1.find("r").id: "part"})
    assert out == [{"id": 9, "p": 100, "q": 2, "r": "part", "s": None}]
    # a constant only fills what the file lacks: a column the file has keeps the file's values
    assert read(v0, v1, [{"id": 9}], constants={"id": 5})[0]["id"] == 9


def test_constant_that_does_not_fit_is_a_plan_time_error() -> None:
    v0 = schema(id=pa.int32())
    v1 = v0.update().add_column("p", pa.int32()).apply()
    with pytest.raises(fs.SchemaMismatchError, match="the constant does not fit"):
        fs.plan(v0, v1, constants={"p": "not a number"})


def test_iceberg_python_2672_constants_by_path_on_a_projected_read() -> None:
    v0 = schema(id=pa.int32(), v=pa.string())
    v1 = v0.update().add_column("part", pa.int32()).add_column("other", pa.int32()).apply()
    projected = v1.select(["part", "id"])
    out = fs.plan(v0, projected, constants={"part": 3}).apply(table(v0, [{"id": 1, "v": "a"}]))
    assert out.to_pylist() == [{"part": 3, "id": 1}]


def test_struct_default_builds_from_children() -> None:
    """Iceberg spec: point default {}, x=0, y=0; file value {"y": -1} reads {"x": 0, "y": -1}."""
    v0 = schema(id=pa.int32())
    v1 = v0.update().add_column("point", pa.struct([("y", pa.int32())]), default={}).apply()
    v2 = v1.update().add_column("point.x", pa.int32(), default=0, first=True).apply()
    v3 = Schema(
        [
            f
            if f.name != "point"
            else f.with_(
                type=StructType(
                    tuple(c.with_(initial_default=0) if c.name == "y" else c for c in f.type.fields)
                )
            )
            for f in v2.fields
        ],
        schema_id=3,
    )
    assert read(v1, v3, [{"id": 1, "point": {"y": -1}}, {"id": 2, "point": None}]) == [
        {"id": 1, "point": {"x": 0, "y": -1}},
        {"id": 2, "point": None},
    ]
    assert read(v0, v3, [{"id": 1}]) == [{"id": 1, "point": {"x": 0, "y": 0}}]
    # a nested struct default {} inside a {} struct builds all the way down
    v4 = (
        v3.update()
        .add_column("point.inner", pa.struct([("z", pa.int32())]), default={})
        .add_column("point.inner.w", pa.string(), default="w")
        .apply()
    )
    assert read(v0, v4, [{"id": 1}]) == [{"id": 1, "point": {"x": 0, "y": 0, "inner": {"z": None, "w": "w"}}}]
    # default null: a missing struct reads null
    v5 = v0.update().add_column("pt", pa.struct([pa.field("x", pa.int32())])).apply()
    assert read(v0, v5, [{"id": 1}]) == [{"id": 1, "pt": None}]


def test_iceberg_python_3084_write_default_never_fills_old_files() -> None:
    v0 = schema(id=pa.int32())
    v1 = v0.update().add_column("c", pa.int32(), default=1).apply()
    v2 = v1.update().set_write_default("c", 2).apply()
    assert v2.find("c").initial_default == 1 and v2.find("c").write_default == 2
    assert read(v0, v2, [{"id": 1}]) == [{"id": 1, "c": 1}]


def test_required_missing_field_is_one_error_naming_every_bad_path() -> None:
    v0 = Schema.from_arrow(
        pa.schema(
            [
                pa.field("id", pa.int32()),
                pa.field("s", pa.struct([("a", pa.int32())])),
                pa.field("l", pa.list_(pa.struct([("a", pa.int32())]))),
                pa.field("m", pa.map_(pa.string(), pa.struct([("a", pa.int32())]))),
                pa.field("t", pa.string()),
            ]
        ),
        assign_ids=True,
    )
    top = v0.highest_field_id

    def required(i: int, name: str) -> Field:
        return Field(top + i, name, pa.int32(), nullable=False)

    def with_child(f: Field, child: Field) -> Field:
        t = f.type
        if isinstance(t, StructType):
            return f.with_(type=StructType((*t.fields, child)))
        if isinstance(t, ListType):
            return f.with_(type=ListType(with_child(t.element, child)))
        return f.with_(type=MapType(t.key, with_child(t.value, child)))

    fields = {f.name: f for f in v0.fields}
    bad = Schema(
        [
            fields["id"],
            with_child(fields["s"], required(1, "r1")),
            with_child(fields["l"], required(2, "r2")),
            with_child(fields["m"], required(3, "r3")),
            fields["t"].with_(type=pa.int32()),
            required(4, "r4"),
            Field(top + 5, "ok", pa.int32(), nullable=False, initial_default=0),
        ],
        schema_id=1,
    )
    with pytest.raises(fs.SchemaMismatchError) as info:
        fs.plan(v0, bad)
    err = info.value
    assert isinstance(err, fs.SchemaEvolutionError)
    assert sorted(m.path for m in err.mismatches) == ["l.element.r2", "m.value.r3", "r4", "s.r1", "t"]
    text = str(err)
    for path in ("s.r1", "l.element.r2", "m.value.r3", "r4", "t"):
        assert path in text
    assert text.count("give it an initial default, or make it optional") == 4
    assert "use CastPolicy.explicit()" in text  # the fix for t: string -> int
    assert "5 column(s) cannot be read" in text


def test_adding_a_required_column_needs_a_default() -> None:
    v0 = schema(id=pa.int32())
    with pytest.raises(fs.RequiredFieldWithoutDefaultError):
        v0.update().add_column("r", pa.int32(), nullable=False)
    v1 = v0.update().add_column("r", pa.int32(), nullable=False, default=5).apply()
    assert read(v0, v1, [{"id": 1}]) == [{"id": 1, "r": 5}]


@pytest.mark.parametrize("kind", ["list", "map"])
def test_list_default_on_an_empty_batch(kind: str) -> None:
    v0 = schema(id=pa.int32())
    if kind == "list":
        v1 = v0.update().add_column("d", pa.list_(pa.int32()), default=[1, 2]).apply()
    else:
        v1 = v0.update().add_column("d", pa.map_(pa.string(), pa.int32()), default={"k": 1}).apply()
    plan = fs.plan(v0, v1)
    assert plan.apply(table(v0, [{"id": 1}])).column("d").to_pylist()[0] in ([1, 2], [("k", 1)])
    assert plan.apply(pa.RecordBatch.from_pylist([], schema=v0.to_arrow())).num_rows == 0
    two = table(v0, [{"id": 1}, {"id": 2}])
    # an empty chunk in the middle
    chunked = pa.concat_tables([two.slice(0, 1), two.slice(1, 0), two.slice(1)])
    assert [len(b) for b in chunked.to_batches()] == [1, 0, 1]
    assert plan.apply(chunked).num_rows == 2


def test_list_default_inside_list_elements_when_every_list_is_empty() -> None:
    v0 = Schema.from_arrow(
        pa.schema([pa.field("l", pa.list_(pa.struct([("a", pa.int32())])))]), assign_ids=True
    )
    v1 = v0.update().add_column("l.element.tags", pa.list_(pa.string()), default=["t"]).apply()
    assert read(v0, v1, [{"l": [{"a": 1}]}, {"l": None}]) == [{"l": [{"a": 1, "tags": ["t"]}]}, {"l": None}]
    assert read(v0, v1, [{"l": []}, {"l": None}]) == [{"l": []}, {"l": None}]


def test_widen_list_element_recasts_the_list_default() -> None:
    v0 = schema(id=pa.int32())
    v1 = v0.update().add_column("days", pa.list_(pa.date32()), default=[dt.date(2020, 1, 2)]).apply()
    v2 = v1.update().update_column("days.element", pa.timestamp("us")).apply()
    assert v2.find("days").initial_default == [dt.datetime(2020, 1, 2)]
    assert read(v0, v2, [{"id": 1}]) == [{"id": 1, "days": [dt.datetime(2020, 1, 2)]}]


# -- lossless casts -----------------------------------------------------------------------------------
LOSSLESS = [
    (pa.int8(), pa.int16(), [-128, 127, 0]),
    (pa.int16(), pa.int64(), [-(2**15), 2**15 - 1]),
    (pa.int32(), pa.int64(), [-(2**31), 2**31 - 1]),
    (pa.uint8(), pa.int16(), [0, 255]),
    (pa.uint32(), pa.int64(), [0, 2**32 - 1]),
    (pa.uint16(), pa.uint64(), [0, 2**16 - 1]),
    (pa.int32(), pa.float64(), [-(2**31), 2**31 - 1, 7]),
    (pa.int16(), pa.float32(), [-(2**15), 2**15 - 1]),
    (pa.float32(), pa.float64(), [1.5, -0.25, 3.4028234663852886e38]),
    (pa.decimal128(10, 2), pa.decimal128(12, 4), [Decimal("12345678.91"), Decimal("-0.01")]),
    (pa.decimal128(10, 2), pa.decimal128(38, 2), [Decimal("99999999.99")]),
    (pa.int32(), pa.decimal128(12, 2), [2**31 - 1, -(2**31)]),
    (pa.int64(), pa.decimal128(21, 2), [2**63 - 1, -(2**63)]),
    (pa.date32(), pa.timestamp("us"), [dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1970, 1, 1)]),
    (pa.timestamp("ms"), pa.timestamp("us"), [dt.datetime(2001, 2, 3, 4, 5, 6, 7000)]),
    (pa.string(), pa.binary(), ["", "é☃"]),
    (pa.binary(), pa.string(), [b"", "é☃".encode()]),
]


@pytest.mark.parametrize(("source", "target", "values"), LOSSLESS, ids=[f"{a}->{b}" for a, b, _ in LOSSLESS])
def test_lossless_widening_at_every_depth(
    source: pa.DataType, target: pa.DataType, values: list[Any]
) -> None:
    v0 = Schema.from_arrow(
        pa.schema(
            [
                pa.field("c", source),
                pa.field("s", pa.struct([("c", source)])),
                pa.field("l", pa.list_(source)),
                pa.field("m", pa.map_(pa.int32(), source)),
            ]
        ),
        assign_ids=True,
    )
    v1 = (
        v0.update()
        .update_column("c", target)
        .update_column("s.c", target)
        .update_column("l.element", target)
        .update_column("m.value", target)
        .apply()
    )
    rows = [{"c": v, "s": {"c": v}, "l": [v, None], "m": [(1, v)]} for v in [*values, None]]
    assert read(v0, v1, rows) == oracle_evolve(table(v0, rows).to_pylist(), v0, v1)
    plan = fs.plan(v0, v1)
    assert "widen" in plan.explain() or "checked" in plan.explain()


def test_lossy_changes_are_refused_under_lossless() -> None:
    for source, target in [
        (pa.int64(), pa.float64()),
        (pa.int32(), pa.float32()),
        (pa.int64(), pa.int32()),
        (pa.float64(), pa.float32()),
        (pa.int8(), pa.uint8()),
        (pa.string(), pa.int32()),
        (pa.decimal128(10, 2), pa.decimal128(10, 3)),
        (pa.timestamp("us"), pa.date32()),
    ]:
        v0 = Schema([Field(1, "c", source)])
        v1 = Schema([Field(1, "c", target)], schema_id=1)
        with pytest.raises(fs.SchemaMismatchError, match=r"CastPolicy\.lossless does not allow"):
            fs.plan(v0, v1)
        with pytest.raises(fs.TypeChangeNotAllowedError):
            v0.update().update_column("c", target)


def test_pyiceberg_decimal_scale_is_applied_not_reinterpreted() -> None:
    """Widening decimal(10,2) to decimal(12,4) rescales the value; it never reinterprets the unscaled int."""
    v0 = Schema([Field(1, "d", pa.decimal128(10, 2))])
    v1 = v0.update().update_column("d", pa.decimal128(12, 4)).apply()
    out = read(v0, v1, [{"d": Decimal("123.45")}, {"d": Decimal("-0.07")}])
    assert [r["d"] for r in out] == [Decimal("123.4500"), Decimal("-0.0700")]
    assert [r["d"].as_tuple().exponent for r in out] == [-4, -4]
    # more scale without more precision would lose integer digits: refused
    with pytest.raises(fs.SchemaMismatchError, match="decimal"):
        fs.plan(v0, Schema([Field(1, "d", pa.decimal128(10, 3))]))
    # Iceberg allows precision widening only
    assert read(
        v0,
        Schema([Field(1, "d", pa.decimal128(20, 2))]),
        [{"d": Decimal("1.50")}],
        policy=CastPolicy.iceberg(),
    ) == [{"d": Decimal("1.50")}]
    with pytest.raises(fs.SchemaMismatchError, match=r"CastPolicy\.iceberg does not allow"):
        fs.plan(v0, v1, policy=CastPolicy.iceberg())


def test_paimon_8073_decimal_widening_output_schema_is_exact() -> None:
    v0 = schema(id=pa.int32(), d=pa.decimal128(10, 2))
    v1 = v0.update().update_column("d", pa.decimal128(20, 2)).apply()
    out = fs.plan(v0, v1).apply(table(v0, [{"id": 1, "d": Decimal("1.25")}]))
    assert out.schema.equals(v1.to_arrow(), check_metadata=True)
    assert out.schema.field("d").type == pa.decimal128(20, 2)


def test_iceberg_9_date_to_timestamp_promotion() -> None:
    v0 = schema(d=pa.date32())
    v1 = v0.update().update_column("d", pa.timestamp("us")).apply()
    rows = [{"d": dt.date(2024, 2, 29)}, {"d": None}]
    assert read(v0, v1, rows) == [{"d": dt.datetime(2024, 2, 29)}, {"d": None}]
    assert read(v0, v1, rows, policy=CastPolicy.iceberg()) == [{"d": dt.datetime(2024, 2, 29)}, {"d": None}]
    # to nanoseconds the cast is checked: dates past 2262 overflow and follow on_error
    ns = Schema([Field(1, "d", pa.timestamp("ns"))], schema_id=2)
    late = [{"d": dt.date(2300, 1, 1)}]
    with pytest.raises(fs.CastValueError, match="row 0"):
        read(v0, ns, late)
    assert read(v0, ns, late, policy=CastPolicy.explicit("null")) == [{"d": None}]


def test_ducklake_1127_uint32_to_bigint() -> None:
    v0 = schema(u=pa.uint32())
    v1 = v0.update().update_column("u", pa.int64()).apply()
    assert read(v0, v1, [{"u": 2**32 - 1}]) == [{"u": 2**32 - 1}]


def test_hudi_11803_int_to_bigint_reads_old_files_before_any_new_insert() -> None:
    v0 = schema(id=pa.int32(), v=pa.int32())
    v1 = v0.update().update_column("v", pa.int64()).apply()
    assert read(v0, v1, [{"id": 1, "v": None}, {"id": 2, "v": 3}]) == [
        {"id": 1, "v": None},
        {"id": 2, "v": 3},
    ]


def test_hudi_19766_rename_and_drop_under_default_config() -> None:
    v0 = schema(a=pa.int32(), b=pa.int32(), c=pa.int32())
    v1 = v0.update().rename_column("a", "a1").drop_column("b").apply()
    assert read(v0, v1, [{"a": 1, "b": 2, "c": 3}]) == [{"a1": 1, "c": 3}]


def test_ducklake_1141_add_rename_retype_in_one_update() -> None:
    v0 = schema(id=pa.int32())
    v1 = (
        v0.update()
        .add_column("x", pa.int32(), default=4)
        .rename_column("x", "y")
        .update_column("y", pa.int64())
        .apply()
    )
    assert v1.find("y").initial_default == 4
    assert read(v0, v1, [{"id": 1}]) == [{"id": 1, "y": 4}]
    mid = v0.update().add_column("x", pa.int32()).apply()
    assert read(mid, v1, [{"id": 1, "x": 9}]) == [{"id": 1, "y": 9}]


def test_ducklake_1290_date_and_cast_literal_defaults() -> None:
    v0 = schema(id=pa.int32())
    v1 = (
        v0.update()
        .add_column("d", pa.date32(), default="2020-01-02")
        .add_column("n", pa.int32(), default="5")
        .apply()
    )
    assert read(v0, v1, [{"id": 1}]) == [{"id": 1, "d": dt.date(2020, 1, 2), "n": 5}]


# -- nullability and map keys -----------------------------------------------------------------------
def test_nullable_to_required_refused() -> None:
    v0 = schema(a=pa.int32(), s=pa.struct([("x", pa.int32())]))
    with pytest.raises(fs.NullabilityTighteningError):
        v0.update().update_column("s.x", nullable=False)
    tightened = Schema([v0.fields[0].with_(nullable=False), v0.fields[1]], schema_id=1)
    # nullability by data (issue 12 item 24): it plans, and nulls are refused when a batch holds them
    p = fs.plan(v0, tightened)
    with pytest.raises(fs.NullInRequiredFieldError, match="'a'"):
        p.apply(pa.table({"a": [1, None], "s": [None, None]}, schema=v0.to_arrow()))


def test_required_to_optional_is_allowed_at_every_depth() -> None:
    v0 = Schema(
        [
            Field(1, "a", pa.int32(), nullable=False),
            Field(2, "s", StructType((Field(3, "x", pa.int32(), nullable=False),)), nullable=False),
            Field(4, "l", ListType(Field(5, "element", pa.int32(), nullable=False))),
        ]
    )
    v1 = (
        v0.update()
        .update_column("a", nullable=True)
        .update_column("s.x", nullable=True)
        .update_column("l.element", nullable=True)
        .apply()
    )
    rows = [{"a": 1, "s": {"x": 2}, "l": [3]}]
    assert read(v0, v1, rows) == rows
    assert fs.plan(v0, v1).rename_only


def test_map_key_narrowing_refused() -> None:
    v0 = Schema([Field(1, "m", MapType(Field(2, "key", pa.int64()), Field(3, "value", pa.int32())))])
    narrow = Schema([Field(1, "m", MapType(Field(2, "key", pa.int32()), Field(3, "value", pa.int32())))])
    for policy in (CastPolicy.lossless(), CastPolicy.explicit(), CastPolicy.hudi()):
        with pytest.raises(fs.SchemaMismatchError, match=r"m\.key"):
            fs.plan(v0, narrow, policy=policy)
    with pytest.raises(fs.SchemaMismatchError, match="map keys may only widen losslessly"):
        fs.plan(v0, narrow, policy=CastPolicy.explicit())
    binary_keys = Schema(
        [Field(1, "m", MapType(Field(2, "key", pa.binary()), Field(3, "value", pa.int32())))]
    )
    with pytest.raises(fs.SchemaMismatchError, match="map keys may only widen losslessly"):
        fs.plan(
            binary_keys,
            Schema([Field(1, "m", MapType(Field(2, "key", pa.string()), Field(3, "value", pa.int32())))]),
        )
    with pytest.raises(fs.TypeChangeNotAllowedError):
        binary_keys.update().update_column("m.key", pa.string())


def test_map_key_widening_allowed() -> None:
    v0 = Schema.from_arrow(pa.schema([pa.field("m", pa.map_(pa.int32(), pa.string()))]), assign_ids=True)
    v1 = v0.update().update_column("m.key", pa.int64()).apply()
    assert read(v0, v1, [{"m": [(1, "a"), (2**31 - 1, None)]}]) == [{"m": [(1, "a"), (2**31 - 1, None)]}]


def test_nested_shape_change_is_a_plan_time_error() -> None:
    v0 = Schema([Field(1, "c", StructType((Field(2, "x", pa.int32()),)))])
    with pytest.raises(fs.SchemaMismatchError, match="cannot change shape"):
        fs.plan(v0, Schema([Field(1, "c", pa.int32())]))


# -- explicit casts and value failures --------------------------------------------------------------
TEXT = Schema(
    [
        Field(1, "id", pa.int32()),
        Field(2, "v", pa.string()),
        Field(3, "l", ListType(Field(4, "element", pa.string()))),
        Field(
            5,
            "m",
            MapType(
                Field(6, "key", pa.string()), Field(7, "value", StructType((Field(8, "q", pa.string()),)))
            ),
        ),
    ]
)
NUMS = Schema(
    [
        Field(1, "id", pa.int32()),
        Field(2, "v", pa.int32()),
        Field(3, "l", ListType(Field(4, "element", pa.int32()))),
        Field(
            5,
            "m",
            MapType(
                Field(6, "key", pa.string()), Field(7, "value", StructType((Field(8, "q", pa.int64()),)))
            ),
        ),
    ],
    schema_id=1,
)


def text_rows() -> list[dict[str, Any]]:
    rows = [{"id": i, "v": str(i), "l": [str(i), None], "m": [("k", {"q": str(i)})]} for i in range(10)]
    rows[3]["l"] = ["1", None, "three"]
    rows[6]["v"] = "six"
    rows[8]["m"] = [("a", {"q": "1"}), ("b", {"q": "eight"})]
    rows[9]["v"] = None
    return rows


def test_explicit_policy_is_needed_for_narrowing_text() -> None:
    with pytest.raises(fs.SchemaMismatchError) as info:
        fs.plan(TEXT, NUMS)
    assert {m.path for m in info.value.mismatches} == {"v", "l.element", "m.value.q"}
    assert "use CastPolicy.explicit()" in str(info.value)


def test_on_error_raise_names_path_row_and_value() -> None:
    plan = fs.plan(TEXT, NUMS, policy=CastPolicy.explicit())
    data = table(TEXT, text_rows())
    with pytest.raises(fs.CastValueError) as info:
        plan.apply(data.select(["id", "v", "l", "m"]).slice(4))  # rows 4.. of the data: 'six' is row 2
    assert (info.value.path, info.value.row, info.value.value) == ("v", 2, "six")
    assert "CastPolicy.explicit(on_error='null')" in str(info.value) and "apply_split" in str(info.value)


@pytest.mark.parametrize("shape", ["table", "batch", "chunks", "slice"])
def test_on_error_raise_inside_a_list_element_reports_the_top_level_row(shape: str) -> None:
    rows = text_rows()
    rows[6]["v"] = "6"
    rows[8]["m"] = [("k", {"q": "8"})]
    data = table(TEXT, rows)
    offset = 0
    if shape == "batch":
        data = data.combine_chunks().to_batches()[0]
    elif shape == "chunks":
        data = pa.concat_tables([data.slice(0, 2), data.slice(2, 3), data.slice(5)])
    elif shape == "slice":
        data, offset = data.combine_chunks().to_batches()[0].slice(1), 1
    with pytest.raises(fs.CastValueError) as info:
        fs.plan(TEXT, NUMS, policy=CastPolicy.explicit()).apply(data)
    assert (info.value.path, info.value.row, info.value.value) == ("l.element", 3 - offset, "three")


def test_on_error_raise_inside_a_map_value_reports_the_top_level_row() -> None:
    rows = text_rows()
    rows[3]["l"], rows[6]["v"] = ["3"], "6"
    with pytest.raises(fs.CastValueError) as info:
        fs.plan(TEXT, NUMS, policy=CastPolicy.explicit()).apply(table(TEXT, rows))
    assert (info.value.path, info.value.row, info.value.value) == ("m.value.q", 8, "eight")


def test_on_error_null_reads_null_and_reports_counts() -> None:
    plan = fs.plan(TEXT, NUMS, policy=CastPolicy.explicit("null"))
    data = pa.concat_tables([table(TEXT, text_rows()[:5]), table(TEXT, text_rows()[5:])])
    out, report = plan.apply_with_report(data)
    assert report.failures == {"v": 1, "l.element": 1, "m.value.q": 1}
    assert report.total == 3
    assert {k: v.tolist() for k, v in report.rows.items()} == {"v": [6], "l.element": [3], "m.value.q": [8]}
    rows = out.to_pylist()
    assert rows[6]["v"] is None and rows[5]["v"] == 5 and rows[9]["v"] is None
    assert rows[3]["l"] == [1, None, None]
    assert rows[8]["m"] == [("a", {"q": 1}), ("b", {"q": None})]
    assert plan.apply(data).to_pylist() == rows


def test_apply_split_keeps_good_rows_evolved_and_bad_rows_as_input() -> None:
    plan = fs.plan(TEXT, NUMS, policy=CastPolicy.explicit())
    data = table(TEXT, text_rows())
    good, bad = plan.apply_split(data)
    assert good.schema.equals(NUMS.to_arrow(), check_metadata=True)
    assert [r["id"] for r in good.to_pylist()] == [0, 1, 2, 4, 5, 7, 9]
    assert good.to_pylist()[1] == {"id": 1, "v": 1, "l": [1, None], "m": [("k", {"q": 1})]}
    assert bad.schema.names == [*TEXT.names, "_fieldshift_reason"]
    bad_rows = bad.to_pylist()
    assert [r["id"] for r in bad_rows] == [3, 6, 8]
    assert {k: v for k, v in bad_rows[0].items() if k != "_fieldshift_reason"} == text_rows()[3]
    assert "l.element" in bad_rows[0]["_fieldshift_reason"] and "'three'" in bad_rows[0]["_fieldshift_reason"]
    assert "'six'" in bad_rows[1]["_fieldshift_reason"] and "m.value.q" in bad_rows[2]["_fieldshift_reason"]
    # nothing bad: an empty quarantine with the reason column
    good, bad = plan.apply_split(data.slice(0, 3))
    assert good.num_rows == 3 and bad.num_rows == 0 and "_fieldshift_reason" in bad.schema.names


def test_values_hidden_under_null_parents_never_fail() -> None:
    file = Schema(
        [
            Field(1, "s", StructType((Field(2, "v", pa.string()),))),
            Field(3, "l", ListType(Field(4, "element", pa.string()))),
        ]
    )
    target = Schema(
        [
            Field(1, "s", StructType((Field(2, "v", pa.int32()),))),
            Field(3, "l", ListType(Field(4, "element", pa.int32()))),
        ],
        schema_id=1,
    )
    arrow = file.to_arrow()
    s = pa.StructArray.from_arrays(
        [pa.array(["1", "hidden"])], fields=list(arrow.field("s").type), mask=pa.array([False, True])
    )
    lists = pa.ListArray.from_arrays(
        pa.array([0, 1, 2], pa.int32()),
        pa.array(["2", "hidden"]),
        type=arrow.field("l").type,
        mask=pa.array([False, True]),
    )
    batch = pa.RecordBatch.from_arrays([s, lists], schema=arrow)
    assert batch.to_pylist() == [{"s": {"v": "1"}, "l": ["2"]}, {"s": None, "l": None}]
    expected = [{"s": {"v": 1}, "l": [2]}, {"s": None, "l": None}]
    assert fs.plan(file, target, policy=CastPolicy.explicit()).apply(batch).to_pylist() == expected
    _, report = fs.plan(file, target, policy=CastPolicy.explicit("null")).apply_with_report(batch)
    assert report.total == 0
    good, bad = fs.plan(file, target, policy=CastPolicy.explicit()).apply_split(batch)
    assert (good.num_rows, bad.num_rows) == (2, 0)


def test_hudi_number_to_string_only_where_the_policy_allows() -> None:
    v0 = schema(n=pa.int64())
    v1 = Schema([Field(1, "n", pa.string())], schema_id=1)
    with pytest.raises(fs.SchemaMismatchError, match="hudi"):
        fs.plan(v0, v1)
    rows = [{"n": -5}, {"n": None}, {"n": 2**62}]
    for policy in (CastPolicy.hudi(), CastPolicy.onehouse()):
        got = read(v0, v1, rows, policy=policy)
        assert got == oracle_evolve(rows, v0, v1, policy) == [{"n": "-5"}, {"n": None}, {"n": str(2**62)}]


# -- files without ids ------------------------------------------------------------------------------
def test_iceberg_python_1798_no_ids_error_suggests_name_mapping() -> None:
    v0 = schema(id=pa.int32())
    data = pa.table({"id": pa.array([1], pa.int32())})
    with pytest.raises(fs.MissingFieldIdError) as info:
        fs.evolve(data, v0)
    # issue 12 item 26: the hint names the schema the data was written with, never match='name'
    assert "name_mapping=NameMapping.from_schema(<that schema>)" in str(info.value)
    assert "file_schema=<that schema>" in str(info.value) and "match='name'" not in str(info.value)
    assert fs.evolve(data, v0, name_mapping=fs.NameMapping.from_schema(v0)).to_pylist() == [{"id": 1}]


def test_iceberg_11650_renamed_column_in_an_idless_file_via_name_mapping() -> None:
    v0 = schema(id=pa.int32(), name=pa.string())
    v1 = v0.update().rename_column("name", "full_name").apply()
    mapping = fs.NameMapping.from_schema(v0).update(v0, v1)
    old_file = pa.table({"id": pa.array([1], pa.int32()), "name": ["a"]})
    assert fs.evolve(old_file, v1, name_mapping=mapping).to_pylist() == [{"id": 1, "full_name": "a"}]


def test_iceberg_11214_nested_struct_in_an_idless_file_via_name_mapping() -> None:
    v0 = Schema.from_arrow(
        pa.schema(
            [
                pa.field("s", pa.struct([("x", pa.int32()), ("y", pa.string())])),
                pa.field("l", pa.list_(pa.struct([("p", pa.int32())]))),
            ]
        ),
        assign_ids=True,
    )
    v1 = v0.update().rename_column("s.x", "xx").add_column("l.element.q", pa.int32(), default=0).apply()
    data = pa.table(
        {
            "s": pa.array([{"x": 1, "y": "a"}], pa.struct([("x", pa.int32()), ("y", pa.string())])),
            "l": pa.array([[{"p": 2}]], pa.list_(pa.struct([("p", pa.int32())]))),
        }
    )  # `item` lists
    mapping = fs.NameMapping.from_schema(v0).update(v0, v1)
    out = fs.evolve(data, v1, name_mapping=mapping)
    assert out.to_pylist() == [{"s": {"xx": 1, "y": "a"}, "l": [{"p": 2, "q": 0}]}]


def test_iceberg_python_716_name_mapping_resolves_item_lists() -> None:
    """The mapping names list elements `element`; files written with `item` children still resolve."""
    v0 = Schema.from_arrow(pa.schema([pa.field("tags", pa.list_(pa.int32()))]), assign_ids=True)
    v1 = v0.update().update_column("tags.element", pa.int64()).apply()
    data = pa.table({"tags": pa.array([[1, 2], None], pa.list_(pa.field("item", pa.int32())))})
    out = fs.evolve(data, v1, name_mapping=fs.NameMapping.from_schema(v0))
    assert out.to_pylist() == [{"tags": [1, 2]}, {"tags": None}]
    assert out.schema.equals(v1.to_arrow(), check_metadata=True)


def test_hudi_19381_renamed_and_retyped_columns_resolve_by_id() -> None:
    v0 = schema(id=pa.int32(), price=pa.float32())
    v1 = v0.update().rename_column("price", "amount").update_column("amount", pa.float64()).apply()
    assert read(v0, v1, [{"id": 1, "price": 2.5}]) == [{"id": 1, "amount": 2.5}]


def test_ducklake_576_timestamp_to_timestamptz_only_under_explicit() -> None:
    """Wall time read as UTC is a reinterpretation, so the lossless preset refuses it; explicit allows it."""
    v0 = schema(t=pa.timestamp("us"))
    v1 = Schema([Field(1, "t", pa.timestamp("us", tz="UTC"))], schema_id=1)
    with pytest.raises(fs.SchemaMismatchError, match=r"CastPolicy\.explicit"):
        fs.plan(v0, v1)
    out = read(v0, v1, [{"t": dt.datetime(2020, 1, 2, 3, 4, 5)}], policy=CastPolicy.explicit())
    assert out == [{"t": dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=dt.UTC)}]


def test_match_by_name_resurrects_a_dropped_column_but_ids_do_not() -> None:
    """datafusion-ducklake PR #141 / Paimon #8187: by-name matching revives drop-then-re-add values."""
    v0 = schema(id=pa.int32(), b=pa.string())
    v1 = v0.update().drop_column("b").add_column("b", pa.string()).apply()
    with_ids = table(v0, [{"id": 1, "b": "stale"}])
    assert fs.evolve(with_ids, v1).to_pylist() == [{"id": 1, "b": None}]
    without_ids = pa.table({"id": pa.array([1], pa.int32()), "b": ["stale"]})
    assert fs.evolve(without_ids, v1, match="name").to_pylist() == [
        {"id": 1, "b": "stale"}
    ]  # documented danger
    # and by-name matching cannot follow a rename
    v2 = v0.update().rename_column("b", "c").apply()
    assert fs.evolve(without_ids, v2, match="name").to_pylist() == [{"id": 1, "c": None}]


# -- plans: caching, per-file plans, pickling, explain ---------------------------------------------
def test_datafusion_ducklake_140_each_file_schema_gets_its_own_plan() -> None:
    """Two files whose columns share names but not ids must not share a (cached) plan."""
    first = Schema([Field(1, "a", pa.int32())])
    second = Schema([Field(2, "a", pa.int32())])
    current = Schema([Field(2, "a", pa.int32())], schema_id=2)
    rows = [{"a": 5}]
    assert read(first, current, rows) == [{"a": None}]
    assert read(second, current, rows) == [{"a": 5}]
    assert read(first, current, rows) == [{"a": None}]


def test_plans_are_cached_by_schemas_policy_and_constants() -> None:
    v0 = schema(id=pa.int32())
    v1 = v0.update().add_column("p", pa.int32()).apply()
    p = fs.plan(v0, v1)
    assert fs.plan(v0, v1) is p
    assert fs.plan(Schema.from_json(v0.to_json()), Schema.from_json(v1.to_json())) is p
    assert fs.plan(v0, v1, policy=CastPolicy.hudi()) is not p
    with_constant = fs.plan(v0, v1, constants={"p": 1})
    assert with_constant is not p and fs.plan(v0, v1, constants={"p": 2}) is not with_constant


def test_plan_cache_keeps_physical_layouts_apart() -> None:
    canonical = Schema(
        [
            Field(1, "cache_probe_s", pa.string()),
            Field(2, "cache_probe_l", ListType(Field(3, "element", pa.int32()))),
        ]
    )
    large = pa.schema(
        [
            pa.field("cache_probe_s", pa.large_string(), metadata={ID: b"1"}),
            pa.field(
                "cache_probe_l",
                pa.large_list(pa.field("element", pa.int32(), metadata={ID: b"3"})),
                metadata={ID: b"2"},
            ),
        ]
    )
    assert not fs.plan(large, canonical).identity
    plan = fs.plan(canonical, canonical)
    assert plan.identity
    batch = table(canonical, [{"cache_probe_s": "a", "cache_probe_l": [1]}]).to_batches()[0]
    assert plan.apply(batch) is batch


def test_plan_cache_keeps_read_layouts_apart() -> None:
    file = Schema(
        [
            Field(1, "read_probe_l", ListType(Field(2, "element", pa.int32()))),
            Field(3, "read_probe_s", pa.string()),
        ]
    )
    large = Schema(
        [
            Field(1, "read_probe_l", ListType(Field(2, "element", pa.int32()), "large_list")),
            Field(3, "read_probe_s", pa.large_string()),
        ],
        schema_id=1,
    )
    fs.plan(file, file)
    out = fs.plan(file, large).apply(table(file, [{"read_probe_l": [1], "read_probe_s": "a"}]))
    assert out.schema.equals(large.to_arrow(), check_metadata=True)


def test_plans_pickle_with_constants_defaults_and_checked_casts() -> None:
    v1 = (
        TEXT.update()
        .add_column("d", pa.struct([("x", pa.int32())]), default={})
        .add_column("d.y", pa.date32(), default="2020-01-01")
        .apply()
    )
    target = Schema([*NUMS.fields, v1.find("d"), Field(99, "k", pa.string())], schema_id=5)
    plan = fs.plan(TEXT, target, policy=CastPolicy.explicit("null"), constants={"k": "part"})
    shipped = pickle.loads(pickle.dumps(plan))
    assert shipped == plan
    data = table(TEXT, text_rows())
    assert shipped.apply(data).to_pylist() == plan.apply(data).to_pylist()
    assert shipped.apply(data).to_pylist()[0]["d"] == {"x": None, "y": dt.date(2020, 1, 1)}


def test_explain_names_every_changed_column() -> None:
    v0 = schema(a=pa.int32(), b=pa.string(), s=pa.struct([("x", pa.int32())]))
    v1 = (
        v0.update()
        .rename_column("b", "b2")
        .update_column("a", pa.int64())
        .add_column("s.y", pa.int32(), default=1)
        .apply()
    )
    text = fs.plan(v0, v1).explain()
    assert "a: widen int -> long" in text
    assert "renamed from 'b'" in text
    assert "s.y: initial default 1" in text
    assert fs.plan(v1, v1).explain().startswith("identity")
    assert fs.plan(v0, v0.update().rename_column("b", "c").apply()).explain().startswith("rename only")


def test_iceberg_python_902_large_string_file_reads_as_the_read_schemas_string() -> None:
    v0 = schema(s=pa.string())
    data = pa.table(
        {"s": pa.array(["a", None], pa.large_string())},
        schema=pa.schema([pa.field("s", pa.large_string(), metadata={ID: b"1"})]),
    )
    out = fs.evolve(data, v0)
    assert out.schema.field("s").type == pa.string()
    assert out.to_pylist() == [{"s": "a"}, {"s": None}]


def test_rename_only_plan_reuses_the_input_buffers() -> None:
    v0 = schema(a=pa.int32(), s=pa.struct([("x", pa.string())]), l=pa.list_(pa.int64()))
    v1 = v0.update().rename_column("a", "a2").rename_column("s.x", "x2").move_first("l").apply()
    batch = (
        table(v0, [{"a": 1, "s": {"x": "p"}, "l": [1]}, {"a": None, "s": None, "l": None}])
        .combine_chunks()
        .to_batches()[0]
    )
    plan = fs.plan(v0, v1)
    assert plan.rename_only and not plan.identity
    out = plan.apply(batch)
    for name, source in (("a2", "a"), ("s", "s"), ("l", "l")):
        got = [b.address for b in out.column(name).buffers() if b is not None]
        want = [b.address for b in batch.column(source).buffers() if b is not None]
        assert got == want
    assert out.column("a2").equals(batch.column("a"))


def test_paimon_2119_time_travel_reads_newer_files_with_an_older_schema() -> None:
    v0 = Schema.from_arrow(
        pa.schema([("id", pa.int32()), ("name", pa.string()), ("s", pa.struct([("x", pa.int32())]))]),
        assign_ids=True,
    )
    v1 = (
        v0.update()
        .rename_column("name", "full")
        .add_column("s.y", pa.int32(), default=3)
        .add_column("z", pa.int32())
        .apply()
    )
    rows = [{"id": 1, "full": "f", "s": {"x": 1, "y": 2}, "z": 9}]
    assert read(v1, v0, rows) == [{"id": 1, "name": "f", "s": {"x": 1}}]
    v2 = v1.update().update_column("id", pa.int64()).apply()
    with pytest.raises(fs.SchemaMismatchError, match="id"):  # an older schema cannot narrow a widened column
        fs.plan(v2, v0)


def test_apply_refuses_a_batch_whose_columns_are_not_the_planned_ones() -> None:
    v0 = schema(a=pa.int32(), b=pa.int32())
    v1 = v0.update().update_column("a", pa.int64()).apply()
    swapped = pa.RecordBatch.from_pylist(
        [{"b": 1, "a": 2}], schema=pa.schema([v0.to_arrow().field("b"), v0.to_arrow().field("a")])
    )
    assert fs.evolve(swapped, v1).to_pylist() == [{"a": 2, "b": 1}]  # planned from the batch itself: right
    with pytest.raises(fs.SchemaEvolutionError):
        fs.plan(v0, v1).apply(swapped)


def test_plan_cache_by_arrow_schema_tells_ids_apart() -> None:
    """Two files whose Arrow schemas differ only in field ids (drop + re-add of `z`) get different plans."""
    base = fs.Schema.from_arrow(pa.schema([("a", pa.int32()), ("z", pa.int32())]), assign_ids=True)
    final = base.update().drop_column("z").add_column("z", pa.int32()).apply()
    old = pa.table({"a": pa.array([1], pa.int32()), "z": pa.array([5], pa.int32())}, schema=base.to_arrow())
    new = pa.table({"a": pa.array([2], pa.int32()), "z": pa.array([6], pa.int32())}, schema=final.to_arrow())
    assert old.schema == new.schema  # pyarrow ignores the ids here ...
    assert fs.evolve(old, final).to_pylist() == [{"a": 1, "z": None}]  # ... fieldshift must not
    assert fs.evolve(new, final).to_pylist() == [{"a": 2, "z": 6}]
    assert fs.evolve(old, final).to_pylist() == [{"a": 1, "z": None}]


def test_plans_from_arrow_schemas_differing_only_in_field_ids_are_not_shared() -> None:
    """pa.Schema equality ignores field metadata; the plan caches keyed by Arrow schemas must not."""
    read = Schema([Field(1, "a", pa.int64()), Field(2, "b", pa.int64())])

    def arrow(id_a: int, id_b: int) -> pa.Schema:
        return pa.schema([pa.field("a", pa.int64(), metadata={"PARQUET:field_id": str(id_a)}),
                          pa.field("b", pa.int64(), metadata={"PARQUET:field_id": str(id_b)})])

    batch = pa.record_batch([pa.array([1]), pa.array([2])], schema=arrow(1, 2))
    swapped = pa.record_batch([pa.array([1]), pa.array([2])], schema=arrow(2, 1))
    for _ in range(2):  # the second round is served from the caches
        assert fs.evolve(batch, read).to_pydict() == {"a": [1], "b": [2]}
        assert fs.evolve(swapped, read).to_pydict() == {"a": [2], "b": [1]}
    assert fs.plan(batch.schema, read) is fs.plan(pa.ipc.read_schema(pa.py_buffer(batch.schema.serialize())), read)
