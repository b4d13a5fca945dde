"""W1 (issue 7) in memory and end to end, against plain pyarrow, PyIceberg, polars, DuckDB and a memcpy.

Every benchmark stores ``role`` (and ``per``, the divisor for per-batch numbers) in ``extra_info``;
``report.py`` computes all ratios from those, so nothing is hard-coded.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import workloads as w
from workloads import THREADS, W1, dropped, run

import fieldshift as fs
from fieldshift.planner import clear_plan_cache, evolution_plan

pytestmark = [pytest.mark.bench, pytest.mark.slow]

POLICY = w.W1_POLICY
SUBSET_DROP = ["c10", "c11"]
TINY_ROWS = 16
SLICE_ROWS = 8192
W1_ROUNDS = 11  # the in-memory W1 runs take 0.1-0.5 s; more rounds steady the medians on a shared machine


def apply_all(fn: Callable[[pa.RecordBatch], pa.RecordBatch], batches: list[pa.RecordBatch]) -> Callable[[], int]:
    """Evolve every batch; the outputs are dropped inside the timed call (see ``dropped``)."""
    return lambda: len([fn(b) for b in batches])


# ------------------------------------------------------------------------------------------------
# fixtures
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def w1_plan(w1: W1) -> fs.EvolutionPlan:
    return fs.plan(w1.file_schema, w1.read_schema, policy=POLICY)


@pytest.fixture(scope="module")
def subset(w1: W1) -> tuple[fs.Schema, fs.Schema, list[pa.RecordBatch]]:
    """PyIceberg's part of W1: c10 and c11 (int -> string) left out of both schemas and the data."""
    return (w.subset_schema(w1.file_schema, SUBSET_DROP), w.subset_schema(w1.read_schema, SUBSET_DROP),
            [b.drop_columns(SUBSET_DROP) for b in w1.batches])


@pytest.fixture(scope="module")
def must_write(w1: W1, w1_plan: fs.EvolutionPlan) -> dict[str, int]:
    """Bytes W1's evolved output must newly write (per column the least that fieldshift or plain wrote)."""
    plain = w.plain_evolver(w1.file_schema, w1.read_schema)
    ours = w.new_bytes_by_column([(b, w1_plan.apply(b)) for b in w1.batches])
    theirs = w.new_bytes_by_column([(b, plain(b)) for b in w1.batches])
    return {"must": w.must_write_bytes(ours, theirs), "fieldshift": sum(ours.values()),
            "plain": sum(theirs.values()), "input": sum(b.nbytes for b in w1.batches)}


@pytest.fixture(scope="module")
def tiny(w1: W1) -> list[pa.RecordBatch]:
    """32 batches of 16 rows: what remains is the fixed cost per batch."""
    return w.make_batches(w1.file_arrow, 32 * TINY_ROWS, TINY_ROWS, seed=w.SEED + 1)


