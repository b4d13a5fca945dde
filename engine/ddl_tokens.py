"""Tokens of ALTER TABLE statements, and the syntax error that points a caret at one of them.

Shared by the statement parser (:mod:`fieldshift.ddl_parser`) and the public face
(:mod:`fieldshift.ddl`), which points at the change a refusal came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DDLSyntaxError", "Token", "pointer", "tokenize"]


# -- errors --------------------------------------------------------------------------------------
def pointer(text: str, start: int, end: int | None = None) -> str:
    """The line of ``text`` holding ``start``, with carets under ``start:end`` (indented two spaces)."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line_end = len(text) if line_end == -1 else line_end
    line = text[line_start:line_end]
    col = start - line_start
    width = max(1, min(line_end, end if end is not None else start + 1) - start)
    return f"  {line}\n  {' ' * col}{'^' * width}"


class DDLSyntaxError(ValueError):
    """A statement that does not parse: ``position`` is where, ``expected`` says what would fit."""

    def __init__(self, statement: str, position: int, expected: str, found: str | None = None,
                 end: int | None = None) -> None:
        self.statement, self.position, self.expected, self.found = statement, position, expected, found
        line = statement.count("\n", 0, position) + 1
        col = position - (statement.rfind("\n", 0, position) + 1) + 1
        where = f"line {line}, column {col}" if "\n" in statement.strip() else f"column {col}"
        shown = "the end of the statement" if found is None else repr(found)
        super().__init__(f"syntax error at {where}: expected {expected}, found {shown}\n"
                         f"{pointer(statement, position, end)}")


# -- tokens --------------------------------------------------------------------------------------
_TOKEN = re.compile(r"""
    (?P<ws>\s+|--[^\n]*|/\*.*?\*/)
  | (?P<string>'(?:[^']|'')*')
  | (?P<qident>`(?:[^`]|``)*`|"(?:[^"]|"")*")
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_$]*(?:\[[^\]]*\])?)
  | (?P<op><=|>=|!=|<>|==|[(),;.<>:=+\-{}*])
""", re.X | re.S)


@dataclass(frozen=True, slots=True)
class Token:
    """One token: ``kind`` and its ``text`` at ``pos:end`` of the statement."""

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


def tokenize(text: str) -> list[Token]:
    """The statement's tokens (whitespace and comments dropped), ending with an ``end`` token."""
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
            toks.append(Token(m.lastgroup or "", m.group(), m.start(), m.end()))
        pos = m.end()
    toks.append(Token("end", "", len(text), len(text)))
    return toks
