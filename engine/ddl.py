"""ALTER TABLE statements (Hudi's and DuckLake's forms) parsed into schema changes.

Users paste DDL from the docs they know, so both dialects are accepted, with or without the
``ALTER TABLE name`` prefix, several actions separated by commas or ``;``. Parsing is separate from
applying: :func:`parse_alter` gives plain :class:`Change` objects (each renders back to canonical
SQL), :func:`apply_alter` replays them on a :class:`~fieldshift.SchemaUpdate`. Syntax errors point
a caret at the offending word and say what was expected, because "syntax error near X" wastes a
user's minute. ``parse_predicate`` reuses the same tokens for the CLI's ``--where``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from fieldshift.ddl_types import TypeSyntaxError, parse_type
from fieldshift.errors import DDLSyntaxError, InvalidDefaultError, SchemaEvolutionError, pointer
from fieldshift.field import Field
from fieldshift.schema import Schema, join_path, split_path
from fieldshift.schema_update import SchemaUpdate
from fieldshift.types import FieldType, ListType, MapType, StructType, type_name

__all__ = [
    "AddColumn",
    "Change",
    "DDLSyntaxError",
    "DropColumn",
    "MoveColumn",
    "RenameColumn",
    "SetComment",
    "SetDefault",
    "SetNullable",
    "SetType",
    "SqlLiteral",
    "apply_alter",
    "coerce_literal",
    "parse_alter",
    "parse_columns",
    "parse_predicate",
    "pointer",
]


# -- errors --------------------------------------------------------------------------------------
# -- tokens --------------------------------------------------------------------------------------
_TOKEN = re.compile(r"""
    (?P<ws>\s+|--[^\n]*|/\*.*?\*/)
  | (?P<string>'(?:[^']|'')*')
  | (?P<qident>`(?:[^`]|``)*`|"(?:[^"]|"")*")
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_$]*(?:\[[^\]]*\])?)
  | (?P<op><=|>=|!=|<>|==|[(),;.<>:=+\-{}*])
""", re.X | re.S)
ACTIONS = ("ADD", "DROP", "RENAME", "ALTER")
TYPE_HINT = ("a type such as int, bigint, varchar, double, decimal(10,2), date, timestamp, "
             "struct<a: int>, array<string> or map<string, int>")


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str  # word | qident | string | number | op | end
    text: str
    pos: int
    end: int

    @property
    def value(self) -> str:
        """Unquoted text: a string literal's or a quoted identifier's content."""
        if self.kind in ("string", "qident"):
            q = self.text[0]
            return self.text[1:-1].replace(q * 2, q)
        return self.text

    def shown(self) -> str | None:
        return None if self.kind == "end" else self.text


def _tokenize(text: str) -> list[_Tok]:
    toks, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            ch = text[pos]
            expected = (f"a closing {ch} for the {'string' if ch == chr(39) else 'name'} that starts here"
                        if ch in "'\"`" else "a word, a number, a 'string' or punctuation")
            if text.startswith("/*", pos):
                expected = "a closing */"
            raise DDLSyntaxError(text, pos, expected, ch)
        if m.lastgroup != "ws":
            toks.append(_Tok(m.lastgroup or "", m.group(), m.start(), m.end()))
        pos = m.end()
    toks.append(_Tok("end", "", len(text), len(text)))
    return toks


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


