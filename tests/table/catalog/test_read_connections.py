"""The SQLite catalog's held read connections (``sqlite_dialect.ReadConnections``): one per thread, each read
sees the latest commit of any process, a forked process opens its own, ``close()`` and collection leave no
file open, a catalog file alone holds every commit, and scans plan and read the same with a connection per
read (``hold_reads = False``)."""

from __future__ import annotations

import datetime as dt
import gc
import multiprocessing
import os
import shutil
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.catalog.sqlite_dialect import SqliteDialect
from fieldshift.table.create import CATALOG_FILE

SCHEMA = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us"))])
DAY = dt.datetime(2024, 1, 1)


def _rows(ids: range) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()),
                     "ts": pa.array([DAY + dt.timedelta(days=i % 5, hours=i % 24) for i in ids], pa.timestamp("us"))})


def _table(root: Path) -> fs.Table:
    t = fs.Table.create(root, SCHEMA, partition_by=["days(ts)"])
    t.append(_rows(range(10)))
    return fs.Table.open(root)  # a handle of its own, as a reader opens it


def _dialect(t: fs.Table) -> SqliteDialect:
    dialect = t.catalog.dialect
    assert isinstance(dialect, SqliteDialect)
    return dialect


def _catalog_fds(root: Path) -> list[str]:
    """The files of ``root``'s catalog this process has open."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(root)) and ".db" in target:
            out.append(target)
    return out


def _append_elsewhere(root: Path, first: int) -> None:
    """Commit from another process (a writer the held connection never saw)."""
    code = ("import sys, datetime as dt, pyarrow as pa, fieldshift as fs\n"
            "first = int(sys.argv[2]); day = dt.datetime(2024, 1, 1)\n"
            "fs.Table.open(sys.argv[1]).append(pa.table({'id': pa.array([first], pa.int64()), "
            "'ts': pa.array([day + dt.timedelta(days=first % 5)], pa.timestamp('us'))}))\n")
    subprocess.run([sys.executable, "-c", code, str(root), str(first)], check=True, timeout=120)


def test_each_scan_sees_a_commit_of_another_process_on_the_same_held_connection(tmp_path: Path) -> None:
    t = _table(tmp_path / "t")
    flt = [("ts", ">=", DAY), ("ts", "<", DAY + dt.timedelta(days=1))]
    assert sorted(t.scan(filter=flt).to_arrow().column("id").to_pylist()) == [0, 5]
    held = _dialect(t).reads.get()
    _append_elsewhere(tmp_path / "t", 100)  # day 0 again: a new file in the planned partition
    assert sorted(t.scan(filter=flt).to_arrow().column("id").to_pylist()) == [0, 5, 100]
    assert len(t.scan(filter=flt).files()) == 2
    assert t.current_snapshot.snapshot_id == len(t.history()) - 1
    _append_elsewhere(tmp_path / "t", 200)
    assert t.scan().count() == 12 and len(t.history()) == 4
    assert _dialect(t).reads.get() is held and _dialect(t).reads.count == 1  # every read on one connection


def test_a_thread_holds_its_own_connection_and_an_ended_threads_is_closed(tmp_path: Path) -> None:
    t = _table(tmp_path / "t")
    reads = _dialect(t).reads
    t.scan().to_arrow()
    mine = reads.get()
    seen: list[object] = []
    errors: list[BaseException] = []
    together = threading.Barrier(4)

    def scan(wait: bool = True) -> None:
        try:
            assert t.scan(filter=[("id", "<", 3)]).to_arrow().num_rows == 3
            seen.append(reads.get())
            if wait:  # none ends before all four opened theirs (an ended one's is closed at the next open)
                together.wait(60)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=scan) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert len({id(c) for c in seen}) == 4 and all(c is not mine for c in seen)
    assert reads.count == 5
    late = threading.Thread(target=scan, args=(False,))
    late.start()
    late.join()
    assert not errors and reads.count == 2  # the four ended threads' connections closed when the fifth opened
    assert reads.get() is mine


def _child(root: str, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    t, inherited = _OPEN  # the parent's handle and its connection, copied by fork
    rows = t.scan().count()
    t.append(_rows(range(50, 53)))
    queue.put((rows, _dialect(t).reads.get() is not inherited, _dialect(t).reads.count, root))


_OPEN: list[Any] = []


@pytest.mark.skipif(sys.platform != "linux", reason="fork")
def test_a_forked_process_opens_its_own_connection_and_leaves_the_parents_alone(tmp_path: Path) -> None:
    t = _table(tmp_path / "t")
    assert t.scan().count() == 10
    parent = _dialect(t).reads.get()
    _OPEN[:] = [t, parent]
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork of a process with threads (3.12+)
        proc = ctx.Process(target=_child, args=(str(tmp_path), queue))
        proc.start()
    rows, own, count, _ = queue.get(timeout=120)
    proc.join(timeout=120)
    _OPEN.clear()
    assert proc.exitcode == 0 and rows == 10 and own and count == 1
    assert t.scan().count() == 13  # the child's commit, read on the parent's same connection
    assert _dialect(t).reads.get() is parent


def test_close_and_collection_leave_no_catalog_file_open(tmp_path: Path) -> None:
    root = tmp_path / "t"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        t = _table(root)
        gc.collect()  # the create's handles
        t.scan(filter=[("id", "<", 3)]).to_arrow()
        assert _catalog_fds(root)
        t.close()
        assert _catalog_fds(root) == [] and _dialect(t).reads.count == 0
        assert t.scan().count() == 10  # still usable: the next read opens again
        assert _catalog_fds(root)
        with fs.Table.open(root) as other:
            other.scan().count()
        del other
        t.scan().count()
        del t
        gc.collect()  # a Table and its catalog's commit hook form a cycle
        assert _catalog_fds(root) == []


def test_the_catalog_file_alone_holds_every_commit_while_connections_are_held(tmp_path: Path) -> None:
    t = _table(tmp_path / "t")
    t.scan().count()  # a read connection held: the writer's close is not the last
    t.append(_rows(range(10, 15)))
    t.delete(filter=[("id", "<", 2)])
    (tmp_path / "copy").mkdir()
    shutil.copy(tmp_path / "t" / CATALOG_FILE, tmp_path / "copy" / CATALOG_FILE)
    for p in (tmp_path / "t").iterdir():
        if p.is_dir():
            shutil.copytree(p, tmp_path / "copy" / p.name)
    copy = fs.Table.open(tmp_path / "copy")
    assert sorted(copy.to_arrow().column("id").to_pylist()) == list(range(2, 15))
    copy.close()


def test_one_connection_block_commits_on_the_threads_read_connection(tmp_path: Path) -> None:
    t = _table(tmp_path / "t")
    reads = _dialect(t).reads
    with t.catalog.one_connection():
        t.append(_rows(range(10, 12)))
        assert t.scan().count() == 12
    assert reads.count == 1
    assert fs.Table.open(tmp_path / "t").scan().count() == 12


@pytest.mark.parametrize("flt", [
    [("ts", ">=", DAY + dt.timedelta(days=1)), ("ts", "<", DAY + dt.timedelta(days=2))],
    [("id", "<", 4)],
    None,
])
def test_held_and_per_read_connections_plan_and_read_the_same(tmp_path: Path, flt: object) -> None:
    t = _table(tmp_path / "t")
    t.append(_rows(range(10, 30)))
    plain = fs.Table.open(tmp_path / "t")
    _dialect(plain).hold_reads = False
    plain.close()  # what opening it read
    for _ in range(2):  # the second scan of each: cached metadata, one freshness statement
        held_scan, plain_scan = t.scan(filter=flt), plain.scan(filter=flt)
        assert [f.path for f in held_scan.files()] == [f.path for f in plain_scan.files()]
        assert held_scan.to_arrow().sort_by("id").equals(plain_scan.to_arrow().sort_by("id"))
    assert _dialect(plain).reads.count == 0 and _dialect(t).reads.count == 1


def test_a_process_whose_id_changed_without_fork_hooks_opens_its_own(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The pid check behind the fork hook: a process forked where ``os.register_at_fork`` hooks did not run
    (a C library's fork) leaves the connections it inherited unused and unclosed."""
    t = _table(tmp_path / "t")
    t.scan().count()
    reads = _dialect(t).reads
    inherited = reads.get()
    pid = os.getpid()
    monkeypatch.setattr(os, "getpid", lambda: pid + 1)
    mine = reads.get()
    assert mine is not inherited and reads.count == 1 and t.scan().count() == 10
    inherited.raw.execute("SELECT 1")  # left open: it is the parent's to close
    t.close()  # this "child's" own
    monkeypatch.undo()
    inherited.raw.close()  # (in this test there is no parent: close it here)
    gc.collect()  # the creating handle's
    assert _catalog_fds(tmp_path / "t") == []


