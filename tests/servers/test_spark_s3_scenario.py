"""Issue 16's "Done when", end to end: tables on the S3 server with their catalog in PostgreSQL, written at
once by Python writer processes (appends with schema changes; upserts, deletes, compactions and expiries on a
keyed table) and by a Spark driver on the standalone cluster (whose executors open S3 from the URI with the
endpoint and credentials from their environment), then read over Spark Connect, with every commit kept."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs
from tests.servers.conftest import clean_env
from tests.table.test_table_safety import BATCH_ROWS, WRITER, _check_whole_batches, _keyed_rows
from tests.table.writer_process import keyed_state

SCHEMA = pa.schema([("writer", pa.int32()), ("batch", pa.int32()), ("value", pa.int64())])
KEYED = pa.schema([pa.field("writer", pa.int32(), nullable=False), pa.field("slot", pa.int32(), nullable=False),
                   ("batch", pa.int32()), ("value", pa.int64())])
JOB = Path(__file__).with_name("spark_job.py")
PY_BATCHES, SPARK_BATCHES, KEYED_STEPS = 6, 3, 10


def test_s3_tables_with_a_postgresql_catalog_written_by_processes_and_a_cluster_read_over_connect(
        s3_location: str, pg_uri: str, tmp_path: Path, spark_master: str, request: pytest.FixtureRequest) -> None:
    fs.Table.create(s3_location, SCHEMA, catalog=pg_uri, name="events")
    keyed_loc = s3_location.rsplit("/", 1)[0] + "/keyed"
    fs.Table.create(keyed_loc, KEYED, identifier_fields=["writer", "slot"], precombine="batch", buckets=3,
                    catalog=pg_uri, name="keyed")
    commands = [[str(WRITER), s3_location, "--writer", "1", "--batches", str(PY_BATCHES), "--alter"],
                [str(WRITER), s3_location, "--writer", "2", "--batches", str(PY_BATCHES)],
                [str(WRITER), keyed_loc, "--writer", "1", "--batches", str(KEYED_STEPS), "--keyed"],
                [str(WRITER), keyed_loc, "--writer", "2", "--batches", str(KEYED_STEPS), "--keyed"],
                [str(JOB), spark_master, s3_location, "--catalog", pg_uri, "--table", "events", "--writer", "100",
                 "--batches", str(SPARK_BATCHES)]]
    logs = [tmp_path / f"process-{i}.log" for i in range(len(commands))]
    procs = []
    for command, log in zip(commands, logs, strict=True):  # all at once; output to files, so none blocks
        with log.open("w") as out:
            procs.append(subprocess.Popen([sys.executable, *command], stdout=out, stderr=subprocess.STDOUT,
                                          env=clean_env()))
    for p, log in zip(procs, logs, strict=True):
        assert p.wait(timeout=900) == 0, log.read_text()[-4000:]

    expected = ({(w, b) for w in (1, 2) for b in range(PY_BATCHES)} | {(100, b) for b in range(SPARK_BATCHES)})
    reopened = fs.Table.open(s3_location)  # by the marker on S3, which names the PostgreSQL catalog
    assert set(_check_whole_batches(reopened)) == expected  # no commit lost, none torn or doubled
    assert sum(1 for s in reopened.history() if s.summary.get("writer") == "spark") == SPARK_BATCHES
    assert all(reopened.storage.exists(f.path) for f in reopened.scan().files())
    keyed = fs.Table.open(keyed_loc, catalog=pg_uri, name="keyed")
    for w in (1, 2):
        assert _keyed_rows(keyed, w) == keyed_state(KEYED_STEPS)

    from fieldshift.spark import read

    spark = request.getfixturevalue("spark_connect")  # a Spark Connect client, started once the writers are done
    opts = {"catalog": pg_uri, "table": "events"}
    ds = spark.read.format("fieldshift").options(**opts).load(s3_location)
    assert ds.columns == reopened.schema.names
    rows = [(r["writer"], r["batch"], r["value"]) for r in ds.select("writer", "batch", "value").collect()]
    assert len(rows) == len(set(rows)) == len(expected) * BATCH_ROWS  # nothing duplicated
    assert set(rows) == {(w, b, v) for w, b in expected for v in range(BATCH_ROWS)}  # nothing lost
    per_writer = Counter(w for w, _, _ in rows)
    assert per_writer == {1: PY_BATCHES * BATCH_ROWS, 2: PY_BATCHES * BATCH_ROWS, 100: SPARK_BATCHES * BATCH_ROWS}
    via_read = read(spark, s3_location, catalog=pg_uri, name="events")  # object store: the pyarrow route
    counts = {(r["writer"], r["batch"]): r["count"] for r in via_read.groupBy("writer", "batch").count().collect()}
    assert counts == dict.fromkeys(expected, BATCH_ROWS)
    merged = read(spark, keyed_loc, catalog=pg_uri, name="keyed").collect()
    want = sorted((w, s, b) for w in (1, 2) for s, b in keyed_state(KEYED_STEPS).items())
    assert sorted((r["writer"], r["slot"], r["batch"]) for r in merged) == want
