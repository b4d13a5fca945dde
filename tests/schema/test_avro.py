"""Avro record schemas <-> fieldshift Schema: types, logical types, ids, defaults, errors, round trips."""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift import Field, ListType, MapType, Schema, StructType
from fieldshift.schema.formats.avro import AvroSchemaError, avro_name, schema_from_avro, schema_to_avro

UTC = dt.UTC
LEAP_DAY = dt.date(2024, 2, 29)
STRUCT_X3 = {"type": "record", "name": "S", "fields": [{"name": "x", "type": "int", "default": 3}]}


def record(*fields: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "record", "name": "rec", "fields": list(fields), **extra}


def one(avro_type: Any, **attrs: Any) -> Field:
    """The single field of a record holding one field of ``avro_type``."""
    return schema_from_avro(record({"name": "c", "type": avro_type, **attrs})).fields[0]


# -- primitives, unions, nesting -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("avro", "arrow"),
    [
        ("boolean", pa.bool_()),
        ("int", pa.int32()),
        ("long", pa.int64()),
        ("float", pa.float32()),
        ("double", pa.float64()),
        ("bytes", pa.binary()),
        ("string", pa.string()),
        ({"type": "string"}, pa.string()),
        ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, pa.string()),
        ({"type": "fixed", "name": "F", "size": 7}, pa.binary(7)),
    ],
)
def test_primitive_is_required(avro: Any, arrow: pa.DataType) -> None:
    f = one(avro)
    assert f.type == arrow
    assert not f.nullable


def test_null_type_is_nullable() -> None:
    f = one("null")
    assert f.type == pa.null() and f.nullable


@pytest.mark.parametrize("union", [["null", "long"], ["long", "null"]])
def test_nullable_union_either_order(union: list[str]) -> None:
    f = one(union)
    assert f.type == pa.int64() and f.nullable


def test_union_of_two_types_names_the_nested_path() -> None:
    choice = {"name": "choice", "type": ["null", "int", "string"]}
    inner = {"type": "record", "name": "Inner", "fields": [choice]}
    avro = record({"name": "outer", "type": {"type": "array", "items": inner}})
    with pytest.raises(AvroSchemaError, match=re.escape("'outer.element.choice' is a union of int, string")):
        schema_from_avro(avro)


def test_union_error_is_a_schema_evolution_error() -> None:
    with pytest.raises(fs.SchemaEvolutionError):
        one(["int", "string"])


def test_nested_record_array_map() -> None:
    avro = record(
        {"name": "s", "type": {"type": "record", "name": "S", "fields": [{"name": "x", "type": "int"}]}},
        {"name": "l", "type": {"type": "array", "items": ["null", "string"]}},
        {"name": "m", "type": {"type": "map", "values": "double"}},
    )
    s = schema_from_avro(avro)
    assert isinstance(s.find("s").type, StructType)
    assert s.find("s.x").type == pa.int32()
    lt = s.find("l").type
    assert isinstance(lt, ListType) and lt.element.type == pa.string() and lt.element.nullable
    mt = s.find("m").type
    assert isinstance(mt, MapType)
    assert mt.key.type == pa.string() and not mt.key.nullable
    assert mt.value.type == pa.float64() and not mt.value.nullable


def test_iceberg_map_with_non_string_keys() -> None:
    kv = {
        "type": "record",
        "name": "k3_v4",
        "fields": [
            {"name": "key", "type": "int", "field-id": 3},
            {"name": "value", "type": "string", "field-id": 4},
        ],
    }
    s = schema_from_avro(record({"name": "m", "type": {"type": "array", "logicalType": "map", "items": kv},
                                 "field-id": 1}))
    mt = s.find("m").type
    assert isinstance(mt, MapType)
    assert (mt.key.id, mt.key.type, mt.value.id, mt.value.type) == (3, pa.int32(), 4, pa.string())


def test_named_type_reused_by_reference_gets_fresh_ids() -> None:
    addr = {"type": "record", "name": "Addr", "namespace": "ns", "fields": [{"name": "zip", "type": "int"}]}
    s = schema_from_avro(record({"name": "home", "type": addr}, {"name": "work", "type": ["null", "ns.Addr"]},
                                {"name": "other", "type": "Addr"}, namespace="ns"))
    ids = [s.find(p).id for p in ("home", "home.zip", "work", "work.zip", "other", "other.zip")]
    assert ids == [1, 2, 3, 4, 5, 6]
    assert s.find("work").nullable and s.find("work.zip").type == pa.int32()


