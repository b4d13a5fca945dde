"""Property tests: random nested schemas survive Arrow, Iceberg JSON, pickling and Spark.

What each format keeps (and the tests hold it to):

* Arrow (``to_arrow``/``from_arrow``): ids, names, physical types, nullability and docs, exactly.
  Defaults, identifier fields, schema id and highest_field_id are not Arrow concepts and are passed
  or recomputed by the caller.
* Iceberg JSON: everything, exactly, for canonical physical types; physical variants (large/view
  strings, binaries and lists, decimal256 of small precision) come back as their canonical type.
* Spark: ids of struct fields, names, nullability, docs and defaults exactly for Spark-exact types
  (with ``like=`` for list element / map key and value ids); other types map as documented in
  ``fieldshift.spark.types``.
"""

from __future__ import annotations

import pickle
import warnings

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import types as sst
from pyspark.sql.pandas.types import from_arrow_schema

from fieldshift import Field, Schema
from fieldshift.schema.types import FieldType, ListType, MapType, StructType, logical_type
from fieldshift.spark.arrow_for_spark import arrow_type_for_spark, schema_for_spark
from fieldshift.spark.types import UnsupportedSparkTypeError, schema_to_spark, spark_to_schema

try:
    from tests.strategies import (
        ALL,
        CANONICAL,
        SPARK_EXACT,
        arrow_data,
        primitive_types,
        schemas,
        walk_fields,
    )
except ImportError:  # pytest run without the repo root on sys.path
    from tests.strategies import ALL, CANONICAL, SPARK_EXACT, arrow_data, primitive_types, schemas, walk_fields

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- helpers --------------------------------------------------------------------------------------
def _types_in(t: FieldType) -> list[FieldType]:
    out = [t]
    if isinstance(t, StructType):
        for f in t.fields:
            out += _types_in(f.type)
    elif isinstance(t, ListType):
        out += _types_in(t.element.type)
    elif isinstance(t, MapType):
        out += _types_in(t.key.type) + _types_in(t.value.type)
    return out


def _has(t: FieldType, pred) -> bool:
    return any(isinstance(x, pa.DataType) and pred(x) for x in _types_in(t))


def _json_default_ok(t: FieldType) -> bool:
    """Types whose defaults Iceberg JSON reads back (see test_json_temporal_defaults_read_back)."""
    return not _has(t, lambda x: pa.types.is_time(x) or (pa.types.is_timestamp(x) and x.unit == "ms")
                    or (pa.types.is_timestamp(x) and x.tz not in (None, "UTC")))


def _strip_defaults(f: Field) -> Field:
    return _map_field(f, lambda x: x.with_(initial_default=None, write_default=None))


def _map_field(f: Field, fn) -> Field:
    t = f.type
    if isinstance(t, StructType):
        t = StructType(tuple(_map_field(c, fn) for c in t.fields))
    elif isinstance(t, ListType):
        t = ListType(_map_field(t.element, fn), t.variant, t.size)
    elif isinstance(t, MapType):
        t = MapType(_map_field(t.key, fn), _map_field(t.value, fn), t.keys_sorted)
    return fn(f.with_(type=t))


def _canonical_type(t: FieldType) -> FieldType:
    if isinstance(t, pa.DataType):
        return logical_type(t)
    if isinstance(t, ListType) and t.variant in ("large_list", "list_view", "large_list_view"):
        return ListType(t.element, "list")
    return t


def _canonical(schema: Schema) -> Schema:
    """What Iceberg JSON gives back for a schema with physical variants."""
    fields = [_map_field(f, lambda x: x.with_(type=_canonical_type(x.type))) for f in schema.fields]
    return Schema(fields, schema_id=schema.schema_id, identifier_field_ids=schema.identifier_field_ids,
                  highest_field_id=schema.highest_field_id)


def _defaults_by_id(schema: Schema) -> dict[int, tuple]:
    return {f.id: (f.initial_default, f.write_default, f.doc) for f in schema.all_fields()}


# -- Arrow ----------------------------------------------------------------------------------------
@PROPERTY
@given(schemas())
def test_arrow_round_trip_is_exact(schema: Schema) -> None:
    back = Schema.from_arrow(schema.to_arrow(), schema_id=schema.schema_id,
                             identifier_field_ids=schema.identifier_field_ids)
    expected = Schema([_strip_defaults(f) for f in schema.fields], schema_id=schema.schema_id,
                      identifier_field_ids=schema.identifier_field_ids)
    assert back == expected
    assert back.to_arrow().equals(schema.to_arrow(), check_metadata=True)
    assert back.logically_equal(schema)


@PROPERTY
@given(schemas(), st.data())
def test_arrow_data_matches_its_schema(schema: Schema, data: st.DataObject) -> None:
    table = data.draw(arrow_data(schema))
    table.validate(full=True)
    assert table.schema.equals(schema.to_arrow(), check_metadata=True)
    back = Schema.from_arrow(table.schema, schema_id=schema.schema_id,
                             identifier_field_ids=schema.identifier_field_ids)
    assert back.logically_equal(schema)
    for f, column in zip(schema.fields, table.columns, strict=True):
        if not f.nullable:
            assert column.null_count == 0, f.name


