"""The Arrow types Spark accepts from Python, and fieldshift schemas rewritten to them.

``mapInArrow`` and Python data sources hand Spark Arrow batches, and Spark takes only some Arrow
layouts: unsigned integers are widened, large layouts and views become the regular ones,
dictionaries are decoded, timestamps are in microseconds and times in nanoseconds (as Spark sends
them). :func:`arrow_type_for_spark` / :func:`schema_for_spark` give those types, so the engine can
evolve data straight into what Spark takes.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from fieldshift.errors import UnsupportedSparkTypeError
from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema
from fieldshift.schema.type_visitor import TypeVisitor, visit_fields
from fieldshift.schema.types import FieldType, ListType, MapType, StructType
from fieldshift.spark.types import (
    check_spark_decimal,
    child_path,
    is_arrow_list,
    primitive_to_spark,
    spark_time_type,
)

__all__ = ["arrow_type_for_spark", "schema_for_spark"]

T = pa.types


def arrow_type_for_spark(t: pa.DataType, *, path: str = "") -> pa.DataType:
    """The Arrow type Spark accepts (from ``mapInArrow`` or a Python data source) for ``t``.

    uint8/16/32 -> the next wider signed int, uint64 -> decimal128(20, 0), float16 -> float32,
    decimal -> decimal128 (p > 38 raises), large/view strings and binaries -> string/binary,
    fixed_size_binary -> binary, dictionary -> its value type, date64 -> date32, timestamps ->
    microseconds keeping the zone, times -> time64[ns] (Spark's TimeType wire format), every list
    layout -> list, maps without keys_sorted; recursively, keeping names, nullability and metadata.
    """
    if T.is_dictionary(t) or T.is_run_end_encoded(t):
        return arrow_type_for_spark(t.value_type, path=path)
    if T.is_struct(t):
        return pa.struct([_arrow_field_for_spark(t.field(i), child_path(path, t.field(i).name))
                          for i in range(t.num_fields)])
    if T.is_map(t):
        return pa.map_(_arrow_field_for_spark(t.key_field, child_path(path, "key")),
                       _arrow_field_for_spark(t.item_field, child_path(path, "value")))
    if is_arrow_list(t):
        return pa.list_(_arrow_field_for_spark(t.value_field, child_path(path, "element")))
    return _primitive_for_spark(t, path)


def _arrow_field_for_spark(f: pa.Field, path: str) -> pa.Field:
    return f.with_type(arrow_type_for_spark(f.type, path=path))


_PRIMITIVE_FOR_SPARK: dict[pa.DataType, pa.DataType] = {
    pa.uint8(): pa.int16(),
    pa.uint16(): pa.int32(),
    pa.uint32(): pa.int64(),
    pa.uint64(): pa.decimal128(20, 0),
    pa.float16(): pa.float32(),
    pa.large_string(): pa.string(),
    pa.string_view(): pa.string(),
    pa.large_binary(): pa.binary(),
    pa.binary_view(): pa.binary(),
    pa.date64(): pa.date32(),
}


def _primitive_for_spark(t: pa.DataType, path: str) -> pa.DataType:
    mapped = _PRIMITIVE_FOR_SPARK.get(t)
    if mapped is not None:
        return mapped
    if T.is_decimal(t):
        check_spark_decimal(t, path)
        return pa.decimal128(t.precision, t.scale)
    if T.is_fixed_size_binary(t):
        return pa.binary()
    if T.is_timestamp(t):
        return pa.timestamp("us", tz=t.tz)
    if T.is_time(t):
        spark_time_type()
        return pa.time64("ns")
    primitive_to_spark(t, path=path)  # raises for types Spark has no counterpart for
    return t


def schema_for_spark(schema: Schema) -> Schema:
    """The same schema (ids, names, nullability, docs, versions) with every type Spark-compatible.

    Types go through :func:`arrow_type_for_spark` (lists become plain lists, maps lose
    ``keys_sorted``); defaults are converted to the new types (a nanosecond timestamp default is
    truncated to microseconds, as Spark would).
    """
    return Schema(
        _fields_for_spark(schema.fields),
        schema_id=schema.schema_id,
        identifier_field_ids=schema.identifier_field_ids,
        highest_field_id=schema.highest_field_id,
        doc=schema.doc,
    )


class _ForSpark(TypeVisitor[Any]):
    """Every type Spark-compatible: lists become plain lists, maps lose ``keys_sorted``; a field whose
    type changes gets its defaults converted. Paths only name a column in errors: this walk keeps
    none, and a walk that fails is repeated by ``_NamingForSpark``, which does."""

    paths: list[str] | tuple[str, ...] = ("",)  # no path kept: errors name no column

    def field(self, f: Field, result: FieldType) -> Field:
        if result == f.type:
            return f
        return f.with_(
            type=result,
            initial_default=_recast_default(f.initial_default, f.type, result),
            write_default=_recast_default(f.write_default, f.type, result),
        )

    def struct(self, t: StructType, fields: list[Field]) -> FieldType:
        return StructType(tuple(fields))

    def list(self, t: ListType, element: FieldType) -> FieldType:
        return ListType(self.field(t.element, element))

    def map(self, t: MapType, key: FieldType, value: FieldType) -> FieldType:
        return MapType(self.field(t.key, key), self.field(t.value, value))

    def primitive(self, t: pa.DataType) -> FieldType:
        return arrow_type_for_spark(t, path=self.paths[-1])


class _NamingForSpark(_ForSpark):
    """The same walk, keeping the dotted path of the field being visited for its errors."""

    def __init__(self) -> None:
        self.paths = [""]

    def before_field(self, f: Field) -> None:
        self.paths.append(child_path(self.paths[-1], f.name))

    def after_field(self, f: Field) -> None:
        self.paths.pop()


def _fields_for_spark(fields: tuple[Field, ...]) -> list[Field]:
    try:
        return visit_fields(fields, _ForSpark())
    except UnsupportedSparkTypeError:
        return visit_fields(fields, _NamingForSpark())  # the same error, naming its column


def _recast_default(value: Any, old: FieldType, new: FieldType) -> Any:
    if value is None or old == new:
        return value
    if isinstance(new, StructType):
        return value  # None or {}
    if isinstance(new, ListType) and isinstance(old, ListType):
        return [_recast_default(v, old.element.type, new.element.type) for v in value]
    if isinstance(new, MapType) and isinstance(old, MapType):
        return {
            _recast_default(k, old.key.type, new.key.type): _recast_default(v, old.value.type, new.value.type)
            for k, v in value.items()
        }
    assert isinstance(old, pa.DataType) and isinstance(new, pa.DataType)
    return pa.scalar(value, type=old).cast(new, safe=False).as_py()
