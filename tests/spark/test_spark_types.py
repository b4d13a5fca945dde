"""fieldshift <-> PySpark types, Spark SQL default literals and the Arrow types Spark accepts.

No Spark session: these only use ``pyspark.sql.types``. (The literal forms were checked once
against Spark 4.x's parser and its row-based Parquet reader filling missing columns from
``EXISTS_DEFAULT``; the integration suite re-checks them with a real session.)
"""

from __future__ import annotations

import datetime as dt
import decimal
import subprocess
import sys
import warnings

import pyarrow as pa
import pytest
from pyspark.sql import types as sst

import fieldshift as fs
import fieldshift.spark as fss
from fieldshift import Field, ListType, MapType, Schema, StructType
from fieldshift.spark import types as spark_types
from fieldshift.spark.arrow_for_spark import arrow_type_for_spark, schema_for_spark
from fieldshift.spark.sql_literals import coerce_default, parse_spark_literal
from fieldshift.spark.types import (
    CURRENT_DEFAULT_KEY,
    EXISTS_DEFAULT_KEY,
    SPARK_FIELD_ID_KEY,
    UnsupportedSparkTypeError,
    field_to_spark,
    schema_to_spark,
    spark_literal,
    spark_to_schema,
    type_to_spark,
)

# -- type mapping -----------------------------------------------------------------------------------
TO_SPARK = [
    (pa.bool_(), sst.BooleanType()),
    (pa.int8(), sst.ByteType()),
    (pa.int16(), sst.ShortType()),
    (pa.int32(), sst.IntegerType()),
    (pa.int64(), sst.LongType()),
    (pa.uint8(), sst.ShortType()),
    (pa.uint16(), sst.IntegerType()),
    (pa.uint32(), sst.LongType()),
    (pa.uint64(), sst.DecimalType(20, 0)),
    (pa.float16(), sst.FloatType()),
    (pa.float32(), sst.FloatType()),
    (pa.float64(), sst.DoubleType()),
    (pa.decimal128(10, 2), sst.DecimalType(10, 2)),
    (pa.decimal128(38, 38), sst.DecimalType(38, 38)),
    (pa.decimal256(20, 3), sst.DecimalType(20, 3)),
    (pa.decimal256(38, 0), sst.DecimalType(38, 0)),
    (pa.decimal32(5, 1), sst.DecimalType(5, 1)),
    (pa.string(), sst.StringType()),
    (pa.large_string(), sst.StringType()),
    (pa.string_view(), sst.StringType()),
    (pa.binary(), sst.BinaryType()),
    (pa.large_binary(), sst.BinaryType()),
    (pa.binary_view(), sst.BinaryType()),
    (pa.binary(16), sst.BinaryType()),
    (pa.date32(), sst.DateType()),
    (pa.date64(), sst.DateType()),
    (pa.null(), sst.NullType()),
    *[(pa.timestamp(u), sst.TimestampNTZType()) for u in ("s", "ms", "us", "ns")],
    *[(pa.timestamp(u, tz="UTC"), sst.TimestampType()) for u in ("s", "ms", "us", "ns")],
    (pa.timestamp("ms", tz="Europe/Paris"), sst.TimestampType()),
    (pa.time32("s"), sst.TimeType(0)),
    (pa.time32("ms"), sst.TimeType(3)),
    (pa.time64("us"), sst.TimeType(6)),
    (pa.time64("ns"), sst.TimeType(6)),
]


@pytest.mark.parametrize(("arrow_type", "spark_type"), TO_SPARK, ids=[str(a) for a, _ in TO_SPARK])
def test_primitive_to_spark(arrow_type: pa.DataType, spark_type: sst.DataType) -> None:
    assert type_to_spark(arrow_type) == spark_type


def test_dictionary_maps_to_its_value_type() -> None:
    assert type_to_spark(pa.dictionary(pa.int32(), pa.string())) == sst.StringType()


