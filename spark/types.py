"""fieldshift schemas <-> PySpark types, and the Arrow types Spark accepts from Python.

Ids. Every ``StructField`` carries its field id in metadata ``{"parquet.field.id": id}``, the key
Spark's Parquet reader and writer use for id-based column matching
(``spark.sql.parquet.fieldId.read.enabled`` / ``.write.enabled``). Spark has no metadata on array
elements, map keys or map values, so **their ids cannot round-trip through a Spark schema**.
:func:`spark_to_schema` gets them, in this order, from

1. ``like=`` (an existing :class:`~fieldshift.Schema`): the element/key/value of the partner field,
   found by id when the enclosing ``StructField`` carries one, else by name from its parent;
2. otherwise fresh ids above every id in the Spark schema (and above ``like.highest_field_id``),
   assigned parents-before-children. Without ``like`` the ids of retired (dropped) columns are
   unknown and may be handed out again, so pass the table schema as ``like`` whenever there is one.

A ``StructField`` without ``parquet.field.id`` takes its id from ``like=`` the same way, else from
``assign_ids=True`` (fresh ids as above), else :class:`~fieldshift.MissingFieldIdError` names it.

Types (``type_to_spark``)::

    bool -> BooleanType         int8 -> ByteType       int16/uint8 -> ShortType
    int32/uint16 -> IntegerType  int64/uint32 -> LongType   uint64 -> DecimalType(20, 0)
    float16/float32 -> FloatType    float64 -> DoubleType
    decimal(p<=38, s) -> DecimalType(p, s)      decimal(p>38) -> UnsupportedSparkTypeError
    string/large_string/string_view -> StringType
    binary/large_binary/binary_view/fixed[n] -> BinaryType
    date32/date64 -> DateType
    timestamp[unit, tz] -> TimestampType        timestamp[unit] (no zone) -> TimestampNTZType
    time32[s] -> TimeType(0)   time32[ms] -> TimeType(3)   time64[us|ns] -> TimeType(6)
        (needs a pyspark with TimeType, 4.1+; Spark keeps at most microseconds)
    null -> NullType      struct -> StructType
    list/large_list/list_view/large_list_view/fixed_size_list -> ArrayType(containsNull=element.nullable)
    map -> MapType(valueContainsNull=value.nullable)

``spark_to_schema`` maps back to the canonical Arrow type of each Spark type (``TimestampType`` ->
``timestamp[us, tz=UTC]``, ``TimestampNTZType`` -> ``timestamp[us]``, ``TimeType(p)`` -> the
smallest unit that holds ``p`` digits, ``DecimalType`` -> decimal128, ``Char/VarcharType`` ->
string). So only these types round-trip exactly: bool, int8/16/32/64, float32/64, decimal128,
string, binary, date32, timestamp[us] with no zone or UTC, time32[s|ms], time64[us], null, and
list (not large/view/fixed) and map (not keys_sorted) layouts.

Defaults and docs. ``initial_default`` goes to metadata ``EXISTS_DEFAULT`` and ``write_default`` to
``CURRENT_DEFAULT``, both as Spark SQL literals (``0``, ``5L``, ``'x'``, ``DATE '2020-01-01'``,
``TIMESTAMP '2020-01-01 00:00:00Z'``, ``X'0A'``, ``ARRAY(1, 2)``, ...): Spark's native Parquet reader
fills a column missing from a file with ``EXISTS_DEFAULT``. A struct default ``{}`` is written as
``NAMED_STRUCT`` of the children's defaults and read back as ``{}``. ``doc`` goes to ``comment``.

``arrow_type_for_spark`` / ``schema_for_spark`` give the Arrow type Spark accepts for a column from
``mapInArrow`` or a Python data source (unsigned widened, large layouts and views to the regular
ones, dictionaries decoded, timestamps in microseconds, times in nanoseconds as Spark sends them), so
the engine can evolve data straight into what Spark takes.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from fieldshift.errors import InvalidDefaultError, MissingFieldIdError, SchemaEvolutionError, UnsupportedSparkTypeError
from fieldshift.field import Field
from fieldshift.schema import Schema, join_path
from fieldshift.types import FieldType, ListType, MapType, StructType, type_name

try:
    import pyspark.sql.types as st
except ImportError as _e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "fieldshift.spark needs PySpark: pip install 'fieldshift[spark]'"
    ) from _e

__all__ = [
    "COMMENT_KEY",
    "CURRENT_DEFAULT_KEY",
    "EXISTS_DEFAULT_KEY",
    "SPARK_FIELD_ID_KEY",
    "UnsupportedSparkTypeError",
    "arrow_type_for_spark",
    "coerce_default",
    "field_to_spark",
    "parse_spark_literal",
    "primitive_from_spark",
    "schema_for_spark",
    "schema_to_spark",
    "spark_literal",
    "spark_sql_type",
    "spark_to_schema",
    "type_to_spark",
]

SPARK_FIELD_ID_KEY = "parquet.field.id"
EXISTS_DEFAULT_KEY = "EXISTS_DEFAULT"
CURRENT_DEFAULT_KEY = "CURRENT_DEFAULT"
COMMENT_KEY = "comment"

SPARK_MAX_DECIMAL_PRECISION = 38

# TimeType arrived in pyspark 4.1; older versions cannot hold time columns.
_TimeType: Any = getattr(st, "TimeType", None)

T = pa.types


def _where(path: str) -> str:
    return f"column {path!r}" if path else "a value"


# ================================================================================================
# fieldshift -> Spark
# ================================================================================================
def schema_to_spark(schema: Schema) -> st.StructType:
    """A ``StructType`` with ids, defaults and docs in each field's metadata (see module docs)."""
    return st.StructType([_field_to_spark(f, _join("", f.name)) for f in schema.fields])


