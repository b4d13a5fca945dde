"""Small batches: same-work columns evaluated once on their concatenation must read exactly as alone."""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest

from fieldshift import CastPolicy, Field, ListType, MapType, Schema, StructType
from fieldshift.planner import build_plan
from fieldshift.planner import small_batches as sb
from tests.oracle import oracle_evolve

I32, I64, STR, F32, F64 = pa.int32(), pa.int64(), pa.string(), pa.float32(), pa.float64()
HUDI = CastPolicy.hudi()  # allows int -> string


def _z(fid: int) -> Field:
    return Field(fid, "z", I32, initial_default=5)


def _schemas() -> tuple[Schema, Schema]:
    point = StructType((Field(101, "x", I32), Field(102, "y", STR)))
    point2 = StructType((Field(103, "x", I32), Field(104, "y", STR)))
    old = Schema([
        Field(1, "a", I32), Field(2, "b", I32), Field(3, "c", I32), Field(4, "f", F32), Field(5, "g", F32),
        Field(6, "p", point), Field(7, "q", point2), Field(8, "n1", I32), Field(9, "n2", I32),
        Field(10, "l1", ListType(Field(105, "element", I32))), Field(11, "l2", ListType(Field(106, "element", I32))),
        Field(12, "m", MapType(Field(107, "key", STR, nullable=False), Field(108, "value", I32))),
        Field(13, "keep", STR),
    ])
    new = Schema([
        Field(13, "keep", STR), Field(1, "a", I64), Field(2, "b_renamed", I64), Field(3, "c", I64),
        Field(4, "f", F64), Field(5, "g", F64),
        Field(6, "p", StructType((Field(101, "x", I64), Field(102, "y2", STR), _z(120)))),
        Field(7, "q", StructType((Field(103, "x", I64), Field(104, "y2", STR), _z(121)))),
        Field(8, "n1", STR), Field(9, "n2", STR),
        Field(10, "l1", ListType(Field(105, "element", I64))), Field(11, "l2", ListType(Field(106, "element", I64))),
        Field(12, "m", MapType(Field(107, "key", STR, nullable=False), Field(108, "value", I64))),
    ])
    return old, new


def _rows(n: int, seed: int) -> list[dict[str, Any]]:
    rnd = random.Random(seed)

    def maybe(v: Any) -> Any:
        return None if rnd.random() < 0.1 else v

    def i32() -> int:
        return rnd.randint(-(2**31), 2**31 - 1)

    return [{
        "a": maybe(i32()), "b": maybe(i32()), "c": maybe(i32()), "f": maybe(rnd.random()), "g": maybe(-rnd.random()),
        "p": maybe({"x": maybe(i32()), "y": maybe("p")}), "q": maybe({"x": maybe(i32()), "y": maybe("q")}),
        "n1": maybe(i32()), "n2": maybe(rnd.randint(-9, 9)),
        "l1": maybe([maybe(i32()) for _ in range(rnd.randint(0, 3))]), "l2": maybe([maybe(7)] * rnd.randint(0, 2)),
        "m": maybe({f"k{i}": maybe(i32()) for i in range(rnd.randint(0, 2))}), "keep": maybe("k"),
    } for _ in range(n)]


def _batch(schema: Schema, rows: list[dict[str, Any]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(rows, schema=schema.to_arrow())


@pytest.mark.parametrize("n", [1, 16, 333, sb.SMALL_BATCH_ROWS])
def test_grouped_columns_read_as_the_oracle_says(n: int) -> None:
    old, new = _schemas()
    rows = _rows(n, seed=n)
    batch = _batch(old, rows)
    plan = build_plan(old, new, HUDI)
    expected = oracle_evolve(batch.to_pylist(), old, new, HUDI)
    assert plan.apply(batch).to_pylist() == expected  # batches up to 256 rows: the tiny-batch program
    out = plan._compute(batch, batch.schema, "raise", 0)[0]  # the nodes, grouped
    out.validate(full=True)
    assert out.schema.equals(new.to_arrow())
    assert out.to_pylist() == expected
    # the groups really ran once: the int -> long columns are slices of one array
    groups = {tuple(out.schema.names[i] for i in members) for _, members in plan._shared_shapes()}
    assert ("a", "b_renamed", "c") in groups and ("p", "q") in groups and ("l1", "l2") in groups
    assert [out.column(name).offset for name in ("a", "b_renamed", "c")] == [0, n, 2 * n]


def test_sliced_input_and_slices_of_slices() -> None:
    old, new = _schemas()
    rows = _rows(900, seed=3)
    batch = _batch(old, rows)
    plan = build_plan(old, new, HUDI)
    for lo, length in ((0, 10), (5, 700), (899, 1), (450, 0)):
        out = plan.apply(batch.slice(lo, length))
        out.validate(full=True)
        assert out.to_pylist() == oracle_evolve(batch.slice(lo, length).to_pylist(), old, new, HUDI)


def test_failing_casts_are_not_grouped_and_report_their_own_rows() -> None:
    old = Schema([Field(1, "a", STR), Field(2, "b", STR), Field(3, "c", I32), Field(4, "d", I32)])
    new = Schema([Field(1, "a", I32), Field(2, "b", I32), Field(3, "c", I64), Field(4, "d", I64)])
    rows = [{"a": "1", "b": "x", "c": 1, "d": 2}, {"a": "y", "b": "2", "c": 3, "d": None},
            {"a": "3", "b": "4", "c": None, "d": 5}]
    plan = build_plan(old, new, CastPolicy.explicit(on_error="null"))
    grouped = [members for _, members in plan._shared_shapes()]
    assert grouped == [(2, 3)]  # only the widenings that cannot fail
    out, report = plan.apply_collect(_batch(old, rows))
    assert report.failures == {"a": 1, "b": 1}
    assert report.rows["a"].tolist() == [1] and report.rows["b"].tolist() == [0]
    assert out.to_pylist() == [{"a": 1, "b": None, "c": 1, "d": 2}, {"a": None, "b": 2, "c": 3, "d": None},
                               {"a": 3, "b": 4, "c": None, "d": 5}]


def test_columns_that_do_not_concatenate_are_evaluated_alone() -> None:
    old = Schema([Field(1, "a", I32), Field(2, "b", I32)])
    new = Schema([Field(1, "a", I64), Field(2, "b", I64)])
    plan = build_plan(old, new)
    a = pa.array([1, 2, 1], I32).dictionary_encode()
    b = pa.DictionaryArray.from_arrays(pa.array([0, 0, 1], pa.int8()), pa.array([9, 8], I32))  # another index type
    out = plan.apply(pa.RecordBatch.from_arrays([a, b], names=["a", "b"]))
    assert out.to_pylist() == [{"a": 1, "b": 9}, {"a": 2, "b": 9}, {"a": 1, "b": 8}]
    assert out.schema.equals(new.to_arrow())


def test_large_batches_do_not_concatenate() -> None:
    old, new = _schemas()
    rows = _rows(sb.SMALL_BATCH_ROWS + 1, seed=5)
    batch = _batch(old, rows)
    out = build_plan(old, new, HUDI).apply(batch)
    assert [out.column(name).offset for name in ("a", "b_renamed", "c")] == [0, 0, 0]
    assert out.to_pylist() == oracle_evolve(batch.to_pylist(), old, new, HUDI)