def test_arrow_data_null_rates_stay_in_range() -> None:
    schema = Schema([
        Field(1, "a", pa.int32()),
        Field(2, "s", StructType((Field(3, "x", pa.string()), Field(4, "r", pa.int8(), nullable=False)))),
        Field(5, "l", ListType(Field(6, "element", pa.float64()))),
        Field(7, "req", pa.date32(), nullable=False),
    ])

    @settings(max_examples=5, deadline=None)
    @given(arrow_data(schema, rows=400))
    def check(table: pa.Table) -> None:
        for name in ("a", "s", "l"):
            rate = table.column(name).null_count / table.num_rows
            assert 0.01 <= rate <= 0.3, (name, rate)
        assert table.column("req").null_count == 0
        x = pa.concat_arrays(table.column("s").chunks).field("x")
        assert 0 < x.null_count < table.num_rows
        elements = pa.concat_arrays(table.column("l").chunks).flatten()
        assert elements.null_count > 0

    check()



def test_arrow_keeps_an_empty_doc() -> None:
    schema = Schema([Field(1, "a", pa.int32(), doc="")])
    assert Schema.from_arrow(schema.to_arrow()).fields[0].doc == ""


# -- Iceberg JSON -----------------------------------------------------------------------------------
@PROPERTY
@given(schemas(profile=CANONICAL, defaults=_json_default_ok))
def test_json_round_trip_is_exact_for_canonical_types(schema: Schema) -> None:
    text = schema.to_json()
    back = Schema.from_json(text)
    assert back == schema
    assert back.to_json() == text
    assert back.fingerprint() == schema.fingerprint()
    assert _defaults_by_id(back) == _defaults_by_id(schema)


@PROPERTY
@given(schemas(profile=ALL, defaults=_json_default_ok))
def test_json_round_trip_of_physical_variants_is_logical(schema: Schema) -> None:
    back = Schema.from_json(schema.to_json())
    assert back.logically_equal(schema)
    assert back == _canonical(schema)
    assert _defaults_by_id(back) == _defaults_by_id(schema)



@pytest.mark.parametrize(
    ("arrow_type", "value"),
    [
        (pa.time32("s"), "01:02:03"),
        (pa.time64("us"), "01:02:03.000004"),
        (pa.timestamp("ms"), "2020-01-01 00:00:00.123"),
        (pa.timestamp("ms", tz="UTC"), "2020-01-01 00:00:00.123+00:00"),
        (pa.timestamp("s", tz="Europe/Paris"), "1900-01-01 00:00:00+00:00"),  # LMT offset +00:09:21
    ],
    ids=["time_s", "time_us", "timestamp_ms", "timestamptz_ms", "timestamptz_paris_1900"],
)
def test_json_temporal_defaults_read_back(arrow_type: pa.DataType, value: str) -> None:
    import datetime as dt

    parsed = (dt.time.fromisoformat(value) if pa.types.is_time(arrow_type)
              else dt.datetime.fromisoformat(value))
    schema = Schema([Field(1, "a", arrow_type, initial_default=parsed)])
    assert Schema.from_json(schema.to_json()) == schema


# -- pickling -----------------------------------------------------------------------------------------
@PROPERTY
@given(schemas())
def test_pickle_round_trip_keeps_equality_and_hash(schema: Schema) -> None:
    back = pickle.loads(pickle.dumps(schema))
    assert back == schema
    assert hash(back) == hash(schema)
    assert back.fingerprint() == schema.fingerprint()
    for f in schema.all_fields():
        assert pickle.loads(pickle.dumps(f)) == f


# -- Spark ------------------------------------------------------------------------------------------
@PROPERTY
@given(schemas(profile=SPARK_EXACT))
def test_spark_round_trip_is_exact_for_spark_types(schema: Schema) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every default must parse back
        back = spark_to_schema(schema_to_spark(schema), like=schema, schema_id=schema.schema_id)
    assert back == schema
    assert _defaults_by_id(back) == _defaults_by_id(schema)


_SPARK_ARROW = {
    pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(),
    pa.uint64(): pa.decimal128(20, 0), pa.float16(): pa.float32(), pa.date64(): pa.date32(),
}


def _spark_expected_type(t: FieldType) -> FieldType:
    """The documented Spark mapping, written out independently of fieldshift.spark."""
    if isinstance(t, ListType):
        return ListType(t.element, "list")
    if not isinstance(t, pa.DataType):
        return t
    t = logical_type(t)
    if t in _SPARK_ARROW:
        return _SPARK_ARROW[t]
    if pa.types.is_fixed_size_binary(t):
        return pa.binary()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz=None if t.tz is None else "UTC")
    if pa.types.is_time(t):
        return {"s": pa.time32("s"), "ms": pa.time32("ms")}.get(t.unit, pa.time64("us"))
    return t