def field_to_spark(field: Field) -> st.StructField:
    """One fieldshift field as a ``StructField`` (id in ``parquet.field.id``)."""
    return _field_to_spark(field, _join("", field.name))


def type_to_spark(t: FieldType | pa.DataType, *, path: str = "") -> st.DataType:
    """The Spark type holding values of ``t``; raises :class:`UnsupportedSparkTypeError` if none."""
    if isinstance(t, pa.DataType) and _is_arrow_nested(t):
        return _arrow_nested_to_spark(t, path)
    if isinstance(t, StructType):
        return st.StructType([_field_to_spark(f, _join(path, f.name)) for f in t.fields])
    if isinstance(t, ListType):
        element = t.element
        return st.ArrayType(type_to_spark(element.type, path=_join(path, "element")),
                            containsNull=element.nullable)
    if isinstance(t, MapType):
        return st.MapType(type_to_spark(t.key.type, path=_join(path, "key")),
                          type_to_spark(t.value.type, path=_join(path, "value")),
                          valueContainsNull=t.value.nullable)
    return _primitive_to_spark(t, path)


def _join(path: str, name: str) -> str:
    """Extend a dotted display path by one name (quoted in backticks when it holds a dot)."""
    return f"{path}.{join_path([name])}" if path else join_path([name])


def _field_to_spark(f: Field, path: str) -> st.StructField:
    spark_type = type_to_spark(f.type, path=path)
    meta: dict[str, Any] = {SPARK_FIELD_ID_KEY: f.id}
    if f.doc is not None:
        meta[COMMENT_KEY] = f.doc
    if f.initial_default is not None:
        meta[EXISTS_DEFAULT_KEY] = _literal_of_field(f, "initial", path)
    if f.write_default is not None:
        meta[CURRENT_DEFAULT_KEY] = _literal_of_field(f, "write", path)
    return st.StructField(f.name, spark_type, nullable=f.nullable, metadata=meta)


_SIMPLE_TO_SPARK: dict[pa.DataType, Any] = {
    pa.bool_(): st.BooleanType,
    pa.int8(): st.ByteType,
    pa.int16(): st.ShortType,
    pa.int32(): st.IntegerType,
    pa.int64(): st.LongType,
    pa.uint8(): st.ShortType,
    pa.uint16(): st.IntegerType,
    pa.uint32(): st.LongType,
    pa.float16(): st.FloatType,
    pa.float32(): st.FloatType,
    pa.float64(): st.DoubleType,
    pa.string(): st.StringType,
    pa.large_string(): st.StringType,
    pa.string_view(): st.StringType,
    pa.binary(): st.BinaryType,
    pa.large_binary(): st.BinaryType,
    pa.binary_view(): st.BinaryType,
    pa.date32(): st.DateType,
    pa.date64(): st.DateType,
    pa.null(): st.NullType,
}
_TIME_PRECISION = {"s": 0, "ms": 3, "us": 6, "ns": 6}