@pytest.fixture(scope="module")
def slices(w1: W1) -> dict[str, list[pa.RecordBatch]]:
    """16 slices of 8,192 rows of one 131,072-row batch, and 16 standalone 8,192-row batches."""
    big = w.make_batches(w1.file_arrow, w.BATCH_ROWS, w.BATCH_ROWS, seed=w.SEED + 2)[0]
    return {
        "sliced": [big.slice(i * SLICE_ROWS, SLICE_ROWS) for i in range(w.BATCH_ROWS // SLICE_ROWS)],
        "standalone": w.make_batches(w1.file_arrow, w.BATCH_ROWS, SLICE_ROWS, seed=w.SEED + 3),
    }


# ------------------------------------------------------------------------------------------------
# correctness of what is being compared (not timed)
# ------------------------------------------------------------------------------------------------
def test_w1_peers_agree(w1: W1, w1_plan: fs.EvolutionPlan, subset: Any) -> None:
    plain = w.plain_evolver(w1.file_schema, w1.read_schema)
    for b in (w1.batches[0], w1.batches[-1]):
        ours = w1_plan.apply(b)
        assert ours.schema.equals(w1_plan.output_schema)
        assert ours.equals(plain(b)), "fieldshift and the plain pyarrow implementation disagree on W1"
    fsub, rsub, batches = subset
    ice = w.iceberg_evolver(fsub, rsub)
    sub_plan = fs.plan(fsub, rsub, policy=POLICY)
    ours = sub_plan.apply(batches[0])
    theirs = ice(batches[0])
    assert theirs.schema.names == ours.schema.names
    assert theirs.cast(ours.schema).equals(ours), "fieldshift and PyIceberg disagree on the W1 subset"


# ------------------------------------------------------------------------------------------------
# W1 in memory
# ------------------------------------------------------------------------------------------------
def test_w1_fieldshift(benchmark: Any, w1: W1, w1_plan: fs.EvolutionPlan) -> None:
    run(benchmark, apply_all(w1_plan.apply, w1.batches), role="w1.fieldshift", rows=w1.rows,
        batches=len(w1.batches), rounds=W1_ROUNDS)


def test_w1_fieldshift_table(benchmark: Any, w1: W1, w1_plan: fs.EvolutionPlan) -> None:
    table = w1.table
    run(benchmark, dropped(lambda: w1_plan.apply(table)), role="w1.fieldshift_table", rows=w1.rows,
        batches=len(w1.batches), rounds=W1_ROUNDS)


def test_w1_plain(benchmark: Any, w1: W1) -> None:
    plain = w.plain_evolver(w1.file_schema, w1.read_schema)
    run(benchmark, apply_all(plain, w1.batches), role="w1.plain", rows=w1.rows, batches=len(w1.batches),
        rounds=W1_ROUNDS)


def test_w1_plain_threads(benchmark: Any, w1: W1) -> None:
    plain = w.plain_evolver(w1.file_schema, w1.read_schema)
    with ThreadPoolExecutor(THREADS) as pool:
        run(benchmark, dropped(lambda: list(pool.map(plain, w1.batches))), role="w1.plain_threads", rows=w1.rows,
            batches=len(w1.batches), pool_threads=THREADS, rounds=W1_ROUNDS)


@pytest.mark.parametrize("cores", [1, 2])
def test_w1_copy_limit(benchmark: Any, must_write: dict[str, int], cores: int) -> None:
    """numpy copies exactly the bytes W1's output must newly write, into warm destination pages."""
    n = must_write["must"]
    src = np.ones(n, dtype=np.uint8)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    step = -(-n // cores)
    parts = [(dst[i:i + step], src[i:i + step]) for i in range(0, n, step)]
    with ThreadPoolExecutor(cores) as pool:
        if cores == 1:
            fn: Callable[[], Any] = lambda: np.copyto(dst, src)  # noqa: E731
        else:
            fn = lambda: list(pool.map(lambda p: np.copyto(*p), parts))  # noqa: E731
        run(benchmark, fn, role=f"w1.copy_{cores}core", rounds=W1_ROUNDS, bytes=n,
            fieldshift_new_bytes=must_write["fieldshift"], plain_new_bytes=must_write["plain"],
            input_bytes=must_write["input"])


# ------------------------------------------------------------------------------------------------
# the PyIceberg subset (no int -> string)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("impl", ["fieldshift", "pyiceberg", "plain"])
def test_w1_subset(benchmark: Any, subset: Any, impl: str) -> None:
    fsub, rsub, batches = subset
    fn = {
        "fieldshift": lambda: fs.plan(fsub, rsub, policy=POLICY).apply,
        "pyiceberg": lambda: w.iceberg_evolver(fsub, rsub),
        "plain": lambda: w.plain_evolver(fsub, rsub),
    }[impl]()
    run(benchmark, apply_all(fn, batches), role=f"subset.{impl}", rows=sum(b.num_rows for b in batches),
        batches=len(batches), rounds=W1_ROUNDS)


# ------------------------------------------------------------------------------------------------
# per-batch costs: pass-through, rename-only, fixed cost, slices
# ------------------------------------------------------------------------------------------------
def _evolver(impl: str, file_schema: fs.Schema, read_schema: fs.Schema) -> Callable[[pa.RecordBatch], Any]:
    if impl == "fieldshift":
        return fs.plan(file_schema, read_schema, policy=POLICY).apply
    if impl == "pyiceberg":
        return w.iceberg_evolver(file_schema, read_schema)
    return w.plain_evolver(file_schema, read_schema)


@pytest.mark.parametrize("impl", ["fieldshift", "plain", "pyiceberg"])
def test_passthrough(benchmark: Any, w1: W1, impl: str) -> None:
    fn = _evolver(impl, w1.file_schema, w1.file_schema)
    if impl == "fieldshift":
        assert fs.plan(w1.file_schema, w1.file_schema).identity
    run(benchmark, apply_all(fn, w1.batches), role=f"passthrough.{impl}", per=len(w1.batches), rounds=10,
        warmup=2, iterations=5)


@pytest.mark.parametrize("impl", ["fieldshift", "plain", "pyiceberg"])
def test_rename_only(benchmark: Any, w1: W1, impl: str) -> None:
    read = w.w1_rename_only_schema()
    fn = _evolver(impl, w1.file_schema, read)
    if impl == "fieldshift":
        assert fs.plan(w1.file_schema, read).rename_only
    run(benchmark, apply_all(fn, w1.batches), role=f"rename.{impl}", per=len(w1.batches), rounds=10,
        warmup=2, iterations=5)


@pytest.mark.parametrize("impl", ["fieldshift", "fieldshift_nodes", "plain", "pyiceberg"])
def test_fixed_cost(benchmark: Any, w1: W1, tiny: list[pa.RecordBatch], impl: str,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    """W1 on 16-row batches: the per-batch cost that does not depend on rows (PyIceberg: its subset;
    fieldshift_nodes: the tiny-batch program off)."""
    if impl == "fieldshift_nodes":
        monkeypatch.setattr(evolution_plan, "TINY_BATCH_ROWS", -1)
    if impl == "pyiceberg":
        fn = _evolver(impl, w.subset_schema(w1.file_schema, SUBSET_DROP), w.subset_schema(w1.read_schema, SUBSET_DROP))
        batches = [b.drop_columns(SUBSET_DROP) for b in tiny]
    else:
        fn, batches = _evolver(impl.removesuffix("_nodes"), w1.file_schema, w1.read_schema), tiny
    run(benchmark, apply_all(fn, batches), role=f"fixed.{impl}", per=len(batches), rounds=10, warmup=2,
        iterations=5, rows_per_batch=TINY_ROWS)


@pytest.mark.parametrize("impl", ["fieldshift", "plain"])
@pytest.mark.parametrize("layout", ["sliced", "standalone"])
def test_slices(benchmark: Any, w1: W1, slices: dict[str, list[pa.RecordBatch]], layout: str, impl: str) -> None:
    """8,192-row batches that are slices of one 131,072-row batch vs standalone 8,192-row batches."""
    fn = _evolver(impl, w1.file_schema, w1.read_schema)
    batches = slices[layout]
    run(benchmark, apply_all(fn, batches), role=f"slices.{impl}.{layout}", per=len(batches), rounds=5,
        warmup=1, iterations=2, rows_per_batch=SLICE_ROWS)


# ------------------------------------------------------------------------------------------------
# planning (separate from applying)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["cold", "cached", "cold_from_arrow", "cached_from_arrow"])
def test_w1_planning(benchmark: Any, w1: W1, case: str) -> None:
    """cold: plan cache cleared before each call; *_from_arrow: the file schema given as the Arrow
    schema of the data (as evolve() and Parquet footers do), so it is resolved and fingerprinted too."""
    source: Any = w1.file_arrow if case.endswith("from_arrow") else w1.file_schema
    fs.plan(source, w1.read_schema, policy=POLICY)
    fn = lambda: fs.plan(source, w1.read_schema, policy=POLICY)  # noqa: E731
    if case.startswith("cold"):
        run(benchmark, fn, role=f"plan.w1.{case}", rounds=30, warmup=2, setup=clear_plan_cache)
    else:
        run(benchmark, fn, role=f"plan.w1.{case}", rounds=30, warmup=2, iterations=20)


# ------------------------------------------------------------------------------------------------
# end to end from Parquet
# ------------------------------------------------------------------------------------------------
def _e2e(impl: str, path: Path, w1: W1) -> Callable[[], Any]:
    if impl == "pyarrow_read":
        return lambda: pq.read_table(path)
    if impl == "fieldshift":
        return lambda: fs.evolve(pq.read_table(path), w1.read_schema, policy=POLICY)
    if impl == "fieldshift_read":  # only the columns the plan reads are decoded
        return lambda: fs.read_parquet(path, w1.read_schema, policy=POLICY)
    if impl == "plain":
        plain = w.plain_evolver(w1.file_schema, w1.read_schema)
        return lambda: pa.Table.from_batches([plain(b) for b in pq.read_table(path).to_batches()])
    if impl == "polars":
        import polars as pl

        exprs = w.polars_w1_exprs()
        return lambda: pl.scan_parquet(path).select(exprs).collect()
    if impl == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.execute(f"SET threads = {THREADS}")
        sql = w.duckdb_w1_sql(str(path))
        return lambda: con.sql(sql).to_arrow_table()
    raise ValueError(impl)


@pytest.mark.parametrize("impl", ["pyarrow_read", "fieldshift", "fieldshift_read", "plain", "polars", "duckdb"])
def test_w1_end_to_end(benchmark: Any, w1: W1, w1_parquet: Path, impl: str) -> None:
    fn = _e2e(impl, w1_parquet, w1)
    rows = run(benchmark, dropped(fn), role=f"e2e.{impl}", rounds=5, warmup=1, rows=w1.rows,
               parquet_bytes=w1_parquet.stat().st_size)
    assert rows == w1.rows
