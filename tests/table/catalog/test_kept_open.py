"""A catalog kept open by a process that commits often (catalog/kept_open.py): commits are the same, the WAL is
not checkpointed and deleted at every close, a replaced catalog file is followed, a forked child never touches
its parent's connection."""

from __future__ import annotations

import multiprocessing
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.catalog import fork_guard, kept_open
from fieldshift.table.catalog.kept_open import keep_open, kept, release_all


@pytest.fixture(autouse=True)
def _released() -> Iterator[None]:
    release_all()
    yield
    release_all()


def _table(path: Path) -> fs.Table:
    return fs.Table.create(path, pa.schema([("id", pa.int64())]))


def _append(path: Path, start: int) -> None:
    fs.Table.open(path).append(pa.table({"id": pa.array([start, start + 1], pa.int64())}))


def _wal(path: Path) -> Path:
    return path / "fieldshift.db-wal"


def test_kept_open_commits_the_same_rows_and_the_wal_stays_between_commits(tmp_path: Path) -> None:
    plain, kept_path = tmp_path / "plain", tmp_path / "kept"
    _table(plain)
    t = _table(kept_path)
    assert keep_open(t.catalog) and kept() == [str(kept_path / "fieldshift.db")]
    for start in (0, 2, 4):
        _append(plain, start)
        _append(kept_path, start)
        assert not _wal(plain).exists()  # the last close checkpointed the WAL and deleted it (5 fsyncs a commit)
        assert _wal(kept_path).stat().st_size > 0  # not the last close: no checkpoint, no WAL files made again
    rows = [fs.Table.open(p).to_arrow().sort_by("id") for p in (plain, kept_path)]
    assert rows[0].equals(rows[1]) and rows[1].num_rows == 6
    assert [s.summary.get("rows") for s in fs.Table.open(plain).history()] == \
        [s.summary.get("rows") for s in fs.Table.open(kept_path).history()]
    release_all()  # the last close checkpoints: the database file alone holds every commit
    assert not _wal(kept_path).exists() and kept() == []
    shutil.copy(kept_path / "fieldshift.db", tmp_path / "copy.db")
    assert fs.Table.open(kept_path).to_arrow().num_rows == 6


def test_a_replaced_catalog_is_followed_and_other_catalogs_are_not_kept(tmp_path: Path) -> None:
    t = _table(tmp_path / "t")
    keep_open(t.catalog)
    shutil.rmtree(tmp_path / "t")
    t = _table(tmp_path / "t")  # the same path, a new database file
    _append(tmp_path / "t", 0)
    assert keep_open(t.catalog)
    _append(tmp_path / "t", 2)
    assert fs.Table.open(tmp_path / "t").to_arrow().num_rows == 4
    assert _wal(tmp_path / "t").exists()  # the kept connection is the new file's
    assert not keep_open(object()) and not keep_open(fs.Table.open(tmp_path / "t").catalog.dialect)


def _child(path: str, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    before = kept()  # the parent's connection is not this process's
    keep_open(fs.Table.open(path).catalog)
    _append(Path(path), 10)
    out.put((before, kept(), os.getpid()))


def test_after_fork_the_child_keeps_its_own_and_never_closes_the_parents(tmp_path: Path) -> None:
    t = _table(tmp_path / "t")
    keep_open(t.catalog)
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    p = ctx.Process(target=_child, args=(str(tmp_path / "t"), out))
    p.start()
    before, after, pid = out.get(timeout=60)
    p.join(60)
    assert p.exitcode == 0 and pid != os.getpid()
    assert before == [] and after == [str(tmp_path / "t" / "fieldshift.db")]
    _append(tmp_path / "t", 0)  # the parent's kept connection still works after the child exited
    assert kept() == [str(tmp_path / "t" / "fieldshift.db")]
    assert sorted(fs.Table.open(tmp_path / "t").to_arrow().column("id").to_pylist()) == [0, 1, 10, 11]


def test_kept_and_read_connections_share_one_fork_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both holders go through ``fork_guard``: in a process whose id changed without the fork hooks (a fork
    from C code), the kept connection and the read connections are set aside unclosed, and new ones opened."""
    t = _table(tmp_path / "t")
    keep_open(t.catalog)
    t.scan().count()
    reads = t.catalog.dialect.reads  # type: ignore[attr-defined]
    parents = [*fork_guard._EVERY]
    assert reads in parents and kept_open._KEPT in parents
    before = len(fork_guard.INHERITED)
    pid = os.getpid()
    monkeypatch.setattr(os, "getpid", lambda: pid + 1)
    assert kept() == [] and reads.count == 0
    aside = fork_guard.INHERITED[before:]
    assert len(aside) == 2
    for conn in aside:
        conn.execute("SELECT 1")  # unclosed: the parent's to close
    assert keep_open(t.catalog) and kept() == [str(tmp_path / "t" / "fieldshift.db")]
    release_all()
    t.close()
    monkeypatch.undo()
    for conn in aside:  # (no parent in this test: close them here)
        conn.close()
    del fork_guard.INHERITED[before:]


def test_a_catalog_gone_before_it_is_kept_is_not_made_again(tmp_path: Path) -> None:
    """The file stat'ed, then dropped before the connection opens: nothing is kept and no empty database is made."""
    from fieldshift.table.catalog import kept_open

    gone = tmp_path / "fieldshift.db"
    assert kept_open._KEPT.keep(gone, (0, 0)) is False
    assert not gone.exists() and str(gone) not in kept_open.kept()
