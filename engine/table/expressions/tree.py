"""The one filter expression tree: ``And``, ``Or``, ``Not``, predicates on columns, ``AlwaysTrue/False``.

Every way of writing a filter becomes this tree: today's ``(column, op, value)`` tuples and lists of
them (ANDed), expression objects built from :func:`col` (``(col("a") > 5) | col("b").is_null()``),
and filter text (``filter_text.parse_filter_text``). The tree is unbound: columns are names or paths
and literals are Python values, or ``SqlLiteral`` text typed later like their column. Binding
(``filter_bind``) resolves columns to field ids and literals to column values; the visitors
(``expr_visitors``, ``stats``, ``partition_prune``, ``prune_vector``, the Spark modules) are the only
code that reads a tree.

Truth is SQL's three-valued logic: a comparison (``= < <= > >= in``, ``starts_with``) with a null
is unknown, ``not`` of unknown is unknown, and a row is kept only where the filter is true. ``!=``,
``not in`` and ``not_starts_with`` keep the meaning tuples always had (Iceberg's): true on a null,
like ``is distinct from``. ``is_null``, ``not_null``, ``is_nan`` and ``not_nan`` are never unknown.
NaN is unequal to and unordered with everything (IEEE), so ``not (d < 1)`` holds on a NaN.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from fieldshift.ddl.changes import SqlLiteral
from fieldshift.errors import InvalidFilterError, InvalidNameError
from fieldshift.schema.model import join_path, split_path

__all__ = ["OPS", "AlwaysFalse", "AlwaysTrue", "And", "Expression", "ExpressionVisitor", "Not", "Or", "Predicate",
           "TextSource", "and_", "leaf_text", "not_", "or_", "render", "visit"]

OPS = ("==", "=", "!=", "<", "<=", ">", ">=", "in", "not in", "is_null", "not_null", "is_nan", "not_nan",
       "starts_with", "not_starts_with")
"""Every leaf operator a tuple or :class:`Predicate` may name (``=`` is ``==``)."""

UNARY = ("is_null", "not_null", "is_nan", "not_nan")
LISTS = ("in", "not in")
PREFIXES = ("starts_with", "not_starts_with")
_LIST_KINDS = (list, tuple, set, frozenset)


class Expression:
    """A filter: combine with ``&`` (and), ``|`` (or), ``~`` (not); ``str()`` is its filter text."""

    __slots__ = ()

    def __and__(self, other: Any) -> Expression:
        return and_(self, _expression(other))

    def __rand__(self, other: Any) -> Expression:
        return and_(_expression(other), self)

    def __or__(self, other: Any) -> Expression:
        return or_(self, _expression(other))

    def __ror__(self, other: Any) -> Expression:
        return or_(_expression(other), self)

    def __invert__(self) -> Expression:
        return not_(self)

    def __bool__(self) -> bool:
        raise TypeError("a filter expression has no truth value: combine filters with & (and), | (or) and "
                        "~ (not), not with Python's and/or/not, and parenthesize comparisons: "
                        "(col('a') > 5) | col('b').is_null()")

    def __str__(self) -> str:
        return render(self)

    def text(self) -> str:
        """A leaf's filter text (connectives render through :func:`render`)."""
        raise NotImplementedError

    @property
    def children(self) -> tuple[Expression, ...]:
        """The sub-expressions (none for a leaf)."""
        return ()


class _Constant(Expression):
    __slots__ = ()
    value: bool = True

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__name__)


class AlwaysTrue(_Constant):
    """The filter every row passes."""

    __slots__ = ()
    value = True


class AlwaysFalse(_Constant):
    """The filter no row passes."""

    __slots__ = ()
    value = False


class _Connective(Expression):
    __slots__ = ("_children",)

    def __init__(self, *children: Expression) -> None:
        if len(children) < 2 or not all(isinstance(c, Expression) for c in children):
            raise InvalidFilterError(f"{type(self).__name__} combines two or more filter expressions, "
                                     f"got {children!r}")
        self._children = tuple(children)

    @property
    def children(self) -> tuple[Expression, ...]:
        """The combined expressions, two or more."""
        return self._children

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.children == self.children  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._children))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(repr, self._children))})"


class And(_Connective):
    """True where every child is true; false where one is false; else unknown."""

    __slots__ = ()


