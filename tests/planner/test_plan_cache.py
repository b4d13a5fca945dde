"""One plan cache (keyed by value, one LRU bound) and a batch strategy chosen once at planning."""

from __future__ import annotations

import pickle
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift import CastPolicy, Field, Schema
from fieldshift.planner import PLAN_CACHE, build_plan, clear_plan_cache
from fieldshift.planner.cache import PlanCache, plan_columns
from fieldshift.planner.strategy import BatchStrategy

V0 = Schema([Field(1, "a", pa.int32()), Field(2, "b", pa.string()), Field(3, "c", pa.int32())])
RENAMED = Schema([Field(2, "b2", pa.string()), Field(1, "a", pa.int32())])
WIDENED = Schema([Field(1, "a", pa.int64()), Field(2, "b", pa.string()), Field(3, "c", pa.int32())])


def _batch(n: int = 4) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([{"a": i, "b": str(i), "c": -i} for i in range(n)], schema=V0.to_arrow())


def test_schema_and_arrow_plans_share_one_cache() -> None:
    clear_plan_cache()
    by_schema = fs.plan(V0, WIDENED)
    assert len(PLAN_CACHE) == 1
    by_arrow = fs.plan(V0.to_arrow(), WIDENED)
    assert len(PLAN_CACHE) == 2
    assert fs.plan(V0, WIDENED) is by_schema
    assert fs.plan(V0.to_arrow(), WIDENED) is by_arrow
    clear_plan_cache()
    assert len(PLAN_CACHE) == 0
    assert fs.plan(V0, WIDENED) is not by_schema


def test_plan_cache_drops_the_least_recently_used() -> None:
    cache = PlanCache(size=2)
    plans = [build_plan(V0, s) for s in (V0, RENAMED, WIDENED)]
    cache.get(("v0",), lambda: plans[0])
    cache.get(("renamed",), lambda: plans[1])
    assert cache.get(("v0",), lambda: plans[2]) is plans[0]  # a hit: now the most recent
    cache.get(("widened",), lambda: plans[2])  # evicts "renamed", the least recently used
    assert len(cache) == 2
    assert cache.get(("v0",), lambda: plans[2]) is plans[0]
    assert cache.get(("renamed",), lambda: plans[2]) is plans[2]  # rebuilt


def test_arrow_plans_are_keyed_by_field_ids_not_arrow_equality() -> None:
    """Two Arrow schemas equal by pyarrow (which ignores metadata) but with other ids get other plans."""
    clear_plan_cache()
    swapped = Schema([Field(3, "a", pa.int32()), Field(2, "b", pa.string()), Field(1, "c", pa.int32())])
    assert V0.to_arrow().equals(swapped.to_arrow())
    batch = _batch()
    plain = fs.evolve(batch, WIDENED)
    other = fs.evolve(pa.RecordBatch.from_arrays(batch.columns, schema=swapped.to_arrow()), WIDENED)
    assert plain.column("a").to_pylist() == [0, 1, 2, 3]
    assert other.column("a").to_pylist() == [0, -1, -2, -3]  # id 1 is the file's column "c"


def test_stream_batches_find_their_plan_in_the_one_cache(tmp_path: Path) -> None:
    clear_plan_cache()
    path = tmp_path / "v0.parquet"
    pq.write_table(pa.Table.from_batches([_batch(10)] * 3), path, row_group_size=10)
    reader = pq.ParquetFile(path).iter_batches(batch_size=10)
    stream = pa.RecordBatchReader.from_batches(pq.read_schema(path), reader)
    out = fs.evolve(stream, WIDENED).read_all()
    assert out.num_rows == 30 and out.schema.field("a").type == pa.int64()
    assert len(PLAN_CACHE) == 1


