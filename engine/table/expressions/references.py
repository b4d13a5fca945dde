"""Columns to build filters from with Python operators: ``(col("a") > 5) | col("s.x").is_null()``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from fieldshift.errors import InvalidFilterError
from fieldshift.table.expressions.tree import Predicate

__all__ = ["Reference", "col"]


class Reference:
    """A column by name or path, to build predicates with operators: ``col("s.x") >= 2``.

    Comparisons (``== != < <= > >=``) and the methods below return a :class:`Predicate`; a
    reference itself is no filter (``col("ok")`` alone means nothing: write ``col("ok") == True``).
    """

    __slots__ = ("column",)

    def __init__(self, column: str | Sequence[str]) -> None:
        if isinstance(column, (list, tuple)):
            column = tuple(column)
        if not (isinstance(column, str) and column) and not isinstance(column, tuple):
            raise InvalidFilterError(f"col({column!r}): name a column (a str such as 'a' or 's.x', or a "
                                     "list of names)")
        self.column: str | tuple[str, ...] = column

    def _p(self, op: str, value: Any = None) -> Predicate:
        return Predicate(self.column, op, value)

    def __eq__(self, value: Any) -> Predicate:  # type: ignore[override]
        return self._p("==", value)

    def __ne__(self, value: Any) -> Predicate:  # type: ignore[override]
        return self._p("!=", value)

    def __lt__(self, value: Any) -> Predicate:
        return self._p("<", value)

    def __le__(self, value: Any) -> Predicate:
        return self._p("<=", value)

    def __gt__(self, value: Any) -> Predicate:
        return self._p(">", value)

    def __ge__(self, value: Any) -> Predicate:
        return self._p(">=", value)

    __hash__ = None  # type: ignore[assignment]

    def is_in(self, values: Iterable[Any]) -> Predicate:
        """The column's value is one of ``values`` (unknown on a null)."""
        return self._p("in", values)

    def not_in(self, values: Iterable[Any]) -> Predicate:
        """The column's value is none of ``values`` (true on a null, as ``!=``)."""
        return self._p("not in", values)

    def is_null(self) -> Predicate:
        """The column is null."""
        return self._p("is_null")

    def not_null(self) -> Predicate:
        """The column is not null."""
        return self._p("not_null")

    def is_nan(self) -> Predicate:
        """The column is a floating NaN (never true for other types, nor for a null)."""
        return self._p("is_nan")

    def not_nan(self) -> Predicate:
        """The column is not NaN (true on a null and on every non-floating column)."""
        return self._p("not_nan")

    def starts_with(self, prefix: str | bytes) -> Predicate:
        """A string (or binary) column starts with ``prefix`` (unknown on a null)."""
        return self._p("starts_with", prefix)

    def not_starts_with(self, prefix: str | bytes) -> Predicate:
        """A string (or binary) column does not start with ``prefix`` (true on a null, as ``!=``)."""
        return self._p("not_starts_with", prefix)

    def __bool__(self) -> bool:
        raise TypeError(f"col({self.column!r}) is a column, not a filter: compare it (col(...) == True)")

    def __repr__(self) -> str:
        return f"col({self.column!r})"


def col(column: str | Sequence[str]) -> Reference:
    """A column to filter on, by dotted path (``"s.x"``, backticks quote dots) or a list of names."""
    return Reference(column)
