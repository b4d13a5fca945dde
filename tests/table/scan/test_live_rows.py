"""Deleted positions removed by zero-copy slices and skipped row groups (``table/scan/live_rows``): the same rows in
the same order as one filter per batch with every row group decoded (``fast_deletes = False``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.files import data_files
from fieldshift.table.scan.live_rows import MIN_SLICE_ROWS, live_batch_size, live_extent, live_parts, live_row_groups

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("pre", pa.int32()), ("v", pa.string()),
                    ("x", pa.float64())])


def _batch(n: int) -> pa.RecordBatch:
    ids = np.arange(n, dtype=np.int64)
    x = pa.array(ids * 0.5, mask=ids % 7 == 0)  # no NaN: Table.equals counts NaN unequal to itself
    return pa.RecordBatch.from_pydict({"id": ids, "v": [f"v{i}" for i in ids], "x": x})


def _filtered(batch: pa.RecordBatch, removed: np.ndarray) -> pa.Table:
    keep = np.ones(batch.num_rows, dtype=bool)
    keep[removed] = False
    return pa.Table.from_batches([batch.filter(pa.array(keep))])


def _joined(parts: list[pa.RecordBatch], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_batches(parts, schema=schema)


@pytest.mark.parametrize("pattern", ["none", "scattered", "one range", "head and tail", "few ranges", "all",
                                     "every other"])
def test_live_parts_are_the_filtered_rows_in_order(pattern: str) -> None:
    n = 50_000
    batch = _batch(n)
    rng = np.random.default_rng(7)
    removed = {
        "none": np.zeros(0, np.int64),
        "scattered": np.sort(rng.choice(n, n // 10, replace=False)),
        "one range": np.arange(10_000, 20_000),
        "head and tail": np.concatenate([np.arange(0, 5_000), np.arange(45_000, n)]),
        "few ranges": np.concatenate([np.arange(s, s + 3_000) for s in range(1_000, n - 3_000, 12_000)]),
        "all": np.arange(n),
        "every other": np.arange(0, n, 2),
    }[pattern].astype(np.int64)
    expected = _filtered(batch, removed)
    for slices in (True, False):
        assert _joined(live_parts(batch, removed, slices), batch.schema).equals(expected)


def test_clustered_deletes_become_zero_copy_slices_and_scattered_ones_one_filter() -> None:
    batch = _batch(100_000)
    parts = live_parts(batch, np.arange(30_000, 60_000, dtype=np.int64))
    assert [p.num_rows for p in parts] == [30_000, 40_000]
    base = batch.column(0).buffers()[1].address
    assert parts[1].column(0).buffers()[1].address == base  # a slice shares the decoded buffers
    assert parts[1].column(0)[0].as_py() == 60_000
    scattered = np.arange(0, 100_000, 10, dtype=np.int64)  # 10,000 live runs of 9 rows: a filter
    (one,) = live_parts(batch, scattered)
    assert one.num_rows == 90_000 and one.column(0).buffers()[1].address != base
    runs = np.concatenate([np.arange(s, s + 10) for s in range(0, 100_000, 2 * MIN_SLICE_ROWS)])
    assert len(live_parts(batch, runs.astype(np.int64))) > 1  # live runs just over the threshold: slices
    assert len(live_parts(batch, runs.astype(np.int64), slices=False)) == 1


def test_live_row_groups_skip_only_groups_without_a_live_row() -> None:
    rows = [100, 100, 100, 50]
    deleted = np.concatenate([np.arange(0, 10), np.arange(100, 200), np.arange(250, 260), np.arange(300, 350)])
    groups, renumbered = live_row_groups(rows, deleted.astype(np.int64))
    assert groups == [0, 2]
    assert renumbered.tolist() == [*range(10), *range(150, 160)]  # group 2's rows follow group 0's
    assert live_row_groups(rows, np.arange(5, dtype=np.int64))[0] is None  # every group has a live row
    assert live_row_groups(rows, np.arange(350, dtype=np.int64))[0] == []
    assert live_row_groups([100], np.arange(100, dtype=np.int64))[0] == []
    assert live_row_groups([100], np.arange(99, dtype=np.int64))[0] is None


def test_live_extent_and_a_batch_size_that_stops_there() -> None:
    assert live_extent(100, None) == 100
    assert live_extent(100, np.array([3, 50, 98], np.int64)) == 100  # the last row is live
    assert live_extent(100, np.array([3, 50, 97, 98, 99], np.int64)) == 97
    assert live_extent(100, np.arange(100, dtype=np.int64)) == 0
    assert live_extent(100, np.array([5, 6, 99], np.int64)) == 99
    for extent, size in [(225_000, 1 << 20), (225_001, 65_536), (7, 65_536), (3_000_001, 1 << 20)]:
        bs = live_batch_size(extent, size)
        batches = -(-extent // bs)
        assert bs <= size and extent <= batches * bs < extent + batches  # ends at the extent or a few rows on


def _compare(table: fs.Table) -> pa.Table:
    """The scan with the fast paths and without: the same rows in the same order, by every read path."""
    fast, slow = table.scan(), table.scan()
    slow.pipeline().fast_deletes = False
    result = fast.to_arrow()
    assert result.equals(slow.to_arrow())
    assert pa.Table.from_batches(list(fast.to_batches()), schema=result.schema).equals(
        pa.Table.from_batches(list(slow.to_batches()), schema=result.schema))
    assert fast.count() == slow.count() == result.num_rows
    return result


def _rows(ids: np.ndarray, pre: int) -> pa.Table:
    ids = ids.astype(np.int64)
    x = pa.array(ids * 0.25, mask=ids % 9 == 0)
    return pa.table({"id": ids, "pre": pa.array(np.full(len(ids), pre), pa.int32()),
                     "v": [f"v{pre}-{i}" for i in ids], "x": x})


def test_keyed_table_upserted_by_ranges_and_at_random_reads_alike(tmp_path: Path) -> None:
    table = fs.Table.create(tmp_path / "k", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=2,
                            properties={"fieldshift.write.row-group-rows": "5000"})
    table.upsert(_rows(np.arange(60_000), 0))
    table.upsert(_rows(np.arange(10_000, 40_000), 1))  # a range of keys: long runs deleted in each base file
    table.upsert(_rows(np.random.default_rng(3).choice(60_000, 3_000, replace=False), 2))  # scattered
    table.update_schema().add_column("e", pa.int32()).commit()
    table.upsert(_rows(np.arange(50_000, 55_000), 3).append_column("e", pa.array(np.arange(5_000), pa.int32())))
    result = _compare(table)
    assert result.num_rows == 60_000
    got = dict(zip(result.column("id").to_pylist(), result.column("pre").to_pylist(), strict=True))
    assert got[10_000] in (1, 2) and got[52_000] == 3 and got[5] in (0, 2)


def test_unkeyed_delete_of_whole_row_groups_skips_them_and_reads_alike(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    table = fs.Table.create(tmp_path / "u", SCHEMA, properties={"fieldshift.write.row-group-rows": "4000"})
    table.append(_rows(np.arange(20_000), 0))  # one file of 5 row groups of 4,000 rows
    table.delete(filter="id >= 4000 and id < 12000")  # groups 1 and 2 entirely
    table.delete(filter="id >= 14000 and id < 14010")
    seen: list[object] = []
    read = data_files.read_columns

    def spy(pf: object, names: object, batch_size: int, row_groups: object = None, **kw: object) -> object:
        seen.append(None if row_groups is None else list(row_groups))  # type: ignore[call-overload]
        return read(pf, names, batch_size, row_groups, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr("fieldshift.table.scan.open_scan.read_columns", spy)
    result = _compare(table)
    assert result.num_rows == 20_000 - 8_000 - 10
    assert result.column("id").to_pylist() == [*range(4000), *range(12_000, 14_000), *range(14_010, 20_000)]
    assert [0, 3, 4] in seen and None in seen  # the fast scan skipped the dead groups; the slow one read all


def test_newest_rows_superseded_are_never_decoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = fs.Table.create(tmp_path / "n", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=2)
    table.upsert(_rows(np.arange(40_000), 0))
    table.upsert(_rows(np.arange(30_000, 40_000), 1))  # the newest quarter of every base file
    table.upsert(_rows(np.arange(39_990, 40_000), 2))  # the tail of the first update files
    decoded: list[int] = []
    read = data_files.read_columns

    def counting(*args: object, **kw: object) -> object:
        for batch in read(*args, **kw):  # type: ignore[arg-type]
            decoded.append(batch.num_rows)
            yield batch

    monkeypatch.setattr("fieldshift.table.scan.open_scan.read_columns", counting)
    fast, slow = table.scan(), table.scan()
    slow.pipeline().fast_deletes = False
    got = fast.to_arrow()
    fast_rows, decoded[:] = sum(decoded), []
    assert got.equals(slow.to_arrow())
    assert sum(decoded) == 40_000 + 10_000 + 10  # every physical row
    assert fast_rows == 30_000 + 9_990 + 10  # the superseded tails of the base and first update files: not decoded
    assert got.num_rows == 40_000


def test_scan_evolved_batches_with_a_clustered_vector_read_alike(tmp_path: Path) -> None:
    """``Scan.evolved_batches`` (compaction and the key lookups read groups through it) with a keep mask."""
    table = fs.Table.create(tmp_path / "e", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=1)
    table.upsert(_rows(np.arange(30_000), 0))
    table.upsert(_rows(np.arange(5_000, 20_000), 1))
    scan = table.scan()
    vectors = scan.deletion_vectors()
    (base,) = [f for f in scan.live_files() if f.file_id in vectors and vectors[f.file_id].cardinality]
    keep = vectors[base.file_id].keep_mask(base.record_count)
    fast = list(scan.evolved_batches(base, keep))
    scan.pipeline().fast_deletes = False
    slow = list(scan.evolved_batches(base, keep))
    schema = fast[0].schema
    assert len(fast) == 2 and len(slow) == 1  # the two live runs as slices; one filtered copy
    assert pa.Table.from_batches(fast, schema=schema).equals(pa.Table.from_batches(slow, schema=schema))
    assert sum(b.num_rows for b in fast) == 15_000