class Or(_Connective):
    """True where one child is true; false where every child is false; else unknown."""

    __slots__ = ()


class Not(Expression):
    """True where the child is false, false where it is true, unknown where it is unknown."""

    __slots__ = ("child",)

    def __init__(self, child: Expression) -> None:
        if not isinstance(child, Expression):
            raise InvalidFilterError(f"Not takes a filter expression, got {child!r}")
        self.child = child

    @property
    def children(self) -> tuple[Expression, ...]:
        """The one negated expression."""
        return (self.child,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Not) and other.child == self.child

    def __hash__(self) -> int:
        return hash(("Not", self.child))

    def __repr__(self) -> str:
        return f"Not({self.child!r})"


def and_(*exprs: Expression) -> Expression:
    """The conjunction of ``exprs``, flattened, constants folded (no argument: ``AlwaysTrue``)."""
    out: list[Expression] = []
    for e in exprs:
        if isinstance(e, AlwaysFalse):
            return e
        if isinstance(e, AlwaysTrue):
            continue
        out.extend(e.children if isinstance(e, And) else (e,))
    return AlwaysTrue() if not out else out[0] if len(out) == 1 else And(*out)


def or_(*exprs: Expression) -> Expression:
    """The disjunction of ``exprs``, flattened, constants folded (no argument: ``AlwaysFalse``)."""
    out: list[Expression] = []
    for e in exprs:
        if isinstance(e, AlwaysTrue):
            return e
        if isinstance(e, AlwaysFalse):
            continue
        out.extend(e.children if isinstance(e, Or) else (e,))
    return AlwaysFalse() if not out else out[0] if len(out) == 1 else Or(*out)


def not_(expr: Expression) -> Expression:
    """The negation of ``expr`` (constants and double negations folded)."""
    if isinstance(expr, _Constant):
        return AlwaysFalse() if expr.value else AlwaysTrue()
    if isinstance(expr, Not):
        return expr.child
    return Not(expr)


def _expression(x: Any) -> Expression:
    if isinstance(x, Expression):
        return x
    if isinstance(x, bool):
        return AlwaysTrue() if x else AlwaysFalse()
    raise TypeError(f"cannot combine a filter expression with {x!r} ({type(x).__name__}); "
                    "build both sides with fieldshift.col(...)")


# -- leaves --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TextSource:
    """Where a predicate of filter text was written: the text and the column's span, for carets."""

    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True, eq=True)
