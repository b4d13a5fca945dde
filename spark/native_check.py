"""What Spark's native Parquet scan reproduces exactly: the check ``fieldshift.spark.read`` makes per file
layout before reading files with Spark's own scan, for fieldshift tables (``table_read.py``) and tables
other formats wrote (``open_native.py``). See ``table_read``'s docstring for what was verified.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema
from fieldshift.schema.partner_visitor import PartnerVisitor, visit_level

__all__ = ["OBJECT_STORE_REASON", "native_reason"]

T = pa.types
# pyspark ships no Hadoop S3 (or GCS, Azure) connector, so Spark's own Parquet scan cannot open these files
OBJECT_STORE_REASON = "object-store location (Spark's native Parquet scan needs a Hadoop connector pyspark lacks)"


# ------------------------------------------------------------------------------------------------
# what Spark's native reader reproduces exactly
# ------------------------------------------------------------------------------------------------
def _natively_readable(t: pa.DataType) -> bool:
    """Primitive file types Spark reads from Parquet with the same values as pyarrow."""
    return (T.is_boolean(t) or T.is_integer(t) or T.is_float32(t) or T.is_float64(t)
            or T.is_decimal128(t) or T.is_string(t) or T.is_large_string(t) or T.is_binary(t)
            or T.is_large_binary(t) or T.is_fixed_size_binary(t) or T.is_date32(t)
            or (T.is_timestamp(t) and t.unit in ("ms", "us")))


def _is_text(t: pa.DataType) -> bool:
    return T.is_string(t) or T.is_large_string(t) or T.is_string_view(t)


def _is_bytes(t: pa.DataType) -> bool:
    return T.is_binary(t) or T.is_large_binary(t) or T.is_binary_view(t) or T.is_fixed_size_binary(t)


def _int_rank(t: pa.DataType) -> tuple[bool, int] | None:
    if not T.is_integer(t):
        return None
    return T.is_signed_integer(t), t.bit_width


def _native_cast(ft: pa.DataType, rt: pa.DataType) -> bool:
    """Whether Spark reads a Parquet column written as ``ft`` as ``rt`` with the engine's values."""
    if not _natively_readable(ft):
        return False
    if ft.equals(rt):
        return True
    if _is_text(ft) and _is_text(rt):
        return True
    if _is_bytes(ft) and _is_bytes(rt):
        return not T.is_fixed_size_binary(rt)
    fi, ri = _int_rank(ft), _int_rank(rt)
    if fi and ri:
        # signed -> wider signed; unsigned -> a signed type Spark holds (uint64 would be decimal)
        return ri[0] and ri[1] > fi[1] if fi[0] else ri[0] and ri[1] > fi[1] and fi[1] <= 32
    if fi and T.is_float64(rt):
        return fi[1] <= 32
    if T.is_float32(ft) and T.is_float64(rt):
        return True
    if T.is_decimal128(ft) and T.is_decimal128(rt):
        return rt.scale >= ft.scale and rt.precision - rt.scale >= ft.precision - ft.scale
    if T.is_date32(ft) and T.is_timestamp(rt):
        return rt.tz is None and rt.unit in ("us", "ms")
    if T.is_timestamp(ft) and T.is_timestamp(rt):
        return (ft.tz is None) == (rt.tz is None) and rt.unit == "us"
    return False


def _native_default(f: Field) -> bool:
    t = f.type
    if not isinstance(t, pa.DataType):
        return False
    if T.is_decimal128(t):
        return t.precision <= 18
    return (T.is_boolean(t) or (T.is_integer(t) and t != pa.uint64()) or T.is_float32(t) or T.is_float64(t)
            or T.is_string(t) or T.is_large_string(t) or T.is_date32(t)
            or (T.is_timestamp(t) and t.unit in ("ms", "us")))


def _names_free(file_fields: Sequence[Field], read_fields: Sequence[Field]) -> bool:
    """No read field missing from the file is named like a file field (compared case-insensitively).

    The native scan requests present fields under the file's own names; a missing field keeps its
    read name, which must not match a (dropped or renamed) file column, or a by-name read or
    Spark's name-based filter pushdown would take that column's values.
    """
    file_ids = {f.id for f in file_fields}
    taken = {f.name.lower() for f in file_fields}
    if len(taken) != len(file_fields):  # names differing only in case: ambiguous to Spark
        return False
    return not any(f.id not in file_ids and f.name.lower() in taken for f in read_fields)


def native_reason(file_schema: Schema, read_schema: Schema) -> str | None:
    """None when Spark's native field-id scan reads ``file_schema`` files as ``read_schema`` exactly,
    else why not (the first obstacle, as a dotted path and a reason).

    ``file_schema`` is the whole schema the files were written with (dropped columns included:
    their names matter to Spark's name-based filter pushdown).
    """
    return _names_taken(file_schema.fields, read_schema.fields, "") or \
        _first(visit_level(_NativeCheck(), read_schema.fields, file_schema.fields, (None, True)))


def _names_taken(file_fields: Sequence[Field], read_fields: Sequence[Field], prefix: str) -> str | None:
    if _names_free(file_fields, read_fields):
        return None
    return (f"{prefix or 'top level'}: a column the file lacks has the name of one it has (a dropped "
            "column's name re-added?), or two file columns differ only in case")


def _first(reasons: Sequence[str | None]) -> str | None:
    return next((r for r in reasons if r), None)


_Where = tuple[str | None, bool]
"""A field's dotted path (None above the top level) and whether it is a top-level column."""


class _NativeCheck(PartnerVisitor[_Where, str | None]):
    """Why a read field is not read natively from its file partner (None: it is), children first;
    a level reports its first obstacle in read order (the names clash of the level itself first)."""

    def field_contexts(self, ctx: _Where, read_fields: tuple[Field, ...]) -> list[_Where]:
        if ctx[0] is None:
            return [(rf.name, True) for rf in read_fields]
        return [(f"{ctx[0]}.{rf.name}", False) for rf in read_fields]

    def element_context(self, ctx: _Where, rf: Field) -> _Where:
        return f"{ctx[0]}.element", False

    def key_context(self, ctx: _Where, rf: Field) -> _Where:
        return f"{ctx[0]}.key", False

    def value_context(self, ctx: _Where, rf: Field) -> _Where:
        return f"{ctx[0]}.value", False

    def missing(self, rf: Field, ctx: _Where) -> str | None:
        path, top = ctx
        if rf.initial_default is not None and not (top and _native_default(rf)):
            return f"{path}: Spark cannot fill this initial default"
        return None

    def mismatch(self, rf: Field, ff: Field, index: int, ctx: _Where) -> str | None:
        return f"{ctx[0]}: shape change"

    def primitive(self, rf: Field, ff: Field | None, index: int, ctx: _Where) -> str | None:
        ft, rt = ff.type, rf.type
        if _native_cast(ft, rt):
            return None
        return f"{ctx[0]}: {ft} -> {rt} is not reproduced by Spark's Parquet reader"

    def struct(self, rf: Field, ff: Field | None, index: int, ctx: _Where, children: list[str | None]) -> str | None:
        return _names_taken(ff.type.fields, rf.type.fields, f"{ctx[0]}.") or _first(children)

    def list(self, rf: Field, ff: Field | None, index: int, ctx: _Where, element: str | None) -> str | None:
        if ff.type.variant in ("list_view", "large_list_view"):
            return f"{ctx[0]}: list views are not read natively"
        return element

    def map(self, rf: Field, ff: Field | None, index: int, ctx: _Where, key: str | None,
            value: str | None) -> str | None:
        return key or value
