"""Deletion vectors of keyed tables: recorded at write time, read as read+filter, always equal to the full merge.

Every read here is compared with the same scan with ``use_vectors = False`` (the merge-on-read of every
group, ignoring the vectors: the oracle). Races are played out step by step on real tables.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.keyed.key_lookup import candidates, live_keys, plan_vectors
from fieldshift.table.keyed.merge import group_files, resolved
from fieldshift.table.maintenance import commit_compaction, prepare_compaction
from fieldshift.table.partitions.partition_write import write_partitioned
from fieldshift.table.updates import AddFiles, DeletionVectors

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("pre", pa.int32()), ("v", pa.string())])


def _rows(ids: list[int] | np.ndarray, pre: int, v: str = "x") -> pa.Table:
    ids = np.asarray(ids, dtype=np.int64)
    return pa.table({"id": ids, "pre": pa.array(np.full(len(ids), pre), pa.int32()), "v": [f"{v}{i}" for i in ids]})


def _read(table: fs.Table, snapshot_id: int | None = None, vectors: bool = True) -> list[dict]:
    scan = table.scan(snapshot_id=snapshot_id)
    scan.use_vectors = vectors
    return sorted(scan.to_arrow().to_pylist(), key=lambda r: r["id"])


def _check(table: fs.Table) -> None:
    """Every kept snapshot reads the same with vectors and by the full merge, and counts alike."""
    for snap in table.history():
        assert _read(table, snap.snapshot_id) == _read(table, snap.snapshot_id, vectors=False), snap
        assert table.scan(snapshot_id=snap.snapshot_id).count() == len(_read(table, snap.snapshot_id))


def _all_resolved(table: fs.Table) -> bool:
    scan = table.scan()
    return all(resolved(scan, g) for g in group_files(scan.files()))


def _vector_rows(table: fs.Table) -> int:
    with sqlite3.connect(table.catalog.path) as conn:
        return conn.execute("SELECT COUNT(*) FROM fs_deletion_vector").fetchone()[0]


def _make(tmp_path: Path, buckets: int = 2) -> fs.Table:
    return fs.Table.create(tmp_path / "t", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=buckets)


def test_updates_across_schemas_read_without_a_merge_and_equal_the_full_merge(tmp_path: Path) -> None:
    table = _make(tmp_path, buckets=3)
    table.upsert(_rows(range(1000), 0))
    table.upsert(_rows(range(0, 1000, 7), 1, "a"))
    wide = _rows(range(0, 1000, 11), 2, "b").set_column(1, "pre", pa.array(np.full(91, 2), pa.int64()))
    table.upsert(wide)  # pre widened
    table.upsert(_rows(range(0, 1000, 17), 3, "c").append_column("e", pa.array(np.arange(59), pa.int32())))
    table.delete(list(range(0, 1000, 13)))
    assert len(table.schemas()) == 3
    assert _all_resolved(table)  # every group is read + filter: no ranking
    rows = _read(table)
    assert len(rows) == 1000 - len(range(0, 1000, 13))
    v = {r["id"]: r["v"] for r in rows}
    assert (v[77], v[7], v[17], v[187]) == ("b77", "a7", "c17", "c187")
    _check(table)


def test_an_upsert_losing_on_precombine_writes_nothing_for_that_key(tmp_path: Path) -> None:
    table = _make(tmp_path)
    table.upsert(_rows([1, 2, 3], 5, "old"))
    result = table.upsert(pa.table({"id": [1, 2, 3], "pre": pa.array([4, 5, None], pa.int32()),
                                    "v": ["low", "tie", "null"]}))
    assert result.rows_written == 1  # only the tie wins (the later commit); a lower or null precombine loses
    assert {r["id"]: r["v"] for r in _read(table)} == {1: "old1", 2: "tie", 3: "old3"}
    table.delete([2])
    table.upsert(_rows([2], 0, "back"))  # a delete removes the key whatever the precombine; a later upsert returns it
    assert {r["id"]: r["v"] for r in _read(table)} == {1: "old1", 2: "back2", 3: "old3"}
    assert _all_resolved(table)
    _check(table)


def test_time_travel_sees_each_snapshots_own_vectors(tmp_path: Path) -> None:
    table = _make(tmp_path)
    table.upsert(_rows(range(10), 0, "v0-"))
    first = table.current_snapshot.snapshot_id
    table.upsert(_rows(range(5), 1, "v1-"))
    second = table.current_snapshot.snapshot_id
    table.upsert(_rows(range(3), 2, "v2-"))
    assert [r["v"] for r in _read(table, first)] == [f"v0-{i}" for i in range(10)]
    assert [r["v"] for r in _read(table, second)][:6] == [f"v1-{i}" for i in range(5)] + ["v0-5"]
    assert [r["v"] for r in _read(table)][:4] == ["v2-0", "v2-1", "v2-2", "v1-3"]
    _check(table)


def _racing_upsert(table: fs.Table, base: int, rows: pa.Table) -> None:
    """An upsert planned at ``base`` and committed now (what a slower concurrent writer does)."""
    plan = plan_vectors(table.io, table.io.metadata(base), rows.cast(table.schema.to_arrow()), "upsert")
    files = write_partitioned(table.location, table.schema, table.spec, plan.rows, [], keys=table.keys)
    table.catalog.commit(table.table_id, base, [], [AddFiles(tuple(files), table.schema.schema_id),
                                                    DeletionVectors(plan.commit(files))], operation="upsert")


def test_two_upserts_planned_on_one_snapshot_cannot_both_commit_their_vectors(tmp_path: Path) -> None:
    table = _make(tmp_path, buckets=1)
    table.upsert(_rows(range(10), 0))
    base = table.current_snapshot.snapshot_id
    table.upsert(_rows([3], 1, "first"))
    with pytest.raises(fs.CommitConflictError, match="bucket"):
        _racing_upsert(table, base, _rows([3], 1, "second"))  # blind, it would leave key 3 twice
    table.upsert(_rows([3], 1, "second"))  # Table.upsert recomputes on the new head
    assert [r["v"] for r in _read(table) if r["id"] == 3] == ["second3"]
    _check(table)


def test_a_racing_upsert_in_another_bucket_commits(tmp_path: Path) -> None:
    table = _make(tmp_path, buckets=4)
    table.upsert(_rows(range(40), 0))
    base = table.current_snapshot.snapshot_id
    spec = table.keys
    scan = table.scan()
    by_bucket = {b.bucket: b.rows for b in candidates(scan, _rows(range(40), 0).select(["id"]))}
    one, other = sorted(by_bucket)[:2]
    table.upsert(_rows([int(by_bucket[one][0])], 1, "a"))
    _racing_upsert(table, base, _rows([int(by_bucket[other][0])], 1, "b"))
    assert spec is not None and _all_resolved(table)
    _check(table)


def test_a_compaction_racing_an_upsert_commits_unresolved_files_and_loses_nothing(tmp_path: Path) -> None:
    table = _make(tmp_path, buckets=1)
    table.upsert(_rows(range(20), 0))
    table.upsert(_rows(range(5), 1, "u"))
    pending = prepare_compaction(table.io, table.metadata(), 1 << 20)
    assert pending is not None
    table.upsert(_rows([1, 2], 2, "late"))  # vectors on files the compaction removes
    commit_compaction(table.io, pending)
    scan = table.scan()
    assert not all(resolved(scan, g) for g in group_files(scan.files()))  # merged on read until compacted again
    assert {r["id"]: r["v"] for r in _read(table)}[1] == "late1"
    _check(table)
    table.compact()
    assert _all_resolved(table) and {r["id"]: r["v"] for r in _read(table)}[1] == "late1"
    _check(table)


def test_expiry_forgets_the_vectors_of_removed_files(tmp_path: Path) -> None:
    table = _make(tmp_path)
    table.upsert(_rows(range(100), 0))
    table.upsert(_rows(range(50), 1))
    table.delete(list(range(10)))
    assert _vector_rows(table) > 0
    expected = _read(table)
    table.compact()
    table.expire_snapshots(older_than=0, retain_last=1)
    assert _vector_rows(table) == len(table.scan().live_files())  # only the compacted files' (empty) ones
    assert _read(table) == expected
    _check(table)


def test_files_written_without_a_lookup_merge_on_read(tmp_path: Path) -> None:
    """Spark's executors (and older fieldshift) commit files with no vectors: their groups merge."""
    table = _make(tmp_path, buckets=1)
    table.upsert(_rows(range(10), 1))
    files = write_partitioned(table.location, table.schema, table.spec,
                             _rows([1, 2], 3, "s").cast(table.schema.to_arrow()), [], keys=table.keys)
    table.catalog.commit(table.table_id, table.current_snapshot.snapshot_id, [],
                         [AddFiles(tuple(files), table.schema.schema_id)], operation="upsert")
    assert not _all_resolved(table)
    table.upsert(_rows([2, 3], 2, "p"))  # the bucket is unresolved: written unresolved, merged on read
    assert {r["id"]: r["v"] for r in _read(table)} == {**{i: f"x{i}" for i in range(10)}, 1: "s1", 2: "s2",
                                                        3: "p3"}
    _check(table)


