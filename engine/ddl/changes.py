"""The schema changes an ALTER TABLE statement names, and the SQL literals they carry.

Each :class:`Change` is plain data that renders back to canonical SQL (:meth:`Change.sql`) and
replays itself on a :class:`~fieldshift.SchemaUpdate` (:meth:`Change.apply`). A default is kept as
the :class:`SqlLiteral` the user wrote and typed by :func:`coerce_literal` only when applied, because
only then is the column's type known.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from fieldshift.errors import InvalidDefaultError
from fieldshift.schema.model import join_path, split_path
from fieldshift.schema.schema_update import SchemaUpdate
from fieldshift.schema.types import FieldType, type_name

__all__ = [
    "AddColumn",
    "Change",
    "DropColumn",
    "MoveColumn",
    "RenameColumn",
    "SetComment",
    "SetDefault",
    "SetNullable",
    "SetType",
    "SqlLiteral",
    "coerce_literal",
]


# -- literals ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SqlLiteral:
    """A literal as written (``kind``: null, bool, number, string, date, timestamp); typed later."""

    kind: str
    value: Any
    text: str
    position: int = field(default=-1, compare=False)

    def __str__(self) -> str:
        return self.text


def _render_value(value: Any) -> str:
    """A Python value as a SQL literal that parses back to the same value."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float, decimal.Decimal)):
        return str(value)
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return "'" + str(value).replace("'", "''") + "'"


def coerce_literal(lit: SqlLiteral, t: FieldType) -> Any:
    """The Python value of ``lit`` read as type ``t``; ValueError says why it does not fit."""
    if lit.kind == "null":
        return None
    if not isinstance(t, pa.DataType):
        raise ValueError(f"a {type_name(t)} column takes only NULL here, not {lit.text}")
    T, v = pa.types, lit.value
    try:
        if lit.kind == "bool":
            if not T.is_boolean(t):
                raise ValueError
            return v
        if lit.kind == "number":
            if T.is_integer(t) and not re.fullmatch(r"[+-]?\d+", lit.text):
                raise ValueError
            if T.is_integer(t) or T.is_floating(t) or T.is_decimal(t):
                raw = int(lit.text) if T.is_integer(t) else decimal.Decimal(lit.text)
                if T.is_floating(t) and not math.isfinite(float(raw)):  # 1e400 is no double, not infinity
                    raise ValueError
                return pa.scalar(float(raw) if T.is_floating(t) else raw, type=t).as_py()
            if not (T.is_string(t) or T.is_large_string(t)):
                raise ValueError
            return lit.text
        if T.is_boolean(t):
            raise ValueError
        if T.is_timestamp(t) and t.tz is not None and lit.kind != "date":
            try:
                return pa.scalar(str(v)).cast(t).as_py()
            except (pa.ArrowException, ValueError):  # no offset written: read it as UTC
                naive = pa.scalar(str(v)).cast(pa.timestamp(t.unit)).as_py()
                return pa.scalar(naive, type=t).as_py()
        if lit.kind == "string" and (T.is_binary(t) or T.is_large_binary(t)):
            return v.encode()
        return pa.scalar(str(v)).cast(t).as_py()
    except (pa.ArrowException, ValueError, TypeError, OverflowError, decimal.InvalidOperation):
        raise ValueError(f"{lit.text} is not a valid {type_name(t)} value") from None


