"""Spark SQL literals: render fieldshift default values as Spark SQL text, and parse them back.

Spark keeps column defaults as SQL text in ``StructField`` metadata (``EXISTS_DEFAULT``,
``CURRENT_DEFAULT``), and its native Parquet reader fills a column missing from a file with
``EXISTS_DEFAULT``. This module writes the forms Spark's own ``Literal.sql`` writes (``0``, ``5L``,
``'x'``, ``DATE '2020-01-01'``, ``TIMESTAMP '2020-01-01 00:00:00Z'``, ``X'0A'``, ``ARRAY(1, 2)``, ...)
and reads them back. A struct default ``{}`` is written as ``NAMED_STRUCT`` of the children's
defaults and read back as ``{}``.

Rendering walks a fieldshift type together with its Spark type (from
:func:`fieldshift.spark.types.type_to_spark`), so this module needs no type mapping of its own;
:func:`fieldshift.spark.types.spark_literal` is the one-call form that maps the type first.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from typing import Any

import pyarrow as pa
import pyspark.sql.types as st  # missing: fieldshift.spark's loader raises SparkNotInstalledError

from fieldshift.errors import InvalidDefaultError
from fieldshift.schema.field import Field
from fieldshift.schema.formats.arrow_conversion import type_to_arrow
from fieldshift.schema.types import FieldType, ListType, MapType, StructType

__all__ = [
    "coerce_default",
    "default_literal",
    "parse_spark_literal",
    "render_literal",
    "spark_sql_type",
]

# TimeType arrived in pyspark 4.1; older versions cannot hold time columns.
_TimeType: Any = getattr(st, "TimeType", None)


# ================================================================================================
# rendering
# ================================================================================================
def default_literal(f: Field, kind: str, spark_type: st.DataType) -> str:
    """The Spark SQL literal of ``f``'s ``kind`` (``"initial"`` or ``"write"``) default.

    ``spark_type`` is the Spark type of ``f.type``; a struct default ``{}`` becomes ``NAMED_STRUCT``
    of the children's own ``kind`` defaults.
    """
    value = f.initial_default if kind == "initial" else f.write_default
    if isinstance(f.type, StructType) and value == {}:
        return _named_struct(f.type, kind, spark_type)
    return render_literal(value, f.type, spark_type, kind=kind)


def _named_struct(t: StructType, kind: str, spark_type: st.DataType) -> str:
    parts = []
    for c, sf in zip(t.fields, spark_type.fields, strict=True):
        parts.append(_quote(c.name))
        parts.append(default_literal(c, kind, sf.dataType))
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


def render_literal(value: Any, t: FieldType, spark_type: st.DataType, *, kind: str = "initial") -> str:
    """A Spark SQL literal of ``value`` typed as ``spark_type`` (the Spark type of ``t``).

    ``None`` inside a container is written ``CAST(NULL AS <type>)`` so the literal's type is exact.
    A struct value ``{}`` (fieldshift's only non-null struct default) is written as ``NAMED_STRUCT``
    of the children's ``kind`` (``"initial"`` or ``"write"``) defaults.
    """
    if value is None:
        if isinstance(spark_type, st.NullType):
            return "NULL"
        return f"CAST(NULL AS {spark_sql_type(spark_type)})"
    if isinstance(t, ListType):
        if not value:
            return f"CAST(ARRAY() AS {spark_sql_type(spark_type)})"
        items = ", ".join(render_literal(v, t.element.type, spark_type.elementType, kind=kind) for v in value)
        return f"ARRAY({items})"
    if isinstance(t, MapType):
        if not value:
            return f"CAST(MAP() AS {spark_sql_type(spark_type)})"
        items = ", ".join(
            f"{render_literal(k, t.key.type, spark_type.keyType, kind=kind)}, "
            f"{render_literal(v, t.value.type, spark_type.valueType, kind=kind)}"
            for k, v in value.items()
        )
        return f"MAP({items})"
    if isinstance(t, StructType):
        return _named_struct(t, kind, spark_type)
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



# ================================================================================================
# parsing (the forms render_literal writes, plus Spark's own Literal.sql forms)
# ================================================================================================
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
    """Parse a Spark SQL literal (as :func:`render_literal` writes) into a Python value.

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
    arrow = type_to_arrow(t)
    if pa.types.is_timestamp(arrow) and isinstance(value, dt.datetime):
        if arrow.tz is None and value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
    try:
        return pa.scalar(value, type=arrow).as_py()
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return pa.scalar(value).cast(arrow).as_py()