def _f(fid: int, name: str, t, **kw) -> Field:
    return Field(fid, name, t, **kw)


def test_nested_types_to_spark() -> None:
    t = StructType((
        _f(2, "a", pa.int32(), nullable=False),
        _f(3, "l", ListType(_f(4, "element", pa.string(), nullable=False), "large_list")),
        _f(5, "m", MapType(_f(6, "key", pa.string()), _f(7, "value", pa.float64()))),
    ))
    spark = type_to_spark(t)
    assert spark == sst.StructType([
        sst.StructField("a", sst.IntegerType(), False, {SPARK_FIELD_ID_KEY: 2}),
        sst.StructField("l", sst.ArrayType(sst.StringType(), containsNull=False), True,
                        {SPARK_FIELD_ID_KEY: 3}),
        sst.StructField("m", sst.MapType(sst.StringType(), sst.DoubleType(), valueContainsNull=True), True,
                        {SPARK_FIELD_ID_KEY: 5}),
    ])


@pytest.mark.parametrize("variant", ["list", "large_list", "list_view", "large_list_view", "fixed_size_list"])
@pytest.mark.parametrize("element_nullable", [True, False])
def test_every_list_layout_is_an_array(variant: str, element_nullable: bool) -> None:
    size = 2 if variant == "fixed_size_list" else None
    t = ListType(_f(1, "element", pa.int64(), nullable=element_nullable), variant, size)
    assert type_to_spark(t) == sst.ArrayType(sst.LongType(), containsNull=element_nullable)


@pytest.mark.parametrize("value_nullable", [True, False])
def test_map_value_nullability(value_nullable: bool) -> None:
    value = _f(2, "value", pa.string(), nullable=value_nullable)
    t = MapType(_f(1, "key", pa.int32()), value, keys_sorted=True)
    expected = sst.MapType(sst.IntegerType(), sst.StringType(), valueContainsNull=value_nullable)
    assert type_to_spark(t) == expected


def test_raw_arrow_nested_types_keep_ids_from_metadata() -> None:
    t = pa.struct([pa.field("x", pa.list_(pa.uint32()), metadata={b"PARQUET:field_id": b"9"}),
                   pa.field("y", pa.map_(pa.string(), pa.large_string()))])
    assert type_to_spark(t) == sst.StructType([
        sst.StructField("x", sst.ArrayType(sst.LongType()), True, {SPARK_FIELD_ID_KEY: 9}),
        sst.StructField("y", sst.MapType(sst.StringType(), sst.StringType()), True, {}),
    ])


def test_schema_to_spark_puts_ids_docs_and_defaults_in_metadata() -> None:
    schema = Schema([
        _f(1, "id", pa.int64(), nullable=False, doc="the key"),
        _f(2, "n", pa.int32(), initial_default=0, write_default=5),
        _f(3, "s", pa.string(), initial_default="x"),
        _f(4, "d", pa.date32(), write_default=dt.date(2020, 1, 1)),
    ])
    spark = schema_to_spark(schema)
    assert fss.schema_to_spark(schema) == spark  # the public path; the schema model knows no Spark
    assert not hasattr(schema, "to_spark")
    assert [f.metadata for f in spark.fields] == [
        {SPARK_FIELD_ID_KEY: 1, "comment": "the key"},
        {SPARK_FIELD_ID_KEY: 2, EXISTS_DEFAULT_KEY: "0", CURRENT_DEFAULT_KEY: "5"},
        {SPARK_FIELD_ID_KEY: 3, EXISTS_DEFAULT_KEY: "'x'"},
        {SPARK_FIELD_ID_KEY: 4, CURRENT_DEFAULT_KEY: "DATE '2020-01-01'"},
    ]
    assert spark.fields[0].nullable is False


