"""Commits as typed updates: each update's conflict rule, the one retry setting, and what an append costs.

Every conflict test is two writers: the first reads the base snapshot, another commit lands, then the
first commits on its stale base (conflict, or a replay on the new head).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import fieldshift as fs
import fieldshift.table.commits as commits
import fieldshift.table.write.write_commit as write_commit
from fieldshift.table.catalog.deletion_vectors import VectorCommit
from fieldshift.table.catalog.stream_marks import StreamMark
from fieldshift.table.files.data_files import write_data_file
from fieldshift.table.partitions.partitioning import build_spec
from fieldshift.table.updates import (
    AddFiles,
    DeletionVectors,
    FilesPresent,
    NoConcurrentCommit,
    QuarantineFiles,
    RecordStreamMark,
    RemoveFiles,
    ReplaceAll,
    SetPolicy,
    SetSchema,
    SetSpec,
)

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _table(tmp_path: Path, **kwargs: Any) -> fs.Table:
    return fs.Table.create(tmp_path / "t", SCHEMA, **kwargs)


def _file(t: fs.Table, ids: list[int]) -> Any:
    """A data file written for the table's current schema, not yet committed."""
    schema = t.schema
    return write_data_file(t.location, schema, pa.table({"id": ids, "v": [str(i) for i in ids]},
                                                        schema=schema.to_arrow()))


def _raced(t: fs.Table) -> int:
    """The head before another writer appends: the stale base of the commit under test."""
    base = t.current_snapshot.snapshot_id
    fs.Table.open(t.location).append({"id": [100], "v": ["other"]})
    return base


def _ids(t: fs.Table) -> list[int]:
    return sorted(fs.Table.open(t.location).to_arrow().column("id").to_pylist())


# -- each update's conflict rule ------------------------------------------------------------------
def test_added_files_are_replayed_on_a_head_that_moved(tmp_path: Path) -> None:
    t = _table(tmp_path)
    f = _file(t, [1])
    base = _raced(t)
    snap = t.catalog.commit(t.table_id, base, [], [AddFiles((f,), t.schema.schema_id)], operation="append")
    assert snap.snapshot_id == base + 2 and _ids(t) == [1, 100]


def test_added_files_conflict_when_they_no_longer_read_as_the_new_head(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("f", pa.float64())]), policy="hudi")
    old = t.schema
    late = write_data_file(t.location, old, pa.table({"f": [1.5]}, schema=old.to_arrow()))
    t.update_schema().update_column("f", pa.string()).commit()
    t.update_schema().update_column("f", pa.binary()).commit()
    with pytest.raises(fs.CommitConflictError, match="f: double -> binary"):
        t.catalog.commit(t.table_id, 0, [], [AddFiles((late,), old.schema_id)], operation="append")
    assert t.current_snapshot.snapshot_id == 2


def test_removed_files_conflict_when_another_commit_ended_them(tmp_path: Path) -> None:
    t = _table(tmp_path)
    t.append({"id": [1], "v": ["a"]})
    t.append({"id": [2], "v": ["b"]})
    base = t.current_snapshot.snapshot_id
    ids = tuple(f.file_id for f in t.scan().live_files())
    fs.Table.open(t.location).compact()  # ends both files
    with pytest.raises(fs.CommitConflictError, match="removed by a concurrent commit"):
        t.catalog.commit(t.table_id, base, [], [AddFiles((_file(t, [1, 2]),), t.schema.schema_id),
                                                RemoveFiles(ids)], operation="compact")
    assert _ids(t) == [1, 2]


def test_removed_files_still_live_commit_on_a_head_that_moved(tmp_path: Path) -> None:
    t = _table(tmp_path)
    t.append({"id": [1], "v": ["a"]})
    ids = tuple(f.file_id for f in t.scan().live_files())
    base = _raced(t)
    t.catalog.commit(t.table_id, base, [], [AddFiles((_file(t, [1]),), t.schema.schema_id), RemoveFiles(ids)],
                     operation="compact")
    assert _ids(t) == [1, 100]


@pytest.mark.parametrize("update", ["replace_all", "schema", "policy", "spec", "no_concurrent_commit"])
def test_changes_based_on_the_whole_table_conflict_with_any_concurrent_commit(tmp_path: Path, update: str) -> None:
    t = _table(tmp_path)
    schema = t.schema
    steps = {
        "replace_all": ([], [AddFiles((_file(t, [1]),), schema.schema_id), ReplaceAll()]),
        "schema": ([], [SetSchema(t.update_schema().add_column("w", pa.int32()).apply())]),
        "policy": ([], [SetPolicy(fs.CastPolicy.from_name("lossless"))]),
        "spec": ([], [SetSpec(build_spec(schema, ["bucket(4, id)"], spec_id=1))]),
        "no_concurrent_commit": ([NoConcurrentCommit()], [AddFiles((_file(t, [1]),), schema.schema_id)]),
    }
    requirements, updates = steps[update]
    base = _raced(t)
    with pytest.raises(fs.CommitConflictError, match=f"another writer committed snapshot {base + 1} after snapshot "
                                                     f"{base}, on which this x was based"):
        t.catalog.commit(t.table_id, base, requirements, updates, operation="x")
    assert len(t.history()) == 2 and _ids(t) == [100]
    t.catalog.commit(t.table_id, base + 1, requirements, updates, operation="x")  # on the head: it lands
    assert len(t.history()) == 3


