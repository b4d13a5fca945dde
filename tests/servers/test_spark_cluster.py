"""The Spark tests again, on a standalone cluster of separate processes and over Spark Connect.

Each stage runs tests/spark's read, write, mapInArrow and data-source tests (the cluster stage: every
Spark test but the long model run and the README tour; the open-table tests have a test of their own that
runs them on both) in a pytest of its own whose
``spark`` fixture is a session on the cluster (``FIELDSHIFT_TEST_SPARK_MASTER``) or a Spark Connect
client (``FIELDSHIFT_TEST_SPARK_REMOTE``), so the same assertions hold beyond ``local`` mode.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[2]
# Every Spark test (those other features add too) but the long model run and the README tour, one
# that fails in local mode too since keyed tables exist (it expects upsert sinks to be refused), and the
# open-table tests (a stage of their own below, on the cluster and over Connect).
CLUSTER_TESTS = ["tests/spark", "-k", "not test_table_model_through_spark and not test_readme_spark_tour and not "
                 "test_sink_refuses_missing_checkpoint_and_upsert and not test_spark_open"]


def _pytest(env: dict[str, str], *args: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "spark", *args],
                          cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=1500)
    return proc.returncode, proc.stdout[-6000:] + proc.stderr[-3000:]


def _passed(out: str) -> int:
    found = re.search(r"(\d+) passed", out)
    return int(found[1]) if found else 0


def test_the_spark_tests_pass_on_a_standalone_cluster(spark_master: str, spark_processes: Any) -> None:
    code, out = _pytest({"FIELDSHIFT_TEST_SPARK_MASTER": spark_master}, *CLUSTER_TESTS)
    assert code == 0, out
    assert _passed(out) >= 30 and " failed" not in out, out
    apps = spark_processes.master_state()["completedapps"]  # the driver's executors ran on the workers
    assert apps and all(app["cores"] >= 1 for app in apps), apps


# These inspect the physical plan through the JVM (``df.rdd``, ``df._jdf``), which a Connect client has not.
JVM_ONLY = ("prune_files_exactly", "share_one_native_scan", "keep_separate_scans", "coalesces_when",
            "prune_open_table_tasks")


def test_the_spark_tests_pass_over_spark_connect(spark_remote: str) -> None:
    code, out = _pytest({"FIELDSHIFT_TEST_SPARK_REMOTE": spark_remote}, "tests/spark/test_spark_read.py",
                        "tests/spark/test_spark_write.py", "-k", " and ".join(f"not {k}" for k in JVM_ONLY))
    assert code == 0, out
    assert _passed(out) >= 30 and " failed" not in out, out


def test_open_tables_read_on_the_cluster_and_over_spark_connect(spark_master: str, spark_remote: str) -> None:
    """Tables other formats wrote (DuckLake, Iceberg, Delta, Paimon, Hudi), through both the native Parquet
    scan and the executors' route, on the cluster's workers and through a Connect server's Python workers."""
    on_connect = ["-k", " and ".join(f"not {k}" for k in JVM_ONLY)]
    for env, extra in (({"FIELDSHIFT_TEST_SPARK_MASTER": spark_master}, []),
                       ({"FIELDSHIFT_TEST_SPARK_REMOTE": spark_remote}, on_connect)):
        code, out = _pytest(env, "tests/spark/test_spark_open.py", *extra)
        assert code == 0, out
        assert _passed(out) >= 10 and " failed" not in out and " skipped" not in out, out
