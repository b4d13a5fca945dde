"""Row-level changes on any table: delete(filter=...), update(set=, where=), their rewrite rule, conflicts, CLI."""

from __future__ import annotations

import datetime as dt
import decimal
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pyarrow as pa
import pytest
from typer.testing import CliRunner

import fieldshift as fs
from fieldshift.cli import app
from fieldshift.table.write import row_changes
from fieldshift.table.write.row_changes import commit_row_changes, find_rows, plan_removal


def _plain(tmp_path: Path, files: int = 4, rows: int = 10, **kwargs: object) -> fs.Table:
    """An unkeyed table of ``files`` appends (one file each) of ``rows`` rows: id, v, day (one day per file)."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("v", pa.string()), ("day", pa.date32())]),
                        **kwargs)
    for i in range(files):
        ids = list(range(i * rows, (i + 1) * rows))
        t.append(pa.table({"id": ids, "v": [f"v{n}" for n in ids], "day": [dt.date(2024, 1, 1 + i)] * rows},
                          schema=pa.schema([("id", pa.int64()), ("v", pa.string()), ("day", pa.date32())])))
    return t


def _ids(t: fs.Table, **scan: object) -> list[int]:
    return sorted(t.scan(**scan).to_arrow().column("id").to_pylist())


def test_delete_by_filter_on_unkeyed_table_records_vectors(tmp_path: Path) -> None:
    t = _plain(tmp_path)
    files = {f.file_id for f in t.scan().live_files()}
    result = t.delete(filter=fs.col("id").is_in([3, 15]))
    assert result.rows_deleted == 2 and result.keys_deleted == 0
    assert _ids(t) == [i for i in range(40) if i not in (3, 15)]
    assert {f.file_id for f in t.scan().live_files()} == files  # vectors, no rewrite
    assert t.scan().count() == 38 and t.scan(filter="id < 10").count() == 9
    assert _ids(t, snapshot_id=result.snapshot_id - 1) == list(range(40))  # time travel before the delete
    again = t.delete(filter="id = 3")  # already gone: nothing matched, nothing committed
    assert again.rows_deleted == 0 and again.snapshot_id == result.snapshot_id
    assert t.delete(filter="id >= 30").rows_deleted == 10  # a whole file: ended
    assert _ids(t) == [i for i in range(30) if i not in (3, 15)]
    assert t.history()[-1].operation == "delete"


def test_rewrite_rule_both_ways(tmp_path: Path) -> None:
    """More than half a file's rows deleted: the file is rewritten without them; half or fewer: a vector."""
    t = _plain(tmp_path, files=2)
    before = {f.file_id for f in t.scan().live_files()}
    t.delete(filter="id < 5")  # exactly half of the first file: a vector
    assert {f.file_id for f in t.scan().live_files()} == before
    t.delete(filter="id = 5")  # a sixth row: more than half gone, the file is rewritten with its 4 rows
    live = t.scan().live_files()
    assert len(live) == 2 and {f.file_id for f in live} != before
    assert sorted(f.record_count for f in live) == [4, 10]
    assert not t.scan().deletion_vectors()
    assert _ids(t) == list(range(6, 20))
    with mock.patch.object(row_changes, "REWRITE_FRACTION", 1.0):  # rewrite whenever a row goes
        t.delete(filter="id = 12")
    assert all(not v.cardinality for v in t.scan().deletion_vectors().values())
    assert _ids(t) == [i for i in range(6, 20) if i != 12]


def test_delete_reads_only_files_pruning_keeps(tmp_path: Path) -> None:
    t = _plain(tmp_path, files=6, partition_by=["day"])
    m = t.metadata()
    matched = find_rows(t.io, m, fs.col("day") == dt.date(2024, 1, 2))
    assert [f.record_count for f in matched.read] == [10] and matched.count == 10
    stats = find_rows(t.io, m, fs.col("id") > 55)  # statistics prune the other files
    assert len(stats.read) == 1 and stats.count == 4