def test_quarantine_files_replay_on_a_head_that_moved(tmp_path: Path) -> None:
    t = _table(tmp_path)
    t.append({"id": [1], "v": ["a"]})
    base = _raced(t)
    t.catalog.commit(t.table_id, base, [], [QuarantineFiles((("quarantine/none.parquet", 3),))],
                     operation="append")
    assert t.catalog.quarantine_files(t.table_id) == [("quarantine/none.parquet", base + 2)]


def test_a_stream_mark_recorded_before_commits_nothing_whatever_moved(tmp_path: Path) -> None:
    t = _table(tmp_path)
    mark = StreamMark("s", 7)
    head = t.current_snapshot.snapshot_id
    t.catalog.commit(t.table_id, head, [], [RecordStreamMark(mark)], operation="append")
    with pytest.raises(fs.AlreadyCommittedError, match="batch 7 of stream 's'"):
        t.catalog.commit(t.table_id, head + 1, [], [RecordStreamMark(mark), ReplaceAll()], operation="append")
    base = _raced(t)
    with pytest.raises(fs.AlreadyCommittedError):  # told before the conflict a ReplaceAll would raise
        t.catalog.commit(t.table_id, base, [], [RecordStreamMark(mark), ReplaceAll()], operation="append")


def test_files_present_is_required_under_the_commit_lock(tmp_path: Path) -> None:
    t = _table(tmp_path)
    f = _file(t, [1])
    t.storage.delete(f.path)  # a vacuum got there first
    with pytest.raises(fs.CommitConflictError, match="deleted before it landed"):
        t.catalog.commit(t.table_id, 0, [FilesPresent(t.storage, (f.path,))], [AddFiles((f,), 0)],
                         operation="append")
    assert t.current_snapshot.snapshot_id == 0


@pytest.mark.parametrize("on_conflict", ["raise", "skip"])
def test_deletion_vectors_conflict_when_their_bucket_changed(tmp_path: Path, on_conflict: str) -> None:
    t = _table(tmp_path, identifier_fields=["id"], buckets=1)
    t.upsert({"id": [1, 2], "v": ["a", "b"]})
    target = t.scan().live_files()[0]
    base = t.current_snapshot.snapshot_id
    fs.Table.open(t.location).upsert({"id": [3], "v": ["c"]})  # the only bucket changes
    vectors = VectorCommit(frozenset({0}), {target.file_id: np.array([0], np.uint32)}, on_conflict=on_conflict)
    commit = [AddFiles((), t.schema.schema_id), DeletionVectors(vectors)]
    if on_conflict == "raise":
        with pytest.raises(fs.CommitConflictError, match=r"changed bucket\(s\) \[0\]"):
            t.catalog.commit(t.table_id, base, [], commit, operation="upsert")
        assert _ids(t) == [1, 2, 3]
    else:  # a compaction's files stay unresolved: the commit lands without its vectors
        t.catalog.commit(t.table_id, base, [], commit, operation="compact")
        assert _ids(t) == [1, 2, 3]


