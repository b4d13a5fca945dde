"""A table's own policy on Spark: the data source and ``fieldshift.spark.read`` read what the table committed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from conftest import assert_same

import fieldshift as fs
from fieldshift.spark import read

pytestmark = pytest.mark.spark


def test_item9_default_append_widening_reads_on_spark(spark: Any, tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("v", pa.int64())]))
    t.append({"id": [1], "v": [2**53 + 1]})
    t.append(pa.table({"id": [2], "v": pa.array([0.5], pa.float64())}))  # onehouse widens long -> double
    expected = t.to_arrow()
    assert expected.column("v").to_pylist() == [float(2**53), 0.5]
    assert_same(spark.read.format("fieldshift").load(str(t.location)), expected, t.schema)
    assert_same(read(spark, t.location), expected, t.schema, exact_nullability=False)
    assert_same(read(spark, t.location, via="datasource", route="arrow"), expected, t.schema,
                exact_nullability=False)
    with pytest.raises(fs.SchemaMismatchError):  # a stricter read is still refused at plan time
        read(spark, t.location, policy=fs.CastPolicy.lossless())
