"""The one plain type visitor: its walk order, its hooks, and the conversions that run on it."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings

from fieldshift import Field, ListType, MapType, Schema, StructType
from fieldshift.schema.nullability import with_nullability
from fieldshift.schema.type_visitor import TypeVisitor, visit_field, visit_fields, visit_type
from fieldshift.schema.types import MAX_NESTING_DEPTH, FieldType
from tests.strategies import field_types, schemas

NESTED = StructType((
    Field(1, "a", pa.int32()),
    Field(2, "l", ListType(Field(3, "element", pa.string()))),
    Field(4, "m", MapType(Field(5, "key", pa.string()), Field(6, "value", StructType((Field(7, "x", pa.date32()),))))),
))


class _Rebuild(TypeVisitor[Any]):
    """Builds the very type it walks: every callback sees what it needs to rebuild its node."""

    def field(self, f: Field, result: FieldType) -> Field:
        return f.with_(type=result)

    def struct(self, t: StructType, fields: list[Field]) -> FieldType:
        return StructType(tuple(fields))

    def list(self, t: ListType, element: FieldType) -> FieldType:
        return ListType(t.element.with_(type=element), t.variant, t.size)

    def map(self, t: MapType, key: FieldType, value: FieldType) -> FieldType:
        return MapType(t.key.with_(type=key), t.value.with_(type=value), t.keys_sorted)

    def primitive(self, t: pa.DataType) -> FieldType:
        return t


class _Record(_Rebuild):
    """Logs every callback and hook, in the order the walk makes them."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def before_field(self, f: Field) -> None:
        self.log.append(f"before {f.id}")

    def after_field(self, f: Field) -> None:
        self.log.append(f"after {f.id}")

    def field(self, f: Field, result: FieldType) -> Field:
        self.log.append(f"field {f.id}")
        return super().field(f, result)

    def struct(self, t: StructType, fields: list[Field]) -> FieldType:
        self.log.append(f"struct {[f.id for f in fields]}")
        return super().struct(t, fields)

    def list(self, t: ListType, element: FieldType) -> FieldType:
        self.log.append(f"list {t.element.id}")
        return super().list(t, element)

    def map(self, t: MapType, key: FieldType, value: FieldType) -> FieldType:
        self.log.append(f"map {t.key.id} {t.value.id}")
        return super().map(t, key, value)

    def primitive(self, t: pa.DataType) -> FieldType:
        self.log.append(f"primitive {t}")
        return t


def test_the_walk_is_post_order_with_hooks_around_every_field() -> None:
    """Children before parents; hooks around struct fields, elements, keys and values; ``field`` only for
    struct fields (a list or map wraps its children itself), as PyIceberg's ``visit`` does."""
    v = _Record()
    assert visit_type(NESTED, v) == NESTED
    assert v.log == [
        "before 1", "primitive int32", "after 1", "field 1",
        "before 2", "before 3", "primitive string", "after 3", "list 3", "after 2", "field 2",
        "before 4", "before 5", "primitive string", "after 5",
        "before 6", "before 7", "primitive date32[day]", "after 7", "field 7", "struct [7]", "after 6",
        "map 5 6", "after 4", "field 4",
        "struct [1, 2, 4]",
    ]


def test_hooks_run_only_for_visitors_that_define_them() -> None:
    assert _Rebuild.hooks is False and _Record.hooks is True
    v = _Record()
    visit_field(Field(9, "top", NESTED), v)
    assert v.log[0] == "before 9" and v.log[-2:] == ["after 9", "field 9"]


@settings(max_examples=150, deadline=None)
@given(field_types(max_depth=3))
def test_a_rebuilding_visitor_gives_back_any_type(t: FieldType) -> None:
    assert visit_type(t, _Rebuild()) == t
    recorded = _Record()
    assert visit_type(t, recorded) == t
    assert sum(e.startswith("before") for e in recorded.log) == sum(e.startswith("after") for e in recorded.log)


@settings(max_examples=100, deadline=None)
@given(schemas(max_depth=3))
def test_schema_level_walks_match_field_by_field(schema: Schema) -> None:
    """``visit_fields`` over a schema is ``visit_field`` per field; Arrow conversion runs on it."""
    assert visit_fields(schema.fields, _Rebuild()) == list(schema.fields)
    assert [f.to_arrow() for f in schema.fields] == list(schema.to_arrow())
    assert Schema.from_arrow(schema.to_arrow()).to_arrow().equals(schema.to_arrow(), check_metadata=True)