# -- changes -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Change:
    """One schema change; ``span`` is where the statement spelled it (for error pointers)."""

    path: str
    span: tuple[int, int] = field(default=(0, 0), compare=False, kw_only=True)

    def apply(self, update: SchemaUpdate) -> None:
        raise NotImplementedError

    def sql(self) -> str:
        """Canonical SQL for this change (it parses back to an equal change)."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.sql()


def _sibling(path: str, anchor: str) -> str:
    """Hudi writes ``ALTER COLUMN a.b.c AFTER x`` meaning ``a.b.x``; a full path is kept."""
    parts, anchor_parts = split_path(path), split_path(anchor)
    if len(anchor_parts) == 1 and len(parts) > 1:
        return join_path((*parts[:-1], anchor_parts[0]))
    return anchor


def _position_sql(first: bool, after: str | None, before: str | None) -> str:
    if first:
        return " FIRST"
    if after is not None:
        return f" AFTER {after}"
    return f" BEFORE {before}" if before is not None else ""


@dataclass(frozen=True)
class AddColumn(Change):
    type: FieldType
    nullable: bool = True
    default: Any = None
    doc: str | None = None
    first: bool = False
    after: str | None = None
    before: str | None = None

    def apply(self, update: SchemaUpdate) -> None:
        update.add_column(self.path, self.type, nullable=self.nullable, default=self.default,
                          doc=self.doc, first=self.first, after=self.after, before=self.before)

    def sql(self) -> str:
        out = f"ADD COLUMN {self.path} {type_name(self.type)}"
        out += "" if self.nullable else " NOT NULL"
        out += "" if self.default is None else f" DEFAULT {_render_value(self.default)}"
        out += "" if self.doc is None else f" COMMENT {_render_value(self.doc)}"
        return out + _position_sql(self.first, self.after, self.before)


@dataclass(frozen=True)
class DropColumn(Change):
    def apply(self, update: SchemaUpdate) -> None:
        update.drop_column(self.path)

    def sql(self) -> str:
        return f"DROP COLUMN {self.path}"


@dataclass(frozen=True)
class RenameColumn(Change):
    new_name: str

    def apply(self, update: SchemaUpdate) -> None:
        update.rename_column(self.path, self.new_name)

    def sql(self) -> str:
        return f"RENAME COLUMN {self.path} TO {join_path([self.new_name])}"


@dataclass(frozen=True)
class SetType(Change):
    type: FieldType

    def apply(self, update: SchemaUpdate) -> None:
        update.update_column(self.path, self.type)

    def sql(self) -> str:
        return f"ALTER COLUMN {self.path} TYPE {type_name(self.type)}"


@dataclass(frozen=True)
class SetNullable(Change):
    nullable: bool = True

    def apply(self, update: SchemaUpdate) -> None:
        update.update_column(self.path, nullable=self.nullable)

    def sql(self) -> str:
        return f"ALTER COLUMN {self.path} {'DROP' if self.nullable else 'SET'} NOT NULL"


@dataclass(frozen=True)
class SetComment(Change):
    comment: str

    def apply(self, update: SchemaUpdate) -> None:
        update.update_column(self.path, doc=self.comment)

    def sql(self) -> str:
        return f"ALTER COLUMN {self.path} COMMENT {_render_value(self.comment)}"


@dataclass(frozen=True)
class SetDefault(Change):
    """The write default (rows written from now on); old files keep their initial default."""

    literal: SqlLiteral | None = None

    def apply(self, update: SchemaUpdate) -> None:
        value = None
        if self.literal is not None:
            t = update.apply().find(self.path).type
            try:
                value = coerce_literal(self.literal, t)
            except ValueError as e:
                raise InvalidDefaultError(f"cannot set the default of {self.path!r}: {e}") from None
        update.set_write_default(self.path, value)

    def sql(self) -> str:
        if self.literal is None:
            return f"ALTER COLUMN {self.path} DROP DEFAULT"
        return f"ALTER COLUMN {self.path} SET DEFAULT {self.literal}"


@dataclass(frozen=True)
class MoveColumn(Change):
    first: bool = False
    after: str | None = None
    before: str | None = None

    def apply(self, update: SchemaUpdate) -> None:
        if self.first:
            update.move_first(self.path)
        elif self.after is not None:
            update.move_after(self.path, _sibling(self.path, self.after))
        else:
            update.move_before(self.path, _sibling(self.path, self.before or ""))

    def sql(self) -> str:
        return f"ALTER COLUMN {self.path}{_position_sql(self.first, self.after, self.before)}"
