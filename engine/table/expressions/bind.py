"""Binding a filter to a schema, and rewriting NOT away (SQL's three-valued logic, exactly).

``bind`` resolves every column to its field id and type in the schema, checks each literal against
the type and rewrites it into the column's own values (``filter_literals``), and folds what is then
constant. A bound leaf keeps its field id, so a filter bound at one schema version reads files of
every other by id, and binding a bound filter at another schema re-resolves it by id (a rename keeps
it). ``rewrite_not`` then pushes every ``Not`` into the leaves, so pruning visitors see only ``And``,
``Or`` and leaves, where "might be true" composes (``bind`` does it before anything folds).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from fieldshift.ddl.changes import SqlLiteral
from fieldshift.errors import FilterSyntaxError, InvalidFilterError, UnknownFieldError
from fieldshift.schema.model import Schema, join_path, split_path
from fieldshift.schema.types import StructType, type_name
from fieldshift.table.expressions.literals import domain, locate_values, sort_keys, typed_text_literal
from fieldshift.table.expressions.tree import (
    LISTS,
    NEGATED,
    PREFIXES,
    UNARY,
    AlwaysFalse,
    AlwaysTrue,
    Expression,
    ExpressionVisitor,
    Predicate,
    and_,
    leaf_text,
    not_,
    or_,
    visit,
)

__all__ = ["BoundPredicate", "bind", "leaves", "named_columns", "rewrite_not"]

T = pa.types


@dataclass(frozen=True, eq=False)
class BoundPredicate(Expression):
    """A predicate checked against a schema, its literals rewritten into the column's values.

    ``op`` is one of ``== != < <= > >= in not in is_null not_null is_nan not_nan starts_with
    not_starts_with``. ``literals`` are column values in ``cmp_type``; ``keys`` are their Python sort
    keys (what statistics are compared with).
    """

    predicate: Predicate
    path: tuple[str, ...]
    field_id: int
    op: str
    read_type: Any = None
    cmp_type: pa.DataType | None = None
    literals: pa.Array | None = None
    keys: tuple[Any, ...] = ()

    def text(self) -> str:
        """The condition as filter text, with its literals as the column's values."""
        if self.literals is None:
            return leaf_text(self.path, self.op, None)
        values = self.literals.to_pylist()
        return leaf_text(self.path, self.op, values if self.op in LISTS else values[0])

    def __str__(self) -> str:
        return self.text()

    def _derived(self, op: str, pred_op: str) -> BoundPredicate:
        """This column under operator ``op``; its predicate becomes ``pred_op`` (the same change made to
        the condition as written), so binding it at another schema means the same."""
        unary = op in UNARY
        p = self.predicate
        pred = Predicate(p.column, pred_op, None if unary else p.value, p.source)
        return replace(self, predicate=pred, op=op, literals=None if unary else self.literals,
                       keys=() if unary else self.keys, cmp_type=None if unary else self.cmp_type)

    def negate(self) -> Expression:
        """NOT of this leaf in SQL's logic (``Predicate.negate``'s rules), on the bound literals."""
        written = self.predicate.op  # an operator of the same kind (a < 1.5 binds as a <= 1 on longs)
        if self.op in ("==", "in", "starts_with"):
            opposite = {"==": "!=", "in": "not in", "starts_with": "not_starts_with"}
            return and_(self._derived(opposite[self.op], opposite[written]), self._derived("not_null", "not_null"))
        negated = self._derived(NEGATED[self.op], NEGATED[written])
        if self.op in ("<", "<=", ">", ">=") and self.cmp_type is not None and T.is_floating(self.cmp_type):
            return or_(negated, self._derived("is_nan", "is_nan"))
        return negated


# -- bind ----------------------------------------------------------------------------------------
class _Bind(ExpressionVisitor[Expression]):
    def __init__(self, schema: Schema) -> None:
        self.schema = schema

    def visit_true(self) -> Expression:
        return AlwaysTrue()

    def visit_false(self) -> Expression:
        return AlwaysFalse()

    def visit_and(self, results: list[Expression]) -> Expression:
        return and_(*results)

    def visit_or(self, results: list[Expression]) -> Expression:
        return or_(*results)

    def visit_not(self, result: Expression) -> Expression:
        return not_(result)

    def visit_leaf(self, leaf: Expression) -> Expression:
        if isinstance(leaf, BoundPredicate):  # bound at another schema: found again by its field id
            if not self.schema.has_field(leaf.field_id):
                raise InvalidFilterError(f"filter {leaf}: column {join_path(leaf.path)!r} (field id "
                                         f"{leaf.field_id}) is not in schema {self.schema.schema_id}")
            path = split_path(self.schema.path_of(leaf.field_id))
            return _bind(replace(leaf.predicate, column=path, source=None), self.schema)
        if not isinstance(leaf, Predicate):
            raise InvalidFilterError(f"not a filter expression: {leaf!r}")
        return _bind(leaf, self.schema)


