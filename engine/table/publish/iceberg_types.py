"""fieldshift schemas as PyIceberg schemas, and the checks that a table's types and history are ones
Iceberg readers can read: every type must have an Iceberg type, and every file must read into each
schema that reads it through Iceberg's own promotions only (fieldshift's policies allow more)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema
from fieldshift.schema.type_visitor import TypeVisitor, visit_fields
from fieldshift.schema.types import ListType, MapType, StructType

__all__ = ["check_publishable_change", "iceberg_schema", "iceberg_type_of", "needs_v3", "promotion_problems",
           "type_problems"]

T = pa.types


def iceberg_type_of(t: pa.DataType) -> Any:
    """The PyIceberg primitive type a column of Arrow type ``t`` is published as; None: Iceberg has none."""
    from pyiceberg import types as it

    if T.is_boolean(t):
        return it.BooleanType()
    if t in (pa.int8(), pa.int16(), pa.int32()):
        return it.IntegerType()
    if t == pa.int64():
        return it.LongType()
    if t == pa.float32():
        return it.FloatType()
    if t == pa.float64():
        return it.DoubleType()
    if T.is_decimal(t) and t.precision <= 38:
        return it.DecimalType(t.precision, t.scale)
    if T.is_string(t) or T.is_large_string(t):
        return it.StringType()
    if T.is_binary(t) or T.is_large_binary(t):
        return it.BinaryType()
    if T.is_fixed_size_binary(t):
        return it.FixedType(t.byte_width)
    if t == pa.date32():
        return it.DateType()
    if T.is_time(t) and t.unit == "us":
        return it.TimeType()
    if T.is_timestamp(t) and t.unit == "us":
        return it.TimestamptzType() if t.tz is not None else it.TimestampType()
    return None


def _what_to_do(t: pa.DataType) -> str:
    if T.is_unsigned_integer(t):
        return "Iceberg has no unsigned integers; change the column to a signed type wide enough (long)"
    if T.is_timestamp(t) or T.is_time(t):
        return f"Iceberg v2 stores {'timestamps' if T.is_timestamp(t) else 'times'} in microseconds only"
    return "Iceberg has no such type; change the column to one it has (see the README's type table)"


class _Converter(TypeVisitor[Any]):
    """A fieldshift type tree as PyIceberg types; columns without an Iceberg type are collected by path."""

    def __init__(self) -> None:
        self.path: list[str] = []
        self.problems: list[str] = []

    def before_field(self, f: Field) -> None:
        self.path.append(f.name)

    def after_field(self, f: Field) -> None:
        self.path.pop()

    def field(self, f: Field, result: Any) -> Any:
        from pyiceberg.types import NestedField

        return NestedField(f.id, f.name, result, required=not f.nullable, doc=f.doc)

    def struct(self, t: StructType, fields: list[Any]) -> Any:
        from pyiceberg.types import StructType as IcebergStruct

        return IcebergStruct(*fields)

    def list(self, t: ListType, element: Any) -> Any:
        from pyiceberg.types import ListType as IcebergList

        return IcebergList(t.element.id, element, element_required=not t.element.nullable)

    def map(self, t: MapType, key: Any, value: Any) -> Any:
        from pyiceberg.types import MapType as IcebergMap

        return IcebergMap(t.key.id, key, t.value.id, value, value_required=not t.value.nullable)

    def primitive(self, t: pa.DataType) -> Any:
        found = iceberg_type_of(t)
        if found is None:
            from pyiceberg.types import StringType

            self.problems.append(f"{'.'.join(self.path)} ({t}): {_what_to_do(t)}")
            return StringType()  # a stand-in: the problems are raised before anything is written
        return found


def type_problems(schema: Schema) -> list[str]:
    """Each column of ``schema`` (path and type) Iceberg has no type for, with what to do."""
    conv = _Converter()
    visit_fields(schema.fields, conv)
    return [f"schema {schema.schema_id}: {p}" for p in conv.problems]


def iceberg_schema(schema: Schema) -> Any:
    """``schema`` as a PyIceberg ``Schema`` with the same ids (check ``type_problems`` first)."""
    from pyiceberg.schema import Schema as IcebergSchema

    fields = visit_fields(schema.fields, _Converter())
    return IcebergSchema(*fields, schema_id=schema.schema_id,
                         identifier_field_ids=list(schema.identifier_field_ids))


def needs_v3(schema: Schema) -> bool:
    """Whether ``schema`` uses what only Iceberg v3 expresses (initial or write defaults)."""
    return any(f.initial_default is not None or f.write_default is not None for f in schema.all_fields())


def _promotes(old: pa.DataType, new: pa.DataType) -> bool:
    """Whether an Iceberg reader reads a column written as ``old`` when the table says ``new``."""
    a, b = iceberg_type_of(old), iceberg_type_of(new)
    if a is None or b is None or a == b:
        return a == b
    from pyiceberg import types as it

    if isinstance(a, it.IntegerType) and isinstance(b, it.LongType):
        return True
    if isinstance(a, it.FloatType) and isinstance(b, it.DoubleType):
        return True
    return (isinstance(a, it.DecimalType) and isinstance(b, it.DecimalType) and a.scale == b.scale
            and a.precision <= b.precision)


def _leaf_types(schema: Schema) -> dict[int, tuple[str, pa.DataType]]:
    out: dict[int, tuple[str, pa.DataType]] = {}

    def walk(fields: tuple[Field, ...], prefix: str) -> None:
        for f in fields:
            path = f"{prefix}{f.name}"
            t = f.type
            if isinstance(t, StructType):
                walk(t.fields, path + ".")
            elif isinstance(t, ListType):
                walk((t.element,), path + ".")
            elif isinstance(t, MapType):
                walk((t.key, t.value), path + ".")
            else:
                out[f.id] = (path, t)

    walk(schema.fields, "")
    return out


def promotion_problems(file_schema: Schema, read_schema: Schema) -> list[str]:
    """Each column a file of ``file_schema`` holds in a type Iceberg readers cannot read as ``read_schema``'s."""
    old, new = _leaf_types(file_schema), _leaf_types(read_schema)
    out = []
    for fid, (path, nt) in new.items():
        if fid in old and not _promotes(old[fid][1], nt):
            out.append(f"{path}: files of schema {file_schema.schema_id} hold {old[fid][1]}, schema "
                       f"{read_schema.schema_id} reads {nt}; Iceberg readers do not make that cast — run "
                       "compact() to rewrite those files into the current schema, then expire_snapshots() "
                       "the snapshots that still read them")
    return out


def check_publishable_change(new: Schema, file_schemas: list[Schema], table: str) -> None:
    """Refuse a commit of schema ``new`` to a table that publishes when Iceberg readers could not read it:
    a type Iceberg lacks, or a cast from a live file's type Iceberg does not make."""
    from fieldshift.errors import UnpublishableError

    problems = type_problems(new)
    for old in file_schemas:
        if old.schema_id != new.schema_id:
            problems += promotion_problems(old, new)
    if problems:
        listed = "\n  ".join(dict.fromkeys(problems))
        raise UnpublishableError(f"table {table!r} publishes as an Iceberg table, which could not read this schema "
                                 f"change; nothing was committed (or stop publishing: set_publish(None)):\n  {listed}")