@pytest.mark.parametrize(
    ("avro", "message"),
    [
        (record({"name": "self", "type": ["null", "rec"]}), "'self' refers back to record 'rec'"),
        (record({"name": "x", "type": "Nope"}), "'x' has unknown type 'Nope'"),
        ({"type": "array", "items": "int"}, "must be a record"),
        ("{not json", "not valid JSON"),
        (record({"name": "x"}), "malformed field"),
        (record({"name": "x", "type": {"type": "array"}}), "'x' has no 'items'"),
        (record({"name": "x", "type": "int", "field-id": "7"}), "'field-id' must be an integer"),
        (record({"name": "a", "type": {"type": "fixed", "name": "F", "size": 2}},
                {"name": "b", "type": {"type": "fixed", "name": "F", "size": 3}}), "'F' is defined twice"),
    ],
)
def test_invalid_schemas_are_refused(avro: Any, message: str) -> None:
    with pytest.raises(AvroSchemaError, match=re.escape(message)):
        schema_from_avro(avro)


def test_from_avro_accepts_json_text_and_keeps_docs() -> None:
    text = json.dumps(record({"name": "a", "type": "int", "doc": "the a"}, doc="table doc"))
    s = Schema.from_avro(text, schema_id=4)
    assert s.schema_id == 4 and s.doc == "table doc" and s.find("a").doc == "the a"


def test_iceberg_field_name_wins_over_avro_name() -> None:
    s = schema_from_avro(record({"name": "a_x2Eb", "iceberg-field-name": "a.b", "type": "int"}))
    assert s.names == ["a.b"]


