"""Round 3, write paths and the table lifecycle: each test failed on the code before its fix."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.table.catalog.stream_marks import StreamMark
from fieldshift.table.streams.stream_commit import append_once


def _land(folder: Path, name: str, text: str, mtime: int) -> None:
    path = folder / name
    path.write_text(text)
    os.utime(path, (mtime, mtime))


def _files_on_disk(loc: Path) -> list[str]:
    """The table's files, without SQLite's write-ahead log and its index (a held read connection keeps them)."""
    return sorted(str(p.relative_to(loc)) for p in loc.rglob("*")
                  if p.is_file() and not p.name.endswith(("-wal", "-shm")))


# -- vacuum racing appends in another process ------------------------------------------------------------


def test_vacuum_without_margin_never_deletes_a_file_a_commit_is_about_to_reference(tmp_path: Path) -> None:
    """README: 'k.vacuum(older_than=0) deletes old files'. Run while another process appends, it deleted
    files written but not yet committed: the append then committed a snapshot whose file was gone (the
    table could no longer be read), or the writer died on its vanished temporary file."""
    loc = tmp_path / "t"
    fs.Table.create(loc, pa.schema([("id", pa.int64())]))
    writer = textwrap.dedent(f"""
        import pyarrow as pa, fieldshift as fs
        t = fs.Table.open({str(loc)!r})
        for i in range(80):
            for attempt in range(100):  # a vacuum that deleted this append's file makes it retry
                try:
                    t.append(pa.table({{"id": list(range(i * 10, i * 10 + 10))}}))
                    break
                except fs.CommitConflictError:
                    pass
            else:
                raise SystemExit(f"append {{i}} never landed")
    """)
    vacuum = textwrap.dedent(f"""
        import sys, fieldshift as fs
        t = fs.Table.open({str(loc)!r})
        while sys.stdin.readline() == "":
            pass
        for _ in range(100000):
            t.vacuum(older_than=0)
    """)
    vac = subprocess.Popen([sys.executable, "-c", vacuum], stdin=subprocess.PIPE, text=True)
    try:
        assert vac.stdin is not None
        vac.stdin.write("go\n")
        vac.stdin.flush()
        done = subprocess.run([sys.executable, "-c", writer], capture_output=True, text=True, timeout=300)
    finally:
        vac.kill()
        vac.wait()
    assert done.returncode == 0, done.stderr[-2000:]
    table = fs.Table.open(loc)
    assert sorted(table.to_arrow().column("id").to_pylist()) == list(range(800))
    for snap in table.history():  # every snapshot's files are there
        table.scan(snapshot_id=snap.snapshot_id).to_arrow()


# -- capture -------------------------------------------------------------------------------------------


def test_capture_upsert_of_json_lines_of_mixed_kinds_keeps_the_last_line(tmp_path: Path) -> None:
    """A JSON file whose lines give a column different JSON types was regrouped by kind: the lines of one
    key were reordered, so an upsert kept line 2 ('second') instead of the file's last line."""
    loc = tmp_path / "t"
    table = fs.Table.create(loc, pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())]),
                            identifier_fields=["id"])
    landing = tmp_path / "landing"
    landing.mkdir()
    _land(landing, "a.jsonl", '{"id": 1, "v": 1}\n{"id": 1, "v": "second"}\n{"id": 1, "v": 3}\n'
          '{"id": 2, "v": "x"}\n{"id": 2, "v": 7}\n', 1000)
    fs.capture(landing, table, operation="upsert")
    assert sorted(table.to_arrow().to_pylist(), key=lambda r: r["id"]) == [{"id": 1, "v": "3"}, {"id": 2, "v": "7"}]


def test_capture_json_lines_of_mixed_kinds_keep_file_order_on_append(tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    _land(landing, "a.jsonl", '{"id": 1, "v": "a"}\n{"id": 2, "v": 2}\n{"id": 3, "v": "c"}\n', 1000)
    fs.capture(landing, tmp_path / "t", on_incompatible="quarantine")
    table = fs.Table.open(tmp_path / "t")
    assert table.to_arrow().to_pylist() == [{"id": 1, "v": "a"}, {"id": 2, "v": "2"}, {"id": 3, "v": "c"}]


def test_capture_into_a_new_table_when_the_first_file_is_empty(tmp_path: Path) -> None:
    """The first (oldest) file of a landing directory being empty raised IndexError."""
    landing = tmp_path / "landing"
    landing.mkdir()
    _land(landing, "a.jsonl", "", 1000)
    progress = fs.capture(landing, tmp_path / "t")  # only an empty file: nothing to create a table from
    assert progress.files == 0 and not (tmp_path / "t").exists()
    _land(landing, "b.jsonl", '{"id": 1}\n', 2000)
    progress = fs.capture(landing, tmp_path / "t")
    assert progress.files == 2 and progress.rows == 1
    table = fs.Table.open(tmp_path / "t")
    assert table.to_arrow().to_pylist() == [{"id": 1}]
    again = fs.capture(landing, table)  # nothing twice
    assert again.files == 0 and table.to_arrow().to_pylist() == [{"id": 1}]


# -- stream marks ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("stream_id", "batch_id"), [
    ("s", None),  # sqlite3.IntegrityError before
    (None, 3),  # recorded nothing: a replay committed again
    ("", 1),
    ("s", 2**70),  # OverflowError before
    ("s", True),
    ("s", "7"),
    (5, 1),
])
def test_stream_marks_that_cannot_be_recorded_exactly_are_refused(tmp_path: Path, stream_id: object,
                                                                   batch_id: object) -> None:
    table = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
    before = _files_on_disk(tmp_path / "t")
    with pytest.raises(fs.InvalidOptionError, match="StreamMark"):
        append_once(table, pa.table({"id": [1]}), StreamMark(stream_id, batch_id))  # type: ignore[arg-type]
    assert len(table.history()) == 1 and _files_on_disk(tmp_path / "t") == before


