"""One real local Spark session (``local[2]``) for the whole test run, plus comparison helpers.

Spark tests compare every route against the standalone engine: the engine's answer is converted to
Spark's Arrow types (``to_arrow_schema(schema_to_spark(read_schema))``, a lossless cast for everything
Spark can hold) and rows are compared as canonical Python values (NaN and -0.0 made comparable),
ignoring row order; the DataFrame's Arrow types must equal those types exactly.
"""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

pyspark = pytest.importorskip("pyspark")


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    if shutil.which("java") is None:
        pytest.skip("no Java runtime: install openjdk-17-jre-headless to run the Spark tests")
    from fieldshift.spark import session

    remote = os.environ.get("FIELDSHIFT_TEST_SPARK_REMOTE")  # tests/servers: over Spark Connect (sc://...)
    if remote:
        s = session(master=remote)
        yield s
        s.stop()
        return
    # tests/servers runs these tests again on a standalone cluster it starts (spark://127.0.0.1:PORT)
    master = os.environ.get("FIELDSHIFT_TEST_SPARK_MASTER", "local[2]")
    cluster = {} if master.startswith("local") else {
        "spark.executor.memory": "512m", "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    s = session(master=master, **{
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.driver.memory": "1g",
        **cluster,
    })
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def canon(v: Any) -> Any:
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if v == 0.0:
            return ("0.0", math.copysign(1.0, v))
    if isinstance(v, dict):
        return {k: canon(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [canon(x) for x in v]
    return v


def rows(table: pa.Table) -> list[Any]:
    return sorted((canon(r) for r in table.to_pylist()), key=repr)


def spark_arrow(read_schema: Any) -> pa.Schema:
    from fieldshift.spark import schema_to_spark
    from fieldshift.spark._arrow import spark_arrow_schema

    return spark_arrow_schema(schema_to_spark(read_schema), "UTC")


def assert_same(df: Any, expected: pa.Table, read_schema: Any, *, exact_nullability: bool = True) -> None:
    """``df`` holds ``expected`` (the engine's answer), value for value and type for type."""
    target = spark_arrow(read_schema)
    got = df.toArrow()
    assert got.schema.names == target.names
    for g, t in zip(got.schema, target, strict=True):
        assert g.type.equals(t.type) or _loose(g.type).equals(_loose(t.type)), (g.name, g.type, t.type)
        if exact_nullability:
            assert g.type.equals(t.type), (g.name, g.type, t.type)
    from fieldshift.spark import schema_to_spark

    assert df.schema.simpleString() == schema_to_spark(read_schema).simpleString()
    want = expected.cast(target)
    assert rows(got.cast(target)) == rows(want)


def _loose(t: pa.DataType) -> pa.DataType:
    """``t`` with every nested field nullable (Spark file scans read every column as nullable)."""
    T = pa.types
    if T.is_struct(t):
        return pa.struct([pa.field(f.name, _loose(f.type)) for f in t])
    if T.is_list(t):
        return pa.list_(pa.field("element", _loose(t.value_type)))
    if T.is_map(t):
        return pa.map_(pa.field("key", _loose(t.key_type), nullable=False),
                       pa.field("value", _loose(t.item_type)))
    return t
