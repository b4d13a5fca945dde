"""Tokens of ALTER TABLE statements, and the syntax error that points a caret at one of them.

Shared by the statement parser (:mod:`fieldshift.ddl.parser`) and the public face
(:mod:`fieldshift.ddl.alter`), which points at the change a refusal came from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from fieldshift.errors import DDLSyntaxError, SchemaEvolutionError, pointer

U = TypeVar("U")


def apply_changes(update: U, statement: str | Sequence[Any], changes: Sequence[Any]) -> U:
    """Apply parsed changes to a builder in order; a refusal gets a note pointing at its change in
    ``statement`` (when the changes were parsed from that text)."""
    for change in changes:
        try:
            change.apply(update)
        except SchemaEvolutionError as e:
            if isinstance(statement, str) and change.span != (0, 0):
                e.add_note(f"while applying {change}:\n{pointer(statement, *change.span)}")
            raise
    return update

__all__ = ["DDLSyntaxError", "Token", "apply_changes", "pointer", "tokenize"]


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
