"""``SqliteCatalog.one_connection`` (a stream's micro-batch served from one connection) against the same
calls on a connection each: reads inside the block see other writers' commits, commits and replays behave
the same, and the connection is released at the end."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.catalog.stream_marks import StreamMark
from fieldshift.table.streams.stream_commit import append_once


def _scenario(root: Path, held: bool) -> tuple[list[Any], list[int]]:
    t = fs.Table.create(root, pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())]),
                        identifier_fields=["id"])
    other = fs.Table.open(root)  # another handle: its own catalog object and connections
    block = t.catalog.one_connection() if held else contextlib.nullcontext()
    with block:
        head = t.current_snapshot.snapshot_id
        other.append({"id": pa.array([1], pa.int64()), "v": pa.array([1], pa.int64())})
        assert t.current_snapshot.snapshot_id == head + 1  # fresh: no snapshot held across reads
        mark = StreamMark("s", 0)
        assert append_once(t, {"id": pa.array([2], pa.int64()), "v": pa.array([2], pa.int64())}, mark) is not None
        assert append_once(t, {"id": pa.array([2], pa.int64()), "v": pa.array([2], pa.int64())}, mark) is None
        with pytest.raises(fs.DuplicateKeyError):
            t.append({"id": pa.array([1], pa.int64()), "v": pa.array([9], pa.int64())})
        t.upsert({"id": pa.array([1], pa.int64()), "v": pa.array([5], pa.int64())})
        t.update_schema().add_column("w", pa.string()).commit()
        other.append({"id": pa.array([3], pa.int64()), "v": pa.array([3], pa.int64())})
        assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert t.catalog.__dict__.get("_held") is None
    return [s.operation for s in t.history()], sorted(t.to_arrow().column("v").to_pylist())


def test_one_connection_behaves_as_a_connection_per_call(tmp_path: Path) -> None:
    assert _scenario(tmp_path / "held", True) == _scenario(tmp_path / "plain", False)
    assert _scenario(tmp_path / "again", True)[0] == ["create", "append", "append", "upsert", "schema", "append"]


def test_one_connection_nests_and_releases_after_an_error(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
    with pytest.raises(ZeroDivisionError), t.catalog.one_connection():
        with t.catalog.one_connection():  # the outer block's connection serves the inner one
            t.append({"id": [1]})
        1 / 0  # noqa: B018
    assert t.catalog.__dict__.get("_held") is None
    t.append({"id": [2]})
    assert sorted(fs.Table.open(tmp_path / "t").to_arrow().column("id").to_pylist()) == [1, 2]
