"""Beyond one machine, end to end: a table whose catalog is in PostgreSQL, written at once by writer
processes (one changing the schema as it goes) and by a Spark driver on the standalone cluster, then
read and written over Spark Connect, with every commit kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs
from tests.servers.conftest import clean_env
from tests.table.test_table_safety import BATCH_ROWS, WRITER, _check_whole_batches

SCHEMA = pa.schema([("writer", pa.int32()), ("batch", pa.int32()), ("value", pa.int64())])
JOB = Path(__file__).with_name("spark_job.py")


def test_a_postgresql_table_written_by_processes_and_a_cluster_then_used_over_connect(
        pg_uri: str, tmp_path: Path, spark_master: str, request: pytest.FixtureRequest) -> None:
    table = fs.Table.create(tmp_path / "events", SCHEMA, catalog=pg_uri, name="events")
    loc = str(table.location)
    commands = [[str(WRITER), loc, "--writer", "1", "--batches", "8", "--alter"],
                [str(WRITER), loc, "--writer", "2", "--batches", "8"],
                [str(JOB), spark_master, loc, "--catalog", pg_uri, "--table", "events", "--writer", "100",
                 "--batches", "3"]]
    logs = [tmp_path / f"process-{i}.log" for i in range(len(commands))]
    procs = []
    for command, log in zip(commands, logs, strict=True):  # all at once; output to files, so none blocks
        with log.open("w") as out:
            procs.append(subprocess.Popen([sys.executable, *command], stdout=out, stderr=subprocess.STDOUT,
                                          env=clean_env()))
    for p, log in zip(procs, logs, strict=True):
        assert p.wait(timeout=900) == 0, log.read_text()[-4000:]
    expected = {(1, b) for b in range(8)} | {(2, b) for b in range(8)} | {(100, b) for b in range(3)}
    reopened = fs.Table.open(table.location)
    assert set(_check_whole_batches(reopened)) == expected  # no commit lost, none torn
    assert sum(1 for s in reopened.history() if s.summary.get("writer") == "spark") == 3

    from fieldshift.spark import evolve, read

    spark = request.getfixturevalue("spark_connect")  # a Spark Connect client: no SparkContext here
    opts = {"catalog": pg_uri, "table": "events"}
    ds = spark.read.format("fieldshift").options(**opts).load(loc)
    altered = [line.split()[1] for line in logs[0].read_text().splitlines() if line.startswith("altered")]
    assert ds.columns == reopened.schema.names and set(altered) <= set(ds.columns)  # alters that won a race
    counts = {(r["writer"], r["batch"]): r["count"] for r in ds.groupBy("writer", "batch").count().collect()}
    assert counts == dict.fromkeys(expected, BATCH_ROWS)
    assert read(spark, loc, catalog=pg_uri, name="events").count() == len(expected) * BATCH_ROWS
    first = [str(reopened.location / f.path) for f in reopened.scan().files() if f.schema_id == 0]
    evolved = evolve(spark.read.parquet(*first), reopened.schemas_by_id()[0], reopened.schema)  # mapInArrow
    assert evolved.columns == reopened.schema.names and evolved.count() == len(first) * BATCH_ROWS
    for extra in altered:  # old rows read the default the column was added with
        assert {r[extra] for r in evolved.select(extra).collect()} == {"d"}
    new = spark.createDataFrame([(200, 0, 7)], "writer int, batch int, value long")
    new.write.format("fieldshift").options(**opts).mode("append").save(loc)  # the data source's writer
    assert fs.Table.open(table.location).scan(filter=("writer", "==", 200)).to_arrow().column("value").to_pylist() \
        == [7]


