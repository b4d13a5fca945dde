"""Filter text: one grammar for ``Table.scan(filter="...")`` and the CLI's ``--where``.

::

    filter     := or
    or         := and ("or" and)*
    and        := unary ("and" unary)*
    unary      := "not" unary | "(" filter ")" | "true" | "false" | condition
    condition  := column ( ("=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">=") literal
                         | ["not"] "in" "(" literal ("," literal)* ")"
                         | "is" ["not"] "null" | "is" ["not"] "nan"
                         | ["not"] "starts" "with" 'prefix' | ["not"] "like" 'prefix%' )
    column     := name ("." name)*          names are words or `backtick quoted`
    literal    := number | 'string' | true | false | date '2024-01-31' | timestamp '2024-01-31 12:00:00'

Keywords are case-insensitive; ``not`` binds tighter than ``and``, ``and`` tighter than ``or`` (SQL).
Literals are typed like their column when the filter is bound (``'2024-01-31'`` against a date
column is that date; ``0.1`` against a float column is the float nearest 0.1), so a literal that
does not fit is refused then, with a caret under it. ``like`` takes prefix patterns only.
"""

from __future__ import annotations

from fieldshift.ddl.changes import SqlLiteral
from fieldshift.ddl.parser import DDLParser
from fieldshift.ddl.tokens import DDLSyntaxError
from fieldshift.errors import FilterSyntaxError
from fieldshift.table.expressions.tree import (
    AlwaysFalse,
    AlwaysTrue,
    Expression,
    Predicate,
    TextSource,
    and_,
    not_,
    or_,
)

__all__ = ["parse_filter_text"]

_COMPARISONS = {"=": "==", "==": "==", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_KEYWORDS = ("AND", "OR", "NOT", "IN", "IS", "NULL", "LIKE", "STARTS", "TRUE", "FALSE")
_CONDITION = "an operator (=, !=, <, <=, >, >=, IN, NOT IN, IS [NOT] NULL, IS [NOT] NAN, STARTS WITH, LIKE)"


def parse_filter_text(text: str) -> Expression:
    """The expression tree of filter ``text``; a ``FilterSyntaxError`` puts a caret under the bad token."""
    if not isinstance(text, str):
        raise TypeError(f"filter text must be a str, not {type(text).__name__}")
    parser = _FilterParser(text)
    try:
        if parser.ended():
            raise parser.error("a condition, such as v > 2 and (name is null or name = 'x')")
        expr = parser.disjunction()
        if not parser.ended():
            raise parser.error("AND, OR or the end of the filter")
    except FilterSyntaxError:
        raise
    except DDLSyntaxError as e:
        end = e.position + len(e.found) if e.found else None
        raise FilterSyntaxError(e.statement, e.position, e.expected, e.found, end) from None
    return expr


class _FilterParser(DDLParser):
    """The statement parser's tokens and literals, with the filter grammar on top."""

    def disjunction(self) -> Expression:
        parts = [self.conjunction()]
        while self.accept("OR"):
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else or_(*parts)

    def conjunction(self) -> Expression:
        parts = [self.unary()]
        while self.accept("AND"):
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else and_(*parts)

    def unary(self) -> Expression:
        if self.accept("NOT"):
            return not_(self.unary())
        if self.accept("("):
            inner = self.disjunction()
            self.expect(")", "')' or AND/OR")
            return inner
        if self.at("TRUE", "FALSE"):
            return AlwaysTrue() if self.advance().text.upper() == "TRUE" else AlwaysFalse()
        return self.condition()

    def column(self) -> tuple[tuple[str, ...], int, int]:
        start = self.peek()
        if start.kind == "word" and start.text.upper() in _KEYWORDS:
            raise self.error("a column name (quote a column named like a keyword in backticks: `in`)")
        parts = [self.ident("a column name, NOT or '('")]
        while self.accept("."):
            parts.append(self.ident("a field name after '.'"))
        return tuple(parts), start.pos, self.toks[self.i - 1].end

    def condition(self) -> Expression:
        path, start, end = self.column()
        src = TextSource(self.text, start, end)
        tok = self.peek()
        if tok.kind == "op" and tok.text in _COMPARISONS:
            self.advance()
            return Predicate(path, _COMPARISONS[tok.text], self.value(), src)
        if self.accept("IS"):
            negated = self.accept("NOT") is not None
            if self.accept("NULL"):
                return Predicate(path, "not_null" if negated else "is_null", None, src)
            if self.accept("NAN"):
                return Predicate(path, "not_nan" if negated else "is_nan", None, src)
            raise self.error("NULL or NAN" if negated else "NULL, NOT NULL, NAN or NOT NAN")
        negated = self.at("NOT") and self.at("IN", "LIKE", "STARTS", k=1)
        if negated:
            self.advance()
        if self.accept("IN"):
            self.expect("(", "'(' and a list of values")
            values = [self.value()]
            while self.accept(","):
                values.append(self.value())
            self.expect(")", "',' or ')'")
            return Predicate(path, "not in" if negated else "in", values, src)
        op = "not_starts_with" if negated else "starts_with"
        if self.accept("STARTS"):
            self.expect("WITH", "WITH (STARTS WITH 'prefix')")
            return Predicate(path, op, self.prefix(like=False), src)
        if self.accept("LIKE"):
            return Predicate(path, op, self.prefix(like=True), src)
        raise self.error(_CONDITION)

    def value(self) -> SqlLiteral:
        tok = self.peek()
        if tok.kind == "qident":
            raise self.error("a value ('single quotes' make a string; double quotes name a column)")
        lit = self.literal()
        if lit.kind == "null":
            raise DDLSyntaxError(self.text, lit.position, "a value (test for nulls with IS NULL or IS NOT NULL)",
                                 lit.text, lit.position + len(lit.text))
        return lit

    def prefix(self, *, like: bool) -> SqlLiteral:
        tok = self.peek()
        if tok.kind != "string":
            raise self.error("a quoted pattern ending in %, like 'abc%'" if like else "a quoted prefix, like 'abc'")
        self.advance()
        value = tok.value
        if like:
            body = value[:-1] if value.endswith("%") else None
            if body is None or "%" in body or "_" in body:
                raise self.error("a prefix pattern ending in %, like 'abc%' (LIKE takes prefixes only here; "
                                 "_ and inner % are not supported: use STARTS WITH 'row_1' for a literal _)", tok)
            value = body
        return SqlLiteral("string", value, "'" + value.replace("'", "''") + "'", tok.pos)