def _primitive_to_spark(t: pa.DataType, path: str) -> st.DataType:
    if T.is_dictionary(t):
        return _primitive_to_spark(t.value_type, path)
    simple = _SIMPLE_TO_SPARK.get(t)
    if simple is not None:
        return simple()
    if t == pa.uint64():
        return st.DecimalType(20, 0)
    if T.is_decimal(t):
        _check_decimal(t, path)
        return st.DecimalType(t.precision, t.scale)
    if T.is_fixed_size_binary(t):
        return st.BinaryType()
    if T.is_timestamp(t):
        return st.TimestampType() if t.tz is not None else st.TimestampNTZType()
    if T.is_time(t):
        return _time_type()(_TIME_PRECISION[t.unit])
    raise UnsupportedSparkTypeError(
        f"{_where(path)} has type {t}, which Spark has no type for; cast it to a supported type first"
    )


def _time_type() -> Any:
    if _TimeType is None:
        import pyspark

        raise UnsupportedSparkTypeError(
            f"pyspark {pyspark.__version__} has no TimeType (added in Spark 4.1); upgrade Spark, or "
            "store time columns as int64 microseconds or as string"
        )
    return _TimeType


def _check_decimal(t: pa.DataType, path: str) -> None:
    if t.precision > SPARK_MAX_DECIMAL_PRECISION:
        raise UnsupportedSparkTypeError(
            f"{_where(path)} has type decimal({t.precision},{t.scale}), but Spark decimals hold at "
            f"most {SPARK_MAX_DECIMAL_PRECISION} digits; narrow the column to decimal(38, s) "
            "(CastPolicy.explicit() allows it; values that do not fit fail or read as null) or store "
            "it as string"
        )


def _is_arrow_nested(t: pa.DataType) -> bool:
    return T.is_struct(t) or T.is_map(t) or _is_arrow_list(t)


def _is_arrow_list(t: pa.DataType) -> bool:
    return (T.is_list(t) or T.is_large_list(t) or T.is_fixed_size_list(t) or T.is_list_view(t)
            or T.is_large_list_view(t))


def _arrow_nested_to_spark(t: pa.DataType, path: str) -> st.DataType:
    """Raw Arrow nested types (ids from ``PARQUET:field_id`` metadata where present)."""
    from fieldshift.arrow_conversion import arrow_field_id

    if T.is_struct(t):
        fields = []
        for i in range(t.num_fields):
            child = t.field(i)
            fid = arrow_field_id(child)
            meta = {SPARK_FIELD_ID_KEY: fid} if fid is not None else {}
            fields.append(st.StructField(child.name, type_to_spark(child.type, path=_join(path, child.name)),
                                         nullable=child.nullable, metadata=meta))
        return st.StructType(fields)
    if T.is_map(t):
        return st.MapType(type_to_spark(t.key_type, path=_join(path, "key")),
                          type_to_spark(t.item_type, path=_join(path, "value")),
                          valueContainsNull=t.item_field.nullable)
    return st.ArrayType(type_to_spark(t.value_type, path=_join(path, "element")),
                        containsNull=t.value_field.nullable)


# ================================================================================================
# Spark -> fieldshift
# ================================================================================================
def spark_to_schema(
    struct_type: st.StructType,
    *,
    schema_id: int = 0,
    assign_ids: bool = False,
    like: Schema | None = None,
    identifier_field_ids: Iterable[int] | None = None,
) -> Schema:
    """A fieldshift Schema from a Spark ``StructType`` (ids from ``parquet.field.id`` metadata).

    ``like``: an existing schema to take ids from where Spark carries none (list elements, map
    keys/values, and struct fields without metadata), matched by id-anchored path; its
    ``highest_field_id`` is kept so dropped ids are never reused, and by default its identifier
    fields are kept where they still exist. ``assign_ids``: number id-less struct fields instead of
    raising :class:`~fieldshift.MissingFieldIdError`. Element/key/value ids are always assigned when
    ``like`` has none (see the module docs).
    """
    if not isinstance(struct_type, st.StructType):
        raise TypeError(f"spark_to_schema takes a pyspark StructType, got {type(struct_type).__name__}")
    reader = _FromSpark(struct_type, like, assign_ids)
    fields = [reader.field(sf, (sf.name,), reader.top_partner(sf)) for sf in struct_type.fields]
    top = max(reader.used, default=0)
    highest = max(top, like.highest_field_id) if like is not None else top
    if identifier_field_ids is None:
        ident: tuple[int, ...] = ()
        if like is not None:
            live = {f.id: f for f in Schema(fields).all_fields()}
            ident = tuple(i for i in like.identifier_field_ids
                          if i in live and not live[i].nullable and isinstance(live[i].type, pa.DataType))
    else:
        ident = tuple(identifier_field_ids)
    return Schema(fields, schema_id=schema_id, identifier_field_ids=ident, highest_field_id=highest)


