"""Parse SQL/Iceberg-style type strings, nested ones included: ``struct<a: int, b: list<string>>``.

Part of the schema model: used by ``SchemaUpdate`` when a type is given as text, and by the DDL parser
(``ddl_parser``, for ALTER statements). Nested
fields get the placeholder id ``PLACEHOLDER_ID`` (-1, which no schema takes, as 0 is a valid id);
``SchemaUpdate`` renumbers them when it adds the column.
"""

from __future__ import annotations

import re

import pyarrow as pa

from fieldshift.errors import NestingDepthError, TypeSyntaxError
from fieldshift.schema.field import Field
from fieldshift.schema.type_names import parse_primitive
from fieldshift.schema.types import MAX_NESTING_DEPTH, FieldType, ListType, MapType, StructType, check_primitive

__all__ = ["PLACEHOLDER_ID", "TypeSyntaxError", "parse_type"]

PLACEHOLDER_ID = -1
"""The id of a parsed nested field until a schema numbers it (refused by a schema if it leaks)."""

_TOKEN = re.compile(r"\s*(<|>|,|:|\(|\)|[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?|\d+|`[^`]+`)")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or not m.group(1):
                if text[pos:].strip() == "":
                    break
                raise TypeSyntaxError(text, pos + len(text[pos:]) - len(text[pos:].lstrip()), "a type")
            self.tokens.append((m.group(1), m.start(1)))
            pos = m.end()
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def where(self) -> int:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else len(self.text)

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise TypeSyntaxError(self.text, self.where(), repr(expected) if expected else "a type")
        self.i += 1
        return tok

    def parse(self) -> FieldType:
        t = self.type_()
        if self.peek() is not None:
            raise TypeSyntaxError(self.text, self.where(), "the end of the type")
        return t

    def type_(self) -> FieldType:
        word = self.take()
        low = word.lower()
        if low == "struct":
            return self.struct()
        if low in ("list", "array"):
            self.take("<")
            element = self.type_()
            self.take(">")
            return ListType(Field(PLACEHOLDER_ID, "element", element))
        if low == "map":
            self.take("<")
            key = self.type_()
            self.take(",")
            value = self.type_()
            self.take(">")
            return MapType(Field(PLACEHOLDER_ID, "key", key, nullable=False), Field(PLACEHOLDER_ID, "value", value))
        if low == "decimal" and self.peek() == "(":
            self.take("(")
            precision = self.take()
            scale = "0"
            if self.peek() == ",":
                self.take(",")
                scale = self.take()
            self.take(")")
            word = f"decimal({precision},{scale})"
        try:
            return parse_primitive(word)
        except ValueError as e:
            raise TypeSyntaxError(self.text, self.tokens[self.i - 1][1], f"a known type ({e})") from None

    def struct(self) -> StructType:
        self.take("<")
        fields = []
        while True:
            name = self.take().strip("`")
            if self.peek() == ":":
                self.take(":")
            ftype = self.type_()
            nullable = True
            if self.peek() and self.peek().lower() == "not":
                self.take()
                self.take("null") if self.peek() == "null" else self.take("NULL")
                nullable = False
            fields.append(Field(PLACEHOLDER_ID, name, ftype, nullable=nullable))
            if self.peek() == ",":
                self.take(",")
                continue
            self.take(">")
            return StructType(tuple(fields))


def parse_type(text: str) -> FieldType:
    """Parse ``bigint``, ``decimal(10, 2)``, ``array<int>``, ``map<string, struct<a: int>>``, ...

    Types too deep for Parquet and invalid primitives (``decimal(5, 9)``, ``fixed[0]``) are refused
    here, before the recursive parse."""
    depth = deepest = 0
    for ch in text:  # each '<' opens at least one Parquet level: refuse hostile depths up front
        depth += (ch == "<") - (ch == ">")
        deepest = max(deepest, depth)
    if deepest > MAX_NESTING_DEPTH:
        raise NestingDepthError(
            f"type {text[:40]!r}... nests {deepest} types deep; Parquet readers accept at most "
            f"{MAX_NESTING_DEPTH} levels (a struct is one, a list or map two)"
        )
    t = _Parser(text).parse()
    if isinstance(t, pa.DataType):
        check_primitive(t, text)
    return t
