"""The session helper, the package's import cost, and tables in a shared catalog."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from conftest import assert_same

import fieldshift as fs
from fieldshift.spark import read
from fieldshift.spark.local_session import JavaNotFoundError, session

pytestmark = pytest.mark.spark


def test_session_settings(spark: Any) -> None:
    conf = spark.conf
    assert conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"
    assert conf.get("spark.sql.execution.arrow.pyspark.validateSchema.enabled") == "true"
    assert conf.get("spark.sql.python.filterPushdown.enabled") == "true"
    assert spark.sparkContext.pythonExec == sys.executable
    assert session() is spark  # getOrCreate: the running session, set up again


def test_no_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(JavaNotFoundError, match="apt-get install -y openjdk-17-jre-headless"):
        session()


def test_importing_the_package_does_not_import_pyspark() -> None:
    code = "import sys, fieldshift.spark; assert 'pyspark' not in sys.modules, 'pyspark imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_shared_catalog_read_and_write(spark: Any, tmp_path: Path) -> None:
    catalog = f"sqlite:///{tmp_path / 'shared.db'}"
    t = fs.Table.create(tmp_path / "t1", pa.schema([("k", pa.int32()), ("v", pa.string())]),
                        catalog=catalog, name="t1")
    t.append(pa.table({"k": pa.array([1], pa.int32()), "v": ["one"]}))
    t.update_schema().rename_column("v", "value").update_column("k", pa.int64()).commit()
    opts = {"catalog": catalog, "table": "t1"}
    df = spark.createDataFrame([(2, "two")], "k long, value string")
    df.write.format("fieldshift").options(**opts).mode("append").save(str(t.location))
    t = fs.Table.open(t.location, catalog=catalog, name="t1")
    assert len(t.history()) == 4
    expected = t.scan().to_arrow()
    assert_same(spark.read.format("fieldshift").options(**opts).load(str(t.location)), expected, t.schema)
    got = read(spark, t.location, catalog=catalog, name="t1")
    assert_same(got, expected, t.schema, exact_nullability=False)