def _metadata_id(sf: st.StructField, path: tuple[str, ...]) -> int | None:
    raw = (sf.metadata or {}).get(SPARK_FIELD_ID_KEY)
    if raw is None:
        return None
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise SchemaEvolutionError(
            f"Spark field {join_path(path)!r} has {SPARK_FIELD_ID_KEY}={raw!r}, which is not an integer"
        ) from None


def _spark_struct_fields(t: st.DataType, path: tuple[str, ...]) -> Iterator[tuple[st.StructField, tuple]]:
    if isinstance(t, st.StructType):
        for sf in t.fields:
            p = (*path, sf.name)
            yield sf, p
            yield from _spark_struct_fields(sf.dataType, p)
    elif isinstance(t, st.ArrayType):
        yield from _spark_struct_fields(t.elementType, (*path, "element"))
    elif isinstance(t, st.MapType):
        yield from _spark_struct_fields(t.keyType, (*path, "key"))
        yield from _spark_struct_fields(t.valueType, (*path, "value"))


class _FromSpark:
    """One conversion: the ids in use, the partner schema and the fresh-id counter."""

    def __init__(self, root: st.StructType, like: Schema | None, assign_ids: bool) -> None:
        self.like = like
        self.assign_ids = assign_ids
        self.used: set[int] = set()
        for sf, path in _spark_struct_fields(root, ()):
            fid = _metadata_id(sf, path)
            if fid is not None:
                self.used.add(fid)
        floor = max(self.used, default=0)
        if like is not None:
            floor = max(floor, like.highest_field_id)
        self._next = floor + 1

    def fresh(self) -> int:
        fid = self._next
        self._next += 1
        self.used.add(fid)
        return fid

    def borrow(self, partner: Field | None) -> int | None:
        """The partner's id when no Spark field already uses it."""
        if partner is None or partner.id in self.used:
            return None
        self.used.add(partner.id)
        return partner.id

    # -- partners -------------------------------------------------------------------------------
    def top_partner(self, sf: st.StructField) -> Field | None:
        return self._partner(sf, self.like.fields if self.like is not None else ())

    def _partner(self, sf: st.StructField, siblings: Iterable[Field]) -> Field | None:
        if self.like is None:
            return None
        fid = _metadata_id(sf, (sf.name,))
        if fid is not None and self.like.has_field(fid):
            return self.like.field(fid)
        return next((f for f in siblings if f.name == sf.name), None)

    # -- conversion -----------------------------------------------------------------------------
    def field(self, sf: st.StructField, path: tuple[str, ...], partner: Field | None) -> Field:
        fid = _metadata_id(sf, path)
        if fid is None:
            fid = self.borrow(partner)
        if fid is None:
            if not self.assign_ids:
                raise MissingFieldIdError(
                    f"Spark field {join_path(path)!r} ({sf.dataType.simpleString()}) has no "
                    f"{SPARK_FIELD_ID_KEY!r} metadata. Pass like=<the table schema> to take ids from it "
                    "by path, or assign_ids=True to number id-less fields."
                )
            fid = self.fresh()
        ftype = self.type(sf.dataType, path, partner)
        meta = sf.metadata or {}
        doc = meta.get(COMMENT_KEY)
        return Field(
            fid, sf.name, ftype, nullable=sf.nullable, doc=str(doc) if doc is not None else None,
            initial_default=_default_from_meta(meta, EXISTS_DEFAULT_KEY, ftype, path),
            write_default=_default_from_meta(meta, CURRENT_DEFAULT_KEY, ftype, path),
        )

    def _nested_id(self, partner: Field | None) -> int:
        fid = self.borrow(partner)
        return fid if fid is not None else self.fresh()

    def type(self, t: st.DataType, path: tuple[str, ...], partner: Field | None) -> FieldType:
        ptype = partner.type if partner is not None else None
        if isinstance(t, st.StructType):
            siblings = ptype.fields if isinstance(ptype, StructType) else ()
            return StructType(tuple(self.field(sf, (*path, sf.name), self._partner(sf, siblings))
                                    for sf in t.fields))
        if isinstance(t, st.ArrayType):
            p = ptype.element if isinstance(ptype, ListType) else None
            eid = self._nested_id(p)
            element_type = self.type(t.elementType, (*path, "element"), p)
            return ListType(Field(eid, "element", element_type, nullable=t.containsNull))
        if isinstance(t, st.MapType):
            pk = ptype.key if isinstance(ptype, MapType) else None
            pv = ptype.value if isinstance(ptype, MapType) else None
            kid = self._nested_id(pk)
            key_type = self.type(t.keyType, (*path, "key"), pk)
            vid = self._nested_id(pv)
            value_type = self.type(t.valueType, (*path, "value"), pv)
            return MapType(Field(kid, "key", key_type, nullable=False),
                           Field(vid, "value", value_type, nullable=t.valueContainsNull))
        return primitive_from_spark(t, path=join_path(path))