def test_delete_after_rename_and_drop_filters_in_the_current_schema(tmp_path: Path) -> None:
    t = _plain(tmp_path, files=2)
    t.update_schema().rename_column("v", "label").commit()
    t.update_schema().drop_column("day").commit()
    assert t.delete(filter="label in ('v1', 'v12')").rows_deleted == 2
    assert t.to_arrow().column_names == ["id", "label"]
    assert _ids(t) == [i for i in range(20) if i not in (1, 12)]
    with pytest.raises(fs.SchemaEvolutionError):  # the old name is gone from the current schema
        t.delete(filter="v = 'v2'")


def test_compaction_expiry_and_vacuum_keep_deleted_rows_deleted(tmp_path: Path) -> None:
    t = _plain(tmp_path, files=3)
    t.delete(filter="id in (1, 11, 21)")
    result = t.compact()
    assert result.rows_written == 27 and _ids(t) == [i for i in range(30) if i not in (1, 11, 21)]
    t.expire_snapshots(older_than=0, retain_last=1)
    t.vacuum(older_than=0)
    assert _ids(t) == [i for i in range(30) if i not in (1, 11, 21)]


def test_update_literals_columns_and_partition_moves(tmp_path: Path) -> None:
    t = _plain(tmp_path, files=2, partition_by=["day"])
    r = t.update({"v": "new", "day": dt.date(2030, 1, 1)}, where="id < 3")
    assert r.rows_updated == 3
    rows = {x["id"]: x for x in t.to_arrow().to_pylist()}
    assert [rows[i]["v"] for i in range(4)] == ["new", "new", "new", "v3"]
    assert rows[0]["day"] == dt.date(2030, 1, 1) and len(rows) == 20
    moved = t.scan(filter=fs.col("day") == dt.date(2030, 1, 1)).files()
    assert len(moved) == 1 and moved[0].record_count == 3  # the rows moved to their new partition
    assert t.update({"v": fs.col("id")}, where="id = 19").rows_updated == 1  # a long cast to string
    assert t.scan(filter="id = 19").to_arrow().column("v").to_pylist() == ["19"]
    assert t.update({"v": "x"}, where="id = 99").rows_updated == 0
    head = t.current_snapshot.snapshot_id
    with pytest.raises(fs.CastValueError, match="'id'"):
        t.update({"id": "seven"}, where="id = 1")
    with pytest.raises(fs.CastValueError):
        t.update({"id": 2**70}, where="id = 1")
    with pytest.raises(fs.RowChangeError, match="lacks"):
        t.update({"nope": 1}, where="id = 1")
    assert t.current_snapshot.snapshot_id == head


def test_update_values_that_would_change_on_the_way_in_are_refused(tmp_path: Path) -> None:
    """Found by adv34: 1.5 went into a long column as 1, a datetime into a date column lost its time, a zoned
    datetime into a zone-less column became UTC wall time, and col() of a text column parsed "5" into 5."""
    schema = pa.schema([("id", pa.int64()), ("n", pa.int64()), ("day", pa.date32()), ("ts", pa.timestamp("us")),
                        ("s", pa.string()), ("ok", pa.bool_()), ("at", pa.timestamp("us")), ("sec", pa.timestamp("s"))])
    t = fs.Table.create(tmp_path / "t", schema)
    t.append(pa.table({"id": [1], "n": [1], "day": [dt.date(2024, 1, 1)], "ts": [dt.datetime(2024, 1, 1)],
                       "s": ["5"], "ok": [True], "at": [dt.datetime(2024, 1, 1, 13)], "sec": [dt.datetime(2024, 1, 1)]},
                      schema=schema))
    head, before = t.current_snapshot.snapshot_id, t.to_arrow()
    zoned = dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=5)))
    for set_ in ({"n": 1.5}, {"n": decimal.Decimal("1.5")}, {"day": dt.datetime(2024, 1, 2, 13)}, {"ts": zoned},
                 {"sec": dt.datetime(2024, 1, 1, 0, 0, 0, 1)}, {"n": fs.col("s")}, {"n": fs.col("ok")},
                 {"day": fs.col("at")}):
        with pytest.raises(fs.CastValueError, match="nothing was written"):
            t.update(set_, where="id = 1")
    assert t.current_snapshot.snapshot_id == head and t.to_arrow().equals(before)
    # exact values still go in: a whole float, a midnight datetime, a naive datetime, a same-kind column
    t.update({"n": 2.0, "day": dt.datetime(2024, 1, 3), "ts": dt.datetime(2024, 1, 4, 5), "sec": fs.col("ts")},
             where="id = 1")
    assert t.to_arrow().select(["n", "day", "ts", "sec"]).to_pylist() == [
        {"n": 2, "day": dt.date(2024, 1, 3), "ts": dt.datetime(2024, 1, 4, 5), "sec": dt.datetime(2024, 1, 1)}]


