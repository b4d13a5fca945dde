"""Issue 28: Spark's pushed filters to fieldshift expressions and back (no JVM needed).

A translation must keep every row Spark's filter keeps (Spark re-checks the rows it reads), and a
``Not`` is only translated over an exact child. Truth values are compared on every row of a small
table with plain-Python Spark semantics (NaN equal to itself and above every number, nulls unknown).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.expressions.bind import bind
from fieldshift.table.expressions.filters import parse_filter

ds = pytest.importorskip("pyspark.sql.datasource")

from fieldshift.spark.pushed_filters import from_spark_filter, to_spark_filters  # noqa: E402

NAN = math.nan
ROWS = {"k": [1, 5, None, 9, 5], "x": [1.0, NAN, None, 7.5, -0.0], "s": ["ab", None, "b", "abc", ""]}


def _spark_truth(f: Any, row: dict) -> bool | None:
    """Spark SQL's three-valued answer of a pushed filter on one row (NaN is a value, the largest)."""
    kind = type(f).__name__
    if kind == "Not":
        inner = _spark_truth(f.child, row)
        return None if inner is None else not inner
    v = row[f.attribute[0]]
    if kind == "IsNull":
        return v is None
    if kind == "IsNotNull":
        return v is not None
    if kind == "EqualNullSafe":
        return (v is None and f.value is None) or (v is not None and f.value is not None and _eq(v, f.value))
    if v is None:
        return None
    if kind == "In":
        if any(x is not None and _eq(v, x) for x in f.value):
            return True
        return None if any(x is None for x in f.value) else False
    if kind == "StringStartsWith":
        return v.startswith(f.value)
    key = (1, 0.0) if isinstance(v, float) and math.isnan(v) else (0, v)
    lit = (1, 0.0) if isinstance(f.value, float) and math.isnan(f.value) else (0, f.value)
    return {"EqualTo": key == lit, "GreaterThan": key > lit, "GreaterThanOrEqual": key >= lit,
            "LessThan": key < lit, "LessThanOrEqual": key <= lit}[kind]


def _eq(a: Any, b: Any) -> bool:
    nan = [isinstance(x, float) and math.isnan(x) for x in (a, b)]
    return all(nan) or (not any(nan) and a == b)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> fs.Table:
    t = fs.Table.create(tmp_path_factory.mktemp("pf") / "t",
                        pa.schema([("k", pa.int32()), ("x", pa.float64()), ("s", pa.string())]))
    t.append(pa.table({"k": pa.array(ROWS["k"], pa.int32()), "x": ROWS["x"], "s": ROWS["s"]}))
    return t


FILTERS = [
    ds.EqualTo(("k",), 5), ds.GreaterThan(("x",), 2.0), ds.GreaterThanOrEqual(("x",), 7.5), ds.LessThan(("x",), 7.5),
    ds.LessThanOrEqual(("k",), 5), ds.In(("k",), (1, 9)), ds.In(("k",), (1, None)), ds.In(("x",), (NAN, 1.0)),
    ds.IsNull(("s",)), ds.IsNotNull(("x",)), ds.StringStartsWith(("s",), "ab"), ds.EqualNullSafe(("k",), None),
    ds.EqualNullSafe(("x",), NAN), ds.EqualNullSafe(("k",), 5), ds.EqualTo(("x",), NAN),
    ds.GreaterThanOrEqual(("x",), NAN), ds.Not(ds.GreaterThan(("x",), 2.0)), ds.Not(ds.In(("k",), (1, 9))),
    ds.Not(ds.In(("k",), (1, None))), ds.Not(ds.EqualNullSafe(("k",), 5)), ds.Not(ds.StringStartsWith(("s",), "a")),
    ds.Not(ds.Not(ds.LessThan(("x",), 1.0))), ds.StringEndsWith(("s",), "b"), ds.EqualTo(("nope",), 1),
    ds.EqualTo(("k",), "x"),
]


@pytest.mark.parametrize("f", FILTERS, ids=repr)
def test_translations_keep_every_row_spark_keeps(table: fs.Table, f: Any) -> None:
    expr = from_spark_filter(f, table.schema)
    if expr is None:  # not pushed: Spark filters these rows alone (test_what_is_not_translated)
        return
    rows = [dict(zip(ROWS, r, strict=True)) for r in zip(*ROWS.values(), strict=True)]
    spark_keeps = {i for i, r in enumerate(rows) if _spark_truth(f, r) is True}
    got = table.scan(filter=expr).to_arrow().to_pylist()
    kept = {i for i, r in enumerate(rows) for g in got if _same(r, g)}
    assert spark_keeps <= kept, (f, expr)
    if type(f).__name__ != "In" or None not in f.value:  # exact ones keep no more either
        assert kept == spark_keeps, (f, expr)


def _same(a: dict, b: dict) -> bool:
    return all(_eq(a[c], b[c]) if a[c] is not None else b[c] is None for c in a)


def test_what_is_not_translated(table: fs.Table) -> None:
    schema = table.schema
    assert from_spark_filter(ds.Not(ds.In(("k",), (1, None))), schema) is None  # the child is not exact
    assert from_spark_filter(ds.StringContains(("s",), "b"), schema) is None
    assert from_spark_filter(ds.EqualTo(("nope",), 1), schema) is None
    assert from_spark_filter(ds.EqualTo(("k",), "x"), schema) is None  # a literal that does not fit
    assert str(from_spark_filter(ds.GreaterThan(("x",), 2.0), schema)) == "x > 2.0 or x is nan"


def test_back_to_pushed_filters(table: fs.Table) -> None:
    schema = table.schema
    for text in ["k = 5 and s is not null", "k != 5", "s starts with 'ab' and k in (1, 9)", "x < 2", "true",
                 "not (k = 5)"]:
        filters = to_spark_filters(bind(parse_filter(text), schema))
        assert filters is not None, text
        back = fs.And(*[from_spark_filter(f, schema) for f in filters]) if len(filters) > 1 else \
            from_spark_filter(filters[0], schema) if filters else fs.AlwaysTrue()
        assert repr(table.scan(filter=back).to_arrow().to_pylist()) == \
            repr(table.scan(filter=text).to_arrow().to_pylist()), (text, filters)
    for text in ["k = 1 or k = 9", "x > 2", "k not in (1, 9)", "s not starts with 'a'"]:  # not said exactly
        assert to_spark_filters(bind(parse_filter(text), schema)) is None, text


def test_path_through_a_struct(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "st", pa.schema([("st", pa.struct([("x", pa.int32())])),
                                                    ("l", pa.list_(pa.int32()))]))
    assert str(from_spark_filter(ds.EqualTo(("st", "x"), 3), t.schema)) == "st.x = 3"
    assert from_spark_filter(ds.IsNull(("l",)), t.schema) is None
