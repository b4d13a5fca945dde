"""Pruning fuzzer: random multi-file tables x random predicates and filter trees; no row may ever be dropped.

A table (unpartitioned, or partitioned by identity, bucket or truncate of its stable columns, NaN
partition values included) gets several appends, some after schema changes (int -> long -> double -> string, int ->
decimal, renames, on-write widening by appends of another type), with nulls, NaN, infinities and
values beyond 2**53 in the data. Each predicate (every operator, literals of every kind, in and
out of range, None and wrong kinds where they must be refused) is checked three ways: the pruned
scan == the same scan unpruned == a plain-Python evaluation of Iceberg's semantics on the rows. Trees
of and/or/not over them (``filter_model``: SQL's three-valued logic, so NOT of a comparison with a
null stays unknown, and NOT of one with NaN is true) are checked the same way, with ``count()``.
"""

from __future__ import annotations

import decimal
import math
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import fieldshift as fs
from fieldshift.table.expressions.filters import InvalidFilterError
from tests.table.filter_model import keeps, to_expression
from tests.table.table_model import holds

POLICY = fs.CastPolicy.onehouse(widen_to_string=True)
OPS = ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "is_null", "not_null"]
D = decimal.Decimal
BIG = [2**31 - 1, -(2**31), 2**53 + 1, 2**62, -(2**63), 2**63 - 1]
TEXT = ["", "-1", "0", "1.5", "10", "100", "2", "50", "6", "9", "a", "abc", "x", "é"]
NUMBER_LITERALS = [0, 1, 2, 5, 6, 50, 100, -3, 1.5, -0.5, 2.5, 99.99, 2.0**53, 2**53 + 1, 2**53 - 1, 2**31,
                   -(2**31) - 1, 2**64, -(2**70), 1e300, -1e300, math.inf, -math.inf, -0.0, D("1.50"),
                   D("2"), D("-0.001"), D("1E+40")]


PARTITIONS = [[], [], [], ["bucket(4, id)"], ["truncate(10, id)", "s"], ["d"], ["truncate(1, s)", "bucket(3, s)"],
              ["id", "d"], ["truncate(2, s)"]]  # sources whose type never changes here (k's does)


def _kind(t: Any) -> str:
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_decimal(t):
        return "decimal"
    return "string"


def _value(draw: Any, t: pa.DataType) -> Any:
    kind = _kind(t)
    if draw(st.integers(0, 5)) == 0:
        return None
    if kind == "int":
        lo, hi = (-(2**31), 2**31 - 1) if t.bit_width == 32 else (-(2**63), 2**63 - 1)
        big = st.sampled_from([b for b in BIG if lo <= b <= hi])
        return draw(st.one_of(st.integers(-20, 120), st.integers(-20, 120), big))
    if kind == "float":
        return draw(st.one_of(st.sampled_from([0.5, -0.0, 2.0**53, math.nan, math.inf, -math.inf, 1e300]),
                              st.integers(-20, 120).map(float), st.floats(-200, 200, width=32)))
    if kind == "decimal":
        return D(draw(st.integers(-12000, 12000))).scaleb(-2)
    return draw(st.sampled_from(TEXT))


def _column_types(t: fs.Table) -> dict[str, pa.DataType]:
    return {f.name: f.type for f in t.schema.fields}


def _append(draw: Any, t: fs.Table, next_id: list[int]) -> None:
    types = _column_types(t)
    n = draw(st.integers(1, 6))
    rows = []
    for _ in range(n):
        row: dict[str, Any] = {"id": next_id[0]}
        next_id[0] += 1
        for name, typ in types.items():
            if name == "id":
                continue
            if isinstance(typ, pa.DataType):
                row[name] = _value(draw, typ)
            else:  # the struct st {x: int}
                row[name] = None if draw(st.integers(0, 4)) == 0 else {"x": _value(draw, pa.int32())}
        rows.append(row)
    schema = t.schema.to_arrow()
    data = pa.Table.from_pylist(rows, schema=pa.schema([schema.field(i).remove_metadata()
                                                        for i in range(len(schema))]))
    drift = draw(st.sampled_from(["none", "none", "float", "string"]))
    k = next(n for n in types if n.startswith("k"))
    kind = _kind(types[k])
    if drift != "none" and kind in ("int", "float") and not (drift == "float" and kind == "float"):
        # an on-write widening: the batch brings k as another type and the append widens the table
        values = [None if r[k] is None else (float(r[k]) if drift == "float" else str(r[k])) for r in rows]
        data = data.set_column(data.schema.get_field_index(k), k,
                               pa.array(values, pa.float64() if drift == "float" else pa.string()))
        note(f"append widening {k} to {drift}")
    t.append(data, policy=POLICY)