def test_update_checks_its_literals_even_where_no_row_matches(tmp_path: Path) -> None:
    """A literal that does not fit is an error before any row is read, as a user expects of a typo; a column
    reference has no value to check until rows match."""
    t = _plain(tmp_path, files=1)
    head = t.current_snapshot.snapshot_id
    for set_ in ({"id": "abc"}, {"id": 1.5}, {"day": "not a date"}):
        with pytest.raises(fs.CastValueError, match="nothing was written"):
            t.update(set_, where="id > 1000")
    assert t.update({"id": fs.col("v")}, where="id > 1000").rows_updated == 0
    assert t.current_snapshot.snapshot_id == head and _ids(t) == list(range(10))


def test_cli_update_refuses_a_double_literal_out_of_range(tmp_path: Path) -> None:
    """Found by adv34: ``--set "f = 1e400"`` wrote infinity."""
    schema = pa.schema([("id", pa.int64()), ("f", pa.float64())])
    t = fs.Table.create(tmp_path / "t", schema)
    t.append(pa.table({"id": [1], "f": [1.0]}, schema=schema))
    out = CliRunner().invoke(app, ["update", str(t.location), "--set", "f = 1e400"])
    assert out.exit_code == 1 and "1e400" in out.output and "nothing was written" in out.output
    assert t.to_arrow().column("f").to_pylist() == [1.0]


def test_update_keyed_table_rules(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("pre", pa.int64()), ("v", pa.string())])
    t = fs.Table.create(tmp_path / "k", schema, identifier_fields=["id"], precombine="pre")
    t.upsert(pa.table({"id": [1, 2, 3], "pre": [5, 5, 5], "v": ["a", "b", "c"]}, schema=schema))
    assert t.update({"v": "z"}, where="id >= 2").rows_updated == 2  # the precombine value is kept
    assert t.to_arrow().sort_by("id").to_pylist() == [
        {"id": 1, "pre": 5, "v": "a"}, {"id": 2, "pre": 5, "v": "z"}, {"id": 3, "pre": 5, "v": "z"}]
    with pytest.raises(fs.RowChangeError, match="key"):
        t.update({"id": 9}, where="id = 1")
    with pytest.raises(fs.PrecombineLoweredError, match="precombine"):
        t.update({"pre": 4}, where="id = 1")
    assert t.update({"pre": 7, "v": "up"}, where="id = 1").rows_updated == 1
    oracle = t.scan()
    oracle.use_vectors = False  # the full merge agrees: the new version wins
    assert sorted(oracle.to_arrow().to_pylist(), key=lambda r: r["id"])[0] == {"id": 1, "pre": 7, "v": "up"}
    assert t.delete(filter="v = 'z'").rows_deleted == 2
    by_keys = t.delete([1, 2, 99])  # three keys in the delete file; one of them was a live row
    assert (by_keys.keys_deleted, by_keys.rows_deleted) == (3, 1)


