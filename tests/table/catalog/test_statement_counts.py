"""How many catalog statements a scan runs before it opens its first data file (issue 29: at most 2 in a
warm process: the metadata and the file list), counted on the real SQLite connections."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.files.storage import TableStorage


class _Counter:
    """SQL statements run on any new SQLite connection until the first data file is opened."""

    def __init__(self) -> None:
        self.statements: list[str] = []
        self.open = True

    def count(self, run: Callable[[], Any]) -> list[str]:
        self.statements, self.open = [], True
        run()
        return self.statements


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Counter]:
    c = _Counter()
    connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(lambda sql: c.statements.append(sql) if c.open else None)
        return conn

    parquet_file = TableStorage.parquet_file

    def opened(self: TableStorage, rel: str, **options: Any) -> Any:
        c.open = False
        return parquet_file(self, rel, **options)

    monkeypatch.setattr(sqlite3, "connect", traced)
    monkeypatch.setattr(TableStorage, "parquet_file", opened)
    yield c


def _schema(keyed: bool) -> pa.Schema:
    return pa.schema([pa.field("id", pa.int64(), nullable=not keyed), ("v", pa.int64())])


@pytest.mark.parametrize("keyed", [False, True])
def test_a_scan_runs_at_most_two_statements_before_its_files(tmp_path: Path, counter: _Counter, keyed: bool) -> None:
    t = fs.Table.create(tmp_path / "t", _schema(keyed), identifier_fields=["id"] if keyed else None)
    t.append({"id": [1, 2], "v": [1, 2]})
    if keyed:
        t.upsert({"id": [1], "v": [5]})
    assert t.scan().to_arrow().num_rows == 2  # the process is warm
    other = fs.Table.open(tmp_path / "t")  # another writer commits: a new snapshot, its file list unknown
    other.append({"id": [3], "v": [3]})
    after_commit = counter.count(lambda: t.scan().to_arrow())
    assert len(after_commit) <= 2, after_commit
    same = counter.count(lambda: t.scan().to_arrow())  # the file list (and vectors) are kept per snapshot
    assert len(same) <= 1, same
    assert sorted(t.scan().to_arrow().column("v").to_pylist()) == ([2, 3, 5] if keyed else [1, 2, 3])


def test_a_new_head_reuses_schemas_only_while_they_are_unchanged(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", _schema(False))
    t.append({"id": [1], "v": [1]})
    assert t.scan().to_arrow().column_names == ["id", "v"]
    other = fs.Table.open(tmp_path / "t")
    other.update_schema().add_column("w", pa.string()).commit()
    other.append({"id": [2], "v": [2], "w": ["x"]})
    assert t.scan().to_arrow().column("w").to_pylist() == [None, "x"]
    with other.update_spec() as spec:
        spec.add_field("v")
    other.append({"id": [3], "v": [3], "w": ["y"]})
    assert [f.name for f in t.spec.fields] == ["v"]


def test_a_table_made_again_at_the_same_place_is_read_fresh(tmp_path: Path) -> None:
    """Same path, same table id, same snapshot and schema counts: the creation time tells them apart."""
    t = fs.Table.create(tmp_path / "t", _schema(False))
    t.append({"id": [1], "v": [1]})
    assert t.scan().to_arrow().column_names == ["id", "v"]
    shutil.rmtree(tmp_path / "t")
    u = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("other", pa.string())]))
    u.append({"id": [1], "other": ["a"]})
    assert u.scan().to_arrow().column_names == ["id", "other"]