# -- appends of Arrow layouts --------------------------------------------------------------------------

_ELEMENT = pa.struct([("a", pa.int32()), ("b", pa.string())])


@pytest.mark.parametrize("layout", [
    pa.list_view(_ELEMENT), pa.large_list_view(_ELEMENT), pa.list_(_ELEMENT, 1)])
def test_lists_of_structs_of_every_layout_read_back_exactly(tmp_path: Path, layout: pa.DataType) -> None:
    """A list view or fixed-size list of structs was matched to the table's list<struct> without its
    children: the append wrote every struct child as null (list_view: or raised a raw pyarrow error)."""
    values = pa.array([[{"a": 1, "b": "x"}], None, [{"a": None, "b": "y"}]], layout)
    existing = fs.Table.create(tmp_path / "a", pa.schema([("id", pa.int64()), ("l", pa.list_(_ELEMENT))]))
    existing.append(pa.table({"id": [1, 2, 3], "l": values}))
    evolved = fs.Table.create(tmp_path / "b", pa.schema([("id", pa.int64())]))
    evolved.append(pa.table({"id": [1, 2, 3], "l": values}))
    evolved.append(pa.table({"id": [4, 5, 6], "l": values}))
    expected = values.to_pylist()
    assert existing.to_arrow().column("l").to_pylist() == expected
    assert evolved.to_arrow().column("l").to_pylist() == expected * 2
    for table in (existing, evolved):  # the Parquet files themselves, read by pyarrow
        files = [pq.read_table(table.location / f.path) for f in table.scan().files()]
        assert [v for t in files for v in t.column("l").to_pylist()] == table.to_arrow().column("l").to_pylist()


def test_list_view_column_added_by_evolution(tmp_path: Path) -> None:
    """An append adding a list_view column raised pyarrow's 'Expected list type, got list_view'."""
    values = pa.array([[1], [2, None], None, []], pa.list_view(pa.int32()))
    table = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": [0, 1, 2, 3], "c": values}))
    assert str(table.schema.find("c").type) == "list<int>"
    assert table.to_arrow().column("c").to_pylist() == values.to_pylist()


def test_fixed_size_list_column_added_by_evolution_takes_longer_lists(tmp_path: Path) -> None:
    """Evolution added a fixed_size_list[2] column (a layout Parquet does not keep): the next append of
    a list of 3 raised pyarrow's ArrowInvalid."""
    table = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": [1], "c": pa.array([[1, 2]], pa.list_(pa.int32(), 2))}))
    table.append(pa.table({"id": [2], "c": pa.array([[1, 2, 3]], pa.list_(pa.int32()))}))
    assert table.to_arrow().to_pylist() == [{"id": 1, "c": [1, 2]}, {"id": 2, "c": [1, 2, 3]}]


def test_run_end_encoded_struct_child_is_written_as_its_values(tmp_path: Path) -> None:
    """README: run-end encoded input is written as its values; inside a struct it raised pyarrow's
    'Unsupported cast from run_end_encoded'."""
    child = pa.RunEndEncodedArray.from_arrays([2, 3], pa.array(["a", "b"]))
    values = pa.StructArray.from_arrays([child], names=["x"])
    table = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": [1, 2, 3], "s": values}))
    table.append(pa.table({"id": [4, 5, 6], "s": values}))
    assert table.to_arrow().column("s").to_pylist() == [{"x": "a"}, {"x": "a"}, {"x": "b"}] * 2


@pytest.mark.parametrize("older_than", [float("nan"), float("inf"), 1e300, -1, dt.timedelta(days=-1)], ids=repr)
def test_expiry_and_vacuum_refuse_margins_that_are_no_age(tmp_path: Path, older_than: object) -> None:
    """NaN, infinite, absurd or negative margins raised raw ValueError/OverflowError (or were taken as 'now')."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
    t.append({"id": [1]})
    t.append({"id": [2]})
    for call in (t.expire_snapshots, t.vacuum):
        with pytest.raises(fs.InvalidOptionError, match="older_than"):
            call(older_than)
    assert len(t.history()) == 3 and t.to_arrow().column("id").to_pylist() == [1, 2]
    assert t.expire_snapshots(dt.timedelta.max).expired_snapshots == ()  # nothing is that old