def primitive_from_spark(t: st.DataType, *, path: str = "") -> pa.DataType:
    """The canonical Arrow type of a Spark atomic type (see the module docs for the table)."""
    if isinstance(t, st.UserDefinedType):
        return primitive_from_spark(t.sqlType(), path=path)
    for spark_cls, arrow in _SPARK_ATOMIC:
        if isinstance(t, spark_cls):
            return arrow
    if isinstance(t, st.DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, st.TimestampType):
        return pa.timestamp("us", tz="UTC")
    if isinstance(t, st.TimestampNTZType):
        return pa.timestamp("us")
    if _TimeType is not None and isinstance(t, _TimeType):
        p = t.precision
        return pa.time32("s") if p == 0 else pa.time32("ms") if p <= 3 else pa.time64("us")
    raise UnsupportedSparkTypeError(
        f"{_where(path)} has Spark type {t.simpleString()}, which fieldshift does not store "
        "(Parquet has no such type); cast it in Spark before handing the schema over"
    )


_SPARK_ATOMIC: tuple[tuple[type, pa.DataType], ...] = (
    (st.BooleanType, pa.bool_()),
    (st.ByteType, pa.int8()),
    (st.ShortType, pa.int16()),
    (st.IntegerType, pa.int32()),
    (st.LongType, pa.int64()),
    (st.FloatType, pa.float32()),
    (st.DoubleType, pa.float64()),
    (st.CharType, pa.string()),
    (st.VarcharType, pa.string()),
    (st.StringType, pa.string()),
    (st.BinaryType, pa.binary()),
    (st.DateType, pa.date32()),
    (st.NullType, pa.null()),
)


def _default_from_meta(meta: dict[str, Any], key: str, t: FieldType, path: tuple[str, ...]) -> Any:
    text = meta.get(key)
    if text is None:
        return None
    try:
        return coerce_default(parse_spark_literal(str(text)), t)
    except (ValueError, TypeError, ArithmeticError, pa.ArrowException) as e:
        warnings.warn(
            f"Spark field {join_path(path)!r}: ignoring {key} {text!r}, which fieldshift cannot read "
            f"as a {type_name(t)} ({e})",
            stacklevel=4,
        )
        return None


# ================================================================================================
# Spark SQL literals for defaults
# ================================================================================================
def _literal_of_field(f: Field, kind: str, path: str) -> str:
    value = f.initial_default if kind == "initial" else f.write_default
    if isinstance(f.type, StructType) and value == {}:
        return _named_struct(f.type, kind, path)
    return spark_literal(value, f.type, path=path, kind=kind)


def _named_struct(t: StructType, kind: str, path: str) -> str:
    parts = []
    for c in t.fields:
        parts.append(_quote(c.name))
        parts.append(_literal_of_field(c, kind, _join(path, c.name)))
    return f"NAMED_STRUCT({', '.join(parts)})"


def spark_sql_type(t: st.DataType) -> str:
    """Spark SQL spelling of a type, for ``CAST(... AS <type>)`` (struct names backquoted)."""
    if isinstance(t, st.ArrayType):
        return f"ARRAY<{spark_sql_type(t.elementType)}>"
    if isinstance(t, st.MapType):
        return f"MAP<{spark_sql_type(t.keyType)}, {spark_sql_type(t.valueType)}>"
    if isinstance(t, st.StructType):
        inner = ", ".join(
            f"`{f.name.replace('`', '``')}`: {spark_sql_type(f.dataType)}{'' if f.nullable else ' NOT NULL'}"
            for f in t.fields
        )
        return f"STRUCT<{inner}>"
    if isinstance(t, st.NullType):
        return "VOID"
    if isinstance(t, st.LongType):
        return "BIGINT"
    if isinstance(t, st.IntegerType):
        return "INT"
    if isinstance(t, st.ByteType):
        return "TINYINT"
    if isinstance(t, st.ShortType):
        return "SMALLINT"
    return t.simpleString().upper()