def bind(expr: Expression, schema: Schema) -> Expression:
    """``expr`` without NOT, every column resolved in ``schema`` and every literal typed; constants folded.

    NOT goes first (``rewrite_not``): a leaf that binds to a constant (``a = 1.5`` on a long column is
    false on every value) is unknown on a null, which only its negation could tell apart. Raises
    ``InvalidFilterError`` (``FilterSyntaxError`` with a caret for filter text) for a column the
    schema lacks or cannot filter on, and a literal that does not fit its column.
    """
    return visit(rewrite_not(expr), _Bind(schema))


def _text_error(p: Predicate, at: SqlLiteral | None, expected: str, found: str | None = None) -> InvalidFilterError:
    """A refusal of a predicate of filter text, with a caret under its literal (or its column)."""
    src = p.source
    assert src is not None
    if at is not None and at.position >= 0:
        return FilterSyntaxError(src.text, at.position, expected, at.text, at.position + len(at.text))
    return FilterSyntaxError(src.text, src.start, expected, found or src.text[src.start:src.end], src.end)


def _bind(p: Predicate, schema: Schema) -> Expression:
    parts = p.path
    try:
        field = schema.find(parts)
    except UnknownFieldError as e:
        if p.source is not None:
            raise _text_error(p, None, f"a column of the table ({e})") from None
        raise
    for i in range(1, len(parts)):
        parent = schema.find(parts[:i])
        if not isinstance(parent.type, StructType):
            raise InvalidFilterError(f"filter {p}: filters reach nested fields through structs only, "
                                     f"and {join_path(parts[:i])!r} is a {type_name(parent.type)}")
    t = field.type
    if p.op in ("is_null", "not_null"):
        return BoundPredicate(p, parts, field.id, p.op, t)
    if p.op in ("is_nan", "not_nan"):
        if not isinstance(t, pa.DataType):
            raise InvalidFilterError(f"filter {p}: column {join_path(parts)!r} is {type_name(t)}, which holds "
                                     "no NaN; use is_null / not_null")
        if not T.is_floating(t):  # only floats hold NaN
            return AlwaysFalse() if p.op == "is_nan" else AlwaysTrue()
        return BoundPredicate(p, parts, field.id, p.op, t)
    dom = domain(t) if isinstance(t, pa.DataType) else None
    if dom is None:
        raise InvalidFilterError(f"filter {p}: column {join_path(parts)!r} is {type_name(t)}, which filters "
                                 "cannot compare; use is_null / not_null, or filter on a primitive field")
    if p.op in PREFIXES:
        return _bind_prefix(p, parts, field.id, t, dom.cmp_type)
    raw = p.value if p.op in LISTS else (p.value,)
    located = []
    for v in raw:
        v = _typed(p, v, t)
        try:
            found = dom.locate(v)
        except ValueError as e:
            raise InvalidFilterError(f"filter {p}: column {join_path(parts)!r} is {type_name(t)}: {e}") from None
        if found is None:
            raise InvalidFilterError(
                f"filter {p}: column {join_path(parts)!r} is {type_name(t)}, and the literal {v!r} "
                f"({type(v).__name__}) does not compare with it; pass {dom.expects}")
        located.append(found)
    op, values = locate_values(p.op, located)
    if op in ("true", "false"):
        return AlwaysTrue() if op == "true" else AlwaysFalse()
    if op in LISTS and T.is_floating(t) and any(v == 0 for v in values):
        values = [v for v in values if v != 0] + [0.0, -0.0]  # is_in hashes bits: -0.0 must equal 0.0
    lits = dom.build(values)
    if lits.type != dom.cmp_type:
        lits = lits.cast(dom.cmp_type)
    return BoundPredicate(p, parts, field.id, op, t, dom.cmp_type, lits, tuple(sort_keys(lits)))


def _typed(p: Predicate, v: Any, t: Any) -> Any:
    """A literal as a Python value: filter text's typed like the column (a caret on failure)."""
    if not isinstance(v, SqlLiteral):
        return v
    try:
        typed = typed_text_literal(v, t)
    except ValueError as e:
        raise _text_error(p, v, f"a {type_name(t)} value for column {join_path(p.path)!r} ({e})") from None
    if isinstance(typed, float) and typed != typed:
        raise _text_error(p, v, "a number (NaN compares with nothing: select NaN values with IS NAN)")
    return typed