def test_a_dropped_table_closes_its_connections_without_waiting_for_the_cycle_collector(tmp_path: Path) -> None:
    """Nothing makes a cycle of a table and its catalog (the publishing hook holds the catalog weakly), so a
    loop that opens a table per request leaves no connection open between requests."""
    root = tmp_path / "t"
    _table(root).scan().count()
    gc.collect()
    gc.disable()
    try:
        for i in range(20):
            t = fs.Table.open(root)
            assert t.scan(filter=[("id", "<", 3)]).to_arrow().num_rows == 3 + i  # one more id 0 each time
            t.append(_rows(range(1)))
            del t
            assert _catalog_fds(root) == []
    finally:
        gc.enable()


def test_close_from_another_thread_waits_for_a_read_in_progress(tmp_path: Path) -> None:
    """``Catalog.close()`` closes every thread's connection, but one in the middle of a read is closed by its
    own thread when that read ends (as a pool's dispose leaves checked-out connections to their return),
    never under it; an idle thread's is closed at once and its next read opens a new one."""
    root = tmp_path / "t"
    t = _table(root)
    dialect = _dialect(t)
    t.scan().count()
    inside, go_on, idle_read, idle_go = (threading.Event() for _ in range(4))
    got: list[Any] = []
    fresh: list[Any] = []
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            with dialect.connect() as conn:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
                with dialect.connect() as nested:  # a nested read: the same connection
                    assert nested is conn
                inside.set()
                go_on.wait(60)
                got.append(conn.execute("SELECT count(*) FROM sqlite_master").fetchall())  # still open
            got.append(conn)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    def idle() -> None:
        try:
            with dialect.connect() as conn:
                conn.execute("SELECT 1").fetchall()
            idle_read.set()
            idle_go.wait(60)
            with dialect.connect() as again:  # closed while idle: a new one
                fresh.append((again is not conn, again.execute("SELECT 1").fetchall()))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=reader), threading.Thread(target=idle)]
    for th in threads:
        th.start()
    assert inside.wait(60) and idle_read.wait(60)
    t.catalog.close()
    assert dialect.reads.count == 0
    go_on.set()
    idle_go.set()
    for th in threads:
        th.join(60)
    assert not errors, errors
    (busy_result, busy_conn), [(new, one)] = got, fresh
    assert busy_result and new and one == [(1,)]
    with pytest.raises(Exception, match="closed"):
        busy_conn.execute("SELECT 1")  # closed by its thread once its read ended
    assert t.scan().count() == 10  # this thread's next read opens again
    t.close()
    gc.collect()
    assert _catalog_fds(root) == []