def _change(draw: Any, t: fs.Table) -> None:
    types = _column_types(t)
    k = next(n for n in types if n.startswith("k"))
    d = next(n for n in types if n.startswith("d"))
    kind = _kind(types[k])
    options = ["rename"]
    if kind == "int":
        options += ["to_double", "to_string", "to_decimal"] + (["to_long"] if types[k].bit_width == 32 else [])
    elif kind in ("float", "decimal"):
        options.append("to_string")
    choice = draw(st.sampled_from(options))
    note(f"schema change {choice}")
    update = t.update_schema(policy=POLICY)
    if choice == "rename":
        target = draw(st.sampled_from([k, d]))
        update.rename_column(target, target[0] + ("2" if not target.endswith("2") else ""))
    else:
        update.update_column(k, {"to_long": pa.int64(), "to_double": pa.float64(), "to_string": pa.string(),
                                 "to_decimal": pa.decimal128(22, 2)}[choice])
    update.commit()


def _literal(draw: Any, kind: str, present: list[Any] = ()) -> Any:
    """A literal of ``kind``: often a value the column holds (bounds are where pruning errs)."""
    if present and draw(st.booleans()):
        v = draw(st.sampled_from(present))
        if not (isinstance(v, float) and math.isnan(v)):
            return v
    if kind == "string":
        return draw(st.sampled_from(TEXT))
    return draw(st.sampled_from(NUMBER_LITERALS))


def _predicate(draw: Any, t: fs.Table, rows: list[dict]) -> tuple[tuple, str | None]:
    """A predicate and the column's kind, or None as the kind when the filter must be refused."""
    types = _column_types(t)
    k = next(n for n in types if n.startswith("k"))  # the column whose type changes: half the filters
    name = draw(st.sampled_from([k, k, k, *(n for n in types if n != "st"), "st.x"]))
    kind = "int" if name in ("id", "st.x") else _kind(types[name])
    present = [v for v in (_get(r, name) for r in rows) if v is not None]
    op = draw(st.sampled_from(OPS))
    if op in ("is_null", "not_null"):
        return (name, op), kind
    wrong = draw(st.integers(0, 9))
    if wrong == 0:  # a null literal: refused, pointing to is_null
        return ((name, op, [None, 1]) if op in ("in", "not in") else (name, op, None)), None
    if wrong == 1:  # the other kind of literal: refused
        lit = _literal(draw, "int" if kind == "string" else "string")
        return ((name, op, [lit]) if op in ("in", "not in") else (name, op, lit)), None
    if op in ("in", "not in"):
        return (name, op, [_literal(draw, kind, present) for _ in range(draw(st.integers(0, 4)))]), kind
    return (name, op, _literal(draw, kind, present)), kind


def _get(row: dict, name: str) -> Any:
    if name == "st.x":
        return None if row["st"] is None else row["st"]["x"]
    return row[name]


def _tree_leaf(draw: Any, t: fs.Table, rows: list[dict]) -> tuple:
    """A valid condition as a filter_model leaf: every operator, NaN tests, prefixes on strings."""
    flt, kind = _predicate(draw, t, rows)
    while kind is None:
        flt, kind = _predicate(draw, t, rows)
    name, op = flt[0], flt[1]
    extra = ["is_nan", "not_nan"] + (["starts_with", "not_starts_with"] if kind == "string" else [])
    if draw(st.integers(0, 4)) == 0:
        op = draw(st.sampled_from(extra))
        if op in ("starts_with", "not_starts_with"):
            present = [v for v in (_get(r, name) for r in rows) if isinstance(v, str)]
            text = draw(st.sampled_from(present or TEXT))
            return ("leaf", tuple(name.split(".")), op, text[:draw(st.integers(0, 2))])
        return ("leaf", tuple(name.split(".")), op, None)
    lit = list(flt[2]) if op in ("in", "not in") else (flt[2] if len(flt) > 2 else None)
    return ("leaf", tuple(name.split(".")), op, lit)