class Predicate(Expression):
    """``column op value``: one condition on one column (the leaf of the tree).

    ``column`` is a dotted path (backticks quote a name holding dots) or a sequence of names; ``op``
    one of :data:`OPS`; ``value`` a literal, a list/tuple/set for ``in`` / ``not in``, a str (or bytes)
    prefix for ``starts_with``, nothing for ``is_null``/``not_null``/``is_nan``/``not_nan``.
    """

    column: str | tuple[str, ...] = field(compare=False)
    op: str
    value: Any = None
    source: TextSource | None = field(default=None, compare=False, repr=False)
    parts: tuple[str, ...] = field(init=False, repr=False)  # the column's names: predicates compare by them

    def __post_init__(self) -> None:
        col = self.column
        if isinstance(col, list):
            col = tuple(col)
            object.__setattr__(self, "column", col)
        if isinstance(col, tuple):
            if not col or not all(isinstance(p, str) and p for p in col):
                raise InvalidFilterError(f"filter column {col!r}: a path is a non-empty sequence of names")
        elif not isinstance(col, str) or not col:
            raise InvalidFilterError(f"filter column {col!r}: name a column (a str such as 'a' or 's.x')")
        try:
            object.__setattr__(self, "parts", split_path(col))
        except InvalidNameError as e:
            raise InvalidFilterError(f"filter column {col!r}: {e}") from None
        op = self.op.strip().lower() if isinstance(self.op, str) else self.op
        if op not in OPS:
            raise InvalidFilterError(f"filter on {self.shown_column!r}: unknown operator {self.op!r}; "
                                     f"use one of {', '.join(OPS)}")
        op = "==" if op == "=" else op
        object.__setattr__(self, "op", op)
        v = self.value
        if op in UNARY:
            if v is not None:
                raise InvalidFilterError(f"filter {self}: {op} takes no value; write ({self.shown_column!r}, {op!r})")
            return
        if op in LISTS:
            if not isinstance(v, _LIST_KINDS):
                raise InvalidFilterError(
                    f"filter {self}: {op!r} takes a list, tuple or set of values, not {type(v).__name__}; "
                    f"write ({self.shown_column!r}, {op!r}, [{v!r}])")
            v = tuple(v)
            object.__setattr__(self, "value", v)
            for x in v:
                self._check_literal(x)
            return
        if _is_null(v) and op in ("==", "!="):
            raise InvalidFilterError(f"filter {self}: a null literal never compares (nothing equals null); "
                                     f"use ({self.shown_column!r}, {'is_null' if op == '==' else 'not_null'!r})")
        if _is_null(v):
            raise InvalidFilterError(f"filter {self}: {op!r} needs a value, e.g. ({self.shown_column!r}, {op!r}, 5)")
        if isinstance(v, _LIST_KINDS):
            raise InvalidFilterError(f"filter {self}: {op!r} compares with one value; use 'in' for a list")
        if op in PREFIXES and not isinstance(v, (str, bytes, SqlLiteral)):
            raise InvalidFilterError(f"filter {self}: {op} takes a str prefix (bytes for a binary column), "
                                     f"not {type(v).__name__}")
        self._check_literal(v)

    def _check_literal(self, x: Any) -> None:
        if _is_null(x):
            raise InvalidFilterError(
                f"filter {self}: None in an {self.op!r} list never matches (Iceberg: a null is in no list); "
                f"filter nulls with ({self.shown_column!r}, 'is_null') or ({self.shown_column!r}, 'not_null')")
        if (isinstance(x, float) and math.isnan(x)) or (isinstance(x, decimal.Decimal) and x.is_nan()):
            raise InvalidFilterError(f"filter {self}: NaN compares with nothing; select NaN values with "
                                     f"({self.shown_column!r}, 'is_nan') or ({self.shown_column!r}, 'not_nan')")

    @property
    def shown_column(self) -> str:
        """The column as a dotted path."""
        return self.column if isinstance(self.column, str) else join_path(self.column)

    @property
    def path(self) -> tuple[str, ...]:
        """The column's name parts."""
        return self.parts

    def __str__(self) -> str:
        return render(self)

    def text(self) -> str:
        """This condition as filter text (``a >= 2``, ``s.x is null``, ``n in (1, 2)``)."""
        return leaf_text(self.path, self.op, self.value)

    def negate(self) -> Expression:
        """NOT of this condition in SQL's logic, without a ``Not``: true where it is false, false where it
        is true, never true where it is unknown. ``= < <= > >= in starts_with`` are unknown on a null, so
        their negation keeps nulls out; NaN makes every comparison false, so ``not (d < 1)`` holds on a
        NaN (``is_nan`` is false on columns that hold none)."""
        op = self.op
        if op in ("==", "in", "starts_with"):
            opposite = {"==": "!=", "in": "not in", "starts_with": "not_starts_with"}[op]
            return and_(_with_op(self, opposite), _with_op(self, "not_null"))
        negated = _with_op(self, NEGATED[op])
        if op in ("<", "<=", ">", ">="):
            return or_(negated, _with_op(self, "is_nan"))
        return negated


