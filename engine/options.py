"""The string options fieldshift takes, as ``Literal`` types, and the one check of a value given."""

from __future__ import annotations

from typing import Any, Literal, get_args

from fieldshift.errors import InvalidOptionError

__all__ = ["CastMode", "DefaultKind", "MatchMode", "OnError", "OnIncompatible", "ReadRoute", "ReadVia", "check_option"]

OnError = Literal["raise", "null"]
"""What a failed explicit cast does: stop with the value's path and row, or read it as null."""
CastMode = Literal["raise", "null", "collect"]
"""How a plan run treats failed casts: ``OnError``, or ``collect`` (null, with the failing rows reported)."""
MatchMode = Literal["id", "name"]
"""How id-less data finds its columns: by the name mapping (``id``) or by read-schema names (``name``)."""
OnIncompatible = Literal["fail", "quarantine"]
"""On write, rows no schema change can take: refuse the write, or set the rows aside."""
DefaultKind = Literal["initial", "write"]
"""Which of a field's defaults: the one old rows read (``initial``) or the one new rows get (``write``)."""
ReadRoute = Literal["auto", "native", "arrow"]
"""Spark reads: Spark's native Parquet scan where exact, or forced native, or fieldshift's Arrow route."""
ReadVia = Literal["files", "datasource"]
"""Spark's Arrow route: a ``mapInArrow`` over the file list, or the fieldshift data source."""


def check_option(name: str, value: Any, option: Any) -> None:
    """Refuse ``value`` for the option ``name`` unless it is one of the ``Literal`` ``option``'s values."""
    allowed = get_args(option)
    if value not in allowed:
        quoted = [repr(a) for a in allowed]
        raise InvalidOptionError(f"{name} must be {', '.join(quoted[:-1])} or {quoted[-1]}, got {value!r}")
