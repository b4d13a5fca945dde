"""Crash and concurrency safety with real processes: SIGKILL mid-write, two writers at once."""

from __future__ import annotations

import datetime as dt
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs

WRITER = Path(__file__).with_name("writer_process.py")
BATCH_ROWS = 500


def _make(tmp_path: Path) -> fs.Table:
    schema = pa.schema([("writer", pa.int32()), ("batch", pa.int32()), ("value", pa.int64())])
    return fs.Table.create(tmp_path / "t", schema)


def _spawn(location: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(WRITER), str(location), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _check_whole_batches(table: fs.Table) -> Counter[tuple[int, int]]:
    """Every committed batch is read whole, never in part; returns rows per (writer, batch)."""
    rows = table.scan(columns=["writer", "batch", "value"]).to_arrow()
    per_batch = Counter(zip(rows.column("writer").to_pylist(), rows.column("batch").to_pylist(), strict=True))
    assert all(n == BATCH_ROWS for n in per_batch.values()), per_batch
    return per_batch


def _kill_at_random(location: Path, seed: int) -> set[tuple[int, int]]:
    proc = _spawn(location, "--writer", str(seed), "--batches", "40", "--alter")
    time.sleep(random.Random(seed).uniform(0.6, 3.0))  # past interpreter start-up, inside the loop
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate()
    return {(int(w), int(b)) for _, w, b in (line.split() for line in out.splitlines()
                                             if line.startswith("appended"))}


def _crash_iterations(tmp_path: Path, iterations: int) -> None:
    table = _make(tmp_path)
    committed: set[tuple[int, int]] = set()
    for i in range(iterations):
        acknowledged = _kill_at_random(table.location, seed=i)
        reopened = fs.Table.open(table.location)
        batches = _check_whole_batches(reopened)
        landed = set(batches)
        # every append the writer saw succeed is there; at most one more (killed after commit, before print)
        assert acknowledged <= landed
        assert len(landed - acknowledged - committed) <= 1
        committed = landed
        # the schema history stays readable at every snapshot
        for snap in reopened.history():
            reopened.scan(snapshot_id=snap.snapshot_id).to_arrow()
    removed = fs.Table.open(table.location).vacuum(older_than=dt.timedelta(0))
    after = _check_whole_batches(fs.Table.open(table.location))
    assert set(after) == committed
    for rel in removed:
        assert not (table.location / rel).exists()


def test_sigkill_during_appends_and_schema_changes_leaves_exactly_committed_data(tmp_path: Path) -> None:
    _crash_iterations(tmp_path, iterations=3)


@pytest.mark.slow
def test_sigkill_many_iterations(tmp_path: Path) -> None:
    _crash_iterations(tmp_path, iterations=25)


def test_two_writer_processes_never_lose_a_commit(tmp_path: Path) -> None:
    table = _make(tmp_path)
    procs = [_spawn(table.location, "--writer", str(w), "--batches", "12", "--alter") for w in (1, 2)]
    for p in procs:
        _, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
    batches = _check_whole_batches(fs.Table.open(table.location))
    assert sorted(batches) == [(w, b) for w in (1, 2) for b in range(12)]


def test_orphan_files_of_a_killed_writer_are_ignored_then_vacuumed(tmp_path: Path) -> None:
    table = _make(tmp_path)
    table.append({"writer": [0], "batch": [0], "value": [1]})
    orphan = table.location / "data" / f"{'a' * 32}.parquet"  # the names writers give their files
    pq.write_table(pa.table({"writer": [9], "batch": [9], "value": [9]}), orphan)
    tmp = table.location / "data" / f".{'b' * 32}.parquet.tmp"
    foreign = table.location / "data" / "notes.txt"  # not a name fieldshift gives: never deleted
    foreign.write_text("mine")
    tmp.write_bytes(b"PAR1 truncated")
    assert table.scan().count() == 1
    assert table.to_arrow().column("writer").to_pylist() == [0]
    assert table.vacuum() == []  # younger than the default grace period: a live writer may own them
    old = time.time() - 7200
    os.utime(orphan, (old, old))
    os.utime(tmp, (old, old))
    os.utime(foreign, (old, old))
    assert sorted(table.vacuum()) == [f"data/.{'b' * 32}.parquet.tmp", f"data/{'a' * 32}.parquet"]
    assert foreign.read_text() == "mine"
    assert table.to_arrow().column("writer").to_pylist() == [0]


# -- keyed tables: upsert, delete, compact and expire under SIGKILL and with two writers ------------
def _make_keyed(tmp_path: Path) -> fs.Table:
    schema = pa.schema([pa.field("writer", pa.int32(), nullable=False), pa.field("slot", pa.int32(), nullable=False),
                        ("batch", pa.int32()), ("value", pa.int64())])
    return fs.Table.create(tmp_path / "k", schema, identifier_fields=["writer", "slot"], precombine="batch",
                           buckets=3)


def _keyed_rows(table: fs.Table, writer: int) -> dict[int, int]:
    rows = table.scan(filter=[("writer", "==", writer)]).to_arrow().to_pylist()
    assert len({r["slot"] for r in rows}) == len(rows)  # one row per key, always
    _same_as_full_merge(table)
    return {r["slot"]: r["batch"] for r in rows}


def _same_as_full_merge(table: fs.Table, snapshot_id: int | None = None) -> None:
    """A read with the deletion vectors the writers recorded equals the merge of every version (the oracle)."""
    oracle = table.scan(snapshot_id=snapshot_id)
    oracle.use_vectors = False
    key = ["writer", "slot"]
    assert table.scan(snapshot_id=snapshot_id).to_arrow().sort_by([(k, "ascending") for k in key]).equals(
        oracle.to_arrow().sort_by([(k, "ascending") for k in key]))


def _killed_writer(location: Path, seed: int, mode: str) -> tuple[int, fs.Table]:
    """Writer ``seed`` (``mode``: ``--keyed`` or ``--rows``) killed with SIGKILL at a random moment of its 60
    steps: the steps it acknowledged, and the table opened again."""
    proc = _spawn(location, "--writer", str(seed), "--batches", "60", mode)
    time.sleep(random.Random(seed).uniform(1.0, 4.0))
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate()
    return sum(1 for line in out.splitlines() if line.startswith("step")), fs.Table.open(location)


def _two_writers_at_once(location: Path, batches: int, mode: str) -> fs.Table:
    """Writers 1 and 2 (``mode``: ``--keyed`` or ``--rows``) run ``batches`` steps at once, both to a clean
    end; the table opened again."""
    procs = [_spawn(location, "--writer", str(w), "--batches", str(batches), mode) for w in (1, 2)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    return fs.Table.open(location)


def test_sigkill_during_upserts_deletes_compactions_and_expiry(tmp_path: Path) -> None:
    from tests.table.writer_process import keyed_state

    table = _make_keyed(tmp_path)
    superseded = 0  # rows the killed writers' upserts and deletes recorded in deletion vectors
    for seed in range(3):
        acknowledged, reopened = _killed_writer(table.location, seed, "--keyed")
        got = _keyed_rows(reopened, seed)
        # exactly the state after every acknowledged step, or after one more (killed after its commit)
        assert got in (keyed_state(acknowledged), keyed_state(acknowledged + 1)), (acknowledged, got)
        for snap in reopened.history():  # every kept snapshot still reads, vectors and all
            _same_as_full_merge(reopened, snap.snapshot_id)
        superseded += sum(v.cardinality for snap in reopened.history()
                          for v in reopened.scan(snapshot_id=snap.snapshot_id).deletion_vectors().values())
    assert superseded > 0
    table = fs.Table.open(table.location)
    table.vacuum(older_than=dt.timedelta(0))
    for seed in range(3):
        assert _keyed_rows(table, seed) in (keyed_state(n) for n in range(61))


def test_two_keyed_writers_upserting_at_once_lose_nothing(tmp_path: Path) -> None:
    from tests.table.writer_process import keyed_state

    table = _make_keyed(tmp_path)
    reopened = _two_writers_at_once(table.location, 16, "--keyed")
    for w in (1, 2):
        assert _keyed_rows(reopened, w) == keyed_state(16)
    reopened.compact()
    for w in (1, 2):
        assert _keyed_rows(reopened, w) == keyed_state(16)


def _plain_rows(table: fs.Table, writer: int, snapshot_id: int | None = None) -> dict[int, int]:
    rows = table.scan(filter=[("writer", "==", writer)], snapshot_id=snapshot_id).to_arrow().to_pylist()
    assert len({r["slot"] for r in rows}) == len(rows)  # a merge or update never leaves two versions of a row
    return {r["slot"]: r["batch"] for r in rows}


def test_sigkill_during_merges_updates_and_deletes_of_an_unkeyed_table(tmp_path: Path) -> None:
    """adv34: a writer killed at any point of a merge, update, delete or compaction leaves the table exactly
    before or after that step (no half-applied change, no orphan read), and vacuum clears what it wrote."""
    from tests.table.writer_process import row_state

    schema = pa.schema([("writer", pa.int32()), ("slot", pa.int32()), ("batch", pa.int32()), ("value", pa.int64())])
    table = fs.Table.create(tmp_path / "u", schema)
    for seed in range(3):
        acknowledged, reopened = _killed_writer(table.location, seed, "--rows")
        got = _plain_rows(reopened, seed)
        assert got in (row_state(acknowledged), row_state(acknowledged + 1)), (acknowledged, got)
        for snap in reopened.history():  # every snapshot still reads, one row per (writer, slot)
            for w in range(seed + 1):
                _plain_rows(reopened, w, snap.snapshot_id)
    assert {h.operation for h in fs.Table.open(table.location).history()} >= {"merge", "update", "delete"}
    table = fs.Table.open(table.location)
    before = {w: _plain_rows(table, w) for w in range(3)}
    table.vacuum(older_than=dt.timedelta(0))
    assert {w: _plain_rows(table, w) for w in range(3)} == before


def test_two_writers_merging_updating_and_deleting_at_once_lose_nothing(tmp_path: Path) -> None:
    """adv34: two processes running merges, updates, deletes and compactions on one unkeyed table: each
    writer's rows end exactly as its steps say (conflicts retry on the new head)."""
    from tests.table.writer_process import row_state

    schema = pa.schema([("writer", pa.int32()), ("slot", pa.int32()), ("batch", pa.int32()), ("value", pa.int64())])
    table = fs.Table.create(tmp_path / "u", schema)
    reopened = _two_writers_at_once(table.location, 14, "--rows")
    for w in (1, 2):
        assert _plain_rows(reopened, w) == row_state(14)