def _bind_prefix(p: Predicate, parts: tuple[str, ...], field_id: int, t: pa.DataType,
                 cmp: pa.DataType) -> Expression:
    text = T.is_string(t) or T.is_large_string(t) or T.is_string_view(t)
    binary = T.is_binary(t) or T.is_large_binary(t) or T.is_binary_view(t) or T.is_fixed_size_binary(t)
    if not (text or binary):
        raise InvalidFilterError(f"filter {p}: {p.op} needs a string or binary column, and "
                                 f"{join_path(parts)!r} is {type_name(t)}")
    v = p.value
    if isinstance(v, SqlLiteral):
        if v.kind != "string":
            raise _text_error(p, v, "a quoted prefix, like 'abc'")
        v = v.value.encode() if binary else v.value
    if binary and isinstance(v, (bytes, bytearray, memoryview)):
        v = bytes(v)
    elif not (text and isinstance(v, str)):
        want = "bytes" if binary else "a str"
        raise InvalidFilterError(f"filter {p}: column {join_path(parts)!r} is {type_name(t)}, and the prefix "
                                 f"{v!r} ({type(v).__name__}) does not compare with it; pass {want}")
    lits = pa.array([v], cmp)
    return BoundPredicate(p, parts, field_id, p.op, t, cmp, lits, (v,))


# -- rewrite NOT ---------------------------------------------------------------------------------
class _RewriteNot(ExpressionVisitor[Callable[[bool], Expression]]):
    """Each result builds its subtree, negated or not: NOT moves down through De Morgan to the leaves."""

    def visit_true(self) -> Callable[[bool], Expression]:
        return lambda neg: AlwaysFalse() if neg else AlwaysTrue()

    def visit_false(self) -> Callable[[bool], Expression]:
        return lambda neg: AlwaysTrue() if neg else AlwaysFalse()

    def visit_and(self, results: list[Callable[[bool], Expression]]) -> Callable[[bool], Expression]:
        return lambda neg: (or_ if neg else and_)(*(r(neg) for r in results))

    def visit_or(self, results: list[Callable[[bool], Expression]]) -> Callable[[bool], Expression]:
        return lambda neg: (and_ if neg else or_)(*(r(neg) for r in results))

    def visit_not(self, result: Callable[[bool], Expression]) -> Callable[[bool], Expression]:
        return lambda neg: result(not neg)

    def visit_leaf(self, leaf: Expression) -> Callable[[bool], Expression]:
        if not isinstance(leaf, (Predicate, BoundPredicate)):
            raise InvalidFilterError(f"not a filter expression: {leaf!r}")
        return lambda neg: leaf.negate() if neg else leaf


def rewrite_not(expr: Expression) -> Expression:
    """A filter without ``Not``, bound or not: the same rows, negations folded into the leaves."""
    return visit(expr, _RewriteNot())(False)


class _Leaves(ExpressionVisitor[list[Expression]]):
    def visit_true(self) -> list[Expression]:
        return []

    visit_false = visit_true

    def visit_and(self, results: list[list[Expression]]) -> list[Expression]:
        return [x for r in results for x in r]

    visit_or = visit_and

    def visit_not(self, result: list[Expression]) -> list[Expression]:
        return result

    def visit_leaf(self, leaf: Expression) -> list[Expression]:
        return [leaf]


def leaves(expr: Expression) -> list[Any]:
    """Every leaf of ``expr``, left to right (predicates, bound or not)."""
    return visit(expr, _Leaves())


def named_columns(expr: Expression, schema: Schema) -> list[str]:
    """The top-level columns of ``schema`` the leaves of ``expr`` (a filter ``bind`` accepted) name, in order of
    first use: those of leaves that bind to a constant too (``c >= 2**64`` on an int column), which the bound
    filter no longer reads but whose files a scan must still be able to read."""
    names: list[str] = []
    for leaf in leaves(expr):
        if isinstance(leaf, BoundPredicate):
            if not schema.has_field(leaf.field_id):
                continue
            path = split_path(schema.path_of(leaf.field_id))
        elif isinstance(leaf, Predicate):
            path = split_path(schema.path_of(schema.find(leaf.path).id))
        else:
            continue
        names.append(path[0])
    return list(dict.fromkeys(names))
