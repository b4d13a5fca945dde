"""Spark (local mode) on tables that live on the S3 server: ``fieldshift.spark.read`` takes the pyarrow
route and says so, and the data source's reader and writer open the store on the executors from the URI
(credentials and endpoint from the environment, as on a real cluster)."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
from tests.servers.conftest import S3_BUCKET

ROWS = pa.schema([("id", pa.int64()), ("name", pa.string())])


@pytest.fixture(scope="module")
def s3_spark(s3_server: str) -> Iterator[Any]:
    """A local Spark session started after the S3 environment is set (its Python workers inherit it)."""
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("no Java runtime: install openjdk-17-jre-headless to run the Spark server tests")
    from fieldshift.spark import session

    aws = {f"spark.executorEnv.{k}": v for k, v in os.environ.items() if k.startswith("AWS_")}
    spark = session(master="local[2]", **{"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2",
                                          "spark.driver.memory": "1g", **aws})
    spark.sparkContext.setLogLevel("ERROR")
    yield spark
    spark.stop()


def _sorted(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in rows)


def test_spark_reads_a_table_on_s3_via_pyarrow_and_says_so(s3_spark: Any, s3_location: str, tmp_path: Path,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    from fieldshift.spark import plan_read, read

    catalog = str(tmp_path / "c.db")
    t = fs.Table.create(s3_location, ROWS, catalog=catalog, name="t")
    t.append({"id": [1, 2], "name": ["a", "b"]})
    t.update_schema().add_column("score", pa.float64(), default=0.5).commit()
    t.append({"id": [3], "name": ["c"], "score": [2.0]})
    rp = plan_read(t)
    assert rp.native_files == () and len(rp.arrow_files) == 2
    assert "object-store location" in rp.explain()
    with caplog.at_level(logging.WARNING, logger="fieldshift"):
        df = read(s3_spark, s3_location, catalog=catalog, name="t")
    assert "go via pyarrow" in caplog.text
    assert _sorted([r.asDict() for r in df.collect()]) == _sorted(t.to_arrow().to_pylist())
    ds = s3_spark.read.format("fieldshift").option("catalog", catalog).option("table", "t").load(s3_location)
    assert _sorted([r.asDict() for r in ds.collect()]) == _sorted(t.to_arrow().to_pylist())
    assert read(s3_spark, s3_location, catalog=catalog, name="t", via="datasource").count() == 3
    with pytest.raises(ValueError, match="object-store"):
        read(s3_spark, s3_location, catalog=catalog, name="t", route="native")


def test_spark_writes_tables_on_s3(s3_spark: Any, s3_location: str, tmp_path: Path) -> None:
    catalog = str(tmp_path / "c.db")
    df = s3_spark.createDataFrame([(i, f"n{i}") for i in range(20)], "id long, name string").repartition(2)
    df.write.format("fieldshift").option("catalog", catalog).mode("append").save(s3_location)  # creates it
    t = fs.Table.open(s3_location)  # by the marker the writer's create left
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(20))
    assert all(t.storage.exists(f.path) for f in t.scan().files())
    df.write.format("fieldshift").option("catalog", catalog).mode("overwrite").save(s3_location)
    assert fs.Table.open(s3_location).to_arrow().num_rows == 20
    elsewhere = f"s3://{S3_BUCKET}/no-catalog-{os.getpid()}/t"
    with pytest.raises(Exception, match="without a catalog"):
        df.write.format("fieldshift").mode("append").save(elsewhere)


def test_spark_upserts_and_merged_reads_of_a_keyed_table_on_s3(s3_spark: Any, s3_location: str,
                                                               tmp_path: Path) -> None:
    from fieldshift.spark import read

    catalog = str(tmp_path / "c.db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])
    t = fs.Table.create(s3_location, schema, identifier_fields=["id"], catalog=catalog, name="k")
    t.upsert({"id": [1, 2, 3], "name": ["a", "b", "c"]})
    updates = s3_spark.createDataFrame([(2, "B"), (4, "d")], "id long, name string")
    (updates.write.format("fieldshift").option("catalog", catalog).option("table", "k")
     .option("operation", "upsert").mode("append").save(s3_location))
    want = [(1, "a"), (2, "B"), (3, "c"), (4, "d")]
    assert sorted(tuple(r) for r in t.to_arrow().to_pylist() for r in [r.values()]) == want
    got = read(s3_spark, s3_location, catalog=catalog, name="k").collect()
    assert sorted((r["id"], r["name"]) for r in got) == want


def test_a_stream_sinks_into_an_s3_table_with_a_postgresql_catalog_and_streams_back_out(
        s3_spark: Any, s3_location: str, pg_uri: str, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    src = tmp_path / "in"
    src.mkdir()
    for i in range(3):  # three input files: three availableNow micro-batches of 50 rows
        pq.write_table(pa.table({"id": pa.array(range(i * 50, i * 50 + 50), pa.int64()),
                                 "name": [f"n{j}" for j in range(i * 50, i * 50 + 50)]}), src / f"part-{i}.parquet")

    def sink() -> None:
        df = s3_spark.readStream.format("parquet").schema("id long, name string").option(
            "maxFilesPerTrigger", 1).load(str(src))
        q = (df.writeStream.format("fieldshift").option("checkpointLocation", str(tmp_path / "ck-in"))
             .option("catalog", pg_uri).option("table", "events").trigger(availableNow=True).start(s3_location))
        q.awaitTermination(300)
        assert q.exception() is None, q.exception()

    sink()
    t = fs.Table.open(s3_location, catalog=pg_uri, name="events")
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(150))
    assert sum(1 for s in t.history() if s.summary.get("writer") == "spark-stream") == 3
    sink()  # the same checkpoint again: every batch is committed already, nothing is written twice
    assert fs.Table.open(s3_location, catalog=pg_uri, name="events").to_arrow().num_rows == 150

    out = tmp_path / "out"
    q = (s3_spark.readStream.format("fieldshift").option("catalog", pg_uri).option("table", "events")
         .option("startingSnapshotId", "0").load(s3_location)
         .writeStream.format("fieldshift").option("checkpointLocation", str(tmp_path / "ck-out"))
         .trigger(availableNow=True).start(str(out)))
    q.awaitTermination(300)
    assert q.exception() is None, q.exception()
    copied = fs.Table.open(out).to_arrow()
    assert sorted(zip(copied.column("id").to_pylist(), copied.column("name").to_pylist(), strict=True)) == \
        [(j, f"n{j}") for j in range(150)]
