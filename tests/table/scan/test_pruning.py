"""Issue 12 items 1-3: statistics prune only through the plan's casts, nulls behave as Iceberg says.

Every test compares the pruned scan with the same scan unpruned, so a file wrongly skipped shows up
as a missing row, and checks the rows themselves.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.scan.table_scan import Scan

ONEHOUSE = fs.CastPolicy.onehouse()


def _both(t: fs.Table, **kw: Any) -> tuple[list[Any], Scan]:
    """The rows of the pruned scan (asserted equal to the unpruned one's) and the scan."""
    pruned = t.scan(**kw)
    full = t.scan(**kw)
    full.prune = False
    got = sorted(pruned.to_arrow().to_pylist(), key=repr)
    assert got == sorted(full.to_arrow().to_pylist(), key=repr)
    assert pruned.count() == len(got)
    return got, pruned


def _col(rows: list[dict], name: str) -> list[Any]:
    return sorted((r[name] for r in rows), key=repr)


# -- item 1: number -> string widening never prunes ------------------------------------------------
@pytest.fixture
def int_to_string(tmp_path: Path) -> fs.Table:
    t = fs.Table.create(tmp_path / "k", pa.schema([("k", pa.int32())]))
    for batch in ([6], [100], [7, 30]):
        t.append(pa.table({"k": pa.array(batch, pa.int32())}))
    t.update_schema(policy=ONEHOUSE).update_column("k", pa.string()).commit()
    t.append(pa.table({"k": ["55", "x"]}))
    return t


@pytest.mark.parametrize(("flt", "expected"), [
    (("k", ">", "50"), ["55", "6", "7", "x"]),
    (("k", "<", "2"), ["100"]),
    (("k", "==", "6"), ["6"]),
    (("k", "in", ["100", "30"]), ["100", "30"]),
    (("k", ">=", "30"), ["30", "55", "6", "7", "x"]),
])
def test_int_widened_to_string_compares_as_text(int_to_string: fs.Table, flt: tuple, expected: list) -> None:
    rows, _ = _both(int_to_string, filter=flt, policy=ONEHOUSE)
    assert _col(rows, "k") == expected


def test_float_widened_to_string_compares_as_text(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "f", pa.schema([("f", pa.float64())]))
    t.append({"f": [9.5]})
    t.append({"f": [10.25, 100.0]})
    t.update_schema(policy=ONEHOUSE).update_column("f", pa.string()).commit()
    text = [r["f"] for r in t.scan(policy=ONEHOUSE).to_arrow().to_pylist()]
    for literal in ("50", "9", "2", "10.5"):
        rows, _ = _both(t, filter=("f", ">", literal), policy=ONEHOUSE)
        assert _col(rows, "f") == sorted(v for v in text if v > literal)
        rows, _ = _both(t, filter=("f", "<", literal), policy=ONEHOUSE)
        assert _col(rows, "f") == sorted(v for v in text if v < literal)


# -- item 2: a rounding long -> double widening never prunes -------------------------------------
def test_long_widened_to_double_by_append_keeps_rounded_rows(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "c", pa.schema([("c", pa.int64())]))
    t.append(pa.table({"c": pa.array([2**53 + 1], pa.int64())}))
    t.append(pa.table({"c": pa.array([1.5], pa.float64())}), policy=ONEHOUSE)  # widens c to double
    assert pa.types.is_float64(t.schema.find("c").type)
    rows, _ = _both(t, filter=("c", "==", 2.0**53), policy=ONEHOUSE)
    assert rows == [{"c": 9007199254740992.0}]
    rows, _ = _both(t, filter=("c", ">=", 2.0**53), policy=ONEHOUSE)
    assert rows == [{"c": 9007199254740992.0}]
    rows, _ = _both(t, filter=("c", "<", 2.0**53), policy=ONEHOUSE)
    assert rows == [{"c": 1.5}]


def test_exact_int_to_double_bounds_still_prune(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "c", pa.schema([("c", pa.int64())]))
    t.append(pa.table({"c": pa.array([1, 2], pa.int64())}))
    t.append(pa.table({"c": pa.array([2**60], pa.int64())}))
    t.update_schema(policy=ONEHOUSE).update_column("c", pa.float64()).commit()
    rows, scan = _both(t, filter=("c", "<", 10), policy=ONEHOUSE)
    assert rows == [{"c": 1.0}, {"c": 2.0}]
    assert len(scan.files()) == 2  # the 2**60 file has no exact double bound: never pruned


# -- conversions that keep order prune; the literal is compared in the read type -----------------
@pytest.mark.parametrize(("file_type", "read_type", "values", "flt", "expected", "files"), [
    (pa.int32(), pa.int64(), [[1, 2], [10, 20]], ("v", ">", 5), [10, 20], 1),
    (pa.int32(), pa.float64(), [[1, 2], [10, 20]], ("v", "<", 1.5), [1.0], 1),
    (pa.int32(), pa.decimal128(12, 2), [[1, 2], [10, 20]], ("v", "==", decimal.Decimal("2.00")),
     [decimal.Decimal("2.00")], 1),
    (pa.float32(), pa.float64(), [[0.5, 1.5], [10.5]], ("v", ">", 2), [10.5], 1),
    (pa.decimal128(5, 1), pa.decimal128(9, 3), [[decimal.Decimal("1.5")], [decimal.Decimal("9.5")]],
     ("v", ">", 5), [decimal.Decimal("9.500")], 1),
    (pa.date32(), pa.timestamp("us"), [[dt.date(2020, 1, 1)], [dt.date(2021, 1, 1)]],
     ("v", ">", dt.datetime(2020, 1, 1, 12)), [dt.datetime(2021, 1, 1)], 1),
    (pa.timestamp("ms"), pa.timestamp("us"), [[dt.datetime(2020, 1, 1)], [dt.datetime(2021, 1, 1)]],
     ("v", "<", dt.date(2020, 6, 1)), [dt.datetime(2020, 1, 1)], 1),
])
def test_order_preserving_widenings_prune(tmp_path: Path, file_type: pa.DataType, read_type: pa.DataType,
                                          values: list, flt: tuple, expected: list, files: int) -> None:
    t = fs.Table.create(tmp_path / "w", pa.schema([("v", file_type)]))
    for batch in values:
        t.append(pa.table({"v": pa.array(batch, file_type)}))
    t.update_schema(policy=ONEHOUSE).update_column("v", read_type).commit()
    rows, scan = _both(t, filter=flt, policy=ONEHOUSE)
    assert _col(rows, "v") == expected
    assert len(scan.files()) == files


def test_nanosecond_maximum_is_not_truncated(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "ns", pa.schema([("t", pa.timestamp("ns"))]))
    t.append(pa.table({"t": pa.array([1_000_000_001], pa.timestamp("ns"))}))  # 1 s + 1 ns
    rows, scan = _both(t, filter=("t", ">", dt.datetime(1970, 1, 1, 0, 0, 1)))
    assert len(rows) == 1 and len(scan.files()) == 1


# -- item 3: nulls in `in` / `not in` / `!=` do not depend on file layout ---------------------------
@pytest.fixture
def with_null_file(tmp_path: Path) -> fs.Table:
    t = fs.Table.create(tmp_path / "n", pa.schema([("id", pa.int32()), ("v", pa.int64())]))
    t.append(pa.table({"id": pa.array([1, 2], pa.int32()), "v": pa.array([1, 5])}))
    t.append(pa.table({"id": pa.array([3, 4], pa.int32()), "v": pa.array([None, None], pa.int64())}))
    t.append(pa.table({"id": pa.array([5], pa.int32()), "v": pa.array([None, 1][:1], pa.int64())}))
    return t


@pytest.mark.parametrize(("flt", "ids"), [
    (("v", "not in", [1]), [2, 3, 4, 5]),  # Iceberg: a null is in no list, so `not in` holds
    (("v", "!=", 1), [2, 3, 4, 5]),
    (("v", "in", [5, 7]), [2]),
    (("v", "==", 5), [2]),
    (("v", "not in", []), [1, 2, 3, 4, 5]),
    (("v", "in", []), []),
    (("v", "is_null"), [3, 4, 5]),
    (("v", "not_null"), [1, 2]),
])
def test_null_semantics_are_the_same_pruned_or_not(with_null_file: fs.Table, flt: tuple, ids: list) -> None:
    rows, _ = _both(with_null_file, filter=flt)
    assert _col(rows, "id") == ids


def test_a_null_literal_is_refused_with_a_pointer_to_is_null(with_null_file: fs.Table) -> None:
    for flt in (("v", "in", [5, None]), ("v", "not in", [None]), ("v", "==", None), ("v", "!=", None)):
        with pytest.raises(fs.SchemaEvolutionError, match=r"is_null|not_null"):
            with_null_file.scan(filter=flt)


def test_struct_child_null_parent_counts_as_null(tmp_path: Path) -> None:
    st = pa.struct([("x", pa.int64())])
    t = fs.Table.create(tmp_path / "s", pa.schema([("id", pa.int32()), ("s", st)]))
    t.append(pa.table({"id": pa.array([1, 2], pa.int32()), "s": pa.array([{"x": 1}, None], st)}))
    t.append(pa.table({"id": pa.array([3], pa.int32()), "s": pa.array([None], st)}))
    assert _col(_both(t, filter=("s.x", "!=", 1))[0], "id") == [2, 3]
    assert _col(_both(t, filter=(["s", "x"], "==", 1))[0], "id") == [1]
    assert _col(_both(t, filter=("s.x", "is_null"))[0], "id") == [2, 3]
    assert _col(_both(t, filter=("s", "is_null"))[0], "id") == [2, 3]


def test_zone_change_keeps_instants_and_prunes(tmp_path: Path) -> None:
    explicit = fs.CastPolicy.explicit()
    t = fs.Table.create(tmp_path / "z", pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us"))]), policy=explicit)
    t.append(pa.table({"id": [1], "ts": pa.array([dt.datetime(2020, 1, 1)], pa.timestamp("us"))}))
    t.append(pa.table({"id": [2], "ts": pa.array([dt.datetime(2021, 1, 1)], pa.timestamp("us"))}))
    t.update_schema(policy=explicit).update_column("ts", pa.timestamp("us", tz="Europe/Berlin")).commit()
    rows, scan = _both(t, filter=("ts", ">", dt.datetime(2020, 6, 1, tzinfo=dt.UTC)), policy=explicit)
    assert _col(rows, "id") == [2] and len(scan.files()) == 1
    plus_one = dt.timezone(dt.timedelta(hours=1))
    rows, _ = _both(t, filter=("ts", "<=", dt.datetime(2020, 1, 1, 1, tzinfo=plus_one)), policy=explicit)
    assert _col(rows, "id") == [1]  # wall time was read as UTC: 00:00Z is 01:00+01:00


def test_checked_cast_that_nulls_values_never_prunes_is_null(tmp_path: Path) -> None:
    lenient = fs.CastPolicy.explicit("null")
    t = fs.Table.create(tmp_path / "c", pa.schema([("id", pa.int64()), ("s", pa.string())]), policy=lenient)
    t.append(pa.table({"id": [1, 2], "s": ["1", "x"]}))  # no nulls in the file's stats
    t.update_schema(policy=lenient).update_column("s", pa.int64()).commit()
    rows, _ = _both(t, filter=("s", "is_null"), policy=lenient)
    assert rows == [{"id": 2, "s": None}]
