"""Values an update or a merge writes into a column, checked to fit it exactly (never truncated nor parsed).

``update(set=...)`` and merge clauses write a literal or another column's values into a column of the table.
Arrow's conversions alone are not exact enough for that promise: ``pa.scalar(1.5, pa.int64())`` is 1, a
datetime becomes a date by dropping its time, a zoned datetime loses its zone into a zone-less column, and a
column cast parses text (``"02134"`` -> 2134) and turns booleans into numbers. :func:`fit_literal` and
:func:`fit_column` refuse those with a :class:`CastValueError` naming the column and the first bad row;
:func:`check_key_kinds` refuses text or booleans matched against a column of another kind (a merge's ``on``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.errors import CastValueError, IncompatibleTypeError

__all__ = ["check_key_kinds", "fit_column", "fit_literal", "literal_kind_fits"]

_T = pa.types


def _is_text(t: pa.DataType) -> bool:
    return _T.is_string(t) or _T.is_large_string(t) or _T.is_string_view(t)


def _is_bytes(t: pa.DataType) -> bool:
    return _T.is_binary(t) or _T.is_large_binary(t) or _T.is_fixed_size_binary(t) or _T.is_binary_view(t)


def literal_kind_fits(value: Any, t: pa.DataType) -> bool:
    """Whether a Python literal is of the column's kind (no text read as a number, no bool as a number)."""
    if isinstance(value, bool):
        return _T.is_boolean(t)
    if isinstance(value, (int, float, decimal.Decimal)):
        return _T.is_integer(t) or _T.is_floating(t) or _T.is_decimal(t)
    if isinstance(value, str):
        return _is_text(t)
    if isinstance(value, (bytes, bytearray)):
        return _is_bytes(t)
    if isinstance(value, (dt.date, dt.datetime)):
        return _T.is_date(t) or _T.is_timestamp(t)
    if isinstance(value, dt.time):
        return _T.is_time(t)
    return True  # lists, dicts: Arrow's conversion decides


def _inexact(value: Any, back: Any, t: pa.DataType) -> str | None:
    """Why ``back`` (the value as the column holds it) is not ``value``; None when it is (nested values are
    checked leaf by leaf: ``[1, 2.5]`` is no list of longs)."""
    if isinstance(value, bool) or value is None or back is None:
        return None
    if _T.is_struct(t) and isinstance(value, Mapping) and isinstance(back, Mapping):
        fields = {t.field(i).name: t.field(i).type for i in range(t.num_fields)}
        return next((why for k, v in value.items() if k in fields
                     for why in [_inexact(v, back.get(k), fields[k])] if why), None)
    if _T.is_map(t) and isinstance(back, list):
        pairs = list(value.items()) if isinstance(value, Mapping) else list(value)
        return next((why for (k, v), (bk, bv) in zip(pairs, back, strict=False)
                     for why in [_inexact(k, bk, t.key_type), _inexact(v, bv, t.item_type)] if why), None)
    if (_T.is_list(t) or _T.is_large_list(t) or _T.is_fixed_size_list(t)) and isinstance(back, list):
        return next((why for v, b in zip(value, back, strict=False) for why in [_inexact(v, b, t.value_type)] if why),
                    None)
    if _T.is_integer(t) and isinstance(value, (float, decimal.Decimal)):
        if (isinstance(value, float) and not math.isfinite(value)) or back != value:
            return f"{value!r} is not a whole number"
    if isinstance(value, dt.datetime) and _T.is_date(t):
        if value.tzinfo is not None or value.time() != dt.time():
            return f"{value!r} has a time of day (or a zone) that a date drops"
    if isinstance(value, dt.datetime) and _T.is_timestamp(t):
        if t.tz is None and value.tzinfo is not None:
            return f"{value!r} has a zone, the column none (its values are wall-clock times); give a naive datetime"
        want = value.replace(tzinfo=dt.UTC) if t.tz is not None and value.tzinfo is None else value
        if back != want:
            return f"{value!r} has more precision than the column's unit ({t.unit})"
    if isinstance(value, dt.time) and back != value:
        return f"{value!r} has more precision than the column's unit"
    return None


def fit_literal(value: Any, t: pa.DataType, column: str, what: str) -> pa.Scalar:
    """``value`` as a scalar of ``t``, exactly (``what``: who writes it, for the message, e.g. "update")."""
    if value is not None and not literal_kind_fits(value, t):
        raise CastValueError(column, 0, value, type(value).__name__, str(t),
                             f"{what}'s value does not fit the column's type; nothing was written.")
    try:
        scalar = pa.scalar(value, type=t)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError, TypeError,
            ValueError, decimal.InvalidOperation) as e:
        raise CastValueError(column, 0, value, type(value).__name__, str(t),
                             f"{what}'s value does not fit the column's type ({e}); nothing was written.") from None
    why = _inexact(value, scalar.as_py(), t)
    if why is not None:
        raise CastValueError(column, 0, value, type(value).__name__, str(t),
                             f"{what}'s value would change on the way in: {why}; nothing was written.")
    return scalar