NEGATED = {"!=": "==", "not in": "in", "is_null": "not_null", "not_null": "is_null", "is_nan": "not_nan",
           "not_nan": "is_nan", "not_starts_with": "starts_with", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
"""The operator that is true exactly where each operator is false, on values that are never unknown."""


def _with_op(p: Predicate, op: str) -> Predicate:
    return Predicate(p.column, op, None if op in UNARY else p.value, p.source)


def _is_null(v: Any) -> bool:
    return v is None or (isinstance(v, SqlLiteral) and v.kind == "null")


# -- visiting ------------------------------------------------------------------------------------
R = TypeVar("R")


class ExpressionVisitor(Generic[R]):
    """Post-order visit of a tree: each connective gets its children's results, each leaf itself."""

    def visit_true(self) -> R:
        """``AlwaysTrue``."""
        raise NotImplementedError

    def visit_false(self) -> R:
        """``AlwaysFalse``."""
        raise NotImplementedError

    def visit_and(self, results: list[R]) -> R:
        """An ``And``, given its children's results in order."""
        raise NotImplementedError

    def visit_or(self, results: list[R]) -> R:
        """An ``Or``, given its children's results in order."""
        raise NotImplementedError

    def visit_not(self, result: R) -> R:
        """A ``Not``, given its child's result."""
        raise NotImplementedError

    def visit_leaf(self, leaf: Expression) -> R:
        """A :class:`Predicate`, or a bound predicate (``filter_bind.BoundPredicate``)."""
        raise NotImplementedError


def visit(expr: Expression, visitor: ExpressionVisitor[R]) -> R:
    """Walk ``expr`` bottom-up with ``visitor`` (the one traversal every filter visitor shares)."""
    if isinstance(expr, AlwaysTrue):
        return visitor.visit_true()
    if isinstance(expr, AlwaysFalse):
        return visitor.visit_false()
    if isinstance(expr, And):
        return visitor.visit_and([visit(c, visitor) for c in expr.children])
    if isinstance(expr, Or):
        return visitor.visit_or([visit(c, visitor) for c in expr.children])
    if isinstance(expr, Not):
        return visitor.visit_not(visit(expr.child, visitor))
    if isinstance(expr, Expression):
        return visitor.visit_leaf(expr)
    raise InvalidFilterError(f"not a filter expression: {expr!r} ({type(expr).__name__})")


# -- text ----------------------------------------------------------------------------------------
_KEYWORDS = {"and", "or", "not", "in", "is", "null", "nan", "like", "starts", "with", "true", "false", "date",
             "timestamp", "timestamptz"}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_TEXT_OPS = {"==": "=", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_UNARY_TEXT = {"is_null": "is null", "not_null": "is not null", "is_nan": "is nan", "not_nan": "is not nan"}


def _name(part: str) -> str:
    if _WORD.fullmatch(part) and part.lower() not in _KEYWORDS:
        return part
    return "`" + part.replace("`", "``") + "`"


def literal_text(v: Any) -> str:
    """A literal as filter text that reads back as the same value where the grammar can say it."""
    if isinstance(v, SqlLiteral):
        return v.text
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and not math.isfinite(v):
        return f"'{v}'"
    if isinstance(v, (int, float, decimal.Decimal)):
        return str(v) if not isinstance(v, float) else repr(v)
    if isinstance(v, dt.datetime):
        return f"timestamp '{v.isoformat(sep=' ')}'"
    if isinstance(v, dt.date):
        return f"date '{v.isoformat()}'"
    if isinstance(v, dt.time):
        return f"'{v.isoformat()}'"
    if isinstance(v, (bytes, bytearray, memoryview)):
        v = bytes(v).decode("utf-8", "backslashreplace")
    return "'" + str(v).replace("'", "''") + "'"


def leaf_text(path: Sequence[str], op: str, value: Any) -> str:
    """One condition as filter text."""
    column = ".".join(_name(p) for p in path)
    if op in _UNARY_TEXT:
        return f"{column} {_UNARY_TEXT[op]}"
    if op in LISTS:
        return f"{column} {op} ({', '.join(literal_text(v) for v in value)})"
    if op == "starts_with":
        return f"{column} starts with {literal_text(value)}"
    if op == "not_starts_with":
        return f"{column} not starts with {literal_text(value)}"
    return f"{column} {_TEXT_OPS[op]} {literal_text(value)}"


class _Render(ExpressionVisitor[tuple[str, int]]):
    """(text, precedence): 0 or, 1 and, 2 not, 3 a leaf or constant; children in parentheses as needed."""

    def visit_true(self) -> tuple[str, int]:
        return "true", 3

    def visit_false(self) -> tuple[str, int]:
        return "false", 3

    def visit_and(self, results: list[tuple[str, int]]) -> tuple[str, int]:
        return " and ".join(t if p >= 1 else f"({t})" for t, p in results), 1

    def visit_or(self, results: list[tuple[str, int]]) -> tuple[str, int]:
        return " or ".join(t for t, _ in results), 0

    def visit_not(self, result: tuple[str, int]) -> tuple[str, int]:
        t, p = result
        return f"not {t}" if p >= 2 else f"not ({t})", 2

    def visit_leaf(self, leaf: Expression) -> tuple[str, int]:
        return leaf.text(), 3


def render(expr: Expression) -> str:
    """``expr`` as filter text in the grammar ``filter_text`` parses (``str(expr)`` is this)."""
    return visit(expr, _Render())[0]