def _quote(text: str) -> str:
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "'":
            out.append("\\'")
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def _fraction(microsecond: int) -> str:
    return f".{microsecond:06d}" if microsecond else ""


def _clock(v: dt.time | dt.datetime) -> str:
    return f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}{_fraction(v.microsecond)}"


def _day(v: dt.date) -> str:
    return f"{v.year:04d}-{v.month:02d}-{v.day:02d}"


def _float_literal(v: float, spark_name: str, suffix: str | None) -> str:
    if math.isnan(v):
        return f"CAST('NaN' AS {spark_name})"
    if math.isinf(v):
        return f"CAST('{'-' if v < 0 else ''}Infinity' AS {spark_name})"
    if suffix is None:
        return f"CAST('{float(v)!r}' AS {spark_name})"
    return f"{float(v)!r}{suffix}"


def spark_literal(value: Any, t: FieldType, *, path: str = "", kind: str = "initial") -> str:
    """A Spark SQL literal of ``value`` typed as ``type_to_spark(t)`` (Spark's ``Literal.sql`` forms).

    ``None`` inside a container is written ``CAST(NULL AS <type>)`` so the literal's type is exact.
    A struct value ``{}`` (fieldshift's only non-null struct default) is written as ``NAMED_STRUCT``
    of the children's ``kind`` (``"initial"`` or ``"write"``) defaults.
    """
    spark_type = type_to_spark(t, path=path)
    if value is None:
        if isinstance(spark_type, st.NullType):
            return "NULL"
        return f"CAST(NULL AS {spark_sql_type(spark_type)})"
    if isinstance(t, ListType):
        if not value:
            return f"CAST(ARRAY() AS {spark_sql_type(spark_type)})"
        items = ", ".join(spark_literal(v, t.element.type, path=_join(path, "element"), kind=kind)
                          for v in value)
        return f"ARRAY({items})"
    if isinstance(t, MapType):
        if not value:
            return f"CAST(MAP() AS {spark_sql_type(spark_type)})"
        items = ", ".join(
            f"{spark_literal(k, t.key.type, path=_join(path, 'key'), kind=kind)}, "
            f"{spark_literal(v, t.value.type, path=_join(path, 'value'), kind=kind)}"
            for k, v in value.items()
        )
        return f"MAP({items})"
    if isinstance(t, StructType):
        return _named_struct(t, kind, path)
    return _primitive_literal(value, spark_type)


def _primitive_literal(value: Any, spark_type: st.DataType) -> str:
    if isinstance(spark_type, st.BooleanType):
        return "TRUE" if value else "FALSE"
    if isinstance(spark_type, st.ByteType):
        return f"{int(value)}Y"
    if isinstance(spark_type, st.ShortType):
        return f"{int(value)}S"
    if isinstance(spark_type, st.IntegerType):
        return f"{int(value)}"
    if isinstance(spark_type, st.LongType):
        return f"{int(value)}L"
    if isinstance(spark_type, st.FloatType):
        return _float_literal(float(value), "FLOAT", None)
    if isinstance(spark_type, st.DoubleType):
        return _float_literal(float(value), "DOUBLE", "D")
    if isinstance(spark_type, st.DecimalType):
        return f"{decimal.Decimal(value):f}BD"
    if isinstance(spark_type, st.StringType):
        return _quote(str(value))
    if isinstance(spark_type, st.BinaryType):
        return f"X'{bytes(value).hex().upper()}'"
    if isinstance(spark_type, st.DateType):
        day = value.date() if isinstance(value, dt.datetime) else value
        return f"DATE '{_day(day)}'"
    if isinstance(spark_type, st.TimestampType):
        utc = value.astimezone(dt.UTC) if value.tzinfo is not None else value
        return f"TIMESTAMP '{_day(utc)} {_clock(utc)}Z'"
    if isinstance(spark_type, st.TimestampNTZType):
        return f"TIMESTAMP_NTZ '{_day(value)} {_clock(value)}'"
    if _TimeType is not None and isinstance(spark_type, _TimeType):
        return f"TIME '{_clock(value)}'"
    return "NULL"  # NullType