def _plain(t: pa.DataType) -> pa.DataType:
    """A dictionary-encoded type's value type (a categorical of text is text)."""
    return t.value_type if _T.is_dictionary(t) else t


def _kinds_clash(source: pa.DataType, t: pa.DataType) -> str | None:
    source = _plain(source)
    if source == t or _T.is_null(source):
        return None
    if (_is_text(source) or _is_bytes(source)) and not (_is_text(t) or _is_bytes(t)):
        return "text is not parsed into another type"
    if _T.is_boolean(source) != _T.is_boolean(t):
        return "booleans and numbers do not convert"
    if _T.is_timestamp(source) and _T.is_timestamp(t) and source.tz is not None and t.tz is None:
        return "a zoned timestamp does not go into a zone-less column (its values are wall-clock times)"
    return None


_CHUNK = 1 << 16
"""Rows cast at once while looking for the first bad value (``_first_bad``)."""


def _fails(arr: pa.Array, t: pa.DataType) -> bool:
    try:
        arr.cast(t)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return True
    return False


def _first_bad(arr: pa.Array, t: pa.DataType) -> int | None:
    """The first row whose value does not cast to ``t`` alone, or None when every value does and only the whole
    fails (a string cast past 2 GiB of text): chunks are cast in order, then the failing chunk is halved, the half
    holding the first failure kept, and the row found is cast alone to confirm it. Casts of O(len) values in all,
    none row by row in Python."""
    for start in range(0, len(arr), _CHUNK):
        chunk = arr.slice(start, _CHUNK)
        if not _fails(chunk, t):
            continue
        lo, hi = 0, len(chunk)  # chunk[:lo] casts; chunk[lo:hi] holds the first bad value
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if _fails(chunk.slice(lo, mid - lo), t):
                hi = mid
            else:
                lo = mid
        return start + lo if _fails(chunk.take([lo]), t) else None  # a copy: a slice keeps the whole buffer
    return None


def fit_column(arr: pa.Array, t: pa.DataType, column: str, source: str) -> pa.Array:
    """``arr`` (the values of ``source``: a column or an expression) as ``t``, exactly: of the column's kind,
    every value kept (Arrow's safe cast, and a timestamp going into a date must be at midnight)."""
    if arr.type == t:
        return arr
    clash = _kinds_clash(arr.type, t)
    if clash is not None:
        at = int(np.argmax(arr.is_valid().to_numpy(zero_copy_only=False))) if len(arr) else 0
        raise CastValueError(column, at, arr[at].as_py() if len(arr) else None, f"{arr.type} ({source})", str(t),
                             f"{clash}; nothing was written.")
    try:
        out = arr.cast(t)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        bad = _first_bad(arr, t)
        if bad is None:
            raise IncompatibleTypeError(
                f"the values of {source} do not fit column {column!r} ({t}) all at once, though each value does "
                f"({e}): more than a {t} column holds in one piece (2 GiB of text or bytes); write fewer rows at "
                "once. Nothing was written.") from None
        raise CastValueError(column, bad, arr[bad].as_py(), f"{arr.type} ({source})", str(t),
                             f"The values of {source} do not fit column {column!r} ({e}); nothing was written."
                             ) from None
    if _T.is_timestamp(arr.type) and _T.is_date(t) and len(arr):
        back = out.cast(arr.type)
        lost = pc.fill_null(pc.not_equal(back, arr), False).to_numpy(zero_copy_only=False)
        if lost.any():
            bad = int(np.argmax(lost))
            raise CastValueError(column, bad, arr[bad].as_py(), f"{arr.type} ({source})", str(t),
                                 "a date would drop its time of day; nothing was written.")
    return out


def check_key_kinds(source: pa.DataType, t: pa.DataType) -> str | None:
    """Why source values of type ``source`` cannot be matched against a column of ``t`` (None: they can)."""
    source = _plain(source)
    if source == t or _T.is_null(source):
        return None
    if (_is_text(source) or _is_bytes(source)) != (_is_text(t) or _is_bytes(t)):
        return f"{source} values are not matched against a {t} column (text is not parsed, nor numbers printed)"
    if _T.is_boolean(source) != _T.is_boolean(t):
        return f"{source} values are not matched against a {t} column"
    return None