def _too_wide_for_spark(schema: Schema) -> bool:
    return any(_has(f.type, lambda x: pa.types.is_decimal(x) and x.precision > 38) for f in schema.fields)


@PROPERTY
@given(schemas(profile=ALL))
def test_spark_round_trip_maps_types_as_documented(schema: Schema) -> None:
    if _too_wide_for_spark(schema):
        with pytest.raises(UnsupportedSparkTypeError, match="at most 38 digits"):
            schema_to_spark(schema)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = spark_to_schema(schema_to_spark(schema), like=schema)
    def spark_like(x: Field) -> Field:
        return x.with_(type=_spark_expected_type(x.type), initial_default=None, write_default=None)

    expected = Schema([_map_field(f, spark_like) for f in schema.fields])
    assert back.logically_equal(expected)
    assert [(f.id, f.name, f.nullable, f.doc) for f in back.all_fields()] == \
        [(f.id, f.name, f.nullable, f.doc) for f in schema.all_fields()]
    assert back.highest_field_id == schema.highest_field_id


@PROPERTY
@given(schemas(profile=SPARK_EXACT, defaults=False))
def test_spark_without_like_keeps_struct_ids_and_numbers_the_rest(schema: Schema) -> None:
    back = spark_to_schema(schema_to_spark(schema))
    struct_ids = {f.id for f in _struct_members(schema)}
    assert {f.id for f in _struct_members(back)} == struct_ids
    fresh = [f.id for f in back.all_fields() if f.id not in struct_ids]
    assert all(i > max(struct_ids) for i in fresh)
    assert len(set(fresh)) == len(fresh)
    assert _shape(back) == _shape(schema)


def _struct_members(schema: Schema) -> list[Field]:
    """Fields that are top-level columns or struct children (the ones a StructField carries)."""
    members = [schema.field(i) for i in (f.id for f in schema.all_fields())]
    def parent_is_struct(f: Field) -> bool:
        parent = schema.parent_id(f.id)
        return parent is None or isinstance(schema.field(parent).type, StructType)

    return [f for f in members if parent_is_struct(f)]


def _shape(schema: Schema) -> list[tuple]:
    """Paths, struct-member ids, nullability and logical types; list/map member ids left out."""
    members = {f.id for f in _struct_members(schema)}
    return [(schema.path_of(f.id), f.id if f.id in members else None, f.nullable,
             str(logical_type(f.type)) if isinstance(f.type, pa.DataType) else type(f.type).__name__)
            for f in schema.all_fields()]


def _no_time(t: pa.DataType) -> bool:
    return not pa.types.is_time(t) and not (pa.types.is_decimal(t) and t.precision > 38)


@PROPERTY
@given(schemas(profile=ALL, primitives=primitive_types(ALL).filter(_no_time)))
def test_schema_for_spark_is_what_spark_reads_from_arrow(schema: Schema) -> None:
    spark_ready = schema_for_spark(schema)
    assert [(f.id, f.name, f.nullable) for f in spark_ready.all_fields()] == \
        [(f.id, f.name, f.nullable) for f in schema.all_fields()]
    assert spark_ready.schema_id == schema.schema_id
    assert spark_ready.highest_field_id == schema.highest_field_id
    assert schema_for_spark(spark_ready) == spark_ready
    for f in spark_ready.all_fields():
        if isinstance(f.type, pa.DataType):
            assert arrow_type_for_spark(f.type) == f.type
    # pyspark's own Arrow -> Spark conversion accepts it and lands on the same Spark types
    assert _bare(from_arrow_schema(spark_ready.to_arrow())) == _bare(schema_to_spark(schema))


def _bare(t: sst.DataType) -> sst.DataType:
    """A Spark type without field metadata (for comparing types only)."""
    if isinstance(t, sst.StructType):
        return sst.StructType([sst.StructField(f.name, _bare(f.dataType), f.nullable) for f in t.fields])
    if isinstance(t, sst.ArrayType):
        return sst.ArrayType(_bare(t.elementType), t.containsNull)
    if isinstance(t, sst.MapType):
        return sst.MapType(_bare(t.keyType), _bare(t.valueType), t.valueContainsNull)
    return t


def test_strategies_cover_the_nested_shapes() -> None:
    """The schema strategy reaches every container and list layout (guards against a dull strategy)."""
    seen: set[str] = set()

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(schemas())
    def collect(schema: Schema) -> None:
        for f in walk_fields(schema.fields):
            t = f.type
            seen.add(type(t).__name__ if not isinstance(t, ListType) else t.variant)
            if f.initial_default is not None:
                seen.add("default")
        if schema.identifier_field_ids:
            seen.add("identifier")

    collect()
    assert {"StructType", "MapType", "list", "large_list", "default", "identifier"} <= seen