def test_a_concurrent_commit_on_what_a_delete_read_conflicts(tmp_path: Path) -> None:
    t = _plain(tmp_path, files=2)
    base = t.metadata()
    matched = find_rows(t.io, base, "id < 3")
    t.delete(filter="id = 4")  # another writer changes a file the first read
    written: list[str] = []
    removal = plan_removal(t.io, base, matched, written)
    with pytest.raises(fs.CommitConflictError, match="removed or changed rows"):
        commit_row_changes(t.io, base, matched, removal, operation="delete")
    base = t.metadata()
    matched = find_rows(t.io, base, "id < 3")
    t.append(pa.table({"id": [1], "v": ["late"], "day": [dt.date(2024, 1, 1)]}))  # may hold matching rows
    with pytest.raises(fs.CommitConflictError, match="added data files"):
        commit_row_changes(t.io, base, matched, plan_removal(t.io, base, matched, []), operation="delete")
    assert t.delete(filter="id < 3").rows_deleted == 4  # Table.delete retries on the new head
    assert _ids(t) == [i for i in range(3, 20) if i != 4]
    base = t.metadata()
    matched = find_rows(t.io, base, "id >= 18")
    t.append(pa.table({"id": [5], "v": ["x"], "day": [dt.date(2024, 1, 1)]}))  # its statistics rule it out
    commit_row_changes(t.io, base, matched, plan_removal(t.io, base, matched, []), operation="delete")
    assert _ids(t) == sorted([i for i in range(3, 18) if i != 4] + [5])  # committed on the moved head


_WORKER = """
import sys
import fieldshift as fs
t = fs.Table.open(sys.argv[1])
for i in range(int(sys.argv[2]), 40, 2):
    while True:  # a conflict after every retry (the other process won each race) is tried again
        try:
            assert t.delete(filter=f"id = {i}").rows_deleted == 1
            break
        except fs.CommitConflictError:
            continue
"""


def test_two_processes_deleting_from_the_same_files_lose_nothing(tmp_path: Path) -> None:
    """Each process deletes every other row, one at a time, from the same files: a vector written from a
    stale base would bring the other's deleted rows back."""
    t = _plain(tmp_path, files=1, rows=40)
    # (past half the rows the file is rewritten: the other process's next commit then conflicts on it too)
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(t.location), str(k)]) for k in (0, 1)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    assert t.to_arrow().num_rows == 0
    assert sum(1 for s in t.history() if s.operation == "delete") == 40


def test_cli_delete_and_update_on_an_unkeyed_table(tmp_path: Path) -> None:
    t = _plain(tmp_path, files=1)
    runner = CliRunner()
    out = runner.invoke(app, ["update", str(t.location), "--set", "v = 'done'", "--set", "day = DATE '2025-01-31'",
                              "--where", "id < 2"])
    assert out.exit_code == 0, out.output
    assert "updated 2 row(s)" in out.output
    rows = {r["id"]: r for r in t.to_arrow().to_pylist()}
    assert rows[1] == {"id": 1, "v": "done", "day": dt.date(2025, 1, 31)}
    out = runner.invoke(app, ["update", str(t.location), "--set", "v = id", "--where", "id = 5"])
    assert out.exit_code == 0 and rows[5]["v"] == "v5" and t.scan(filter="id = 5").to_arrow()["v"][0].as_py() == "5"
    out = runner.invoke(app, ["delete", str(t.location), "--where", "v = 'done'"])
    assert out.exit_code == 0 and "deleted 2 row(s)" in out.output, out.output
    head = t.current_snapshot.snapshot_id
    bad = runner.invoke(app, ["update", str(t.location), "--set", "id = 'x'"])
    assert bad.exit_code != 0 and "'id'" in bad.output
    bad = runner.invoke(app, ["update", str(t.location), "--set", "v 1"])
    assert bad.exit_code != 0 and "'='" in bad.output
    assert t.current_snapshot.snapshot_id == head
    assert _ids(t) == list(range(2, 10))


def test_published_table_shows_deletes_and_updates_to_iceberg_readers(tmp_path: Path) -> None:
    pytest.importorskip("pyiceberg")
    from tests.table.publish_helpers import fieldshift_rows, pyiceberg_rows

    t = _plain(tmp_path, files=2, publish="iceberg")
    t.delete(filter="id < 3")
    t.update({"v": "u"}, where="id = 15")
    t.delete(filter="id > 13")  # with the update, 6 rows of the second file: rewritten
    for snap in t.history()[1:]:
        assert pyiceberg_rows(t, snap.snapshot_id) == fieldshift_rows(t, snap.snapshot_id)
    assert len(pyiceberg_rows(t, t.current_snapshot.snapshot_id)) == 11