# -- parser --------------------------------------------------------------------------------------
_STRING_TYPES = ("varchar", "char", "character", "nvarchar", "string", "text")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0
        self._path_start = 0

    # -- token helpers --------------------------------------------------------------------------
    def peek(self, k: int = 0) -> _Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def advance(self) -> _Tok:
        tok = self.peek()
        self.i = min(self.i + 1, len(self.toks) - 1)
        return tok

    def at(self, *words: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return (tok.kind == "word" and tok.text.upper() in words) or (tok.kind == "op" and tok.text in words)

    def accept(self, *words: str) -> _Tok | None:
        return self.advance() if self.at(*words) else None

    def expect(self, word: str, expected: str | None = None) -> _Tok:
        if not self.at(word):
            raise self.error(expected or (repr(word) if not word.isalpha() else word))
        return self.advance()

    def error(self, expected: str, tok: _Tok | None = None) -> DDLSyntaxError:
        tok = tok or self.peek()
        return DDLSyntaxError(self.text, tok.pos, expected, tok.shown(), tok.end)

    def ended(self) -> bool:
        return self.peek().kind == "end"

    # -- statements -----------------------------------------------------------------------------
    def script(self) -> list[Change]:
        changes: list[Change] = []
        while True:
            while self.accept(";"):
                pass
            if self.ended():
                break
            changes.extend(self.statement())
            if not self.ended() and not self.at(";"):
                raise self.error("',', ';' or the end of the statement")
        if not changes:
            raise self.error("an ALTER TABLE statement")
        return changes

    def statement(self) -> list[Change]:
        if self.at("ALTER") and self.at("TABLE", k=1):
            self.advance()
            self.advance()
            if self.at(*ACTIONS) and not self.at(*ACTIONS, k=1):
                raise self.error("a table name")
            self.path("a table name")
        changes = self.action()
        while self.at(",") and self.at(*ACTIONS, k=1):
            self.advance()
            changes.extend(self.action())
        return changes

    def action(self) -> list[Change]:
        if self.accept("ADD"):
            return self.add()
        if self.accept("DROP"):
            return self.drop()
        if self.accept("RENAME"):
            return [self.rename()]
        if self.accept("ALTER"):
            return self.alter()
        raise self.error("ADD, DROP, RENAME or ALTER")

    def add(self) -> list[Change]:
        self.accept("COLUMNS") or self.accept("COLUMN")
        if self.accept("("):
            specs = [self.column_spec()]
            while self.accept(","):
                specs.append(self.column_spec())
            self.expect(")", "',' or ')'")
            return specs
        specs = [self.column_spec()]
        while self.at(",") and not self.at(*ACTIONS, k=1):
            self.advance()
            specs.append(self.column_spec())
        return specs

    def drop(self) -> list[Change]:
        self.accept("COLUMNS") or self.accept("COLUMN")
        paren = self.accept("(")
        changes: list[Change] = [self.located(DropColumn, self.path("a column to drop"))]
        while self.at(",") and (paren or not self.at(*ACTIONS, k=1)):
            self.advance()
            changes.append(self.located(DropColumn, self.path("a column to drop")))
        if paren:
            self.expect(")", "',' or ')'")
        return changes

    def rename(self) -> Change:
        self.accept("COLUMN")
        if self.at("TO"):
            raise self.error("a column to rename (renaming the table itself is not supported)")
        start = self.peek().pos
        old = self.path("a column to rename")
        self.expect("TO")
        tok = self.peek()
        new_parts = split_path(self.path("a new name"))
        if len(new_parts) > 1 and new_parts[:-1] != split_path(old)[:-1]:
            raise self.error("a new name without a struct path (a rename keeps the field where it is)", tok)
        return RenameColumn(old, new_parts[-1], span=(start, self.toks[self.i - 1].end))

    def alter(self) -> list[Change]:
        self.accept("COLUMN")
        start = self.peek().pos
        path = self.path("a column to alter")
        changes: list[Change] = []
        while True:
            clause = self.alter_clause(path, start)
            if clause is None:
                break
            changes.append(clause)
        if not changes or self.peek().kind in ("word", "qident", "number"):
            raise self.error("TYPE, SET TYPE, SET DEFAULT, DROP NOT NULL, COMMENT, FIRST or AFTER")
        return changes

    def alter_clause(self, path: str, start: int) -> Change | None:
        def span() -> tuple[int, int]:
            return (start, self.toks[self.i - 1].end)

        if self.accept("TYPE"):
            return SetType(path, self.type_(), span=span())
        if self.accept("SET"):
            if self.accept("DATA"):
                self.expect("TYPE")
                return SetType(path, self.type_(), span=span())
            if self.accept("TYPE"):
                return SetType(path, self.type_(), span=span())
            if self.accept("NOT"):
                self.expect("NULL")
                return SetNullable(path, False, span=span())
            if self.accept("DEFAULT"):
                return SetDefault(path, self.literal(), span=span())
            raise self.error("TYPE, DATA TYPE, NOT NULL or DEFAULT after SET")
        if self.accept("DROP"):
            if self.accept("NOT"):
                self.expect("NULL")
                return SetNullable(path, True, span=span())
            if self.accept("DEFAULT"):
                return SetDefault(path, None, span=span())
            raise self.error("NOT NULL or DEFAULT after DROP")
        if self.accept("COMMENT") or self.peek().kind == "string":  # Hudi: TYPE t [COMMENT] 'c'
            return SetComment(path, self.string("a 'comment' in quotes"), span=span())
        first, after, before = self.position()
        if first or after or before:
            return MoveColumn(path, first, after, before, span=span())
        return None

    # -- pieces ---------------------------------------------------------------------------------
    def located(self, kind: type[Change], path: str) -> Change:
        return kind(path, span=(self._path_start, self.toks[self.i - 1].end))

    def column_spec(self) -> AddColumn:
        start = self.peek().pos
        path = self.path("a column name")
        t = self.type_()
        nullable, default, doc, pos = True, None, None, (False, None, None)
        seen: set[str] = set()
        while True:
            tok = self.peek()
            key = tok.text.upper() if tok.kind == "word" else ""
            if key in ("NOT", "NULL", "DEFAULT", "COMMENT", "FIRST", "AFTER", "BEFORE"):
                group = {"NOT": "NULL", "FIRST": "POS", "AFTER": "POS", "BEFORE": "POS"}.get(key, key)
                if group in seen:
                    raise self.error(f"at most one {'position' if group == 'POS' else group} clause", tok)
                seen.add(group)
            if self.accept("NOT"):
                self.expect("NULL")
                nullable = False
            elif self.accept("NULL"):
                nullable = True
            elif self.accept("DEFAULT"):
                lit_tok = self.peek()
                lit = self.literal()
                try:
                    default = coerce_literal(lit, t)
                    Field(1, "x", t, initial_default=default)
                except (ValueError, SchemaEvolutionError) as e:
                    raise self.error(f"a default of type {type_name(t)} ({e})", lit_tok) from None
            elif self.accept("COMMENT"):
                doc = self.string("a 'comment' in quotes")
            else:
                first, after, before = self.position()
                if not (first or after or before):
                    break
                pos = (first, after, before)
        if self.peek().kind in ("word", "qident", "string", "number"):
            raise self.error("NOT NULL, DEFAULT, COMMENT, FIRST, AFTER, ',' or the end of the column")
        return AddColumn(path, t, nullable, default, doc, *pos, span=(start, self.toks[self.i - 1].end))

    def position(self) -> tuple[bool, str | None, str | None]:
        if self.accept("FIRST"):
            return True, None, None
        if self.accept("AFTER"):
            return False, self.path("a column to place it after"), None
        if self.accept("BEFORE"):
            return False, None, self.path("a column to place it before")
        return False, None, None

    def ident(self, expected: str) -> str:
        tok = self.peek()
        if tok.kind == "qident" and tok.value:
            return self.advance().value
        if tok.kind == "word" and "[" not in tok.text:
            return self.advance().text
        raise self.error(expected)

    def path(self, expected: str) -> str:
        self._path_start = self.peek().pos
        parts = [self.ident(expected)]
        while self.accept("."):
            parts.append(self.ident("a field name after '.'"))
        return join_path(parts)

    def string(self, expected: str) -> str:
        if self.peek().kind != "string":
            raise self.error(expected)
        return self.advance().value

    def literal(self) -> SqlLiteral:
        tok = self.peek()
        sign = ""
        if self.at("-", "+"):
            sign = self.advance().text.replace("+", "")
            if self.peek().kind != "number":
                raise self.error("a number after the sign")
        tok2 = self.peek()
        if tok2.kind == "number":
            self.advance()
            return SqlLiteral("number", sign + tok2.text, sign + tok2.text, tok.pos)
        if tok2.kind == "string":
            self.advance()
            return SqlLiteral("string", tok2.value, tok2.text, tok.pos)
        if self.accept("NULL"):
            return SqlLiteral("null", None, "NULL", tok.pos)
        if self.at("TRUE", "FALSE"):
            word = self.advance().text.upper()
            return SqlLiteral("bool", word == "TRUE", word, tok.pos)
        if self.at("DATE", "TIMESTAMP", "TIMESTAMPTZ"):
            kind = self.advance().text.upper()
            str_tok = self.peek()
            text = self.string(f"a quoted {kind.lower()} after {kind}, like {kind} '2024-01-31'")
            try:
                if kind == "DATE":
                    dt.date.fromisoformat(text)
                else:
                    dt.datetime.fromisoformat(text.replace(" ", "T", 1))
            except ValueError:
                example = "2024-01-31" if kind == "DATE" else "2024-01-31 12:00:00"
                raise self.error(f"an ISO {kind.lower()} such as {example}", str_tok) from None
            shown = f"{kind} {str_tok.text}"
            return SqlLiteral("date" if kind == "DATE" else "timestamp", text, shown, tok.pos)
        raise self.error("a value (a number, a 'string', TRUE, FALSE, NULL, DATE '...' or TIMESTAMP '...')",
                         tok)

    def type_(self) -> FieldType:
        tok = self.peek()
        if tok.kind != "word":
            raise self.error("a column type")
        self.advance()
        word = tok.text
        is_list = re.fullmatch(r"(.*?)\s*\[\s*\]", word)
        if is_list:
            word = is_list.group(1)
        text, offset = word, tok.pos
        if word.lower() in _STRING_TYPES and self.at("("):  # VARCHAR(20): lengths are not kept
            self.advance()
            if self.peek().kind != "number":
                raise self.error("a length")
            self.advance()
            self.expect(")")
        elif word.upper() == "TIMESTAMP" and self.at("WITH") and self.at("TIME", k=1):
            self.advance()
            self.advance()
            self.expect("ZONE")
            text = "timestamptz"
        elif self.at("<", "("):
            opener = self.peek().text
            closer = ">" if opener == "<" else ")"
            depth = 0
            while not self.ended() and not self.at(";"):
                t = self.advance()
                depth += (t.text == opener) - (t.text == closer)
                if depth == 0:
                    break
            text = self.text[tok.pos:self.toks[self.i - 1].end]
        if text[:7].lower() == "numeric":
            text = "decimal" + text[7:]
        try:
            parsed = parse_type(text)
        except TypeSyntaxError as e:
            word = re.match(r"[A-Za-z_][A-Za-z0-9_]*|\S", e.text[e.position:])
            found = word.group() if word else None
            m = re.search(r"expected (.*) at position \d+", str(e).splitlines()[0])
            expected = m.group(1) if m else "a type"
            if "unknown type" in expected:
                expected = TYPE_HINT
            raise DDLSyntaxError(self.text, offset + e.position, expected,
                                 found, offset + e.position + len(found or " ")) from None
        return ListType(Field(0, "element", parsed)) if is_list else parsed


# -- public API ----------------------------------------------------------------------------------
def parse_alter(statement: str) -> list[Change]:
    """Parse one or more ALTER TABLE statements (Hudi or DuckLake spelling) into changes."""
    return _Parser(statement).script()


def apply_alter(update: SchemaUpdate, statement: str | Sequence[Change]) -> SchemaUpdate:
    """Apply a statement's changes to ``update`` in order; a refusal gets a note pointing at the change."""
    changes = parse_alter(statement) if isinstance(statement, str) else list(statement)
    for change in changes:
        try:
            change.apply(update)
        except SchemaEvolutionError as e:
            if isinstance(statement, str) and change.span != (0, 0):
                e.add_note(f"while applying {change}:\n{pointer(statement, *change.span)}")
            raise
    return update


def parse_columns(text: str) -> Schema:
    """A new table's schema from column specs: ``id bigint NOT NULL, name varchar COMMENT 'who'``.

    Ids are assigned as Iceberg does for a new table: top-level columns first, then nested fields.
    """
    p = _Parser(text)
    specs = [p.column_spec()]
    while p.accept(","):
        specs.append(p.column_spec())
    if not p.ended():
        raise p.error("',' or the end of the column list")
    for spec in specs:
        if len(split_path(spec.path)) > 1 or spec.first or spec.after or spec.before:
            raise DDLSyntaxError(text, spec.span[0], "a top-level column name and type (no dotted paths or "
                                 "positions in a new schema)", spec.path, spec.span[1])
    counter = iter(range(len(specs) + 1, 1 << 31))
    fields = [Field(i, split_path(s.path)[0], _renumber(s.type, counter), nullable=s.nullable, doc=s.doc,
                    initial_default=s.default, write_default=s.default)
              for i, s in enumerate(specs, start=1)]
    return Schema(fields, schema_id=0)


def _renumber(t: FieldType, counter: Iterator[int]) -> FieldType:
    """Fresh ids for a parsed type's nested fields, each level's fields before their children."""
    if isinstance(t, StructType):
        fields = [f.with_(id=next(counter)) for f in t.fields]
        return StructType(tuple(f.with_(type=_renumber(f.type, counter)) for f in fields))
    if isinstance(t, ListType):
        element = t.element.with_(id=next(counter))
        return ListType(element.with_(type=_renumber(element.type, counter)), t.variant, t.size)
    if isinstance(t, MapType):
        key, value = t.key.with_(id=next(counter)), t.value.with_(id=next(counter))
        return MapType(key.with_(type=_renumber(key.type, counter)),
                       value.with_(type=_renumber(value.type, counter)), t.keys_sorted)
    return t


_OPS = {"=": "==", "==": "==", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def parse_predicate(text: str) -> tuple[str, str, Any]:
    """``col op value`` for a scan filter: ``(path, op, SqlLiteral | list[SqlLiteral] | None)``.

    Operators: ``= == != <> < <= > >= IN (..) NOT IN (..) IS NULL IS NOT NULL``.
    """
    p = _Parser(text)
    path = p.path("a column name")
    tok = p.peek()
    if tok.kind == "op" and tok.text in _OPS:
        p.advance()
        result: tuple[str, str, Any] = (path, _OPS[tok.text], p.literal())
    elif p.accept("IS"):
        negated = p.accept("NOT")
        p.expect("NULL", "NULL" if negated else "NULL or NOT NULL")
        result = (path, "not_null" if negated else "is_null", None)
    elif p.at("IN") or (p.at("NOT") and p.at("IN", k=1)):
        op = "not in" if p.accept("NOT") else "in"
        p.advance()
        p.expect("(")
        values = [p.literal()]
        while p.accept(","):
            values.append(p.literal())
        p.expect(")", "',' or ')'")
        result = (path, op, values)
    else:
        raise p.error("an operator (=, !=, <, <=, >, >=, IN, NOT IN, IS NULL, IS NOT NULL)")
    if not p.ended():
        raise p.error("the end of the condition (combine conditions with repeated --where)")
    return result
