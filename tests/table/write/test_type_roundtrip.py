"""Every primitive type fieldshift names reads back from a table as it was written, top level and nested.

Parquet cannot hold every Arrow layout (it has no 64-bit date, no seconds unit); the reader must still
give back the recorded type and the same values, and filters and partition pruning must see them.
"""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.schema.type_names import parse_primitive

SAMPLES: dict[str, list] = {
    "boolean": [True, False], "int8": [-128, 127], "int16": [-3, 3], "int": [-(2**31), 2**31 - 1],
    "long": [-(2**63), 2**63 - 1], "uint8": [0, 255], "uint16": [0, 65535], "uint32": [0, 2**32 - 1],
    "uint64": [0, 2**64 - 1], "float16": [-1.5, 2.0], "float": [1.5, -0.25], "double": [1e300, -0.0],
    "string": ["", "é"], "binary": [b"", b"\x00\xff"],
    "date": [datetime.date(1, 1, 1), datetime.date(9999, 12, 31)],
    "date64": [datetime.date(1970, 1, 1), datetime.date(2024, 2, 29)],
    "time_s": [datetime.time(0, 0, 1), datetime.time(23, 59, 59)],
    "time_ms": [datetime.time(0, 0, 0, 1000), datetime.time(12)],
    "time": [datetime.time(0, 0, 0, 1), datetime.time(23, 59, 59, 999999)],
    "timestamp_s": [datetime.datetime(1900, 1, 1), datetime.datetime(2100, 1, 1, 0, 0, 1)],
    "timestamp_ms": [datetime.datetime(2000, 1, 1, 0, 0, 0, 1000), datetime.datetime(1969, 12, 31)],
    "timestamp": [datetime.datetime(2000, 1, 1, 0, 0, 0, 1), datetime.datetime(1500, 6, 1)],
    "timestamptz": [datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)] * 2,
    "decimal(9, 2)": [decimal.Decimal("1234567.89"), decimal.Decimal("-0.01")],
}
NAMES = sorted(SAMPLES)


def _table(name: str, kind: str) -> tuple[pa.Schema, pa.Table]:
    t = parse_primitive(name)
    values = SAMPLES[name] + [None]
    base = pa.array(values, t)
    if kind == "plain":
        col, typ = base, t
    elif kind == "struct":
        typ = pa.struct([("v", t)])
        col = pa.array([{"v": v} for v in values], typ)
    else:
        typ = pa.list_(t)
        col = pa.array([[v, None] for v in values], typ)
    data = pa.table({"id": pa.array(range(len(values)), pa.int64()), "x": col})
    return pa.schema([("id", pa.int64()), ("x", typ)]), data


@pytest.mark.parametrize("kind", ["plain", "struct", "list"])
@pytest.mark.parametrize("name", NAMES)
def test_type_reads_back_as_written(tmp_path, name: str, kind: str) -> None:
    schema, data = _table(name, kind)
    table = fs.Table.create(tmp_path / "t", schema)
    table.append(data)
    got = table.scan().to_arrow().sort_by("id")
    assert got.schema.field("x").type == schema.field("x").type
    assert got.column("x").to_pylist() == data.column("x").to_pylist()


@pytest.mark.parametrize("name", ["date64", "date", "timestamp_s", "timestamp_ms", "timestamp"])
def test_temporal_partitions_prune_and_read_back(tmp_path, name: str) -> None:
    """A day-partitioned table on each temporal layout: a point filter reads one file and its row."""
    schema, data = _table(name, "plain")
    table = fs.Table.create(tmp_path / "t", schema, partition_by=["day(x)"])
    for i in range(data.num_rows):
        table.append(data.slice(i, 1))
    value = data.column("x")[1]
    scan = table.scan(filter=("x", "=", value.as_py()))
    assert len(scan.files()) == 1
    assert scan.to_arrow().column("id").to_pylist() == [1]
    unpruned = [r for r in table.scan().to_arrow().to_pylist() if r["x"] == value.as_py()]
    assert [r["id"] for r in unpruned] == [1]
