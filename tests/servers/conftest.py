"""Servers the `servers` tests start and stop themselves: a real PostgreSQL (``pgserver``, a
self-contained PostgreSQL in a temporary directory) and an S3-compatible server (moto's standalone
server on 127.0.0.1). Every test here is marked ``servers``, so
``make test`` leaves them out and ``make test-servers`` runs them."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SERVERS_DIR = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SERVERS_DIR in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.servers)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A PostgreSQL server for the session, on a Unix socket in a temporary directory (one that
    pgserver's own user can enter when the tests run as root, unlike pytest's private tmp dirs)."""
    pgserver = pytest.importorskip("pgserver")
    root = Path(tempfile.mkdtemp(prefix="fieldshift-pg-"))
    root.chmod(0o755)
    server = pgserver.get_server(root / "data", cleanup_mode="stop")
    yield server
    from fieldshift.table.catalog.postgres import close_pools

    close_pools()
    server.cleanup()
    shutil.rmtree(root, ignore_errors=True)


def fresh_catalog_uri(server: Any) -> str:
    """A catalog URI of an empty schema of its own (cheaper than a database per test)."""
    import psycopg

    name = f"fs_test_{uuid.uuid4().hex[:12]}"  # unique however often this module is imported
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    return f"{server.get_uri()}&options=-csearch_path%3D{name}"


@pytest.fixture
def pg_uri(pg_server: Any) -> Iterator[str]:
    """The URI of a fresh, empty PostgreSQL catalog."""
    uri = fresh_catalog_uri(pg_server)
    yield uri
    from fieldshift.table.catalog.postgres import close_pools

    close_pools(uri)


@pytest.fixture(params=["sqlite", "postgresql"])
def catalog_uri(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A shared catalog of each dialect: the same tests run over both."""
    if request.param == "sqlite":
        return str(tmp_path / "shared.db")
    return request.getfixturevalue("pg_uri")


@pytest.fixture(scope="session")
def spark_processes(s3_server: str) -> Iterator[Any]:
    """Where the Spark servers of this run live (stopped, by their process groups, at the end). Started
    after the S3 server, so the workers and the Connect server (whose Python workers read object-store
    tables) have its endpoint and credentials in their environment, as servers of a real cluster would."""
    if shutil.which("java") is None:
        pytest.skip("no Java runtime: install openjdk-17-jre-headless to run the Spark server tests")
    from tests.servers.spark_servers import SparkProcesses

    root = Path(tempfile.mkdtemp(prefix="fieldshift-spark-"))
    procs = SparkProcesses(root)
    yield procs
    procs.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def spark_master(spark_processes: Any) -> str:
    """A standalone Spark cluster on 127.0.0.1: a master and two workers, separate JVM processes."""
    return spark_processes.start_cluster(workers=2)


@pytest.fixture(scope="session")
def spark_remote(spark_processes: Any) -> str:
    """A Spark Connect server on 127.0.0.1 (``sc://127.0.0.1:PORT``)."""
    return spark_processes.start_connect()


CONNECT_MARKERS = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE")


@pytest.fixture
def spark_connect(spark_remote: str) -> Iterator[Any]:
    """A Spark Connect client session (no SparkContext). A Connect client marks its process's environment
    (SPARK_CONNECT_MODE_ENABLED), after which pyspark refuses to start a SparkContext there and in every
    child process: the marks are removed again afterwards, so later tests and their Spark drivers start."""
    from fieldshift.spark import session

    before = {k: os.environ.get(k) for k in CONNECT_MARKERS}
    spark = session(master=spark_remote)
    yield spark
    spark.stop()
    for k, v in before.items():
        if v is None:
            os.environ.pop(k, None)


def clean_env() -> dict[str, str]:
    """This process's environment without Spark Connect's marks: for child processes that start Spark drivers."""
    return {k: v for k, v in os.environ.items() if k not in CONNECT_MARKERS}


S3_BUCKET = "fieldshift-tests"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """moto's S3-compatible server on loopback for the session; its endpoint and test credentials go into
    the environment (AWS_ENDPOINT_URL and friends), where fieldshift, its writer processes and Spark's
    executors find them as they would find real ones. Yields the endpoint URL."""
    pytest.importorskip("moto")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    endpoint = f"http://127.0.0.1:{port}"
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint, "AWS_EC2_METADATA_DISABLED": "true"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("moto's S3 server did not start") from None
                time.sleep(0.2)
        import pyarrow.fs as pafs

        pafs.S3FileSystem(endpoint_override=endpoint, allow_bucket_creation=True).create_dir(S3_BUCKET)
        yield endpoint
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def s3_location(s3_server: str) -> str:
    """A fresh table location on the S3 server (a prefix of its own in the test bucket)."""
    return f"s3://{S3_BUCKET}/{uuid.uuid4().hex[:12]}/table"
