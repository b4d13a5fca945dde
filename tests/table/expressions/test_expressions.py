"""Issue 28: one filter expression tree; tuples, ``fs.col`` expressions and filter text give one answer.

The property test draws random and/or/not trees over a table holding nulls, NaN, -0.0, structs and
several files, and checks every spelling of the tree (tuples where it is a conjunction, expression
objects, filter text written independently of fieldshift, and fieldshift's own rendering parsed
back) against ``filter_model``'s plain-Python three-valued logic, pruned and unpruned, with
``count()``. The rest pins the grammar, its errors, NOT under nulls and NaN, binding by field id,
and the strict partition projection that ``count()`` uses.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fieldshift as fs
from fieldshift.table.expressions.bind import bind, rewrite_not
from fieldshift.table.expressions.filters import parse_filter
from fieldshift.table.expressions.tree import And, Not, Or, Predicate
from tests.table.filter_model import keeps, spec_trees, to_expression, to_text, to_tuples

D = decimal.Decimal
SCHEMA = pa.schema([("id", pa.int64()), ("a", pa.int64()), ("i", pa.int32()), ("d", pa.float64()),
                    ("f", pa.float32()), ("s", pa.string()), ("day", pa.date32()), ("ok", pa.bool_()),
                    ("dec", pa.decimal128(7, 2)), ("st", pa.struct([("x", pa.int32())]))])
VALUES: dict[str, list[Any]] = {
    "a": [None, -3, 0, 1, 2, 7, 50, 2**40],
    "i": [None, -128, 0, 5, 127, 2**31 - 1],
    "d": [None, math.nan, -0.0, 0.0, 0.5, 2.5, -1.0, 1e300, math.inf],
    "f": [None, math.nan, 0.5, 2.5, -1.0, 3.0],
    "s": [None, "", "a", "ab", "abc", "b", "ba", "é", "x_y"],
    "day": [None, dt.date(2020, 1, 1), dt.date(2020, 1, 2), dt.date(2021, 6, 30)],
    "ok": [None, True, False],
    "dec": [None, D("0.00"), D("1.25"), D("-3.00"), D("99.99")],
    "x": [None, 0, 1, 4, -7],
}
LITERALS: dict[str, list[Any]] = {  # what text says exactly (finite floats; ints a double holds)
    "a": [-3, 0, 1, 2, 3, 7, 50, 1.5, -0.5, D("2.0"), 2**40],
    "i": [-128, 0, 5, 127, 1000, 2.5],
    "d": [-0.0, 0.0, 0.5, 2.5, -1.0, 1, 3, 1e300],
    "f": [0.5, 2.5, -1.0, 3, 1.5],
    "s": ["", "a", "ab", "b", "é", "x_y", "zz"],
    "day": [dt.date(2020, 1, 1), dt.date(2020, 1, 2), dt.date(2021, 1, 1)],
    "ok": [True, False],
    "dec": [D("0.00"), D("1.25"), D("-3"), 2, 0.5],
    "x": [0, 1, 4, -7, 9],
}
PATHS = {name: (name,) for name in LITERALS if name != "x"} | {"x": ("st", "x")}


def _rows(seed: int, n: int, start: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for k in range(n):
        row = {c: rng.choice(v) for c, v in VALUES.items() if c != "x"}
        row["id"] = start + k
        row["st"] = None if rng.random() < 0.15 else {"x": rng.choice(VALUES["x"])}
        out.append(row)
    return out


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[fs.Table, list[dict]]:
    t = fs.Table.create(tmp_path_factory.mktemp("expr") / "t", SCHEMA, partition_by=["truncate(1, s)"])
    rows: list[dict] = []
    for k in range(3):
        chunk = _rows(k, 25, k * 100)
        t.append(pa.Table.from_pylist(chunk, schema=SCHEMA))
        rows += chunk
    return t, rows


def _value(row: dict, path: tuple[str, ...]) -> Any:
    if path == ("st", "x"):
        return None if row["st"] is None else row["st"]["x"]
    return row[path[0]]


@st.composite
def _leaf(draw: Any) -> tuple:
    name = draw(st.sampled_from(sorted(LITERALS)))
    path = PATHS[name]
    ops = ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "is_null", "not_null"]
    ops += ["is_nan", "not_nan"] if name in ("d", "f", "a") else []
    ops += ["starts_with", "not_starts_with"] if name == "s" else []
    if name == "ok":
        ops = ["==", "!=", "in", "not in", "is_null", "not_null"]
    op = draw(st.sampled_from(ops))
    if op in ("is_null", "not_null", "is_nan", "not_nan"):
        return ("leaf", path, op, None)
    if op in ("starts_with", "not_starts_with"):
        return ("leaf", path, op, draw(st.sampled_from(["", "a", "ab", "x_", "é", "q"])))
    lit = st.sampled_from(LITERALS[name])
    if op in ("in", "not in"):
        return ("leaf", path, op, draw(st.lists(lit, min_size=1, max_size=3)))
    return ("leaf", path, op, draw(lit))


def _ids(t: fs.Table, flt: Any) -> list[int]:
    pruned = t.scan(filter=flt)
    full = t.scan(filter=flt)
    full.prune = False
    got = sorted(pruned.to_arrow().column("id").to_pylist())
    assert got == sorted(full.to_arrow().column("id").to_pylist()), flt
    assert pruned.count() == len(got), flt
    return got


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=spec_trees(_leaf(), max_leaves=5))
def test_tuples_expressions_and_text_give_one_answer(table: tuple[fs.Table, list[dict]], spec: tuple) -> None:
    t, rows = table
    want = sorted(r["id"] for r in rows if keeps(spec, lambda path, r=r: _value(r, path)))
    expr = to_expression(spec)
    assert _ids(t, expr) == want
    text = to_text(spec)
    assert _ids(t, text) == want, text
    assert _ids(t, str(expr)) == want, str(expr)  # fieldshift's rendering reads back to the same rows
    tuples = to_tuples(spec)
    if tuples is not None:
        assert _ids(t, tuples) == want


# -- the grammar -----------------------------------------------------------------------------------
def test_precedence_is_sql_s() -> None:
    a1, a2, sx = (parse_filter(x) for x in ("a = 1", "a = 2", "s = 'x'"))
    assert parse_filter("a = 1 or a = 2 and s = 'x'") == Or(a1, And(a2, sx))
    assert parse_filter("(a = 1 or a = 2) and s = 'x'") == And(Or(a1, a2), sx)
    assert parse_filter("not a = 1 and s = 'x'") == And(Not(a1), sx)
    assert parse_filter("NOT (a = 1 OR a = 2)") == Not(Or(a1, a2))
    assert parse_filter("A = 1 Or s Is Not Null") == Or(parse_filter("A = 1"), parse_filter("s is not null"))
    assert parse_filter("a <> 1") == parse_filter("a != 1")
    assert parse_filter("s like 'ab%'") == parse_filter("s starts with 'ab'")
    assert parse_filter("s not like 'ab%'") == fs.col("s").not_starts_with(
        parse_filter("s starts with 'ab'").value)
    assert parse_filter("`a b`.c in (1, 2)").path == ("a b", "c")
    assert parse_filter("true") == fs.AlwaysTrue() and parse_filter("false") == fs.AlwaysFalse()


@pytest.mark.parametrize("text", [
    "v > 2 and (name is null or name = 'x')", "not (a < date '2020-01-01') or b in (1, -2.5, 'q')",
    "x.`y z` is not nan and s not starts with 'it''s'", "a >= timestamp '2024-01-01 10:00:00' or true",
])
def test_rendering_parses_back_to_the_same_tree(text: str) -> None:
    tree = parse_filter(text)
    assert parse_filter(str(tree)) == tree


@pytest.mark.parametrize(("text", "under", "expected"), [
    ("id >> 3", "> 3", "expected a value"),
    ("a = NULL", "NULL", "IS NULL"),
    ("a = 1 and", "", "a column name"),
    ("a = 1 b = 2", "b = 2", "AND, OR or the end"),
    ("(a = 1", "", r"'\)'"),
    ("a like '%x'", "'%x'", "prefix pattern"),
    ("s = \"x\"", "\"x\"", "single quotes"),
    ("and = 1", "and", "backticks"),
    ("a between 1 and 2", "between", "an operator"),
    ("a is maybe", "maybe", "NULL, NOT NULL, NAN"),
])
def test_syntax_errors_point_at_the_token(text: str, under: str, expected: str) -> None:
    with pytest.raises(fs.FilterSyntaxError, match=expected) as e:
        parse_filter(text)
    assert isinstance(e.value, fs.InvalidFilterError) and isinstance(e.value, fs.DDLSyntaxError)
    lines = str(e.value).splitlines()
    caret = lines[-1].index("^") - 2
    assert caret == (text.index(under) if under else len(text)), str(e.value)


def test_columns_and_literals_of_text_are_checked_at_bind_with_a_caret(table: tuple) -> None:
    t, _ = table
    for text, under, expected in [("nope > 1", "nope", "no field at path 'nope'"),
                                  ("a > 'abc'", "'abc'", "a long value for column 'a'"),
                                  ("day = '2020-13-45'", "'2020-13-45'", "date value"),
                                  ("s starts with 5", "5", "quoted prefix"),
                                  ("d = 'nan'", "'nan'", "IS NAN")]:
        with pytest.raises(fs.FilterSyntaxError, match=expected) as e:
            t.scan(filter=f"id > 0 and ({text})")
        line = str(e.value).splitlines()[-1]
        assert line.index("^") - 2 == f"id > 0 and ({text})".index(under), str(e.value)


def test_text_literals_are_typed_like_their_column(table: tuple) -> None:
    t, _ = table
    assert _ids(t, "day > '2020-01-01'") == _ids(t, fs.col("day") > dt.date(2020, 1, 1))
    assert _ids(t, "a > 1.5") == _ids(t, fs.col("a") >= 2)  # exact against integers, as --where always did
    assert _ids(t, "s = 5") == []  # a number against a string column is its text


# -- expression objects ---------------------------------------------------------------------------
def test_python_boolean_operators_are_refused() -> None:
    with pytest.raises(TypeError, match=r"& \(and\), \| \(or\)"):
        _ = (fs.col("a") > 1) and (fs.col("b") < 2)
    with pytest.raises(TypeError, match="is a column"):
        bool(fs.col("a"))
    with pytest.raises(fs.InvalidFilterError, match="a column alone"):
        parse_filter([fs.col("a")])
    with pytest.raises(fs.InvalidFilterError, match="takes a str prefix"):
        fs.col("s").starts_with(5)
    with pytest.raises(fs.InvalidFilterError, match="is_nan"):
        _ = fs.col("d") == float("nan")


def test_lists_mix_tuples_expressions_and_text(table: tuple) -> None:
    t, _ = table
    mixed = _ids(t, [("a", ">", 0), fs.col("s").is_null() | (fs.col("i") == 5), "not ok = true"])
    assert mixed == _ids(t, "a > 0 and (s is null or i = 5) and ok = false")


# -- three-valued logic ---------------------------------------------------------------------------
def test_not_keeps_unknown_unknown_and_holds_on_nan(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "n", pa.schema([("id", pa.int64()), ("a", pa.int64()), ("d", pa.float64()),
                                                   ("s", pa.string())]))
    t.append({"id": [1, 2, 3], "a": [1, None, 3], "d": [1.0, math.nan, None], "s": ["ab", None, "b"]})
    assert _ids(t, "a != 1") == [2, 3]  # != is true on a null (as tuples always were)
    assert _ids(t, "not a = 1") == [3]  # NOT of unknown is unknown
    assert _ids(t, "not a in (1, 7)") == [3] and _ids(t, "a not in (1, 7)") == [2, 3]
    assert _ids(t, "not (a = 1 or a is null)") == [3]
    assert _ids(t, "not d < 5") == [2]  # NaN is unordered: d < 5 is false on it, its NOT true
    assert _ids(t, "not d >= 5") == [1, 2]
    assert _ids(t, "d is nan") == [2] and _ids(t, "d is not nan") == [1, 3]
    assert _ids(t, "not (s starts with 'a')") == [3] and _ids(t, "s not starts with 'a'") == [2, 3]
    assert _ids(t, "a is nan") == [] and _ids(t, "a is not nan") == [1, 2, 3]
    assert _ids(t, "not a = 1.5") == [1, 3]  # a literal no long equals: unknown on the null still
    assert _ids(t, ~(fs.col("a") > 2**70)) == [1, 3]


def test_nan_and_prefixes_on_the_wrong_columns_are_refused(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "w", pa.schema([("a", pa.int64()), ("b", pa.binary()),
                                                   ("st", pa.struct([("x", pa.int32())]))]))
    t.append(pa.table({"a": [1, 2], "b": [b"\x00x", b"yz"], "st": [{"x": 1}, None]}))
    with pytest.raises(fs.InvalidFilterError, match="holds no NaN"):
        t.scan(filter=fs.col("st").is_nan())
    with pytest.raises(fs.InvalidFilterError, match="string or binary column"):
        t.scan(filter=fs.col("a").starts_with("1"))
    with pytest.raises(fs.InvalidFilterError, match="pass bytes"):
        t.scan(filter=fs.col("b").starts_with("y"))
    assert t.scan(filter=fs.col("b").starts_with(b"\x00")).to_arrow().column("a").to_pylist() == [1]
    assert t.scan(filter="b starts with 'y'").to_arrow().column("a").to_pylist() == [2]


# -- binding ------------------------------------------------------------------------------------
def test_a_bound_filter_reads_right_at_another_schema_by_field_id(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "r", pa.schema([("id", pa.int64()), ("v", pa.int32())]))
    t.append(pa.table({"id": [1, 2, 3], "v": pa.array([5, None, 9], pa.int32())}))
    old = t.schema
    bound = bind(parse_filter("v > 6 or v is null"), old)
    t.update_schema().rename_column("v", "w").update_column("w", pa.int64()).commit()
    rebound = bind(bound, t.schema)
    assert str(rebound) == "w > 6 or w is null"
    assert t.scan(filter=rebound).to_arrow().column("id").to_pylist() == [2, 3]
    t.update_schema().drop_column("w").commit()
    with pytest.raises(fs.InvalidFilterError, match="field id 2"):
        bind(bound, t.schema)


def test_a_negated_bound_filter_binds_again_with_its_meaning(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "nb", pa.schema([("id", pa.int64()), ("a", pa.int32()), ("s", pa.string())]))
    t.append(pa.table({"id": [1, 2, 3, 4], "a": pa.array([1, 2, None, 5], pa.int32()), "s": ["x", None, "y", "yy"]}))
    text = "a < 1.5 or s starts with 'x'"
    bound = bind(parse_filter(text), t.schema)
    assert _ids(t, ~bound) == _ids(t, f"not ({text})") == [4]  # unknown on 2 and 3 stays unknown
    t.update_schema().update_column("a", pa.float64()).commit()
    t.append({"id": [5, 6], "a": [1.2, 1.6], "s": ["z", "z"]})
    assert _ids(t, ~bound) == _ids(t, f"not ({text})") == [4, 6]  # a < 1.5 again, not the int's a <= 1


def test_rewrite_not_leaves_no_not(table: tuple) -> None:
    t, _ = table
    tree = parse_filter("not (a = 1 or not (d < 2 and s like 'a%')) and not ok = true")
    flat = rewrite_not(tree)
    assert "not (" not in str(flat) and not str(flat).startswith("not ")
    assert _ids(t, flat) == _ids(t, tree)


# -- strict projection: whole files counted from the catalog --------------------------------------
def test_count_takes_files_every_row_of_which_matches_from_the_catalog(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "p", pa.schema([("id", pa.int64()), ("region", pa.string()),
                                                   ("n", pa.int32())]), partition_by=["region", "truncate(10, n)"])
    rng = random.Random(4)
    rows = [{"id": k, "region": rng.choice(["eu", "us", "ap", None]), "n": rng.randint(-30, 30)}
            for k in range(200)]
    t.append(pa.Table.from_pylist(rows, schema=t.schema.to_arrow()))
    for flt, whole in [("region = 'eu'", True), ("region in ('eu', 'ap') and n >= 10", True),
                       ("region != 'us'", True), ("n < 0 or region is null", True), ("n > 5", True),
                       ("n = 5", False), ("not (region = 'eu')", True)]:
        want = sum(keeps(_spec(flt), lambda p, r=r: r[p[0]]) for r in rows)
        scan = t.scan(filter=flt)
        pruner = scan.partition_pruner()
        sure = [f for f in scan.files() if pruner.all_match(f)]
        assert bool(sure) == whole, flt
        for f in sure:  # every row of these files matches: never read
            assert sum(keeps(_spec(flt), lambda p, r=r: r[p[0]]) for r in _file_rows(t, f)) == f.record_count
        assert scan.count() == want, flt


def _spec(text: str) -> tuple:
    """The few filters of the count test as filter_model specs (written out, not parsed by fieldshift)."""
    return {
        "region = 'eu'": ("leaf", ("region",), "==", "eu"),
        "region in ('eu', 'ap') and n >= 10": ("and", [("leaf", ("region",), "in", ["eu", "ap"]),
                                                      ("leaf", ("n",), ">=", 10)]),
        "region != 'us'": ("leaf", ("region",), "!=", "us"),
        "n < 0 or region is null": ("or", [("leaf", ("n",), "<", 0), ("leaf", ("region",), "is_null", None)]),
        "n > 5": ("leaf", ("n",), ">", 5),
        "n = 5": ("leaf", ("n",), "==", 5),
        "not (region = 'eu')": ("not", ("leaf", ("region",), "==", "eu")),
    }[text]


def _file_rows(t: fs.Table, f: Any) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(t.location / f.path).to_pylist()


def test_predicates_compare_by_value_and_keep_their_text() -> None:
    assert Predicate("a", "=", 1) == Predicate(("a",), "==", 1) == (fs.col(["a"]) == 1)
    assert Predicate("s.x", "is_null") == fs.col(("s", "x")).is_null() != fs.col("s").is_null()
    assert str(Predicate(["s", "x.y"], "in", [1, 2])) == "s.`x.y` in (1, 2)"
    assert str(fs.col("a").is_in([1]) & ~fs.col("b").is_null()) == "a in (1) and not b is null"
