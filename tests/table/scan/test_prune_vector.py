"""Issue 17: statistics pruning over many files at once (table/scan/prune_vector.py).

The vectorised pruning only removes files the per-file rule (`stats.may_match`) would remove: every
test compares the files a scan keeps with it and without it (``vector_prune = False``), and the rows
with an unpruned scan (``prune = False``).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.files.data_files import write_data_file
from fieldshift.table.scan.prune_vector import MIN_FILES, prune_by_integer_stats
from fieldshift.table.updates import AddFiles

FILES = MIN_FILES + 36


def _bulk(t: fs.Table, tables: list[pa.Table]) -> None:
    """Real Parquet files, one per table, committed in one snapshot (as many appends would)."""
    schema = t.schema
    files = [write_data_file(t.location, schema, schema.to_arrow().empty_table().cast(schema.to_arrow())
                             if data.num_rows == 0 else data.cast(schema.to_arrow())) for data in tables]
    head = t.current_snapshot
    t.catalog.commit(t.table_id, head.snapshot_id, [], [AddFiles(tuple(files), schema.schema_id)],
                     operation="append")


def _random_files(rng: random.Random) -> list[pa.Table]:
    out = []
    for i in range(FILES):
        n = rng.randint(1, 6)
        kind = rng.random()
        base = rng.randint(-1000, 1000)
        if kind < 0.1:
            v = [None] * n  # every value null
        elif kind < 0.3:
            v = [None if rng.random() < 0.4 else base + rng.randint(0, 50) for _ in range(n)]
        else:
            v = [base + rng.randint(0, 50) for _ in range(n)]
        small = [rng.randint(-100, 100) for _ in range(n)]
        out.append(pa.table({"id": pa.array([i * 10 + j for j in range(n)], pa.int64()),
                             "v": pa.array(v, pa.int64()), "small": pa.array(small, pa.int16()),
                             "s": [f"x{rng.randint(0, 9)}" for _ in range(n)]}))
    return out


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> fs.Table:
    t = fs.Table.create(tmp_path_factory.mktemp("pv") / "t", pa.schema(
        [("id", pa.int64()), ("v", pa.int64()), ("small", pa.int16()), ("s", pa.string())]))
    _bulk(t, _random_files(random.Random(17)))
    return t


def _compare(t: fs.Table, flt: Any, **kw: Any) -> tuple[int, int]:
    """(files kept with vectorised pruning, live files); asserts both prunings agree and lose no row."""
    fast = t.scan(filter=flt, **kw)
    slow = t.scan(filter=flt, **kw)
    slow.vector_prune = False
    full = t.scan(filter=flt, **kw)
    full.prune = False
    kept = [f.path for f in fast.files()]
    assert kept == [f.path for f in slow.files()], flt
    rows = sorted(fast.to_arrow().to_pylist(), key=repr)
    assert rows == sorted(full.to_arrow().to_pylist(), key=repr), flt
    return len(kept), len(full.files())


FILTERS: list[Any] = [
    ("v", "==", 10), ("v", "<", -500), ("v", "<=", -990), ("v", ">", 900), ("v", ">=", 1040),
    ("v", "in", [3, 500, -700]), ("v", "in", [5000]), ("v", "is_null"), ("v", "not_null"), ("v", "!=", 7),
    ("v", "not in", [1, 2]), ("small", "==", 5), ("small", "<", -95), ("small", ">", 99), ("id", "==", 505),
    ("id", ">=", 990), [("v", ">", 0), ("small", "<", 0)], [("id", "<", 300), ("v", "is_null")],
    ("v", "==", 2**62), ("v", "<", -(2**62)), ("s", "==", "x3"),
]


@pytest.mark.parametrize("flt", FILTERS, ids=repr)
def test_vectorised_pruning_keeps_what_the_per_file_rule_keeps(many: fs.Table, flt: Any) -> None:
    _, live = _compare(many, flt)
    assert live == FILES


def test_it_prunes_where_statistics_allow(many: fs.Table) -> None:
    kept, live = _compare(many, ("id", "==", 500))
    assert kept == 1 and live == FILES
    kept, _ = _compare(many, ("v", "==", 5000))
    assert kept == 0
    scan = many.scan(filter=("id", "==", 500))  # the vectorised step alone already leaves one file
    assert len(prune_by_integer_stats(scan, scan.live_files())) == 1
    scan = many.scan(filter=("s", "==", "x3"))  # strings: left to the per-file rule
    assert len(prune_by_integer_stats(scan, scan.live_files())) == FILES


def test_random_filters_agree(many: fs.Table) -> None:
    rng = np.random.default_rng(3)
    ops = ["==", "<", "<=", ">", ">="]
    for _ in range(25):
        col = str(rng.choice(["v", "small", "id"]))
        flt = (col, str(rng.choice(ops)), int(rng.integers(-1100, 1100)))
        _compare(many, flt)


def test_files_of_older_schema_versions_take_the_per_file_path(tmp_path: Path) -> None:
    """int32 files read as int64 (a cast, not a Take) and files without the column: never vector-pruned
    wrongly, and the int64 files still are."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("v", pa.int32())]))
    rng = random.Random(5)
    _bulk(t, [pa.table({"id": pa.array([i], pa.int64()), "v": pa.array([rng.randint(0, 99)], pa.int32())})
              for i in range(40)])
    t.update_schema().update_column("v", pa.int64()).add_column("w", pa.int64()).commit()
    _bulk(t, [pa.table({"id": pa.array([100 + i], pa.int64()), "v": pa.array([1000 + i], pa.int64()),
                        "w": pa.array([i], pa.int64())}) for i in range(FILES)])
    for flt in [("v", "==", 1005), ("v", "<", 50), ("w", "==", 3), ("w", "is_null"), ("id", ">", 130)]:
        _compare(t, flt)
    kept, live = _compare(t, ("v", "==", 1005))
    assert live == 40 + FILES and kept == 1  # the int32 files (0-99) go by the per-file rule, the others at once