def test_field_to_spark_of_a_nested_field_gives_ids_at_every_struct_level() -> None:
    f = _f(1, "t", StructType((_f(2, "u", StructType((_f(3, "v", pa.bool_()),))),)))
    sf = field_to_spark(f)
    assert sf.metadata == {SPARK_FIELD_ID_KEY: 1}
    assert sf.dataType.fields[0].metadata == {SPARK_FIELD_ID_KEY: 2}
    assert sf.dataType.fields[0].dataType.fields[0].metadata == {SPARK_FIELD_ID_KEY: 3}


# -- default literals -----------------------------------------------------------------------------
LITERALS = [
    (pa.bool_(), True, "TRUE"),
    (pa.int8(), -128, "-128Y"),
    (pa.int16(), 7, "7S"),
    (pa.uint8(), 255, "255S"),
    (pa.int32(), 0, "0"),
    (pa.uint16(), 65535, "65535"),
    (pa.int64(), -(2**63), "-9223372036854775808L"),
    (pa.uint32(), 2**32 - 1, "4294967295L"),
    (pa.uint64(), 2**64 - 1, "18446744073709551615BD"),
    (pa.float32(), 1.5, "CAST('1.5' AS FLOAT)"),
    (pa.float32(), float("-inf"), "CAST('-Infinity' AS FLOAT)"),
    (pa.float64(), 1e300, "1e+300D"),
    (pa.float64(), float("nan"), "CAST('NaN' AS DOUBLE)"),
    (pa.decimal128(10, 2), decimal.Decimal("1.50"), "1.50BD"),
    (pa.decimal128(38, 10), decimal.Decimal("-1E-10"), "-0.0000000001BD"),
    (pa.string(), "it's a \\ \n", r"'it\'s a \\ \u000a'"),
    (pa.binary(), b"\x00\xff", "X'00FF'"),
    (pa.date32(), dt.date(2020, 1, 1), "DATE '2020-01-01'"),
    (pa.date64(), dt.date(1, 1, 1), "DATE '0001-01-01'"),
    (pa.timestamp("us", tz="UTC"), dt.datetime(2020, 1, 1, 12, 0, 0, 5, tzinfo=dt.UTC),
     "TIMESTAMP '2020-01-01 12:00:00.000005Z'"),
    (pa.timestamp("s", tz="Europe/Paris"),
     dt.datetime(2020, 1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))),
     "TIMESTAMP '2020-01-01 00:00:00Z'"),
    (pa.timestamp("ms"), dt.datetime(2020, 1, 1, 1, 2, 3, 4000),
     "TIMESTAMP_NTZ '2020-01-01 01:02:03.004000'"),
    (pa.time64("us"), dt.time(1, 2, 3, 4), "TIME '01:02:03.000004'"),
    (ListType(_f(1, "element", pa.int8())), [1, None], "ARRAY(1Y, CAST(NULL AS TINYINT))"),
    (ListType(_f(1, "element", pa.int32())), [], "CAST(ARRAY() AS ARRAY<INT>)"),
    (MapType(_f(1, "key", pa.string()), _f(2, "value", pa.int64())), {"a": 1}, "MAP('a', 1L)"),
    (MapType(_f(1, "key", pa.string()), _f(2, "value", pa.int64())), {},
     "CAST(MAP() AS MAP<STRING, BIGINT>)"),
]


@pytest.mark.parametrize(("t", "value", "literal"), LITERALS, ids=[lit for _, _, lit in LITERALS])
def test_spark_literal_forms(t, value, literal: str) -> None:
    assert spark_literal(value, t) == literal


@pytest.mark.parametrize(("t", "value", "literal"), LITERALS, ids=[lit for _, _, lit in LITERALS])
def test_spark_literals_parse_back(t, value, literal: str) -> None:
    back = coerce_default(parse_spark_literal(literal), t)
    if isinstance(value, float) and value != value:
        assert back != back
    else:
        assert back == Field(1, "x", t, initial_default=value).initial_default