def _tree(draw: Any, t: fs.Table, rows: list[dict]) -> tuple:
    """A random and/or/not tree of 2-4 conditions."""
    def grow(depth: int) -> tuple:
        if depth == 0 or draw(st.integers(0, 2)) == 0:
            return _tree_leaf(draw, t, rows)
        kind = draw(st.sampled_from(["and", "or", "or", "not"]))
        if kind == "not":
            return ("not", grow(depth - 1))
        return (kind, [grow(depth - 1) for _ in range(draw(st.integers(2, 3)))])
    return grow(2)


def _refused_in_a_tree(draw: Any, t: fs.Table, rows: list[dict]) -> None:
    """A null or NaN literal anywhere in a tree (an IN list too) is refused, whatever surrounds it."""
    name = draw(st.sampled_from(["id", "d", "st.x"]))
    bad = draw(st.sampled_from([None, math.nan]))
    op = draw(st.sampled_from(["==", "<", "!=", "in", "not in"]))
    with pytest.raises(InvalidFilterError, match=r"null|NaN|None|is_nan"):
        leaf = fs.col(name).is_in([1, bad]) if op == "in" else fs.col(name).not_in([bad]) if op == "not in" \
            else {"==": lambda: fs.col(name) == bad, "<": lambda: fs.col(name) < bad,
                  "!=": lambda: fs.col(name) != bad}[op]()
        t.scan(filter=~(to_expression(_tree_leaf(draw, t, rows)) | leaf), policy=POLICY)


def _check(t: fs.Table, flt: Any, expected: list[int]) -> None:
    pruned = t.scan(filter=flt, policy=POLICY)
    full = t.scan(filter=flt, policy=POLICY)
    full.prune = False
    got = sorted(pruned.to_arrow().column("id").to_pylist())
    assert got == sorted(full.to_arrow().column("id").to_pylist())
    assert got == expected
    assert pruned.count() == len(expected)


def _run(data: Any) -> None:
    draw = data.draw
    with tempfile.TemporaryDirectory() as tmp:
        schema = pa.schema([("id", pa.int64()), ("k", pa.int32()), ("d", pa.float64()), ("s", pa.string()),
                            ("st", pa.struct([("x", pa.int32())]))])
        spec = draw(st.sampled_from(PARTITIONS))
        note(f"partition_by {spec}")
        t = fs.Table.create(Path(tmp) / "t", schema, partition_by=spec)
        next_id = [0]
        for _ in range(draw(st.integers(2, 6))):
            if draw(st.integers(0, 1)) == 0:
                _change(draw, t)
            _append(draw, t, next_id)
        rows = t.scan(policy=POLICY).to_arrow().to_pylist()
        note(f"schema {t.schema.to_arrow()}; {len(t.scan(policy=POLICY).files())} files")
        for _ in range(6):
            flt, kind = _predicate(draw, t, rows)
            note(f"filter {flt!r}")
            if kind is None:
                with pytest.raises(InvalidFilterError):
                    t.scan(filter=flt, policy=POLICY)
                continue
            lit = flt[2] if len(flt) > 2 else None
            _check(t, flt, sorted(r["id"] for r in rows if holds(_get(r, flt[0]), flt[1], lit)))
        for _ in range(5):  # OR, NOT, IN / NOT IN over nulls and NaN, is [not] nan, prefixes
            spec = _tree(draw, t, rows)
            note(f"tree {spec!r}")
            expected = sorted(r["id"] for r in rows if keeps(spec, lambda path, r=r: _get(r, ".".join(path))))
            _check(t, to_expression(spec), expected)
        _refused_in_a_tree(draw, t, rows)


_SETTINGS: dict[str, Any] = {"deadline": None,
                              "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                                                       HealthCheck.large_base_example]}


@settings(max_examples=30, **_SETTINGS)
@given(st.data())
def test_pruning_never_drops_a_row(data: Any) -> None:
    _run(data)


@pytest.mark.slow
@settings(max_examples=1500, **_SETTINGS)
@given(st.data())
def test_pruning_never_drops_a_row_many(data: Any) -> None:
    _run(data)
