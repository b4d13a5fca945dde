"""The recursive-descent parser behind :mod:`fieldshift.ddl.alter`: statements, column specs, literals, types.

Both dialects (Hudi's and DuckLake's) go through one grammar; every refusal is a
:class:`~fieldshift.ddl.tokens.DDLSyntaxError` saying what was expected where.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections.abc import Callable
from typing import TypeVar

from fieldshift.ddl.changes import (
    AddColumn,
    Change,
    DropColumn,
    MoveColumn,
    RenameColumn,
    SetComment,
    SetDefault,
    SetNullable,
    SetType,
    SqlLiteral,
    coerce_literal,
)
from fieldshift.ddl.tokens import DDLSyntaxError, Token, tokenize
from fieldshift.errors import SchemaEvolutionError, TypeSyntaxError
from fieldshift.schema.field import Field
from fieldshift.schema.model import join_path, split_path
from fieldshift.schema.type_text import PLACEHOLDER_ID, parse_type
from fieldshift.schema.types import FieldType, ListType, type_name

__all__ = ["ACTIONS", "TYPE_HINT", "DDLParser"]

ACTIONS = ("ADD", "DROP", "RENAME", "ALTER")
TYPE_HINT = ("a type such as int, bigint, varchar, double, decimal(10,2), date, timestamp, "
             "struct<a: int>, array<string> or map<string, int>")

_T = TypeVar("_T")
_STRING_TYPES = ("varchar", "char", "character", "nvarchar", "string", "text")


class DDLParser:
    """One pass over a statement's tokens; the public face calls the entry point it needs."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self._path_start = 0

    # -- token helpers --------------------------------------------------------------------------
    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def advance(self) -> Token:
        tok = self.peek()
        self.i = min(self.i + 1, len(self.toks) - 1)
        return tok

    def at(self, *words: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return (tok.kind == "word" and tok.text.upper() in words) or (tok.kind == "op" and tok.text in words)

    def accept(self, *words: str) -> Token | None:
        return self.advance() if self.at(*words) else None

    def expect(self, word: str, expected: str | None = None) -> Token:
        if not self.at(word):
            raise self.error(expected or (repr(word) if not word.isalpha() else word))
        return self.advance()

    def error(self, expected: str, tok: Token | None = None) -> DDLSyntaxError:
        tok = tok or self.peek()
        return DDLSyntaxError(self.text, tok.pos, expected, tok.shown(), tok.end)

    def ended(self) -> bool:
        return self.peek().kind == "end"

    def unless_misspelt(self, parse: Callable[[], _T], keywords: tuple[str, ...] = ("COLUMN", "COLUMNS")) -> _T:
        """``parse()``, but when the word it starts on looks like a misspelt keyword and the parse then
        stumbles on the very next word (``ADD COLUM x int`` read COLUM as the column and x as its
        type), point at the misspelt word instead."""
        tok, following = self.peek(), self.peek(1)
        close = difflib.get_close_matches(tok.text.upper(), keywords, n=1, cutoff=0.7) \
            if tok.kind == "word" and tok.text.upper() not in keywords else []

        def misspelt() -> DDLSyntaxError:
            hint = f" (did you mean {close[0]}?)" if len(keywords) > 1 else ""
            return DDLSyntaxError(self.text, tok.pos, f"the keyword {' or '.join(keywords)}{hint}", tok.text,
                                  tok.end)

        try:
            result = parse()
        except DDLSyntaxError as e:
            if close and following.pos <= e.position < max(following.end, following.pos + 1):
                raise misspelt() from None
            raise
        if close and self.peek() is following and following.kind in ("word", "qident"):
            raise misspelt()
        return result

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
        if not (self.accept("COLUMNS") or self.accept("COLUMN")):
            return self.unless_misspelt(self.add_columns)
        return self.add_columns()

    def add_columns(self) -> list[Change]:
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
        if not (self.accept("COLUMNS") or self.accept("COLUMN")):
            return self.unless_misspelt(self.drop_columns)
        return self.drop_columns()

    def drop_columns(self) -> list[Change]:
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
        if not self.accept("COLUMN"):
            return self.unless_misspelt(self.alter_column, ("COLUMN",))
        return self.alter_column()

    def alter_column(self) -> list[Change]:
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
        return ListType(Field(PLACEHOLDER_ID, "element", parsed)) if is_list else parsed