# -- the retry setting ----------------------------------------------------------------------------
@pytest.fixture
def racing_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[fs.Table, list[int]]]:
    """A table whose every write loses a race: another writer appends while the files are written."""
    t = _table(tmp_path)
    t.append({"id": [1], "v": ["a"]})
    write = write_commit.write_partitioned
    attempts: list[int] = []

    def racing(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(write_commit, "write_partitioned", write)  # the other writer writes as usual
        attempts.append(1)
        fs.Table.open(t.location).append({"id": [100 + len(attempts)], "v": ["other"]})
        monkeypatch.setattr(write_commit, "write_partitioned", racing)
        return write(*args, **kwargs)

    monkeypatch.setattr(write_commit, "write_partitioned", racing)
    yield t, attempts


def test_the_retry_setting_from_the_environment_is_honoured(racing_writes: tuple[fs.Table, list[int]],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    t, attempts = racing_writes
    monkeypatch.setenv(commits.RETRIES_ENV, "1")
    with pytest.raises(fs.CommitConflictError, match="another writer committed"):
        t.overwrite({"id": [9], "v": ["z"]})  # an overwrite conflicts with any concurrent commit
    assert len(attempts) == 1
    monkeypatch.setenv(commits.RETRIES_ENV, "3")
    with pytest.raises(fs.CommitConflictError):
        t.overwrite({"id": [9], "v": ["z"]})
    assert len(attempts) == 4  # read at each write: three more attempts
    assert 9 not in _ids(t)


def test_the_module_retry_setting_is_honoured(racing_writes: tuple[fs.Table, list[int]],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    t, attempts = racing_writes
    monkeypatch.delenv(commits.RETRIES_ENV, raising=False)
    monkeypatch.setattr(commits, "COMMIT_RETRIES", 2)
    with pytest.raises(fs.CommitConflictError):
        t.overwrite({"id": [9], "v": ["z"]})
    assert len(attempts) == 2


def test_an_append_racing_an_append_is_replayed_without_a_retry(racing_writes: tuple[fs.Table, list[int]],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    t, attempts = racing_writes
    monkeypatch.setenv(commits.RETRIES_ENV, "1")
    t.append({"id": [9], "v": ["z"]})  # an unkeyed append is replayed on the new head: no retry needed
    assert len(attempts) == 1 and 9 in _ids(t)


@pytest.mark.parametrize("value", ["0", "-2", "many"])
def test_a_bad_retry_setting_is_refused_before_anything_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   value: str) -> None:
    t = _table(tmp_path)
    monkeypatch.setenv(commits.RETRIES_ENV, value)
    with pytest.raises(fs.InvalidOptionError, match="FIELDSHIFT_COMMIT_RETRIES"):
        t.append({"id": [1], "v": ["a"]})
    assert t.current_snapshot.snapshot_id == 0 and not list(t.storage.list_files("data"))


# -- what a write costs the catalog ---------------------------------------------------------------
def _statements_before_commit(monkeypatch: pytest.MonkeyPatch, write: Any) -> int:
    """SQL statements the catalog's connections execute before the commit's ``BEGIN IMMEDIATE``."""
    statements: list[str] = []
    connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(sqlite3, "connect", traced)
    write()
    monkeypatch.setattr(sqlite3, "connect", connect)
    begin = next(i for i, s in enumerate(statements) if s.strip().upper().startswith("BEGIN"))
    return begin


def test_an_unkeyed_append_reads_the_catalog_at_most_three_times_before_committing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = _table(tmp_path)
    t.append({"id": [1], "v": ["a"]})  # warm: opened, written once
    t.metadata()  # the process's metadata cache is fresh
    assert _statements_before_commit(monkeypatch, lambda: t.append({"id": [2], "v": ["b"]})) <= 3
    # right after its own commit the cache is stale: still within three
    assert _statements_before_commit(monkeypatch, lambda: t.append({"id": [3], "v": ["c"]})) <= 3
    assert _ids(t) == [1, 2, 3]


def test_keyed_writes_read_the_catalog_at_most_three_times_before_committing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Metadata, the snapshot's file list (with its deletion vectors) and the statistics of the files the keys
    may hit: an insert-only append, an upsert and a delete by key each look their keys up in three."""
    t = _table(tmp_path, identifier_fields=["id"])
    t.append({"id": [1], "v": ["a"]})
    t.append({"id": [2], "v": ["a"]})
    assert _statements_before_commit(monkeypatch, lambda: t.append({"id": [3], "v": ["b"]})) <= 3
    assert _statements_before_commit(monkeypatch, lambda: t.upsert({"id": [1], "v": ["c"]})) <= 3
    assert _statements_before_commit(monkeypatch, lambda: t.delete([2])) <= 3
    assert t.to_arrow().sort_by("id").to_pylist() == [{"id": 1, "v": "c"}, {"id": 3, "v": "b"}]


def test_a_commit_of_files_hands_its_metadata_on_and_a_load_equals_a_cold_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit that changes no schema, spec or policy caches the metadata it was based on with its new head:
    the writer's next load is one statement, and equals what a cold load reads."""
    from fieldshift.table.catalog.catalog import METADATA as _METADATA

    t = _table(tmp_path, identifier_fields=["id"])
    t.upsert({"id": [1], "v": ["a"]})
    t.metadata()
    assert _statements_before_commit(monkeypatch, lambda: t.upsert({"id": [2], "v": ["b"]})) <= 4
    assert _statements_before_commit(monkeypatch, lambda: t.append({"id": [3], "v": ["c"]})) <= 4
    warm = t.metadata()
    _METADATA.clear()
    cold = t.metadata()
    assert warm.head == cold.head and warm.schemas == cold.schemas and warm.properties == cold.properties
    assert warm.spec_history == cold.spec_history and warm.policy == cold.policy
    t.update_schema().add_column("w", pa.int32()).commit()  # a schema change: loaded again, not handed on
    assert t.metadata().current_schema.names == ["id", "v", "w"]
