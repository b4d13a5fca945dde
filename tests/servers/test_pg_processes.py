"""Real processes against a real PostgreSQL catalog: concurrent writers on both dialects at once,
SIGKILLed writers, and connections the server drops mid-commit (``pg_terminate_backend``)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pyarrow as pa
import pytest

import fieldshift as fs
from tests.table.test_table_safety import BATCH_ROWS, WRITER, _check_whole_batches, _kill_at_random

SCHEMA = pa.schema([("writer", pa.int32()), ("batch", pa.int32()), ("value", pa.int64())])


def _spawn(location: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(WRITER), str(location), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _sql(uri: str, sql: str) -> list[Any]:
    with psycopg.connect(uri, autocommit=True) as conn:
        cur = conn.execute(sql)
        return cur.fetchall() if cur.description else []


def _consistent(uri: str) -> None:
    """No catalog row points at a snapshot that does not exist (nothing half-committed)."""
    assert _sql(uri, "SELECT count(*) FROM fs_data_file f WHERE NOT EXISTS (SELECT 1 FROM fs_snapshot s "
                     "WHERE s.table_id = f.table_id AND s.snapshot_id = f.begin_snapshot)") == [(0,)]
    assert _sql(uri, "SELECT count(*) FROM fs_file_column_stats s WHERE NOT EXISTS "
                     "(SELECT 1 FROM fs_data_file f WHERE f.file_id = s.file_id)") == [(0,)]


def test_writer_processes_on_both_catalogs_at_once_lose_nothing(pg_uri: str, tmp_path: Path) -> None:
    tables = [fs.Table.create(tmp_path / "pg", SCHEMA, catalog=pg_uri, name="pg"),
              fs.Table.create(tmp_path / "lite", SCHEMA, catalog=str(tmp_path / "shared.db"), name="lite")]
    procs = [_spawn(t.location, "--writer", str(w), "--batches", "10", "--alter") for t in tables for w in (1, 2, 3)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    for t in tables:
        batches = _check_whole_batches(fs.Table.open(t.location))
        assert sorted(batches) == [(w, b) for w in (1, 2, 3) for b in range(10)]
        for snap in fs.Table.open(t.location).history():  # every snapshot stays readable
            t.scan(snapshot_id=snap.snapshot_id).to_arrow()
    _consistent(pg_uri)


def test_sigkilled_writers_leave_exactly_the_committed_data(pg_uri: str, tmp_path: Path) -> None:
    table = fs.Table.create(tmp_path / "t", SCHEMA, catalog=pg_uri, name="t")
    committed: set[tuple[int, int]] = set()
    for i in range(3):
        acknowledged = _kill_at_random(table.location, seed=i)
        landed = set(_check_whole_batches(fs.Table.open(table.location)))
        assert acknowledged <= landed
        assert len(landed - acknowledged - committed) <= 1  # killed after its commit, before it printed
        committed = landed
    _consistent(pg_uri)
    removed = fs.Table.open(table.location).vacuum(older_than=0)
    assert set(_check_whole_batches(fs.Table.open(table.location))) == committed
    assert all(not (table.location / rel).exists() for rel in removed)


def _slow_trigger(uri: str, *, at_commit: bool) -> None:
    """Make every snapshot insert sleep, inside the transaction or (deferred) during COMMIT itself."""
    _sql(uri, "CREATE FUNCTION fs_test_sleep() RETURNS trigger LANGUAGE plpgsql AS "
              "$$ BEGIN PERFORM pg_sleep(0.8); RETURN NEW; END $$")
    if at_commit:
        _sql(uri, "CREATE CONSTRAINT TRIGGER fs_test_slow AFTER INSERT ON fs_snapshot DEFERRABLE INITIALLY "
                  "DEFERRED FOR EACH ROW EXECUTE FUNCTION fs_test_sleep()")
    else:
        _sql(uri, "CREATE TRIGGER fs_test_slow BEFORE INSERT ON fs_snapshot FOR EACH ROW "
                  "EXECUTE FUNCTION fs_test_sleep()")


def _terminate_sleepers(uri: str, stop: threading.Event, times: int | None) -> list[int]:
    """Terminate the backend of each commit caught sleeping in the trigger (``times`` of them, or all)."""
    killed: list[int] = []
    while not stop.is_set() and (times is None or len(killed) < times):
        for (pid,) in _sql(uri, "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND pid <> "
                                "pg_backend_pid()"):
            if pid not in killed:
                _sql(uri, f"SELECT pg_terminate_backend({pid})")
                killed.append(pid)
        time.sleep(0.05)
    return killed


@pytest.mark.parametrize("at_commit", [False, True], ids=["mid-transaction", "during-COMMIT"])
def test_a_connection_dropped_mid_commit_commits_nothing_and_the_writer_retries(
        pg_uri: str, tmp_path: Path, at_commit: bool) -> None:
    table = fs.Table.create(tmp_path / "t", SCHEMA, catalog=pg_uri, name="t")
    _slow_trigger(pg_uri, at_commit=at_commit)
    writer = _spawn(table.location, "--writer", "1", "--batches", "3")
    killed = _terminate_sleepers(pg_uri, threading.Event(), times=2)  # two of its commits lose their connection
    out, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err
    assert len(killed) == 2 and out.count("appended") == 3
    assert sorted(_check_whole_batches(fs.Table.open(table.location))) == [(1, 0), (1, 1), (1, 2)]
    assert [s.snapshot_id for s in table.history()] == [0, 1, 2, 3]  # the dropped attempts left no snapshot
    assert len(list((table.location / "data").iterdir())) == 3  # the retries reused their files
    _consistent(pg_uri)


def test_a_writer_whose_connection_keeps_dropping_gets_a_clear_error_and_changes_nothing(
        pg_uri: str, tmp_path: Path) -> None:
    table = fs.Table.create(tmp_path / "t", SCHEMA, catalog=pg_uri, name="t")
    table.append({"writer": [0], "batch": [0], "value": [0]})
    _slow_trigger(pg_uri, at_commit=True)
    stop = threading.Event()
    killer = threading.Thread(target=_terminate_sleepers, args=(pg_uri, stop, None))
    killer.start()
    try:
        with pytest.raises(fs.CatalogConnectionError, match=r"dropped during the commit .* nothing was committed"):
            table.append({"writer": [1] * BATCH_ROWS, "batch": [1] * BATCH_ROWS, "value": range(BATCH_ROWS)})
    finally:
        stop.set()
        killer.join()
    _sql(pg_uri, "DROP TRIGGER fs_test_slow ON fs_snapshot")
    reopened = fs.Table.open(table.location)
    assert reopened.current_snapshot.snapshot_id == 1 and reopened.scan().count() == 1
    assert len(list((table.location / "data").iterdir())) == 1  # the failed append's file is gone
    _consistent(pg_uri)