def test_exists_default_of_a_struct_is_built_from_the_children() -> None:
    f = _f(1, "t", StructType((_f(2, "x", pa.int32(), initial_default=3), _f(3, "y", pa.string()))),
           initial_default={})
    sf = field_to_spark(f)
    assert sf.metadata[EXISTS_DEFAULT_KEY] == "NAMED_STRUCT('x', 3, 'y', CAST(NULL AS STRING))"
    assert sf.dataType.fields[0].metadata[EXISTS_DEFAULT_KEY] == "3"
    assert spark_to_schema(sst.StructType([sf])).fields[0].initial_default == {}


@pytest.mark.parametrize("text", [
    "1.5", "CAST(NULL AS INT)", "NULL", "TIMESTAMP '2020-01-01 00:00:00'",
    "timestamp'2020-01-01 01:00:00+01:00'", "array(1, 2)", "map('a', named_struct('x', 1))", "-  5L",
    "X''", "\"dq\"", "CAST('x' AS STRUCT<`a b`: INT>)",
])
def test_parse_spark_literal_accepts_sparks_own_forms(text: str) -> None:
    parse_spark_literal(text)  # does not raise


def test_timestamp_literal_without_zone_is_read_as_utc() -> None:
    assert parse_spark_literal("TIMESTAMP '2020-01-01 00:00:00'") == dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    assert parse_spark_literal("TIMESTAMP '2020-01-01 01:00:00+01:00'") == dt.datetime(
        2020, 1, 1, tzinfo=dt.UTC)


def test_unreadable_default_is_dropped_with_a_warning() -> None:
    sf = sst.StructField("a", sst.IntegerType(), True, {SPARK_FIELD_ID_KEY: 1, EXISTS_DEFAULT_KEY: "rand()"})
    with pytest.warns(UserWarning, match="ignoring EXISTS_DEFAULT 'rand\\(\\)'"):
        schema = spark_to_schema(sst.StructType([sf]))
    assert schema.fields[0].initial_default is None


def test_spark_defaults_round_trip_through_metadata() -> None:
    schema = Schema([
        _f(1, "a", pa.int64(), nullable=False, initial_default=7, write_default=8, doc="doc"),
        _f(2, "b", ListType(_f(3, "element", pa.decimal128(5, 2))),
           initial_default=[decimal.Decimal("1.25"), None]),
        _f(4, "c", MapType(_f(5, "key", pa.date32()), _f(6, "value", pa.binary())),
           initial_default={dt.date(2021, 2, 3): b"\x01"}),
        _f(7, "d", pa.timestamp("us"), write_default=dt.datetime(1999, 12, 31, 23, 59, 59, 999999)),
    ])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert spark_to_schema(schema_to_spark(schema), like=schema) == schema


# -- errors ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("t", [pa.decimal256(39, 0), pa.decimal256(76, 10)])
def test_decimal_wider_than_38_is_refused(t: pa.DataType) -> None:
    with pytest.raises(UnsupportedSparkTypeError, match="at most 38 digits"):
        type_to_spark(t)
    with pytest.raises(UnsupportedSparkTypeError, match="at most 38 digits"):
        arrow_type_for_spark(t)


def test_decimal_error_names_the_nested_path() -> None:
    schema = Schema([_f(1, "t", StructType((_f(2, "l", ListType(_f(3, "element", pa.decimal256(40, 2)))),)))])
    dotted = Schema([_f(1, "a.b", ListType(_f(2, "element", pa.decimal256(40, 2))))])
    with pytest.raises(UnsupportedSparkTypeError, match=r"column '`a\.b`\.element'"):
        schema_to_spark(dotted)
    with pytest.raises(UnsupportedSparkTypeError, match=r"column 't\.l\.element' has type decimal\(40,2\)"):
        schema_to_spark(schema)
    with pytest.raises(UnsupportedSparkTypeError, match=r"'t\.l\.element'"):
        schema_for_spark(schema)
    assert issubclass(UnsupportedSparkTypeError, fs.SchemaEvolutionError)
    assert issubclass(UnsupportedSparkTypeError, TypeError)


