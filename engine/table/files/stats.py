"""Per-file column statistics, kept in the type of the file that produced them.

Pruning converts the bounds into the read type by the very cast the scan's plan applies to the
file's column, and uses them only when that cast preserves order and equality; the literal is
already a value of the read type (filters.py). Otherwise the file is read. Peers have silently
dropped matching rows by comparing stats of an old type against literals of a new one (DuckLake
#1307, Iceberg PR #17744, Paimon PR #8843), and so did this module when it converted the literal
into the file's type (a long widened to string or to a rounding double).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fieldshift.kernels import get_kernel
from fieldshift.planner.nodes import CastNode, Node, StructNode, Take
from fieldshift.schema.model import Schema, join_path
from fieldshift.schema.types import StructType
from fieldshift.table.expressions.bind import BoundPredicate
from fieldshift.table.expressions.literals import sort_keys
from fieldshift.table.expressions.tree import Expression
from fieldshift.table.expressions.visitors import compile_test

__all__ = ["NULL_REJECTING", "compute_stats", "decode_value", "encode_value", "footer_text_bounds", "leaf_node",
           "may_match", "read_bounds", "stats_test"]

_MAX_TEXT_STAT = 256


def encode_value(v: Any) -> Any:
    """A JSON-safe, type-tagged form (so a stat read back has its original Python type)."""
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": str(v)}
    if isinstance(v, float):
        return {"float": repr(v)}
    if isinstance(v, decimal.Decimal):
        return {"decimal": str(v)}
    if isinstance(v, str):
        return {"str": v}
    if isinstance(v, bytes):
        return {"bytes": base64.b64encode(v).decode()}
    if isinstance(v, dt.datetime):
        return {"datetime": v.isoformat()}
    if isinstance(v, dt.date):
        return {"date": v.isoformat()}
    if isinstance(v, dt.time):
        return {"time": v.isoformat()}
    if isinstance(v, dict):
        return {"dict": [[encode_value(k), encode_value(x)] for k, x in v.items()]}
    if isinstance(v, (list, tuple)):
        return {"list": [encode_value(x) for x in v]}
    raise TypeError(f"cannot store value {v!r} of type {type(v).__name__} in the catalog")


def decode_value(obj: Any) -> Any:
    (tag, raw), = obj.items()
    return {
        "bool": lambda r: r,
        "int": int,
        "float": float,
        "decimal": decimal.Decimal,
        "str": lambda r: r,
        "bytes": base64.b64decode,
        "datetime": dt.datetime.fromisoformat,
        "date": dt.date.fromisoformat,
        "time": dt.time.fromisoformat,
        "dict": lambda r: {decode_value(k): decode_value(x) for k, x in r},
        "list": lambda r: [decode_value(x) for x in r],
    }[tag](raw)


def _leaves(schema: Schema, table: pa.Table) -> Iterator[tuple[int, pa.DataType, pa.ChunkedArray]]:
    """Primitive columns reachable through structs only (list/map children have no row stats)."""
    def walk(fields: tuple, arrays: list) -> Iterator[tuple[int, pa.DataType, pa.ChunkedArray]]:
        for f, arr in zip(fields, arrays, strict=True):
            if isinstance(f.type, StructType):
                chunks = [c.flatten() for c in arr.chunks]  # applies the parent's validity
                children = [pa.chunked_array([c[i] for c in chunks], type=arr.type.field(i).type)
                            for i in range(arr.type.num_fields)]
                yield from walk(f.type.fields, children)
            elif isinstance(f.type, pa.DataType):
                yield f.id, f.type, arr

    yield from walk(schema.fields, table.columns)


def compute_stats(schema: Schema, table: pa.Table,
                  footer: pq.FileMetaData | None = None) -> dict[int, tuple[int, int, Any, Any]]:
    """field id -> (value count, null count, min, max); bounds are None where unsafe to keep.

    ``footer``: the metadata of the Parquet file ``table`` was just written as. Its row groups' bounds of
    top-level text and binary columns (whose ``pc.min_max`` is the dear part of the statistics) are
    taken instead of computing them again, where every group has them exactly (``footer_text_bounds``);
    the result is the same either way (tests compare both over many types)."""
    known = footer_text_bounds(schema, table, footer) if footer is not None else {}
    out: dict[int, tuple[int, int, Any, Any]] = {}
    for fid, t, arr in _leaves(schema, table):
        lo = hi = None
        if _orderable(t) and arr.null_count < len(arr):
            try:
                lo, hi = known[fid] if fid in known else _min_max(arr, t)
            except (ValueError, OverflowError, pa.ArrowException):  # beyond Python's datetime range
                lo = hi = None
            if pa.types.is_floating(t) and (pc.any(pc.is_nan(arr)).as_py() or _nan(lo) or _nan(hi)):
                lo = hi = None  # NaN orders nowhere: never prune on it
            if isinstance(lo, (str, bytes)) and max(len(lo), len(hi)) > _MAX_TEXT_STAT:
                lo = hi = None
        out[fid] = (len(arr), arr.null_count, lo, hi)
    return out


_TEXT = (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary, pa.types.is_large_binary)


def footer_text_bounds(schema: Schema, table: pa.Table, footer: pq.FileMetaData) -> dict[int, tuple[Any, Any]]:
    """field id -> (min, max) of the top-level text and binary columns of ``table`` (with a value) whose
    every row group in ``footer`` (the file ``table`` was written as) holds exact bounds of its values.

    Parquet orders BYTE_ARRAY bounds as unsigned bytes, as Arrow's ``min_max`` orders text and binary; a
    group whose bounds are missing (pyarrow drops bounds over 4 KiB rather than cut them) or marked
    inexact, a column of other type (dictionary, view, nested), or a footer that does not match ``table``
    (row or group counts, column paths) leaves the column to ``_min_max``."""
    out: dict[int, tuple[Any, Any]] = {}
    groups = [footer.row_group(g) for g in range(footer.num_row_groups)]
    if footer.num_rows != table.num_rows or not groups:
        return out
    leaf = 0
    for f, arr in zip(schema.fields, table.columns, strict=True):
        at, leaf = leaf, leaf + _parquet_leaves(arr.type)
        if not any(test(arr.type) for test in _TEXT) or arr.null_count >= len(arr) or \
                not isinstance(f.type, pa.DataType) or not any(test(f.type) for test in _TEXT):
            continue
        bounds = _group_bounds(groups, at, f.name, arr.type)
        if bounds is not None:
            out[f.id] = bounds
    return out


def _group_bounds(groups: list[pq.RowGroupMetaData], leaf: int, name: str,
                  t: pa.DataType) -> tuple[Any, Any] | None:
    """The bounds over ``groups`` of Parquet column ``leaf`` (top-level column ``name``), or None unless every
    group with a value has exact ones (a group of nulls only has none)."""
    text = pa.types.is_string(t) or pa.types.is_large_string(t)
    lo = hi = None
    for g in groups:
        if leaf >= g.num_columns:
            return None
        c = g.column(leaf)
        s = c.statistics
        if c.path_in_schema != name or c.physical_type != "BYTE_ARRAY" or s is None or not s.has_null_count:
            return None
        if not s.has_min_max:
            if s.null_count == g.num_rows:
                continue  # nulls only: no bounds to take
            return None
        if not getattr(s, "is_min_value_exact", True) or not getattr(s, "is_max_value_exact", True):
            return None
        g_lo, g_hi = s.min, s.max
        if not isinstance(g_lo, str if text else bytes) or not isinstance(g_hi, str if text else bytes):
            return None
        lo = g_lo if lo is None or g_lo < lo else lo
        hi = g_hi if hi is None or g_hi > hi else hi
    return None if lo is None else (lo, hi)


def _parquet_leaves(t: pa.DataType) -> int:
    """Parquet leaf columns under one Arrow column (depth first, as Parquet numbers them)."""
    if pa.types.is_struct(t):
        return sum(_parquet_leaves(f.type) for f in t)
    if pa.types.is_map(t):
        return _parquet_leaves(t.key_type) + _parquet_leaves(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or \
            pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        return _parquet_leaves(t.value_type)
    return 1


def _min_max(arr: pa.ChunkedArray, t: pa.DataType) -> tuple[Any, Any]:
    """Bounds as Python values; nanosecond ones are widened to whole microseconds (Python's precision)."""
    if getattr(t, "unit", None) == "ns" and (pa.types.is_timestamp(t) or pa.types.is_time(t)):
        mm = pc.min_max(pc.cast(arr, pa.int64()))
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
        lo, hi = lo // 1000, -(-hi // 1000)
        unit = pa.timestamp("us", t.tz) if pa.types.is_timestamp(t) else pa.time64("us")
        return pa.scalar(lo, pa.int64()).cast(unit).as_py(), pa.scalar(hi, pa.int64()).cast(unit).as_py()
    mm = pc.min_max(arr)
    return mm["min"].as_py(), mm["max"].as_py()


def _nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _orderable(t: pa.DataType) -> bool:
    T = pa.types
    return (T.is_integer(t) or T.is_floating(t) or T.is_decimal(t) or T.is_string(t)
            or T.is_large_string(t) or T.is_binary(t) or T.is_large_binary(t) or T.is_temporal(t)) \
        and not T.is_duration(t) and not T.is_interval(t)


# -- pruning -------------------------------------------------------------------------------------
NULL_REJECTING = ("==", "<", "<=", ">", ">=", "in", "not_null", "is_nan", "starts_with")
"""Leaf operators no null satisfies: a file whose values are all null cannot match them."""
_TICKS_PER_DAY = {"s": 86_400, "ms": 86_400_000, "us": 86_400_000_000, "ns": 86_400_000_000_000}

StatsTest = Callable[[dict[int, Any]], bool]


def may_match(stats: tuple[int, int, Any, Any] | None, pred: BoundPredicate, node: Node | None,
              file_type: Any) -> bool:
    """False only when the stats prove no row of the file, read through ``node``, satisfies ``pred``.

    ``node`` is the scan plan's node for the predicate's column (None: the file lacks it). Bounds
    are converted into the read type by that node's own cast and used only when the cast keeps
    order and equality (``read_bounds``); null counts hold through any cast, which maps null to null.
    """
    if stats is None or node is None or not isinstance(file_type, pa.DataType):
        return True
    count, nulls, lo, hi = stats
    op = pred.op
    if op in NULL_REJECTING and nulls >= count:
        return False  # every row is null: nothing is equal, ordered, in a list, NaN, a prefix or valid
    if op == "is_nan":  # integers and decimals hold no NaN, nor does any cast of them
        return not (pa.types.is_integer(file_type) or pa.types.is_decimal(file_type))
    if op == "not_nan":
        return True
    bounds = read_bounds(node, file_type, lo, hi)
    if op == "is_null":
        return nulls > 0 or bounds is None  # a cast outside the exact ones may turn values into nulls
    if op == "not_null" or bounds is None:
        return True
    low, high = bounds
    keys = pred.keys
    try:
        if op in ("!=", "not in", "not_starts_with"):  # true on nulls and NaN: only a file of one value fails
            if nulls or low != high or isinstance(low, float):  # other formats' float bounds leave NaN out
                return True
            if op == "not_starts_with":
                return not (_starts(low, keys[0]) and _starts(high, keys[0]))
            return not any(low == k for k in keys)
        if op == "starts_with":
            n = len(keys[0])
            return low[:n] <= keys[0] <= high[:n]
        if op == "==":
            return low <= keys[0] <= high
        if op == "in":
            return any(low <= k <= high for k in keys)
        if op == "<":
            return low < keys[0]
        if op == "<=":
            return low <= keys[0]
        if op == ">":
            return high > keys[0]
        if op == ">=":
            return high >= keys[0]
    except TypeError:
        return True
    return True


def _starts(v: Any, prefix: Any) -> bool:
    return isinstance(v, (str, bytes)) and type(v) is type(prefix) and v.startswith(prefix)


def stats_test(bound: Expression, leaf_info: Callable[[BoundPredicate], tuple[Node | None, Any] | None]
               ) -> StatsTest:
    """Whether a file's statistics (field id -> (count, nulls, min, max)) may hold a row ``bound`` keeps.

    ``bound`` is a bound filter without NOT; ``leaf_info(leaf)`` gives the plan's node for the leaf's
    column and the file's type of it, or None where the leaf cannot prune these files (then it may hold).
    """
    def leaf(p: BoundPredicate) -> StatsTest | None:
        info = leaf_info(p)
        if info is None:
            return None
        node, file_type = info
        fid = p.field_id
        return lambda s: may_match(s.get(fid), p, node, file_type)
    return compile_test(bound, leaf)


def read_bounds(node: Node, file_type: pa.DataType, lo: Any, hi: Any) -> tuple[Any, Any] | None:
    """(min, max) sort keys in the read type, or None unless the node's cast preserves order and equality.

    Order- and equality-preserving: identity (and layout changes), integer -> integer, integer ->
    decimal, integer -> float when both bounds are exact floats, float and decimal widening, date
    and timestamp unit widening and date -> timestamp when the ticks scale exactly (a zone change
    that keeps the instants). Never: anything -> string, string -> number/date, binary <-> string,
    float -> integer/decimal, rounding casts. When both bounds cast, every value between them does.
    """
    if lo is None or hi is None:
        return None
    if isinstance(node, Take) and node.target == file_type and pa.types.is_integer(file_type) \
            and type(lo) is int and type(hi) is int:  # integers read as themselves: their own sort keys
        bits = file_type.bit_width - pa.types.is_signed_integer(file_type)
        low = -(1 << bits) if pa.types.is_signed_integer(file_type) else 0
        return (lo, hi) if low <= lo < (1 << bits) and low <= hi < (1 << bits) else None
    try:
        source = _bounds_array(lo, hi, file_type)
        if isinstance(node, Take):
            out = source.cast(node.target) if source.type != node.target else source
        elif isinstance(node, CastNode) and _order_preserving(file_type, node.target):
            outcome = get_kernel(node.kernel)(source, node.target)
            if outcome.failure_count or outcome.values.null_count:
                return None
            out = outcome.values
            if not _exact(source, out):
                return None
        else:
            return None
        keys = sort_keys(out)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None
    return keys[0], keys[1]


def _bounds_array(lo: Any, hi: Any, file_type: pa.DataType) -> pa.Array:
    """The stored bounds as an array of the file type; nanosecond maxima are rounded up.

    Stats are kept as Python values, whose datetimes and times hold microseconds: a stored
    nanosecond maximum may have lost up to 999 ns (older catalogs truncated it).
    """
    arr = pa.array([lo, hi], file_type)
    if getattr(file_type, "unit", None) == "ns" and (pa.types.is_timestamp(file_type) or pa.types.is_time(file_type)):
        ticks = arr.view(pa.int64()).to_pylist()
        arr = pa.array([ticks[0], min(ticks[1] + 999, 2**63 - 1)], pa.int64()).view(file_type)
    return arr


def _order_preserving(ft: pa.DataType, rt: pa.DataType) -> bool:
    T = pa.types
    if T.is_integer(ft):
        return T.is_integer(rt) or T.is_decimal(rt) or T.is_floating(rt)
    if T.is_floating(ft):
        return T.is_floating(rt) and rt.bit_width >= ft.bit_width
    if T.is_decimal(ft):
        return T.is_decimal(rt) and rt.scale >= ft.scale
    if (T.is_date(ft) or T.is_timestamp(ft)) and (T.is_date(rt) or T.is_timestamp(rt)):
        return _ticks_per_day(rt) >= _ticks_per_day(ft)
    if T.is_time(ft) and T.is_time(rt):
        return _ticks_per_day(rt) >= _ticks_per_day(ft)
    text = (T.is_string, T.is_large_string, T.is_string_view)
    binary = (T.is_binary, T.is_large_binary, T.is_binary_view, T.is_fixed_size_binary)
    return (any(f(ft) for f in text) and any(f(rt) for f in text)) or \
        (any(f(ft) for f in binary) and any(f(rt) for f in binary) and not T.is_fixed_size_binary(rt))


def _ticks_per_day(t: pa.DataType) -> int:
    if pa.types.is_date32(t):
        return 1
    if pa.types.is_date64(t):
        return 86_400_000
    return _TICKS_PER_DAY[t.unit]


def _exact(source: pa.Array, out: pa.Array) -> bool:
    """The cast changed no bound: integers read as floats exactly, ticks scaled by the unit ratio."""
    T = pa.types
    st, rt = source.type, out.type
    if T.is_integer(st) and T.is_floating(rt):
        mantissa = {16: 11, 32: 24, 64: 53}[rt.bit_width]
        return all(abs(v) <= 2**mantissa for v in source.to_pylist())
    if T.is_temporal(st):
        factor, rem = divmod(_ticks_per_day(rt), _ticks_per_day(st))
        return rem == 0 and [v * factor for v in sort_keys(source)] == sort_keys(out)
    return True


def leaf_node(nodes: tuple[Node, ...], fields: tuple[Any, ...], path: tuple[str, ...]) -> Node | None:
    """The plan node that produces ``path``'s values (a Take covering it counts); None when unknown."""
    node: Node | None = None
    for i, part in enumerate(path):
        idx = next((j for j, f in enumerate(fields) if f.name == part), None)
        if idx is None or idx >= len(nodes):
            return None
        node = nodes[idx]
        if i == len(path) - 1:
            return node
        if isinstance(node, Take):  # an identity subtree: the leaf passes through as it is
            target = node.target
            for name in path[i + 1:]:
                target = target.field(name).type
            return Take(node.index, target, join_path(path))
        if not isinstance(node, StructNode) or not isinstance(fields[idx].type, StructType):
            return None
        nodes, fields = node.children, fields[idx].type.fields
    return node