@pytest.mark.parametrize("seed", range(4))
def test_the_append_key_check_reads_only_files_that_may_hold_the_keys(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    table = fs.Table.create(tmp_path / "t", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=4,
                            partition_by=["truncate(100, id)"])
    for i in range(6):
        table.upsert(_rows(np.unique(rng.integers(0, 500, 60)), i))
        if i % 2:
            table.delete(rng.integers(0, 500, 20).tolist())
    head = table.current_snapshot.snapshot_id
    everything = set(table.to_arrow().column("id").to_pylist())
    batch = pa.table({"id": pa.array(np.unique(rng.integers(0, 700, 40)), pa.int64())})
    keys = set(batch.column("id").to_pylist())
    pruned = set(live_keys(table.io, table.io.metadata(head), batch).column("id").to_pylist())
    full = set(live_keys(table.io, table.io.metadata(head), batch, prune=False).column("id").to_pylist())
    assert pruned & keys == full & keys == everything & keys
    scan = table.scan()
    read = sum(len(b.files) for b in candidates(scan, batch))
    assert read < len(scan.live_files())  # pruned by bucket and key bounds
    new = pa.table({"id": pa.array([10_000, 10_001], pa.int64())})
    assert all(not b.files for b in candidates(scan, new))  # keys past every file's bounds: nothing is read
    if everything & keys:
        with pytest.raises(fs.DuplicateKeyError):
            table.append(_rows(sorted(keys), 9))
    table.append(_rows([10_000, 10_001], 9))
    assert _all_resolved(table)
    _check(table)


@pytest.mark.parametrize("kind", ["dense", "sparse", "string", "two columns"])
def test_every_key_kind_supersedes_exactly_the_full_merges_rows(tmp_path: Path, kind: str) -> None:
    """The lookup's matching (a table by value, a binary search, a hash lookup, a join) against the oracle."""
    rng = np.random.default_rng(len(kind))

    def keys(ids: np.ndarray) -> dict[str, pa.Array]:
        if kind == "sparse":
            return {"k": pa.array(ids * 1_000_000_007 - 2**40, pa.int64())}
        if kind == "string":
            return {"k": pa.array([f"key-{i:05d}" for i in ids])}
        if kind == "two columns":
            return {"k": pa.array(ids % 7, pa.int64()), "k2": pa.array([f"p{i // 7}" for i in ids])}
        return {"k": pa.array(ids, pa.int64())}

    names = list(keys(np.arange(1)))
    schema = pa.schema([*(pa.field(n, t.type, nullable=False) for n, t in keys(np.arange(1)).items()),
                        ("pre", pa.int32()), ("v", pa.int32())])
    table = fs.Table.create(tmp_path / "t", schema, identifier_fields=names, precombine="pre", buckets=3)
    model: dict[int, tuple[int, int]] = {}  # id -> (pre, step) of the live row
    for step in range(8):
        ids = np.unique(rng.integers(0, 400, 120))
        pre = rng.integers(0, 4, len(ids)).astype(np.int32)
        table.upsert(pa.table({**keys(ids), "pre": pre, "v": np.full(len(ids), step, dtype=np.int32)}))
        for i, p in zip(ids.tolist(), pre.tolist(), strict=True):
            if i not in model or p >= model[i][0]:
                model[i] = (p, step)
        if step % 3 == 2:
            gone = np.unique(rng.integers(0, 400, 30))
            table.delete(pa.table(keys(gone)))
            for i in gone.tolist():
                model.pop(i, None)
    assert _all_resolved(table)
    expected = pa.table({**keys(np.array(sorted(model), dtype=np.int64)),
                         "pre": pa.array([model[i][0] for i in sorted(model)], pa.int32()),
                         "v": pa.array([model[i][1] for i in sorted(model)], pa.int32())})
    order = [(n, "ascending") for n in names]
    assert table.to_arrow().sort_by(order).to_pylist() == expected.sort_by(order).to_pylist()
    for snap in table.history():
        got = table.scan(snapshot_id=snap.snapshot_id).to_arrow().sort_by([(n, "ascending") for n in names])
        oracle = table.scan(snapshot_id=snap.snapshot_id)
        oracle.use_vectors = False
        assert got.equals(oracle.to_arrow().sort_by([(n, "ascending") for n in names])), snap


def test_a_float_precombine_orders_nan_highest_as_the_merge_does(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("pre", pa.float64()), ("v", pa.string())])
    table = fs.Table.create(tmp_path / "t", schema, identifier_fields=["id"], precombine="pre", buckets=1)
    nan = float("nan")
    table.upsert(pa.table({"id": [1, 2, 3, 4], "pre": [nan, 1.0, nan, None], "v": ["a1", "a2", "a3", "a4"]}))
    table.upsert(pa.table({"id": [1, 2, 3, 4], "pre": [5.0, nan, nan, nan], "v": ["b1", "b2", "b3", "b4"]}))
    assert {r["id"]: r["v"] for r in _read(table)} == {1: "a1", 2: "b2", 3: "b3", 4: "b4"}
    assert [r["v"] for r in _read(table)] == [r["v"] for r in _read(table, vectors=False)]
