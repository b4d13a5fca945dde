"""Issue 12 item 8 (and the CLI's --where): filters are validated, and literals compare exactly."""

from __future__ import annotations

import datetime as dt
import decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from typer.testing import CliRunner

import fieldshift as fs
from fieldshift.cli import app
from fieldshift.table.expressions.filters import InvalidFilterError, parse_filter

D = decimal.Decimal


def _ids(t: fs.Table, flt: Any, **kw: Any) -> list[int]:
    pruned = t.scan(filter=flt, **kw)
    full = t.scan(filter=flt, **kw)
    full.prune = False
    got = sorted(pruned.to_arrow().column("id").to_pylist())
    assert got == sorted(full.to_arrow().column("id").to_pylist())
    return got


@pytest.fixture
def table(tmp_path: Path) -> fs.Table:
    schema = pa.schema([("id", pa.int64()), ("a", pa.int64()), ("i8", pa.int8()), ("d", pa.float64()),
                        ("f", pa.float32()), ("dec", pa.decimal128(5, 2)), ("s", pa.string()),
                        ("b", pa.binary()), ("ok", pa.bool_()), ("day", pa.date32()),
                        ("ts", pa.timestamp("s")), ("tz", pa.timestamp("us", tz="UTC")),
                        ("st", pa.struct([("x", pa.int32())]))])
    t = fs.Table.create(tmp_path / "t", schema)
    rows = [
        (1, 1, -128, 0.5, 0.1, D("1.25"), "a", b"\x00", True, dt.date(2020, 1, 1),
         dt.datetime(2020, 1, 1, 0, 0, 1), dt.datetime(2020, 1, 1, tzinfo=dt.UTC), {"x": 1}),
        (2, 2, 127, 2.0**53, 2.5, D("-3.00"), "b", b"\xff", False, dt.date(2020, 1, 2),
         dt.datetime(2020, 1, 2), dt.datetime(2020, 1, 2, tzinfo=dt.UTC), {"x": 2}),
        (3, 2**53 + 1, 0, -1.0, None, None, None, None, None, None, None, None, None),
        (17, 7, None, None, 3.0, D("0.01"), "q", b"q", None, dt.date(2021, 1, 1), None, None, {"x": None}),
    ]
    for chunk in (rows[:2], rows[2:]):
        t.append(pa.Table.from_pylist([dict(zip(schema.names, r, strict=True)) for r in chunk], schema=schema))
    return t


# -- shape -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("flt", "match"), [
    (("id", "in", "17"), "takes a list"),
    (("id", ">"), "needs a value"),
    (("id", ">", None), "needs a value"),
    (("id", "~", 1), "unknown operator"),
    (("id", "is_null", 1), "takes no value"),
    (("id", "in", [1, None]), "is_null"),
    (("d", "==", float("nan")), "NaN"),
    ("id >> 1", "expected a value"),  # filter text parses, or points at the bad token
    (5, "not a int"),
    ([[("id", ">", 1)], [("id", "<", 0)]], "OR"),
    ([("id", ">", 1), 5], "write \\(column, op, value\\)"),
    (("", "==", 1), "name a column"),
])
def test_malformed_filters_are_refused(table: fs.Table, flt: Any, match: str) -> None:
    with pytest.raises(InvalidFilterError, match=match):
        table.scan(filter=flt)


def test_filter_shapes_that_work(table: fs.Table) -> None:
    assert _ids(table, ("id", "in", (17, 1))) == [1, 17]
    assert _ids(table, ("id", "in", {17})) == [17]
    assert _ids(table, [("id", ">", 1), ("id", "<", 17)]) == [2, 3]
    assert _ids(table, ["id", "=", 2]) == [2]
    assert _ids(table, [("s", "IS_NULL")]) == [3]
    assert _ids(table, (["st", "x"], ">=", 2)) == [2]
    assert _ids(table, ("st.x", "not_null")) == [1, 2]
    assert parse_filter(("a", "=", 1)).op == "=="


# -- literal kinds ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("flt", "match"), [
    (("a", ">", "5"), r"'a' is long, and the literal '5' \(str\)"),
    (("d", "==", "0.5"), "'d' is double"),
    (("s", "==", 1), "'s' is string"),
    (("ok", "==", 1), "'ok' is boolean"),
    (("a", "==", True), r"True \(bool\)"),
    (("b", "==", "a"), "pass bytes"),
    (("day", "<", "2020-01-01"), "datetime.date"),
    (("ts", "<", dt.datetime(2020, 1, 1, tzinfo=dt.UTC)), "without one"),
    (("st", "==", 1), "struct"),
])
def test_literal_of_the_wrong_kind_is_a_clear_error(table: fs.Table, flt: tuple, match: str) -> None:
    with pytest.raises(fs.SchemaEvolutionError, match=match) as e:
        table.scan(filter=flt)
    assert isinstance(e.value, InvalidFilterError)


