"""Spark: fieldshift's routes against Spark's native field-id Parquet read (issue 6).

A fieldshift table of >= 4 M rows (400 k with ``FIELDSHIFT_BENCH_SCALE=small``) in files of three
schema versions, evolved only in ways Spark's native reader reproduces (rename by id, int -> long,
short -> int, float -> double, a dropped column, new columns with initial defaults), so every route
can read all of it. Each route is forced with ``df.write.format("noop")`` on ``local[2]``:

- ``native``: ``spark.read.schema(<target with parquet.field.id>).parquet(<files>)`` (the baseline);
- ``fieldshift.spark.read`` (``route="auto"``: here it picks the native scan for every group);
- the ``fieldshift`` data source (executors read with pyarrow, evolve, yield Arrow batches);
- ``fieldshift.spark.read(route="arrow")``: a ``mapInArrow`` over the file list, pyarrow on executors;
- the ``mapInArrow`` path: Spark reads each schema group by name, ``fieldshift.spark.evolve`` evolves.

``extra_info`` carries rows/s and the throughput ratio to ``native`` (ours ÷ native, >= 1 is as fast).
Issue 6 targets: ``read`` >= 1.0x native, data source >= 0.8x native.

What bounds the ratios here (2 shared cores, runs vary by ±10%): ``read`` runs the same single
native scan as the baseline (the renamed v0 files join it through a ``coalesce`` of both names,
``spark/native_scan.py``) plus its own driver planning (~15 ms), so it sits at parity. The data
source cannot reach the baseline: ``datasource_floor`` (a Python data source yielding ready-made
batches, reading nothing) measures Spark's own cost of that path at ~0.83x native, and pyarrow's read
of these files alone adds ~0.14 s on two cores on top of it. ``mapInArrow`` over the file list (same
pyarrow work, columnar hand-over) is on par with native.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import fieldshift as fs

pytestmark = [pytest.mark.bench, pytest.mark.slow, pytest.mark.spark]

SMALL = os.environ.get("FIELDSHIFT_BENCH_SCALE", "full").strip().lower() == "small"
ROWS = 400_000 if SMALL else 4_000_000
SHARES = (0.375, 0.375, 0.25)  # rows written under schema versions 0, 1 and 2
CHUNK = 500_000
ROUNDS = 5  # the machine is shared and noisy: the median of five, after a warm-up run
_NATIVE: dict[str, float] = {}


def _chunk(rng: np.random.Generator, start: int, n: int, version: int) -> pa.Table:
    ids = np.arange(start, start + n)
    price = rng.random(n, dtype=np.float32) * 1000
    qty = rng.integers(0, 30000, n).astype(np.int16)
    words = np.array([f"name-{i:05d}" for i in range(2048)], dtype=object)
    name = pa.array(words[rng.integers(0, len(words), n)], pa.string())
    if version == 0:
        return pa.table({"id": pa.array(ids, pa.int32()), "price": pa.array(price, pa.float32()),
                         "name": name, "qty": pa.array(qty, pa.int16()),
                         "tag": pa.array(words[rng.integers(0, 64, n)], pa.string())})
    if version == 1:
        return pa.table({"id": pa.array(ids, pa.int64()), "price": pa.array(price, pa.float32()),
                         "full_name": name, "qty": pa.array(qty, pa.int16()),
                         "tag": pa.array(words[rng.integers(0, 64, n)], pa.string()),
                         "region": pa.array(np.where(ids % 3 == 0, "us", "eu").astype(object), pa.string())})
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "price": pa.array(price.astype(np.float64), pa.float64()),
                     "full_name": name, "qty": pa.array(qty.astype(np.int32), pa.int32()),
                     "region": pa.array(np.where(ids % 3 == 0, "us", "eu").astype(object), pa.string()),
                     "score": pa.array(rng.integers(0, 100, n).astype(np.int32), pa.int32())})


def build_table(location: Path, rows: int = ROWS) -> fs.Table:
    """The benchmark table: three schema versions, every file readable natively."""
    if location.exists():
        shutil.rmtree(location)
    rng = np.random.default_rng(6)
    table = fs.Table.create(location, _chunk(rng, 0, 1, 0).schema)
    start = 0
    for version, share in enumerate(SHARES):
        if version == 1:
            (table.update_schema().rename_column("name", "full_name").update_column("id", pa.int64())
             .add_column("region", pa.string(), default="eu").commit())
        elif version == 2:
            (table.update_schema().update_column("price", pa.float64()).update_column("qty", pa.int32())
             .drop_column("tag").add_column("score", pa.int32(), default=0).commit())
        n = int(rows * share) if version < 2 else rows - start
        for s in range(start, start + n, CHUNK):
            table.append(_chunk(rng, s, min(CHUNK, start + n - s), version), evolve=False)
        start += n
    return table


# ------------------------------------------------------------------------------------------------
# fixtures
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from fieldshift.spark import session

    s = session(master="local[2]", **{"spark.driver.memory": "2g"})
    yield s
    s.stop()


@pytest.fixture(scope="module")
def bench_table(tmp_path_factory: pytest.TempPathFactory) -> fs.Table:
    return build_table(tmp_path_factory.mktemp("spark_bench") / "t")


def _noop(df: Any) -> None:
    df.write.format("noop").mode("overwrite").save()


def _native_frame(spark: Any, table: fs.Table) -> Any:
    from fieldshift.spark import schema_to_spark

    spark.conf.set("spark.sql.parquet.fieldId.read.enabled", "true")
    files = table.catalog.data_files(table.table_id, table.current_snapshot.snapshot_id, with_stats=False)
    return spark.read.schema(schema_to_spark(table.schema)).parquet(*[str(table.location / f.path) for f in files])


def _map_in_arrow_frame(spark: Any, table: fs.Table) -> Any:
    from fieldshift.spark import evolve

    files = table.catalog.data_files(table.table_id, table.current_snapshot.snapshot_id, with_stats=False)
    schemas = table.schemas_by_id()
    frames = []
    for sid in sorted({f.schema_id for f in files}):
        paths = [str(table.location / f.path) for f in files if f.schema_id == sid]
        frames.append(evolve(spark.read.parquet(*paths), schemas[sid], table.schema))
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other)
    return df


def _measure(benchmark: Any, spark: Any, role: str, make: Callable[[], Any], rows: int) -> None:
    def run() -> None:
        _noop(make())

    benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=1)
    sec = benchmark.stats.stats.median
    if role == "native":
        _NATIVE["sec"] = sec
    info = benchmark.extra_info
    info.update({"role": f"spark.{role}", "rows": rows, "rows_per_s": round(rows / sec),
                 "load_avg_1m": os.getloadavg()[0], "scale": "small" if SMALL else "full",
                 "spark_cores": 2})
    if "sec" in _NATIVE:
        info["vs_native_throughput"] = round(_NATIVE["sec"] / sec, 3)
    print(f"\n{role}: {sec:.2f} s, {rows / sec / 1e6:.2f} M rows/s"
          + (f", {_NATIVE['sec'] / sec:.2f}x native throughput" if "sec" in _NATIVE else ""))


# ------------------------------------------------------------------------------------------------
# benchmarks (native first: the others report their ratio to it)
# ------------------------------------------------------------------------------------------------
def test_native_field_id_read(benchmark: Any, spark: Any, bench_table: fs.Table) -> None:
    _measure(benchmark, spark, "native", lambda: _native_frame(spark, bench_table), ROWS)


def test_fieldshift_read(benchmark: Any, spark: Any, bench_table: fs.Table) -> None:
    from fieldshift.spark import read

    _measure(benchmark, spark, "read", lambda: read(spark, bench_table.location), ROWS)


def test_datasource(benchmark: Any, spark: Any, bench_table: fs.Table) -> None:
    _measure(benchmark, spark, "datasource",
             lambda: spark.read.format("fieldshift").load(str(bench_table.location)), ROWS)


def test_datasource_floor(benchmark: Any, spark: Any, bench_table: fs.Table) -> None:
    """Spark's own cost of a Python data source: one that yields ready-made evolved batches, reading nothing.

    The data source's ratio to native cannot exceed ``native ÷ this`` whatever the reader does.
    """
    import ready_batches
    from pyspark import cloudpickle

    from fieldshift.spark import schema_to_spark
    from fieldshift.spark._arrow import BatchConformer, spark_arrow_schema
    from fieldshift.spark._files import DEFAULT_BATCH_SIZE

    cloudpickle.register_pickle_by_value(ready_batches)  # executors do not have benchmarks/ on their path
    spark_schema = schema_to_spark(bench_table.schema)
    target = spark_arrow_schema(spark_schema, spark.conf.get("spark.sql.session.timeZone"))
    # a compact copy: a slice of to_arrow()'s 1M-row batches would carry (and pickle to every task) whole buffers
    evolved = bench_table.scan().to_arrow().take(np.arange(DEFAULT_BATCH_SIZE)).combine_chunks().to_batches()[0]
    spark.dataSource.register(ready_batches.make_source(BatchConformer(target)(evolved), spark_schema, ROWS))
    _measure(benchmark, spark, "datasource_floor",
             lambda: spark.read.format(ready_batches.FORMAT).load(), ROWS)


def test_read_arrow_route(benchmark: Any, spark: Any, bench_table: fs.Table) -> None:
    from fieldshift.spark import read

    _measure(benchmark, spark, "read_arrow_files",
             lambda: read(spark, bench_table.location, route="arrow", via="files"), ROWS)


def test_map_in_arrow(benchmark: Any, spark: Any, bench_table: fs.Table) -> None:
    _measure(benchmark, spark, "map_in_arrow", lambda: _map_in_arrow_frame(spark, bench_table), ROWS)


def test_routes_agree(spark: Any, bench_table: fs.Table) -> None:
    """Not timed: the routes return the same rows (counts and a checksum of every column)."""
    from fieldshift.spark import read

    def digest(df: Any) -> tuple:
        agg = df.selectExpr("count(*)", "sum(id)", "sum(cast(price as decimal(38,6)))", "sum(qty)",
                            "sum(score)", "count(region)", "sum(hash(full_name, region))")
        return tuple(agg.collect()[0])

    expected = digest(_native_frame(spark, bench_table))
    started = time.time()
    for df in (read(spark, bench_table.location),
               spark.read.format("fieldshift").load(str(bench_table.location)),
               _map_in_arrow_frame(spark, bench_table)):
        assert digest(df) == expected
    print(f"routes agree ({time.time() - started:.1f} s)")
