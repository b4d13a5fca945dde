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
``CURRENT_DEFAULT``, both as Spark SQL literals (see :mod:`fieldshift.spark.sql_literals`): Spark's
native Parquet reader fills a column missing from a file with ``EXISTS_DEFAULT``. ``doc`` goes to
``comment``.

The Arrow types Spark accepts from Python live in :mod:`fieldshift.spark.arrow_for_spark`; the small
public helpers below that are not in ``__all__`` (``child_path``, ``check_spark_decimal``,
``spark_time_type``, ``is_arrow_list``, ``primitive_to_spark``) serve it, so both modules apply one
set of rules.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyspark.sql.types as st  # missing: fieldshift.spark's loader raises SparkNotInstalledError

from fieldshift.errors import MissingFieldIdError, SchemaEvolutionError, UnsupportedSparkTypeError
from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema, join_path
from fieldshift.schema.type_visitor import TypeVisitor, visit_field, visit_fields, visit_type
from fieldshift.schema.types import FieldType, ListType, MapType, StructType, type_name
from fieldshift.spark.sql_literals import coerce_default, default_literal, parse_spark_literal, render_literal

__all__ = [
    "COMMENT_KEY",
    "CURRENT_DEFAULT_KEY",
    "EXISTS_DEFAULT_KEY",
    "SPARK_FIELD_ID_KEY",
    "UnsupportedSparkTypeError",
    "field_to_spark",
    "primitive_from_spark",
    "schema_to_spark",
    "spark_literal",
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
    return _naming_errors(lambda v: st.StructType(visit_fields(schema.fields, v)), "")


def field_to_spark(field: Field) -> st.StructField:
    """One fieldshift field as a ``StructField`` (id in ``parquet.field.id``)."""
    return _naming_errors(lambda v: visit_field(field, v), "")


def type_to_spark(t: FieldType | pa.DataType, *, path: str = "") -> st.DataType:
    """The Spark type holding values of ``t``; raises :class:`UnsupportedSparkTypeError` if none."""
    return _naming_errors(lambda v: visit_type(t, v), path)


def child_path(path: str, name: str) -> str:
    """Extend a dotted display path by one name (quoted in backticks when it holds a dot)."""
    return f"{path}.{join_path([name])}" if path else join_path([name])


class _ToSpark(TypeVisitor[Any]):
    """fieldshift types to Spark types. Paths only name a column in errors, so this walk keeps none;
    ``_naming_errors`` repeats a walk that failed with ``_NamingToSpark``, which does."""

    paths: list[str] | tuple[str, ...] = ("",)  # no path kept: errors name no column

    def field(self, f: Field, result: st.DataType) -> st.StructField:
        meta: dict[str, Any] = {SPARK_FIELD_ID_KEY: f.id}
        if f.doc is not None:
            meta[COMMENT_KEY] = f.doc
        if f.initial_default is not None:
            meta[EXISTS_DEFAULT_KEY] = default_literal(f, "initial", result)
        if f.write_default is not None:
            meta[CURRENT_DEFAULT_KEY] = default_literal(f, "write", result)
        return st.StructField(f.name, result, nullable=f.nullable, metadata=meta)

    def struct(self, t: StructType, fields: list[st.StructField]) -> st.DataType:
        return st.StructType(fields)

    def list(self, t: ListType, element: st.DataType) -> st.DataType:
        return st.ArrayType(element, containsNull=t.element.nullable)

    def map(self, t: MapType, key: st.DataType, value: st.DataType) -> st.DataType:
        return st.MapType(key, value, valueContainsNull=t.value.nullable)

    def primitive(self, t: pa.DataType) -> st.DataType:
        if _is_arrow_nested(t):
            return _arrow_nested_to_spark(t, self.paths[-1])
        return primitive_to_spark(t, path=self.paths[-1])


class _NamingToSpark(_ToSpark):
    """The same walk, keeping the dotted path of the field being visited for its errors."""

    def __init__(self, path: str) -> None:
        self.paths = [path]

    def before_field(self, f: Field) -> None:
        self.paths.append(child_path(self.paths[-1], f.name))

    def after_field(self, f: Field) -> None:
        self.paths.pop()


_TO_SPARK = _ToSpark()


def _naming_errors(walk: Callable[[_ToSpark], Any], path: str) -> Any:
    """Run ``walk`` without paths; if it fails, again with them (starting at ``path``), so the same
    error names its column."""
    try:
        return walk(_TO_SPARK)
    except UnsupportedSparkTypeError:
        return walk(_NamingToSpark(path))


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


def primitive_to_spark(t: pa.DataType, *, path: str = "") -> st.DataType:
    """The Spark type of an Arrow primitive; raises :class:`UnsupportedSparkTypeError` if none."""
    if T.is_dictionary(t):
        return primitive_to_spark(t.value_type, path=path)
    simple = _SIMPLE_TO_SPARK.get(t)
    if simple is not None:
        return simple()
    if t == pa.uint64():
        return st.DecimalType(20, 0)
    if T.is_decimal(t):
        check_spark_decimal(t, path)
        return st.DecimalType(t.precision, t.scale)
    if T.is_fixed_size_binary(t):
        return st.BinaryType()
    if T.is_timestamp(t):
        return st.TimestampType() if t.tz is not None else st.TimestampNTZType()
    if T.is_time(t):
        return spark_time_type()(_TIME_PRECISION[t.unit])
    raise UnsupportedSparkTypeError(
        f"{_where(path)} has type {t}, which Spark has no type for; cast it to a supported type first"
    )


def spark_time_type() -> Any:
    """pyspark's ``TimeType``, or a clear error on a pyspark without it (before 4.1)."""
    if _TimeType is None:
        import pyspark

        raise UnsupportedSparkTypeError(
            f"pyspark {pyspark.__version__} has no TimeType (added in Spark 4.1); upgrade Spark, or "
            "store time columns as int64 microseconds or as string"
        )
    return _TimeType


def check_spark_decimal(t: pa.DataType, path: str) -> None:
    """Refuse a decimal wider than Spark's 38 digits, naming the column."""
    if t.precision > SPARK_MAX_DECIMAL_PRECISION:
        raise UnsupportedSparkTypeError(
            f"{_where(path)} has type decimal({t.precision},{t.scale}), but Spark decimals hold at "
            f"most {SPARK_MAX_DECIMAL_PRECISION} digits; narrow the column to decimal(38, s) "
            "(CastPolicy.explicit() allows it: on a table, table.set_policy(CastPolicy.explicit()) first; values "
            "that do not fit fail or read as null) or store it as string"
        )


def _is_arrow_nested(t: pa.DataType) -> bool:
    return T.is_struct(t) or T.is_map(t) or is_arrow_list(t)


def is_arrow_list(t: pa.DataType) -> bool:
    """Every Arrow list layout (regular, large, fixed-size, views)."""
    return (T.is_list(t) or T.is_large_list(t) or T.is_fixed_size_list(t) or T.is_list_view(t)
            or T.is_large_list_view(t))


def _arrow_nested_to_spark(t: pa.DataType, path: str) -> st.DataType:
    """Raw Arrow nested types (ids from ``PARQUET:field_id`` metadata where present)."""
    from fieldshift.schema.formats.arrow_conversion import arrow_field_id

    if T.is_struct(t):
        fields = []
        for i in range(t.num_fields):
            child = t.field(i)
            fid = arrow_field_id(child)
            meta = {SPARK_FIELD_ID_KEY: fid} if fid is not None else {}
            fields.append(st.StructField(child.name, type_to_spark(child.type, path=child_path(path, child.name)),
                                         nullable=child.nullable, metadata=meta))
        return st.StructType(fields)
    if T.is_map(t):
        return st.MapType(type_to_spark(t.key_type, path=child_path(path, "key")),
                          type_to_spark(t.item_type, path=child_path(path, "value")),
                          valueContainsNull=t.item_field.nullable)
    return st.ArrayType(type_to_spark(t.value_type, path=child_path(path, "element")),
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


def spark_literal(value: Any, t: FieldType, *, path: str = "", kind: str = "initial") -> str:
    """A Spark SQL literal of ``value`` typed as ``type_to_spark(t)`` (Spark's ``Literal.sql`` forms).

    ``None`` inside a container is written ``CAST(NULL AS <type>)`` so the literal's type is exact.
    A struct value ``{}`` (fieldshift's only non-null struct default) is written as ``NAMED_STRUCT``
    of the children's ``kind`` (``"initial"`` or ``"write"``) defaults.
    """
    return render_literal(value, t, type_to_spark(t, path=path), kind=kind)