@pytest.mark.parametrize(("flt", "ids"), [
    (("a", ">", 1.5), [2, 3, 17]),
    (("a", ">=", 1.5), [2, 3, 17]),
    (("a", "<", 1.5), [1]),
    (("a", "<=", decimal.Decimal("1.9")), [1]),
    (("a", "==", 1.5), []),
    (("a", "!=", 1.5), [1, 2, 3, 17]),
    (("a", "in", [1.5, 2.0, 7]), [2, 17]),
    (("a", "not in", [1.5, 2.0]), [1, 3, 17]),
    (("a", "==", 2.0**53), []),  # the long 2**53+1 is not the double 2**53
    (("a", ">", 2.0**53), [3]),
    (("a", "==", Fraction(14, 2)), [17]),
    (("i8", ">", 1e300), []),  # out of the column's range: no Arrow range error
    (("i8", "<", 1e300), [1, 2, 3]),
    (("i8", ">", -(2**70)), [1, 2, 3]),
    (("i8", "==", 1000), []),
    (("i8", "!=", 1000), [1, 2, 3, 17]),
    (("i8", "<", float("inf")), [1, 2, 3]),
    (("d", "==", 2**53 + 1), []),  # the int is compared exactly with the double
    (("d", "==", 2**53), [2]),
    (("d", ">", 2**53 - 1), [2]),
    (("d", "<", 2**1100), [1, 2, 3]),
    (("d", ">", decimal.Decimal("0.49999999999999999999")), [1, 2]),
    (("f", "==", 0.1), []),  # the float32 0.1 is not the double 0.1
    (("f", "==", float(pa.scalar(0.1, pa.float32()).as_py())), [1]),
    (("f", ">", 2.5), [17]),
    (("dec", "==", 1.25), [1]),
    (("dec", ">", 0.001), [1, 17]),
    (("dec", "<", decimal.Decimal("1E+10")), [1, 2, 17]),
    (("dec", "==", decimal.Decimal("0.005")), []),
    (("s", ">", "a"), [2, 17]),
    (("b", ">=", b"\xff"), [2]),
    (("ok", "==", False), [2]),
    (("ok", "!=", True), [2, 3, 17]),
    (("day", ">", dt.datetime(2020, 1, 1, 12)), [2, 17]),
    (("day", "==", dt.datetime(2020, 1, 1, 12)), []),
    (("ts", ">", dt.datetime(2020, 1, 1, 0, 0, 0, 500_000)), [1, 2]),
    (("ts", "<", dt.date(2020, 1, 2)), [1]),
    (("tz", ">=", dt.datetime(2020, 1, 2)), [2]),  # a naive literal against a zoned column is UTC
    (("tz", "<", dt.datetime(2020, 1, 2, 1, tzinfo=dt.timezone(dt.timedelta(hours=1)))), [1]),
])
def test_literals_compare_exactly(table: fs.Table, flt: tuple, ids: list) -> None:
    assert _ids(table, flt) == ids


# -- the CLI --where -----------------------------------------------------------------------------
def test_cli_where_compares_numbers_exactly(table: fs.Table) -> None:
    runner = CliRunner()
    loc = str(table.location)

    def ids(*where: str) -> list[int]:
        args = ["read", loc, "--format", "csv", "--columns", "id"]
        for w in where:
            args += ["--where", w]
        out = runner.invoke(app, args)
        assert out.exit_code == 0, out.output
        return sorted(int(x) for x in out.stdout.split()[1:])

    assert ids("a > 1.5") == [2, 3, 17]
    assert ids("a = 1.5") == []
    assert ids("a NOT IN (1, 2.5)") == [2, 3, 17]
    assert ids("dec > 0.001") == [1, 17]
    assert ids("i8 < 1e3") == [1, 2, 3]
    assert ids("f = 0.1") == [1]  # the CLI types a literal like its float column
    bad = runner.invoke(app, ["read", loc, "--where", "a = NULL"])
    assert bad.exit_code == 2 and "IS NULL" in bad.output
    # issue 28: --where takes the whole grammar, several flags are ANDed
    assert ids("a > 1.5 or ok is null", "not (id = 3)") == [2, 17]
    assert ids("s like 'a%' or (st.x >= 2 and not day < '2020-01-02')") == [1, 2]
    assert ids("d is nan or f is not nan and f > 2.5") == [17]
    second = runner.invoke(app, ["read", loc, "--where", "a > 1", "--where", "id = 1 or day < 'soon'"])
    assert second.exit_code == 2 and "date value for column 'day'" in second.output, second.output
    assert second.output.splitlines()[-1].index("^") - 2 == "id = 1 or day < 'soon'".index("'soon'")
    unknown = runner.invoke(app, ["read", loc, "--where", "id = 1 or nope is null"])
    assert unknown.exit_code == 2 and "no field at path 'nope'" in unknown.output


def test_in_list_zero_matches_both_signed_zeros(tmp_path: Path) -> None:
    """Arrow's is_in hashes a float's bits; -0.0 == 0.0 must hold in lists as it does for ==."""
    t = fs.Table.create(tmp_path / "z", pa.schema([("id", pa.int64()), ("d", pa.float64())]))
    t.append({"id": [1, 2, 3], "d": [0.0, -0.0, 1.0]})
    assert _ids(t, ("d", "in", [-0.0])) == [1, 2]
    assert _ids(t, ("d", "in", [0])) == [1, 2]
    assert _ids(t, ("d", "not in", [0.0, 5])) == [3]
    assert _ids(t, ("d", "==", -0.0)) == [1, 2]


def test_paths_through_lists_and_maps_are_refused_and_tuple_paths_work(tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int64()), ("l", pa.list_(pa.int64())), ("m", pa.map_(pa.string(), pa.int64())),
                        ("st", pa.struct([("x", pa.int32())]))])
    t = fs.Table.create(tmp_path / "n", schema)
    t.append(pa.Table.from_pylist([{"id": 1, "l": [1], "m": [("a", 1)], "st": {"x": 4}},
                                   {"id": 2, "l": None, "m": None, "st": None}], schema=schema))
    for flt in (("l.element", "==", 1), ("m.value", ">", 0)):
        with pytest.raises(InvalidFilterError, match="through structs only"):
            t.scan(filter=flt)
    with pytest.raises(InvalidFilterError, match="cannot compare"):
        t.scan(filter=("l", "==", 1))
    assert _ids(t, ("l", "is_null")) == [2]
    assert _ids(t, (("st", "x"), "==", 4)) == [1]
    assert _ids(t, [(("st", "x"), "not_null"), ("id", "<", 5)]) == [1]