def test_strategy_is_chosen_once_at_planning() -> None:
    assert fs.plan(V0, V0).strategy is BatchStrategy.IDENTITY
    assert fs.plan(V0, RENAMED).strategy is BatchStrategy.RELABEL
    widened = fs.plan(V0, WIDENED)
    assert widened.strategy is BatchStrategy.COMPUTED
    assert [o for o, _ in widened.steps.untouched] == [1, 2]  # b and c are taken by index
    assert widened.steps.computed == (0,)


@pytest.mark.parametrize("read", [V0, RENAMED, WIDENED], ids=["identity", "relabel", "computed"])
def test_every_strategy_reads_dictionary_batches_through_the_nodes(read: Schema) -> None:
    """A batch of another layout of the planned types (a dictionary column) falls back to the nodes."""
    batch = _batch()
    encoded = pa.RecordBatch.from_arrays(
        [batch.column(0), batch.column(1).dictionary_encode(), batch.column(2)],
        schema=pa.schema([V0.to_arrow().field(0), pa.field("b", pa.dictionary(pa.int32(), pa.string()))
                          .with_metadata(V0.to_arrow().field(1).metadata), V0.to_arrow().field(2)]))
    plan = fs.plan(V0, read, policy=CastPolicy.lossless())
    assert plan.apply(encoded).to_pylist() == plan.apply(batch).to_pylist()
    assert plan.apply(encoded).schema.equals(read.to_arrow())


def test_the_recent_arrow_index_forgets_what_the_cache_drops() -> None:
    """Batches of one stream find their plan by their Arrow schema; once evicted, it is planned anew."""
    cache = PlanCache(size=1)
    arrow = V0.to_arrow()
    plan = build_plan(V0, WIDENED)
    cache.get((b"v0-bytes", "rest"), lambda: plan, arrow=arrow)
    same = pa.RecordBatch.from_pylist([], schema=arrow).schema  # another wrapper of an equal schema
    assert cache.recent_arrow(same, ("rest",)) is plan
    assert cache.recent_arrow(same, ("other read schema",)) is None
    cache.get(("another",), lambda: build_plan(V0, V0))  # evicts the Arrow plan
    assert cache.recent_arrow(same, ("rest",)) is None
    cache.clear()
    assert len(cache) == 0


@pytest.mark.parametrize("read", [V0, RENAMED, WIDENED], ids=["identity", "relabel", "computed"])
def test_plans_pickle_with_their_strategy(read: Schema) -> None:
    """Plans ship to Spark executors pickled: the strategy and its steps travel with them."""
    plan = build_plan(V0, read)
    again = pickle.loads(pickle.dumps(plan))
    assert again.strategy is plan.strategy and again.steps == plan.steps
    assert again.apply(_batch()).equals(plan.apply(_batch()))


def test_plan_cache_is_bounded_by_columns_not_only_by_plans() -> None:
    """Many narrow plans fit (a long history scanned again plans nothing), wide ones are dropped by size."""
    narrow = build_plan(V0, WIDENED)
    weight = plan_columns(narrow)
    cache = PlanCache(columns=weight * 600)
    for i in range(600):  # more versions than the old 512-plan bound
        cache.get(("v", i), lambda: narrow)
    built = []
    for i in range(600):
        cache.get(("v", i), lambda: built.append(1) or narrow)
    assert not built and len(cache) == 600
    cache.get(("one more",), lambda: narrow)  # over the column bound: the least recent goes
    assert len(cache) == 600
    assert cache.get(("v", 0), lambda: built.append(1) or narrow) is narrow and built == [1]
    wide = PlanCache(columns=weight)  # a plan larger than the whole bound is still kept, alone
    wide.get(("a",), lambda: narrow)
    wide.get(("b",), lambda: narrow)
    assert len(wide) == 1


def test_plan_columns_counts_nested_fields() -> None:
    nested = Schema([Field(1, "s", fs.StructType((Field(2, "x", pa.int32()), Field(3, "y", pa.string())))),
                     Field(4, "l", fs.ListType(Field(5, "element", pa.int64())))])
    assert plan_columns(build_plan(nested, nested)) == 1 + 2 * 5