def test_time_without_spark_time_type_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spark_types, "_TimeType", None)
    with pytest.raises(UnsupportedSparkTypeError, match="has no TimeType"):
        type_to_spark(pa.time64("us"))
    with pytest.raises(UnsupportedSparkTypeError, match="has no TimeType"):
        arrow_type_for_spark(pa.time32("s"))


@pytest.mark.parametrize("t", [pa.duration("us"), pa.month_day_nano_interval()])
def test_types_spark_cannot_hold(t: pa.DataType) -> None:
    with pytest.raises(UnsupportedSparkTypeError):
        type_to_spark(t)


@pytest.mark.parametrize("t", [sst.CalendarIntervalType(), sst.VariantType(), sst.DayTimeIntervalType()])
def test_spark_types_fieldshift_does_not_store(t: sst.DataType) -> None:
    sf = sst.StructField("x", t, True, {SPARK_FIELD_ID_KEY: 1})
    with pytest.raises(UnsupportedSparkTypeError, match="'x'"):
        spark_to_schema(sst.StructType([sf]))


# -- Spark -> fieldshift ----------------------------------------------------------------------------
FROM_SPARK = [
    (sst.BooleanType(), pa.bool_()),
    (sst.ByteType(), pa.int8()),
    (sst.ShortType(), pa.int16()),
    (sst.IntegerType(), pa.int32()),
    (sst.LongType(), pa.int64()),
    (sst.FloatType(), pa.float32()),
    (sst.DoubleType(), pa.float64()),
    (sst.DecimalType(12, 4), pa.decimal128(12, 4)),
    (sst.StringType(), pa.string()),
    (sst.CharType(3), pa.string()),
    (sst.VarcharType(10), pa.string()),
    (sst.BinaryType(), pa.binary()),
    (sst.DateType(), pa.date32()),
    (sst.TimestampType(), pa.timestamp("us", tz="UTC")),
    (sst.TimestampNTZType(), pa.timestamp("us")),
    (sst.TimeType(0), pa.time32("s")),
    (sst.TimeType(2), pa.time32("ms")),
    (sst.TimeType(3), pa.time32("ms")),
    (sst.TimeType(6), pa.time64("us")),
    (sst.NullType(), pa.null()),
]


@pytest.mark.parametrize(("spark_type", "arrow_type"), FROM_SPARK, ids=[str(s) for s, _ in FROM_SPARK])
def test_spark_to_arrow_primitive(spark_type: sst.DataType, arrow_type: pa.DataType) -> None:
    sf = sst.StructField("x", spark_type, True, {SPARK_FIELD_ID_KEY: 4})
    assert spark_to_schema(sst.StructType([sf])).fields[0].type == arrow_type


def test_missing_id_names_the_path() -> None:
    st_ = sst.StructType([
        sst.StructField("t", sst.StructType([sst.StructField("x", sst.IntegerType())]), True,
                        {SPARK_FIELD_ID_KEY: 1}),
    ])
    with pytest.raises(fs.MissingFieldIdError, match=r"'t\.x'.*like=.*assign_ids=True"):
        spark_to_schema(st_)


def test_assign_ids_numbers_id_less_fields_after_the_ids_in_use() -> None:
    st_ = sst.StructType([
        sst.StructField("a", sst.IntegerType(), True, {SPARK_FIELD_ID_KEY: 5}),
        sst.StructField("b", sst.StructType([sst.StructField("x", sst.IntegerType())])),
        sst.StructField("c", sst.ArrayType(sst.StringType())),
    ])
    schema = spark_to_schema(st_, assign_ids=True, schema_id=3)
    assert [(schema.path_of(f.id), f.id) for f in schema.all_fields()] == [
        ("a", 5), ("b", 6), ("b.x", 7), ("c", 8), ("c.element", 9)]
    assert schema.schema_id == 3
    assert schema.highest_field_id == 9


