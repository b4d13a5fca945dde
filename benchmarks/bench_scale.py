"""Scale series: how the cost grows with rows, columns and nesting depth; planning a 1,000-column schema.

fieldshift and the plain per-column pyarrow implementation run on the same data at each point.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
import workloads as w
from workloads import dropped, run

import fieldshift as fs
from fieldshift.planner import clear_plan_cache

pytestmark = [pytest.mark.bench, pytest.mark.slow]

ROW_SERIES = [1_000, 100_000, 1_000_000] + ([] if w.SMALL else [10_000_000])
COLUMN_SERIES = [10, 100, 1_000]
COLUMN_ROWS = 10_000
DEPTH_SERIES = [1, 2, 3, 4, 5]
DEPTH_ROWS = w.BATCH_ROWS
IMPLS = ["fieldshift", "plain"]


def _evolver(impl: str, file_schema: fs.Schema, read_schema: fs.Schema) -> Any:
    if impl == "fieldshift":
        return fs.plan(file_schema, read_schema, policy=w.W1_POLICY).apply
    return w.plain_evolver(file_schema, read_schema)


@lru_cache(maxsize=1)
def _rows_batch(rows: int) -> pa.RecordBatch:
    file_schema, _ = w.simple_schemas()
    return w.make_batches(file_schema.to_arrow(), rows, rows, seed=w.SEED + rows)[0]


@lru_cache(maxsize=1)
def _columns_batch(columns: int) -> pa.RecordBatch:
    file_schema, _ = w.wide_schemas(columns)
    return w.make_batches(file_schema.to_arrow(), COLUMN_ROWS, COLUMN_ROWS, seed=w.SEED + columns)[0]


@lru_cache(maxsize=1)
def _depth_batch(depth: int) -> pa.RecordBatch:
    file_schema, _ = w.nested_schemas(depth)
    return w.make_batches(file_schema.to_arrow(), DEPTH_ROWS, DEPTH_ROWS, seed=w.SEED + depth)[0]


def _iterations(rows: int) -> int:
    return max(1, min(200, 200_000 // max(rows, 1)))



def _copy_floor(batch: pa.RecordBatch) -> Any:
    """The bytes any implementation must write for the row series' batch, with numpy into pages faulted
    once: column a widened into int64 and the default column c filled with 7 (the rename and the string
    write nothing). Its own per-row step shows what the memory hierarchy adds at each size."""
    col = batch.column(0)  # int32 values (the validity bitmap is reused as it is)
    a = np.frombuffer(col.buffers()[1], dtype=np.int32, count=col.offset + len(col))[col.offset:]
    wide, filled = np.empty(len(a), np.int64), np.empty(len(a), np.int64)

    def copy() -> int:
        np.copyto(wide, a)
        filled.fill(7)
        return len(wide)

    copy()
    return copy


@pytest.mark.parametrize("caches", ["warm", "cold"])
@pytest.mark.parametrize("impl", [*IMPLS, "copy"])
@pytest.mark.parametrize("rows", ROW_SERIES)
def test_scale_rows(benchmark: Any, rows: int, impl: str, caches: str) -> None:
    """One batch of ``rows`` rows: int32 -> int64, a rename, a string passed through, a default; cold:
    caches evicted and cached constants dropped before every round (``workloads.caches_cold``); copy:
    the floor, a numpy copy of the bytes the evolution writes."""
    file_schema, read_schema = w.simple_schemas()
    batch = _rows_batch(rows)
    if impl == "copy":
        fn = _copy_floor(batch)
    else:
        evolve = _evolver(impl, file_schema, read_schema)
        fn = dropped(lambda: evolve(batch))
    if caches == "warm":
        run(benchmark, fn, role=f"scale.rows.{impl}", series="rows", x=rows, impl=impl,
            rounds=5, warmup=1, iterations=_iterations(rows))
    else:
        run(benchmark, fn, role=f"scale.rows_cold.{impl}", series="rows",
            op="apply, caches cold", x=rows, impl=impl, rounds=9, warmup=1, setup=w.caches_cold)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("columns", COLUMN_SERIES)
def test_scale_columns(benchmark: Any, columns: int, impl: str) -> None:
    """10,000 rows, ``columns`` columns (int/float widening, string renames, pass-through, defaults)."""
    file_schema, read_schema = w.wide_schemas(columns)
    batch = _columns_batch(columns)
    fn = _evolver(impl, file_schema, read_schema)
    run(benchmark, dropped(lambda: fn(batch)), role=f"scale.columns.{impl}", series="columns", x=columns, impl=impl,
        rows=COLUMN_ROWS, rounds=5, warmup=1, iterations=max(1, 100 // columns))


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("depth", DEPTH_SERIES)
def test_scale_depth(benchmark: Any, depth: int, impl: str) -> None:
    """131,072 rows, one struct nested ``depth`` deep, evolved at the innermost level."""
    file_schema, read_schema = w.nested_schemas(depth)
    batch = _depth_batch(depth)
    fn = _evolver(impl, file_schema, read_schema)
    run(benchmark, dropped(lambda: fn(batch)), role=f"scale.depth.{impl}", series="depth", x=depth, impl=impl,
        rows=DEPTH_ROWS, rounds=5, warmup=1)


@pytest.mark.parametrize("case", ["cold", "cached", "cold_from_arrow", "cached_from_arrow"])
def test_planning_1000_columns(benchmark: Any, case: str) -> None:
    """Planning a 1,000-column nested schema (structs, lists, maps, renames, defaults), cold vs cached."""
    file_schema, read_schema = w.planning_schemas(1000)
    source: Any = file_schema.to_arrow() if case.endswith("from_arrow") else file_schema
    plan = fs.plan(source, read_schema, policy=w.W1_POLICY)
    fn = lambda: fs.plan(source, read_schema, policy=w.W1_POLICY)  # noqa: E731
    info = {"columns": 1000, "nodes": len(plan.nodes)}
    if case.startswith("cold"):
        run(benchmark, fn, role=f"plan.1000.{case}", rounds=15, warmup=2, setup=clear_plan_cache, **info)
    else:
        run(benchmark, fn, role=f"plan.1000.{case}", rounds=20, warmup=2, iterations=20, **info)