# -- logical types ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("avro", "arrow"),
    [
        ({"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}, pa.decimal128(10, 2)),
        ({"type": "bytes", "logicalType": "decimal", "precision": 9}, pa.decimal128(9, 0)),
        ({"type": "fixed", "name": "D", "size": 16, "logicalType": "decimal", "precision": 38, "scale": 5},
         pa.decimal128(38, 5)),
        ({"type": "bytes", "logicalType": "decimal", "precision": 50, "scale": 3}, pa.decimal256(50, 3)),
        ({"type": "string", "logicalType": "uuid"}, pa.string()),
        ({"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"}, pa.binary(16)),
        ({"type": "int", "logicalType": "date"}, pa.date32()),
        ({"type": "int", "logicalType": "time-millis"}, pa.time32("ms")),
        ({"type": "long", "logicalType": "time-micros"}, pa.time64("us")),
        ({"type": "long", "logicalType": "timestamp-millis"}, pa.timestamp("ms", tz="UTC")),
        ({"type": "long", "logicalType": "timestamp-micros"}, pa.timestamp("us", tz="UTC")),
        ({"type": "long", "logicalType": "timestamp-nanos"}, pa.timestamp("ns", tz="UTC")),
        ({"type": "long", "logicalType": "local-timestamp-millis"}, pa.timestamp("ms")),
        ({"type": "long", "logicalType": "local-timestamp-micros"}, pa.timestamp("us")),
        ({"type": "long", "logicalType": "local-timestamp-nanos"}, pa.timestamp("ns")),
        ({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": False}, pa.timestamp("us")),
        ({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True},
         pa.timestamp("us", tz="UTC")),
    ],
)
def test_logical_types(avro: dict[str, Any], arrow: pa.DataType) -> None:
    assert one(avro).type == arrow


@pytest.mark.parametrize(
    ("avro", "arrow"),
    [
        ({"type": "string", "logicalType": "decimal", "precision": 5}, pa.string()),
        ({"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 6}, pa.binary()),
        ({"type": "bytes", "logicalType": "decimal"}, pa.binary()),
        ({"type": "long", "logicalType": "date"}, pa.int64()),
        ({"type": "int", "logicalType": "timestamp-millis"}, pa.int32()),
        ({"type": "long", "logicalType": "something-new"}, pa.int64()),
        ({"type": "fixed", "name": "Dur", "size": 12, "logicalType": "duration"}, pa.binary(12)),
    ],
)
def test_unknown_or_misplaced_logical_types_fall_back_to_the_base_type(
    avro: dict[str, Any], arrow: pa.DataType
) -> None:
    assert one(avro).type == arrow


# -- field ids -------------------------------------------------------------------------------------


def test_explicit_ids_are_kept_at_every_depth() -> None:
    avro = record(
        {"name": "l", "field-id": 10, "type": {"type": "array", "element-id": 11, "items": "int"}},
        {"name": "m", "field-id": 20, "type": {"type": "map", "key-id": 21, "value-id": 22, "values": "int"}},
        {"name": "s", "field-id": 30, "type": {"type": "record", "name": "S",
                                               "fields": [{"name": "x", "type": "int", "field-id": 31}]}},
    )
    s = schema_from_avro(avro, assign_ids=False)
    assert [f.id for f in s.all_fields()] == [10, 11, 20, 21, 22, 30, 31]
    assert s.highest_field_id == 31


def test_missing_ids_are_assigned_pre_order_skipping_used_ids() -> None:
    avro = record(
        {"name": "a", "type": "int"},
        {"name": "b", "field-id": 2, "type": {"type": "array", "items": {
            "type": "record", "name": "E",
            "fields": [{"name": "x", "type": "int"}, {"name": "y", "type": "int", "field-id": 4}]}}},
        {"name": "m", "type": {"type": "map", "values": "int"}},
    )
    s = schema_from_avro(avro)
    ids = {s.path_of(f.id): f.id for f in s.all_fields()}
    assert ids == {"a": 1, "b": 2, "b.element": 3, "b.element.x": 5, "b.element.y": 4, "m": 6, "m.key": 7,
                   "m.value": 8}


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ({"name": "a", "type": "int"}, "'a' has no 'field-id'"),
        ({"name": "a", "field-id": 1, "type": {"type": "array", "items": "int"}},
         "'a.element' has no 'element-id'"),
        ({"name": "a", "field-id": 1, "type": {"type": "map", "value-id": 3, "values": "int"}},
         "'a.key' has no 'key-id'"),
        ({"name": "a", "field-id": 1, "type": {"type": "map", "key-id": 2, "values": "int"}},
         "'a.value' has no 'value-id'"),
    ],
)
def test_assign_ids_false_refuses_missing_ids(field: dict[str, Any], message: str) -> None:
    with pytest.raises(fs.MissingFieldIdError, match=re.escape(message)):
        schema_from_avro(record(field), assign_ids=False)


def test_duplicate_explicit_ids_are_refused() -> None:
    avro = record({"name": "a", "type": "int", "field-id": 1}, {"name": "b", "type": "int", "field-id": 1})
    with pytest.raises(fs.DuplicateFieldError):
        schema_from_avro(avro)


# -- defaults --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("avro", "default", "expected"),
    [
        ("int", 7, 7),
        ("string", "x", "x"),
        ("boolean", True, True),
        ("double", 1.5, 1.5),
        ("bytes", "\u0000\u00ff", b"\x00\xff"),
        ({"type": "fixed", "name": "F", "size": 2}, "ab", b"ab"),
        ({"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}, "\u00ff\u0038",
         Decimal("-2.00")),
        ({"type": "int", "logicalType": "date"}, 1, dt.date(1970, 1, 2)),
        ({"type": "int", "logicalType": "time-millis"}, 1500, dt.time(0, 0, 1, 500000)),
        ({"type": "long", "logicalType": "timestamp-millis"}, 1000,
         dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)),
        ({"type": "long", "logicalType": "local-timestamp-micros"}, 1, dt.datetime(1970, 1, 1, 0, 0, 0, 1)),
        ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, "B", "B"),
        ({"type": "array", "items": "int"}, [1, 2], [1, 2]),
        ({"type": "map", "values": "int"}, {"a": 1}, {"a": 1}),
        (STRUCT_X3, {}, {}),
        (STRUCT_X3, {"x": 3}, {}),
        (["int", "null"], 5, 5),
        (["null", "int"], None, None),
        (["null", "int"], 5, 5),  # lenient: strict Avro wants null when null comes first
    ],
)
def test_default_becomes_initial_and_write_default(avro: Any, default: Any, expected: Any) -> None:
    f = one(avro, default=default)
    assert f.initial_default == expected
    assert f.write_default == expected


def test_no_default_means_none() -> None:
    f = one("int")
    assert f.initial_default is None and f.write_default is None


@pytest.mark.parametrize(
    ("avro", "default", "message"),
    [
        ("int", "seven", "'c': default 'seven' does not fit type int"),
        (STRUCT_X3, {"x": 4},
         "'c': the record default sets 'x' to 4"),
        ({"type": "record", "name": "S", "fields": [{"name": "x", "type": "int"}]}, {"y": 1},
         "'c': the default names unknown field 'y'"),
        ({"type": "array", "items": "int"}, 3, "'c': an array default must be a list"),
        ({"type": "map", "values": "int"}, 3, "'c': a map default must be an object"),
        ("bytes", "\u0100", "'c': default 'Ā' does not fit type binary"),
        ({"type": "array", "items": "int"}, ["x"], "'c': default ['x'] does not fit type list<int>"),
    ],
)
def test_bad_defaults_name_the_field(avro: Any, default: Any, message: str) -> None:
    with pytest.raises(fs.InvalidDefaultError, match=re.escape(message)):
        one(avro, default=default)


# -- writing Avro ----------------------------------------------------------------------------------


def native_schema() -> Schema:
    """Every Avro-native type, nested, with docs and defaults."""
    point = StructType((Field(5, "x", pa.float64(), False, initial_default=0.0, write_default=0.0),
                        Field(6, "y", pa.float64())))
    return Schema(
        [
            Field(1, "id", pa.int64(), False, doc="row id"),
            Field(2, "flag", pa.bool_(), initial_default=True, write_default=True),
            Field(3, "n", pa.int32()),
            Field(4, "pt", point, initial_default={}, write_default={}),
            Field(7, "tags", ListType(Field(8, "element", pa.string(), False))),
            Field(9, "attrs", MapType(Field(10, "key", pa.string(), False), Field(11, "value", pa.binary()))),
            Field(12, "counts", MapType(Field(13, "key", pa.int32(), False), Field(14, "value", pa.int64()))),
            Field(15, "price", pa.decimal128(12, 3), initial_default=Decimal("-1.250"),
                  write_default=Decimal("-1.250")),
            Field(16, "big", pa.decimal256(60, 0)),
            Field(17, "day", pa.date32(), initial_default=LEAP_DAY, write_default=LEAP_DAY),
            Field(18, "t_ms", pa.time32("ms")),
            Field(19, "t_us", pa.time64("us")),
            Field(20, "ts_ms", pa.timestamp("ms", tz="UTC")),
            Field(21, "ts_us", pa.timestamp("us", tz="UTC")),
            Field(22, "ts_ns", pa.timestamp("ns", tz="UTC")),
            Field(23, "lts_ms", pa.timestamp("ms")),
            Field(24, "lts_us", pa.timestamp("us"), initial_default=dt.datetime(2020, 1, 1, 12),
                  write_default=dt.datetime(2020, 1, 1, 12)),
            Field(25, "lts_ns", pa.timestamp("ns")),
            Field(26, "f", pa.float32(), False, initial_default=1.5, write_default=1.5),
            Field(27, "raw", pa.binary(3), initial_default=b"\x00\x01\xff", write_default=b"\x00\x01\xff"),
            Field(28, "s", pa.string(), False, initial_default="dflt", write_default="dflt"),
            Field(29, "a.b c", pa.int32()),
            Field(30, "nothing", pa.null()),
            Field(31, "nested", ListType(Field(32, "element", StructType((Field(33, "z", pa.int32()),))))),
        ],
        doc="all the Avro types",
    )


def test_round_trip_of_avro_native_types() -> None:
    s = native_schema()
    back = schema_from_avro(schema_to_avro(s))
    assert back.logically_equal(s)
    assert back.highest_field_id == s.highest_field_id
    assert [f.initial_default for f in back.all_fields()] == [f.initial_default for f in s.all_fields()]
    assert [f.doc for f in back.all_fields()] == [f.doc for f in s.all_fields()]
    assert back.doc == s.doc


def test_to_avro_is_a_fixpoint_and_valid_json() -> None:
    avro = Schema.to_avro(native_schema(), name="com.example.Row")
    assert schema_to_avro(schema_from_avro(json.dumps(avro)), name="com.example.Row") == avro


def test_to_avro_is_accepted_by_fastavro() -> None:
    fastavro = pytest.importorskip("fastavro")
    fastavro.parse_schema(schema_to_avro(native_schema()))


def test_to_avro_field_layout() -> None:
    avro = schema_to_avro(native_schema())
    by_name = {f["name"]: f for f in avro["fields"]}
    assert by_name["id"] == {"name": "id", "type": "long", "doc": "row id", "field-id": 1}
    assert by_name["n"]["type"] == ["null", "int"] and by_name["n"]["default"] is None
    assert by_name["flag"]["type"] == ["boolean", "null"] and by_name["flag"]["default"] is True
    assert by_name["pt"]["default"] == {"x": 0.0, "y": None}
    assert by_name["tags"]["type"][1] == {"type": "array", "items": "string", "element-id": 8}
    attrs = {"type": "map", "values": ["null", "bytes"], "key-id": 10, "value-id": 11}
    assert by_name["attrs"]["type"][1] == attrs
    assert by_name["counts"]["type"][1]["logicalType"] == "map"
    assert by_name["a_x2Eb_x20c"]["iceberg-field-name"] == "a.b c"
    assert by_name["nothing"] == {"name": "nothing", "type": "null", "default": None, "field-id": 30}


@pytest.mark.parametrize(
    ("name", "expected"),
    [("ok_name", "ok_name"), ("a.b", "a_x2Eb"), ("1st", "_1st"), ("é", "_xE9"), ("a-b", "a_x2Db")],
)
def test_avro_name_follows_iceberg(name: str, expected: str) -> None:
    assert avro_name(name) == expected


def test_invalid_record_name_is_refused() -> None:
    with pytest.raises(AvroSchemaError, match="not a valid Avro record name"):
        schema_to_avro(native_schema(), name="my table")


@pytest.mark.parametrize(
    ("arrow", "avro", "back"),
    [
        (pa.int8(), "int", pa.int32()),
        (pa.int16(), "int", pa.int32()),
        (pa.uint8(), "int", pa.int32()),
        (pa.uint16(), "int", pa.int32()),
        (pa.uint32(), "long", pa.int64()),
        (pa.uint64(), {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 0},
         pa.decimal128(20, 0)),
        (pa.float16(), "float", pa.float32()),
        (pa.large_string(), "string", pa.string()),
        (pa.large_binary(), "bytes", pa.binary()),
        (pa.date64(), {"type": "int", "logicalType": "date"}, pa.date32()),
        (pa.time32("s"), {"type": "int", "logicalType": "time-millis"}, pa.time32("ms")),
        (pa.time64("ns"), {"type": "long", "logicalType": "time-nanos"}, pa.time64("ns")),
        (pa.timestamp("s"), {"type": "long", "logicalType": "local-timestamp-millis"}, pa.timestamp("ms")),
        (pa.timestamp("s", tz="UTC"), {"type": "long", "logicalType": "timestamp-millis"},
         pa.timestamp("ms", tz="UTC")),
        (pa.timestamp("us", tz="Europe/Paris"), {"type": "long", "logicalType": "timestamp-micros"},
         pa.timestamp("us", tz="UTC")),
    ],
)
def test_types_avro_lacks_map_to_a_wider_type(arrow: pa.DataType, avro: Any, back: pa.DataType) -> None:
    s = Schema([Field(1, "c", arrow, False)])
    assert schema_to_avro(s)["fields"][0]["type"] == avro
    assert schema_from_avro(schema_to_avro(s)).fields[0].type == back


@pytest.mark.parametrize(
    ("arrow", "value", "avro_default", "back"),
    [
        (pa.uint64(), 2**64 - 1, (2**64 - 1).to_bytes(9, "big", signed=True).decode("latin-1"),
         Decimal(2**64 - 1)),
        (pa.int8(), -3, -3, -3),
        (pa.timestamp("s"), dt.datetime(1970, 1, 1, 0, 0, 2), 2000, dt.datetime(1970, 1, 1, 0, 0, 2)),
        (pa.time32("s"), dt.time(0, 0, 3), 3000, dt.time(0, 0, 3)),
        (pa.date64(), dt.date(1970, 1, 3), 2, dt.date(1970, 1, 3)),
        (pa.timestamp("us", tz="Europe/Paris"), dt.datetime(1970, 1, 1, 1, tzinfo=UTC), 3_600_000_000,
         dt.datetime(1970, 1, 1, 1, tzinfo=UTC)),
    ],
)
def test_defaults_of_widened_types(arrow: pa.DataType, value: Any, avro_default: Any, back: Any) -> None:
    s = Schema([Field(1, "c", arrow, False, initial_default=value, write_default=value)])
    avro = schema_to_avro(s)
    assert avro["fields"][0]["default"] == avro_default
    assert schema_from_avro(avro).fields[0].initial_default == back


def test_list_variants_become_plain_arrays() -> None:
    element = Field(2, "element", pa.int32(), False)
    for variant, size in (("large_list", None), ("list_view", None), ("fixed_size_list", 3)):
        s = Schema([Field(1, "l", ListType(element, variant, size))])
        back = schema_from_avro(schema_to_avro(s)).fields[0].type
        assert back == ListType(element)
