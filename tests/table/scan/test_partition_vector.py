"""Issue 35: partition pruning over many files at once (table/scan/partition_vector.py).

Integer partition values tested as columns only remove files the per-file partition test would remove:
every case compares the files a scan keeps with it and without it (``vector_prune = False``), and the rows
with an unpruned scan (``prune = False``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.scan.prune_vector import MIN_FILES

START = dt.datetime(2024, 1, 1)
DAYS = MIN_FILES + 6


def _rows(days: range, offset: int = 0) -> pa.Table:
    n = len(days) * 3
    ids = np.arange(offset, offset + n, dtype=np.int64)
    ts = [START + dt.timedelta(days=d, hours=7 * k) for d in days for k in range(3)]
    region = [None if i % 11 == 0 else int(i % 5) - 2 for i in ids.tolist()]
    return pa.table({"id": ids, "ts": pa.array(ts, pa.timestamp("us")), "region": pa.array(region, pa.int32()),
                     "name": pa.array([f"n{i % 4}" for i in ids.tolist()]), "d": pa.array([t.date() for t in ts])})


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> fs.Table:
    """Days by day, bucket and region (nulls among them), then the spec replaced: hours and a truncate."""
    t = fs.Table.create(tmp_path_factory.mktemp("pvec") / "t", _rows(range(1)).schema,
                        partition_by=["days(ts)", "bucket(3, id)", "region"])
    t.append(_rows(range(DAYS)))
    t.update_spec().replace_field("days(ts)", "hours(ts)").add_field("truncate(10, id)").commit()
    t.append(_rows(range(DAYS - 3, DAYS + 2), offset=10_000))
    t2 = fs.Table.open(t.location)
    assert len(t2.scan().live_files()) > 2 * MIN_FILES
    return t2


def _compare(t: fs.Table, flt: Any) -> tuple[int, int]:
    """(files kept with columnar partition tests, live files); asserts both agree and lose no row."""
    fast, slow, full = t.scan(filter=flt), t.scan(filter=flt), t.scan(filter=flt)
    slow.vector_prune = False
    full.prune = False
    kept = sorted(f.path for f in fast.files())
    assert kept == sorted(f.path for f in slow.files()), flt
    assert sorted(fast.to_arrow().to_pylist(), key=repr) == sorted(full.to_arrow().to_pylist(), key=repr), flt
    return len(kept), len(full.files())


DAY = START + dt.timedelta(days=20)
LATE = START + dt.timedelta(days=DAYS - 2, hours=5)
FILTERS: list[Any] = [
    [("ts", ">=", DAY), ("ts", "<", DAY + dt.timedelta(days=1))], ("ts", "<", START + dt.timedelta(days=3)),
    ("ts", "<=", START), ("ts", ">", LATE), ("ts", ">=", LATE), ("ts", "==", LATE),
    ("region", "==", 1), ("region", "in", [-2, 2]), ("region", "!=", 0), ("region", "not in", [0, 1]),
    ("region", "is_null"), ("region", "not_null"), ("region", "<", -1), ("region", ">=", 2),
    ("id", "==", 17), ("id", "in", [3, 10_004, 99]), ("id", ">=", 10_010), ("id", "<", 12),
    ("name", "==", "n1"), ("d", "==", DAY.date()), ("region", "==", 2**40), ("id", "in", [2**70]),
    fs.col("region").is_null() | (fs.col("id") < 5), (fs.col("region") == 1) & (fs.col("id") > 150),
    (fs.col("ts") >= LATE) | (fs.col("region") == -2), ("region", "in", []),
]


@pytest.mark.parametrize("flt", FILTERS, ids=repr)
def test_columnar_partition_tests_keep_what_the_per_file_test_keeps(table: fs.Table, flt: Any) -> None:
    kept, live = _compare(table, flt)
    assert kept <= live


def test_a_one_day_filter_keeps_only_that_days_files(table: fs.Table) -> None:
    flt = [("ts", ">=", DAY), ("ts", "<", DAY + dt.timedelta(days=1))]
    kept, live = _compare(table, flt)
    assert 0 < kept <= 3 * 6 and live > 2 * MIN_FILES  # at most a bucket and region per row of that day
    pipeline = table.scan(filter=flt).pipeline()
    gone = pipeline._partition_ruled_out(pipeline.content.files)
    assert gone.sum() == live - kept  # the columns decided every file: the per-file test sees only those kept


def test_partition_columns_are_made_once_per_snapshot(table: fs.Table) -> None:
    files = table.scan().pipeline().content.files
    groups = files.partition_columns()
    assert files.partition_columns() is groups and len(groups) == 2  # one per spec's layout
    assert sum(len(g.positions) for g in groups) == len(files)
    nulls = [g for g in groups if not g.is_int[2].all()]
    assert nulls  # null regions are no plain integers: left to the per-file test
