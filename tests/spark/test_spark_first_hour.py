"""Spark as a new user meets it: a quiet start, fieldshift errors readable through Spark, a clear missing-Spark hint."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
import fieldshift.spark as fss

_START = """
import fieldshift.spark as fss
spark = fss.session(master="local[1]", verbose={verbose})
assert spark.range(3).count() == 3
spark.stop()
"""


def _stderr_lines(verbose: bool) -> list[str]:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run([sys.executable, "-c", _START.format(verbose=verbose)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stderr.splitlines() if line.strip()]


def test_session_starts_quiet_and_verbose_shows_spark_logging() -> None:
    quiet, verbose = _stderr_lines(False), _stderr_lines(True)
    assert quiet == [], quiet
    assert any("log4j" in line or "log level" in line for line in verbose), verbose  # Spark's own start-up


def _last_line(error: BaseException) -> str:
    lines = [line for line in str(error).splitlines() if line.strip() and not line.strip().startswith("SQLSTATE")]
    return lines[-1].strip()


@pytest.fixture
def table(tmp_path: Path) -> fs.Table:
    t = fs.Table.create(tmp_path / "t", pa.schema([pa.field("a", pa.string()), pa.field("n", pa.int64())]))
    t.append(pa.table({"a": ["1", "x"], "n": pa.array([1, 2], pa.int64())}))
    return t


def test_data_source_errors_end_with_the_fieldshift_message(spark: Any, table: fs.Table) -> None:
    location = str(table.location)
    with pytest.raises(Exception) as planning:  # raised on Spark's planner worker
        spark.read.format("fieldshift").option("policy", "nope").load(location).collect()
    assert _last_line(planning.value).startswith("fieldshift.errors.InvalidOptionError: unknown policy 'nope'")
    assert str(planning.value).count("File ") <= 1  # one frame at most: no nested traceback
    for f in (table.location / "data").glob("*.parquet"):
        f.unlink()
    with pytest.raises(Exception) as executing:  # raised on an executor while reading
        spark.read.format("fieldshift").load(location).collect()
    assert _last_line(executing.value).startswith("fieldshift.errors.DataFileError: data file ")
    with pytest.raises(Exception) as mapped:  # fss.read's own pyarrow route (mapInArrow)
        fss.read(spark, location, route="arrow").collect()
    assert _last_line(mapped.value).startswith("fieldshift.errors.DataFileError: data file ")


def test_multi_line_messages_become_one_line(spark: Any, tmp_path: Path) -> None:
    v1 = fs.Schema.from_arrow(pa.schema([pa.field("x", pa.int64())]), assign_ids=True)
    v2 = fs.Schema.from_arrow(pa.schema([pa.field("x", pa.int64(), nullable=False,
                                                  metadata={"PARQUET:field_id": "1"})]))
    df = spark.createDataFrame([(1,), (None,)], "x long")
    with pytest.raises(Exception) as raised:
        fss.evolve(df, v1, v2).collect()
    last = _last_line(raised.value)
    assert last.startswith("fieldshift.errors.NullInRequiredFieldError: ") and "'x'" in last, last


def test_entry_points_raise_the_fieldshift_error_message_first(spark: Any, table: fs.Table) -> None:
    location = str(table.location)
    ints = spark.createDataFrame([(1, 5)], "a int, n long")
    with pytest.raises(fs.IncompatibleTypeError) as planning:  # refused by the writer on the driver's worker
        fss.write(ints, location, policy="lossless")
    assert str(planning.value).startswith("column 'a': incoming int cannot be written")
    assert "Traceback" not in str(planning.value) and "SQLSTATE" not in str(planning.value)
    assert fs.Table.open(location).to_arrow().num_rows == 2
    with pytest.raises(fs.InvalidOptionError):
        fss.write(ints, location, mode="upsert")  # type: ignore[arg-type]

    required = fs.Table.create(table.location.parent / "r", pa.schema([pa.field("k", pa.int64(), nullable=False)]))
    nulls = spark.createDataFrame([(1,), (None,)], "k long")
    with pytest.raises(fs.NullInRequiredFieldError) as executing:  # raised on an executor while writing
        fss.write(nulls, str(required.location))
    assert "'k'" in str(executing.value).splitlines()[0]
    assert fs.Table.open(required.location).to_arrow().num_rows == 0  # nothing was committed

    fss.write(spark.createDataFrame([("y", 3)], "a string, n long"), location)
    assert sorted(fs.Table.open(location).to_arrow().column("a").to_pylist()) == ["1", "x", "y"]
    fss.write(spark.createDataFrame([("z", 4)], "a string, n long"), location, mode="overwrite")
    assert fs.Table.open(location).to_arrow().column("a").to_pylist() == ["z"]


_HIDE_PYSPARK = """
import sys
class HidePySpark:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pyspark", "py4j"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, HidePySpark())
"""


def test_without_pyspark_the_error_says_which_extra_to_install(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(_HIDE_PYSPARK)
    code = ("import fieldshift.spark as fss\n"
            "for use in (lambda: fss.session(), lambda: fss.read, lambda: fss.write(object(), 't')):\n"
            "    try:\n        use()\n    except ImportError as e:\n        print(type(e).__name__, '|', e)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3 and all("pip install 'fieldshift[spark]'" in line for line in lines), lines
    assert lines[0].startswith("SparkNotInstalledError")


def test_without_pyspark_type_conversions_name_the_extra_too(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(_HIDE_PYSPARK)
    code = ("import fieldshift.spark as fss\n"
            "for name in ('schema_to_spark', 'parse_spark_literal'):\n"
            "    try:\n        getattr(fss, name)\n    except ImportError as e:\n        print(type(e).__name__)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["SparkNotInstalledError", "SparkNotInstalledError"]


# What a Spark Connect client received from a server whose Python workers lack fieldshift (Spark 4.1).
_CONNECT_SERVER_WITHOUT_FIELDSHIFT = (
    "[PYTHON_DATA_SOURCE_ERROR] Failed to create Python data source instance: Traceback (most recent call last):\n"
    "  File \"<frozen importlib._bootstrap>\", line 1140, in _find_and_load_unlocked\n"
    "ModuleNotFoundError: No module named 'fieldshift'\n SQLSTATE: 38000\n\nJVM stacktrace:\n"
    "org.apache.spark.sql.AnalysisException\n\tat org.apache.spark.sql.errors.QueryCompilationErrors$."
    "pythonDataSourceError(QueryCompilationErrors.scala:2576)\n")


def test_workers_without_fieldshift_are_named_with_the_fix() -> None:
    """Spark's ModuleNotFoundError inside a Java stack trace becomes SparkWorkerImportError saying to start the
    server with PYSPARK_PYTHON (tests/servers/test_spark_connect_workers.py meets it on a real server)."""
    from fieldshift.spark.errors_bridge import fieldshift_errors, from_spark_error

    raised = from_spark_error(RuntimeError(_CONNECT_SERVER_WITHOUT_FIELDSHIFT))
    assert isinstance(raised, fs.SparkWorkerImportError)
    assert "PYSPARK_PYTHON" in str(raised) and "start-connect-server.sh" in str(raised)
    with pytest.raises(fs.SparkWorkerImportError, match="cannot import fieldshift"), fieldshift_errors():
        raise RuntimeError(_CONNECT_SERVER_WITHOUT_FIELDSHIFT)
    assert from_spark_error(RuntimeError("ModuleNotFoundError: No module named 'pandas'")) is None