def test_like_supplies_element_key_and_value_ids_by_id_even_after_a_rename() -> None:
    like = Schema([
        _f(1, "l", ListType(_f(2, "element", StructType((_f(3, "x", pa.int32()),))))),
        _f(4, "m", MapType(_f(5, "key", pa.string()),
                           _f(6, "value", ListType(_f(7, "element", pa.int64()))))),
        _f(8, "gone", pa.int32()),
    ]).update().drop_column("gone").rename_column("l", "renamed").apply()
    spark = schema_to_spark(like)
    back = spark_to_schema(spark, like=like)
    assert back.same_structure(like)
    assert back.highest_field_id == 8  # the dropped id stays retired
    # without like, list/map members get fresh ids above every id the Spark schema carries
    fresh = spark_to_schema(spark)
    assert [f.id for f in fresh.all_fields()] == [1, 5, 3, 4, 6, 7, 8]
    assert fresh.highest_field_id == 8


def test_like_fills_struct_fields_without_metadata_by_name() -> None:
    like = Schema([_f(10, "a", pa.int32()), _f(20, "b", StructType((_f(21, "c", pa.string()),)))])
    bare = sst.StructType([
        sst.StructField("b", sst.StructType([sst.StructField("c", sst.StringType()),
                                             sst.StructField("new", sst.LongType())])),
        sst.StructField("a", sst.IntegerType()),
    ])
    with pytest.raises(fs.MissingFieldIdError, match=r"'b\.new'"):
        spark_to_schema(bare, like=like)
    back = spark_to_schema(bare, like=like, assign_ids=True)
    assert [(back.path_of(f.id), f.id) for f in back.all_fields()] == [
        ("b", 20), ("b.c", 21), ("b.new", 22), ("a", 10)]


def test_like_never_hands_out_an_id_a_spark_field_already_uses() -> None:
    like = Schema([_f(1, "a", pa.int32()), _f(2, "b", pa.int32())])
    spark = sst.StructType([
        sst.StructField("a", sst.IntegerType(), True, {SPARK_FIELD_ID_KEY: 2}),  # id 2 now on "a"
        sst.StructField("b", sst.IntegerType()),
    ])
    back = spark_to_schema(spark, like=like, assign_ids=True)
    assert [(f.name, f.id) for f in back.fields] == [("a", 2), ("b", 3)]


def test_identifier_fields_come_from_like_when_still_valid() -> None:
    like = Schema([_f(1, "id", pa.int64(), nullable=False), _f(2, "v", pa.string())],
                  identifier_field_ids=[1])
    spark = schema_to_spark(like)
    assert spark_to_schema(spark, like=like).identifier_field_ids == (1,)
    assert spark_to_schema(spark, like=like, identifier_field_ids=()).identifier_field_ids == ()


def test_non_integer_field_id_is_reported() -> None:
    sf = sst.StructField("a", sst.IntegerType(), True, {SPARK_FIELD_ID_KEY: "x"})
    with pytest.raises(fs.SchemaEvolutionError, match="not an integer"):
        spark_to_schema(sst.StructType([sf]))