@settings(max_examples=100, deadline=None)
@given(schemas(max_depth=3))
def test_with_nullability_asks_for_every_field_but_map_keys(schema: Schema) -> None:
    asked: list[int] = []

    def nullable(f: Field) -> bool:
        asked.append(f.id)
        return f.id % 2 == 0

    out = with_nullability(schema, nullable)
    keys = {f.type.key.id for f in schema.all_fields() if isinstance(f.type, MapType)}
    assert sorted(asked) == sorted(f.id for f in schema.all_fields() if f.id not in keys)
    for f in out.all_fields():
        assert f.nullable == (f.id not in keys and f.id % 2 == 0)
    assert [f.id for f in out.all_fields()] == [f.id for f in schema.all_fields()]


def test_the_deepest_readable_nesting_walks_without_recursion_errors() -> None:
    """A chain of structs as deep as Parquet reads (98 structs over a leaf) converts both ways."""
    t: FieldType = pa.int64()
    for i in range(MAX_NESTING_DEPTH - 1):
        t = StructType((Field(i + 2, "s", t),))
    schema = Schema([Field(1, "deep", t)])
    arrow = schema.to_arrow()
    assert Schema.from_arrow(arrow) == schema
    assert Schema.from_json(schema.to_json()) == schema


def _oracle_field(f: Field) -> pa.Field:
    """Arrow for a field, built directly (metadata as a fresh dict every time)."""
    t = f.type
    if isinstance(t, StructType):
        arrow: pa.DataType = pa.struct([_oracle_field(c) for c in t.fields])
    elif isinstance(t, ListType):
        item = _oracle_field(t.element)
        arrow = {"large_list": pa.large_list, "list_view": pa.list_view, "large_list_view": pa.large_list_view,
                 "list": pa.list_}.get(t.variant, pa.list_)(item) if t.size is None else pa.list_(item, t.size)
    elif isinstance(t, MapType):
        arrow = pa.map_(_oracle_field(t.key), _oracle_field(t.value), keys_sorted=t.keys_sorted)
    else:
        arrow = t
    meta = {b"PARQUET:field_id": str(f.id).encode()}
    if f.doc is not None:
        meta[b"doc"] = f.doc.encode()
    return pa.field(f.name, arrow, nullable=f.nullable, metadata=meta)


@settings(max_examples=100, deadline=None)
@given(schemas(max_depth=3))
def test_arrow_conversion_matches_a_direct_build(schema: Schema) -> None:
    """The visitor, and its metadata shared per field id, give exactly the fields built directly."""
    for f in schema.fields:
        assert f.to_arrow().equals(_oracle_field(f), check_metadata=True)
        assert f.to_arrow().equals(_oracle_field(f), check_metadata=True)  # the second time from the cache


@settings(max_examples=100, deadline=None)
@given(schemas(max_depth=3))
def test_spark_conversions_match_the_walk_that_keeps_paths(schema: Schema) -> None:
    """Spark conversions walk without paths (they only name columns in errors) and repeat a failed walk
    with them: results and errors equal those of the path-keeping walk alone."""
    import pyspark.sql.types as st

    from fieldshift.errors import UnsupportedSparkTypeError
    from fieldshift.spark import arrow_for_spark, schema_to_spark
    from fieldshift.spark import types as spark_types

    def outcome(fn: Any) -> Any:
        try:
            return fn()
        except UnsupportedSparkTypeError as e:
            return str(e)

    fast = outcome(lambda: schema_to_spark(schema))
    naming = outcome(lambda: st.StructType(visit_fields(schema.fields, spark_types._NamingToSpark(""))))
    assert (fast.json() if isinstance(fast, st.StructType) else fast) == \
        (naming.json() if isinstance(naming, st.StructType) else naming)
    fast = outcome(lambda: arrow_for_spark.schema_for_spark(schema).fields)
    naming = outcome(lambda: tuple(visit_fields(schema.fields, arrow_for_spark._NamingForSpark())))
    assert fast == naming