# -- parsing (the forms spark_literal writes, plus Spark's own Literal.sql forms) ---------------
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
      | (?P<hex>[xX]'[0-9a-fA-F]*')
      | (?P<num>-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?:BD|bd|[YySsLlDdFf])?)
      | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<quoted>`(?:[^`]|``)*`)
      | (?P<punct>[(),<>:-])
    )""",
    re.VERBOSE,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "0": "\0", "Z": "\x1a", "'": "'", '"': '"',
            "\\": "\\", "%": "\\%", "_": "\\_"}


def _unquote(text: str) -> str:
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 == len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt == "u" and i + 6 <= len(body):
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        elif nxt.isdigit() and i + 4 <= len(body) and body[i + 1:i + 4].isdigit():
            out.append(chr(int(body[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
    return "".join(out)


class _LiteralParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if not m:
                raise ValueError(f"unexpected character at position {pos}")
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1].upper() != value):
            raise ValueError(f"expected {value or 'a literal'} in {self.text!r}")
        self.i += 1
        return tok

    def parse(self) -> Any:
        value = self.value()
        if self.peek() is not None:
            raise ValueError(f"unexpected {self.peek()[1]!r} in {self.text!r}")
        return value

    def args(self) -> list[Any]:
        self.take("(")
        out: list[Any] = []
        if self.peek() is not None and self.peek()[1] == ")":
            self.take(")")
            return out
        while True:
            out.append(self.value())
            sep = self.take()[1]
            if sep == ")":
                return out
            if sep != ",":
                raise ValueError(f"expected ',' or ')' in {self.text!r}")

    def skip_type(self) -> None:
        depth = 0
        while True:
            tok = self.peek()
            if tok is None:
                raise ValueError(f"unterminated CAST in {self.text!r}")
            if tok[1] in "(<":
                depth += 1
            elif tok[1] in ")>":
                if depth == 0:
                    return
                depth -= 1
            self.i += 1

    def value(self) -> Any:
        kind, text = self.take()
        word = text.upper()
        if kind == "str":
            return _SparkString(_unquote(text))
        if kind == "hex":
            return bytes.fromhex(text[2:-1])
        if kind == "num":
            return _number(text)
        if kind == "punct" and text == "-":
            inner = self.value()
            return -inner
        if kind != "word":
            raise ValueError(f"unexpected {text!r} in {self.text!r}")
        if word == "NULL":
            return None
        if word in ("TRUE", "FALSE"):
            return word == "TRUE"
        if word in ("DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ", "TIME"):
            kind2, raw = self.take()
            if kind2 != "str":
                raise ValueError(f"{word} must be followed by a quoted string in {self.text!r}")
            return _typed_text(word, _unquote(raw))
        if word == "CAST":
            self.take("(")
            inner = self.value()
            self.take("AS")
            self.skip_type()
            self.take(")")
            if isinstance(inner, _SparkString) and inner in ("NaN", "Infinity", "-Infinity", "+Infinity"):
                return float(inner)
            return inner
        if word == "ARRAY":
            return self.args()
        if word == "MAP":
            items = self.args()
            if len(items) % 2:
                raise ValueError(f"MAP needs key/value pairs in {self.text!r}")
            return {_hashable(items[i]): items[i + 1] for i in range(0, len(items), 2)}
        if word in ("NAMED_STRUCT", "STRUCT"):
            self.args()
            return {}  # a struct default is {} (built from the children's own defaults)
        raise ValueError(f"unsupported expression {text!r} in {self.text!r}")


class _SparkString(str):
    """A quoted string literal (kept apart from typed literals for CAST('NaN' AS DOUBLE))."""


def _hashable(v: Any) -> Any:
    return str(v) if isinstance(v, _SparkString) else v


def _number(text: str) -> Any:
    upper = text.upper()
    if upper.endswith("BD"):
        return decimal.Decimal(text[:-2])
    suffix = upper[-1]
    if suffix in "YSL":
        return int(text[:-1])
    if suffix in "DF":
        return float(text[:-1])
    if "E" in upper:
        return float(text)
    if "." in text:
        return decimal.Decimal(text)
    return int(text)


def _typed_text(word: str, text: str) -> Any:
    text = text.strip()
    if word == "DATE":
        return dt.date.fromisoformat(text)
    if word == "TIME":
        return dt.time.fromisoformat(text)
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    value = dt.datetime.fromisoformat(text.replace("T", " ", 1))
    if word == "TIMESTAMP_NTZ":
        return value.replace(tzinfo=None)
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def parse_spark_literal(text: str) -> Any:
    """Parse a Spark SQL literal (as :func:`spark_literal` writes) into a Python value.

    Supports NULL, TRUE/FALSE, numbers with Spark's suffixes (``Y S L D BD``), quoted strings,
    ``X'..'``, ``DATE/TIMESTAMP/TIMESTAMP_NTZ/TIME '..'`` (a TIMESTAMP without a zone is read as
    UTC), ``CAST(<literal> AS <type>)``, ``ARRAY(..)``, ``MAP(..)`` and ``NAMED_STRUCT(..)`` (read
    as ``{}``, fieldshift's only non-null struct default). Raises ValueError on anything else.
    """
    value = _LiteralParser(text).parse()
    return _plain(value)


def _plain(v: Any) -> Any:
    if isinstance(v, _SparkString):
        return str(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {_plain(k): _plain(x) for k, x in v.items()}
    return v


def coerce_default(value: Any, t: FieldType) -> Any:
    """Convert a parsed literal to a value of ``t`` that ``Field`` validation accepts."""
    if value is None:
        return None
    if isinstance(t, StructType):
        if value != {}:
            raise InvalidDefaultError(f"a struct default must be None or {{}}, got {value!r}")
        return {}
    if isinstance(t, ListType):
        return [coerce_default(v, t.element.type) for v in value]
    if isinstance(t, MapType):
        return {coerce_default(k, t.key.type): coerce_default(v, t.value.type) for k, v in value.items()}
    from fieldshift.arrow_conversion import type_to_arrow

    arrow = type_to_arrow(t)
    if T.is_timestamp(arrow) and isinstance(value, dt.datetime):
        if arrow.tz is None and value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
    try:
        return pa.scalar(value, type=arrow).as_py()
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return pa.scalar(value).cast(arrow).as_py()


# ================================================================================================
# Arrow types Spark accepts
# ================================================================================================
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
        return pa.struct([_arrow_field_for_spark(t.field(i), _join(path, t.field(i).name))
                          for i in range(t.num_fields)])
    if T.is_map(t):
        return pa.map_(_arrow_field_for_spark(t.key_field, _join(path, "key")),
                       _arrow_field_for_spark(t.item_field, _join(path, "value")))
    if _is_arrow_list(t):
        return pa.list_(_arrow_field_for_spark(t.value_field, _join(path, "element")))
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
        _check_decimal(t, path)
        return pa.decimal128(t.precision, t.scale)
    if T.is_fixed_size_binary(t):
        return pa.binary()
    if T.is_timestamp(t):
        return pa.timestamp("us", tz=t.tz)
    if T.is_time(t):
        _time_type()
        return pa.time64("ns")
    _primitive_to_spark(t, path)  # raises for types Spark has no counterpart for
    return t


def schema_for_spark(schema: Schema) -> Schema:
    """The same schema (ids, names, nullability, docs, versions) with every type Spark-compatible.

    Types go through :func:`arrow_type_for_spark` (lists become plain lists, maps lose
    ``keys_sorted``); defaults are converted to the new types (a nanosecond timestamp default is
    truncated to microseconds, as Spark would).
    """
    return Schema(
        [_field_for_spark(f, _join("", f.name)) for f in schema.fields],
        schema_id=schema.schema_id,
        identifier_field_ids=schema.identifier_field_ids,
        highest_field_id=schema.highest_field_id,
        doc=schema.doc,
    )


def _field_for_spark(f: Field, path: str) -> Field:
    new_type = _type_for_spark(f.type, path)
    if new_type == f.type:
        return f
    return f.with_(
        type=new_type,
        initial_default=_recast_default(f.initial_default, f.type, new_type),
        write_default=_recast_default(f.write_default, f.type, new_type),
    )


def _type_for_spark(t: FieldType, path: str) -> FieldType:
    if isinstance(t, StructType):
        return StructType(tuple(_field_for_spark(c, _join(path, c.name)) for c in t.fields))
    if isinstance(t, ListType):
        return ListType(_field_for_spark(t.element, _join(path, "element")))
    if isinstance(t, MapType):
        return MapType(_field_for_spark(t.key, _join(path, "key")),
                       _field_for_spark(t.value, _join(path, "value")))
    return arrow_type_for_spark(t, path=path)


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