# -- Arrow types Spark accepts -----------------------------------------------------------------------
FOR_SPARK = [
    (pa.uint8(), pa.int16()),
    (pa.uint16(), pa.int32()),
    (pa.uint32(), pa.int64()),
    (pa.uint64(), pa.decimal128(20, 0)),
    (pa.int8(), pa.int8()),
    (pa.float16(), pa.float32()),
    (pa.float64(), pa.float64()),
    (pa.decimal256(30, 2), pa.decimal128(30, 2)),
    (pa.decimal64(10, 2), pa.decimal128(10, 2)),
    (pa.large_string(), pa.string()),
    (pa.string_view(), pa.string()),
    (pa.large_binary(), pa.binary()),
    (pa.binary_view(), pa.binary()),
    (pa.binary(4), pa.binary()),
    (pa.dictionary(pa.int8(), pa.large_string()), pa.string()),
    (pa.date64(), pa.date32()),
    (pa.timestamp("s"), pa.timestamp("us")),
    (pa.timestamp("ns", tz="Europe/Paris"), pa.timestamp("us", tz="Europe/Paris")),
    (pa.time32("s"), pa.time64("ns")),
    (pa.time64("us"), pa.time64("ns")),
    (pa.null(), pa.null()),
    (pa.large_list(pa.uint32()), pa.list_(pa.int64())),
    (pa.list_view(pa.int8()), pa.list_(pa.int8())),
    (pa.list_(pa.int8(), 3), pa.list_(pa.int8())),
    (pa.map_(pa.large_string(), pa.uint64(), keys_sorted=True), pa.map_(pa.string(), pa.decimal128(20, 0))),
    (pa.struct([pa.field("a", pa.uint16(), nullable=False, metadata={b"PARQUET:field_id": b"3"})]),
     pa.struct([pa.field("a", pa.int32(), nullable=False, metadata={b"PARQUET:field_id": b"3"})])),
]


@pytest.mark.parametrize(("arrow_type", "expected"), FOR_SPARK, ids=[str(a) for a, _ in FOR_SPARK])
def test_arrow_type_for_spark(arrow_type: pa.DataType, expected: pa.DataType) -> None:
    got = arrow_type_for_spark(arrow_type)
    assert got == expected
    if pa.types.is_struct(got):
        assert got.field(0).metadata == expected.field(0).metadata
        assert got.field(0).nullable is False


def test_schema_for_spark_keeps_ids_and_converts_defaults() -> None:
    schema = Schema([
        _f(1, "u", pa.uint64(), nullable=False, initial_default=2**64 - 1),
        _f(2, "l", ListType(_f(3, "element", pa.uint8()), "large_list"), initial_default=[1, None]),
        _f(4, "ts", pa.timestamp("ns"), initial_default=dt.datetime(2020, 1, 1, 0, 0, 0, 7)),
        _f(5, "h", pa.float16(), write_default=0.5),
        _f(6, "s", StructType((_f(7, "x", pa.date64(), initial_default=dt.date(2020, 2, 2)),)),
           initial_default={}),
    ], schema_id=4, identifier_field_ids=[1], highest_field_id=12)
    out = schema_for_spark(schema)
    assert out.schema_id == 4 and out.highest_field_id == 12 and out.identifier_field_ids == (1,)
    assert [(f.id, str(f)) for f in out.all_fields()] == [
        (1, "1: u decimal(20,0) not null"), (2, "2: l list<int16>"), (3, "3: element int16"),
        (4, "4: ts timestamp"), (5, "5: h float"), (6, "6: s struct<x: date>"), (7, "7: x date")]
    assert out.find("u").initial_default == decimal.Decimal(2**64 - 1)
    assert out.find("l").initial_default == [1, None]
    assert out.find("ts").initial_default == dt.datetime(2020, 1, 1, 0, 0, 0, 7)
    assert out.find("h").write_default == 0.5
    assert out.find("s").initial_default == {}
    assert out.find("s.x").initial_default == dt.date(2020, 2, 2)
    assert schema_for_spark(out) == out


def test_import_fieldshift_spark_does_not_import_pyspark() -> None:
    code = ("import sys, fieldshift.spark as s; assert 'pyspark' not in sys.modules; "
            "s.schema_to_spark; assert 'pyspark' in sys.modules; print(sorted(s.__all__))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "schema_to_spark" in out.stdout


def test_unknown_attribute_of_the_package_is_an_attribute_error() -> None:
    import fieldshift.spark

    with pytest.raises(AttributeError):
        fieldshift.spark.no_such_thing  # noqa: B018
