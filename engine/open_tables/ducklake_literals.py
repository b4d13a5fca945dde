"""Nested values DuckDB inlined into a SQLite or PostgreSQL DuckLake catalog, kept as DuckDB's text form of
the value (``{'a': 1, 'b': 'it''s'}``, ``[a, NULL, 'b, c']``, ``{k1=1, 'k 2'=NULL}``), read back as Python
values of the column's Arrow type.

DuckDB quotes a string inside a nested value only when it must (empty, ``NULL``, or holding a delimiter,
quote or outer space): with ``'...'`` and a doubled quote in structs and lists, a backslash-escaped one in
map keys. Anything that does not parse as the type says is an UnsupportedFormatFeatureError naming the
text: a value is never guessed.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from fieldshift.errors import UnsupportedFormatFeatureError
from fieldshift.open_tables.ducklake_types import decode_text

__all__ = ["parse_nested"]

_ENDS = ",]}="


def parse_nested(text: str, t: pa.DataType) -> Any:
    """The value ``text`` (DuckDB's text of a struct, list or map) as a Python value of ``t``."""
    parser = _Parser(text)
    value = parser.value(t)
    parser.space()
    if parser.pos != len(text):
        parser.fail(f"unexpected {text[parser.pos:]!r} after the value")
    return value


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def fail(self, why: str) -> None:
        raise UnsupportedFormatFeatureError(f"cannot read the inlined nested value {self.text!r}: {why}")

    def space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def expect(self, char: str) -> None:
        self.space()
        if not self.text.startswith(char, self.pos):
            self.fail(f"expected {char!r} at position {self.pos}")
        self.pos += len(char)

    def peek(self, char: str) -> bool:
        self.space()
        return self.text.startswith(char, self.pos)

    def null(self) -> bool:
        self.space()
        end = self.pos + 4
        if self.text.startswith("NULL", self.pos) and (end == len(self.text) or self.text[end] in _ENDS + " "):
            self.pos = end
            return True
        return False

    def value(self, t: pa.DataType) -> Any:
        if self.null():
            return None
        if pa.types.is_struct(t):
            return self.struct(t)
        if pa.types.is_map(t):
            return self.map(t)
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            return self.items(t.value_type)
        token, _ = self.token()
        try:
            return decode_text(token, t)
        except (ValueError, ArithmeticError):
            self.fail(f"{token!r} is not a {t} value")
        return None

    def token(self) -> tuple[str, bool]:
        """A primitive: quoted ('' or \\' inside) or bare up to the next delimiter."""
        self.space()
        if self.peek("'"):
            self.pos += 1
            out = []
            while True:
                if self.pos >= len(self.text):
                    self.fail("an unclosed quote")
                c = self.text[self.pos]
                if c == "\\" and self.text[self.pos + 1:self.pos + 2] in ("'", "\\"):
                    out.append(self.text[self.pos + 1])
                    self.pos += 2
                elif c == "'" and self.text.startswith("''", self.pos):
                    out.append("'")
                    self.pos += 2
                elif c == "'":
                    self.pos += 1
                    return "".join(out), True
                else:
                    out.append(c)
                    self.pos += 1
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in _ENDS:
            self.pos += 1
        return self.text[start:self.pos].rstrip(" "), False

    def items(self, element: pa.DataType) -> list[Any]:
        self.expect("[")
        out: list[Any] = []
        if self.peek("]"):
            self.pos += 1
            return out
        while True:
            out.append(self.value(element))
            if self.peek(","):
                self.pos += 1
                continue
            self.expect("]")
            return out

    def struct(self, t: pa.StructType) -> dict[str, Any]:
        self.expect("{")
        fields = {t.field(i).name: t.field(i).type for i in range(t.num_fields)}
        out: dict[str, Any] = {}
        if self.peek("}"):
            self.pos += 1
            return out
        while True:
            name, _ = self.token()
            if name not in fields:
                self.fail(f"no field {name!r} in {t}")
            self.expect(":")
            out[name] = self.value(fields[name])
            if self.peek(","):
                self.pos += 1
                continue
            self.expect("}")
            return out

    def map(self, t: pa.MapType) -> list[tuple[Any, Any]]:
        self.expect("{")
        out: list[tuple[Any, Any]] = []
        if self.peek("}"):
            self.pos += 1
            return out
        while True:
            key = self.value(t.key_type)
            self.expect("=")
            out.append((key, self.value(t.item_type)))
            if self.peek(","):
                self.pos += 1
                continue
            self.expect("}")
            return out
