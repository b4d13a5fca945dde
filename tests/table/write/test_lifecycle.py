"""A table's lifecycle: one policy per table, commits that keep every file readable, sound create,
vacuum, quarantine and error messages (issue 12 items 9, 10, 12, 16, 18, 23, 25)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import fieldshift as fs
from fieldshift.cli import app
from fieldshift.schema.policy import POLICY_NAMES
from fieldshift.table.updates import AddFiles

RUNNER = CliRunner()


def cli(*args: str) -> tuple[int, str]:
    result = RUNNER.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


# -- one policy per table (items 9, 10) ----------------------------------------------------------
@pytest.mark.parametrize("name", POLICY_NAMES)
def test_policy_names_round_trip(name: str) -> None:
    policy = fs.CastPolicy.from_name(name)
    assert policy.option_name == name
    assert fs.CastPolicy.from_name(policy.option_name) == policy


def test_policy_name_spellings_and_custom_policies() -> None:
    assert fs.CastPolicy.from_name("explicit(null)") == fs.CastPolicy.explicit("null")
    assert fs.CastPolicy.from_name("Explicit_Null") == fs.CastPolicy.explicit("null")
    assert fs.CastPolicy.from_name("explicit(raise)") == fs.CastPolicy.explicit()
    wide = fs.CastPolicy.onehouse(widen_to_string=True)
    assert fs.CastPolicy.from_name(wide.option_name) == wide != fs.CastPolicy.onehouse()
    custom = fs.CastPolicy("mine", frozenset({"int_widening", "null_to_any"}), on_error="null")
    assert fs.CastPolicy.from_name(custom.option_name) == custom
    with pytest.raises(fs.InvalidOptionError, match="unknown policy 'strict'; use one of lossless"):
        fs.CastPolicy.from_name("strict")


def test_item9_default_append_widening_reads_back_everywhere(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("v", pa.int64())]))
    assert t.policy == fs.CastPolicy.onehouse()
    t.append({"id": [1], "v": [2**53 + 1]})
    r = t.append(pa.table({"id": [2], "v": pa.array([0.5], pa.float64())}))
    assert r.schema_evolved and t.schema.find("v").type == pa.float64()
    assert t.to_arrow().to_pylist() == [{"id": 1, "v": float(2**53)}, {"id": 2, "v": 0.5}]
    assert t.scan(snapshot_id=1).to_arrow().to_pylist() == [{"id": 1, "v": 2**53 + 1}]
    code, out = cli("read", str(tmp_path / "t"), "--format", "json")
    assert code == 0, out
    assert [json.loads(line) for line in out.splitlines()] == [{"id": 1, "v": float(2**53)}, {"id": 2, "v": 0.5}]
    code, out = cli("explain", str(tmp_path / "t"))
    assert code == 0 and "policy onehouse (the table's policy)" in out, out
    # a caller may still ask for a stricter read, and gets the plan-time error
    with pytest.raises(fs.SchemaMismatchError, match="v"):
        t.scan(policy=fs.CastPolicy.lossless()).to_arrow()
    code, out = cli("read", str(tmp_path / "t"), "--policy", "lossless")
    assert code == 1 and "cannot be read" in out, out
    refused = RUNNER.invoke(app, ["read", str(tmp_path / "t"), "--policy", "lossless", "--format", "csv"])
    assert refused.exit_code == 1 and refused.stdout == "", refused.stdout  # no CSV header, then an error


def test_policy_is_chosen_at_create_recorded_and_changed_by_a_commit(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("a", pa.int64())]), policy="lossless")
    with pytest.raises(fs.IncompatibleTypeError):  # lossless appends do not widen long -> double
        t.append(pa.table({"a": pa.array([0.5])}))
    before = len(t.history())
    snap = t.set_policy(fs.CastPolicy.hudi())
    assert snap.operation == "policy" and snap.schema_id == t.schema.schema_id
    assert len(t.history()) == before + 1
    assert fs.Table.open(tmp_path / "t").policy == fs.CastPolicy.hudi()
    assert t.set_policy("hudi").snapshot_id == snap.snapshot_id  # no change, no snapshot
    t.append(pa.table({"a": pa.array([0.5])}))
    assert t.to_arrow().column("a").to_pylist() == [0.5]
    code, out = cli("policy", str(tmp_path / "t"))
    assert code == 0 and out.strip() == "hudi"
    code, out = cli("create", str(tmp_path / "u"), "--schema", "a int", "--policy", "explicit-null")
    assert code == 0 and fs.Table.open(tmp_path / "u").policy == fs.CastPolicy.explicit("null"), out
    code, out = cli("create", str(tmp_path / "w"), "--schema", "a int", "--policy", "nope")
    assert code == 2 and "unknown policy 'nope'" in out


def test_item10_a_schema_change_that_strands_old_files_is_refused(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("f", pa.float64())]), policy="hudi")
    t.append({"id": [1], "f": [1.5]})
    float_schema = t.schema.schema_id
    assert t.update_schema().update_column("f", pa.string()).commit().find("f").type == pa.string()
    t.append({"id": [2], "f": ["two"]})
    head = t.current_snapshot.snapshot_id
    with pytest.raises(fs.HistoryUnreadableError) as caught:
        t.update_schema().update_column("f", pa.binary()).commit()
    message = str(caught.value)
    assert f"schema id(s) [{float_schema}]" in message and "f: double -> binary" in message, message
    assert t.current_snapshot.snapshot_id == head and len(t.schemas()) == 2
    assert t.to_arrow().to_pylist() == [{"id": 1, "f": "1.5"}, {"id": 2, "f": "two"}]


def test_a_policy_change_that_strands_old_files_is_refused(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("v", pa.int64())]))
    t.append({"v": [1]})
    t.append({"v": [0.5]})  # onehouse widens long -> double
    with pytest.raises(fs.HistoryUnreadableError, match=r"schema id\(s\) \[0\]"):
        t.set_policy("lossless")
    assert t.policy == fs.CastPolicy.onehouse() and t.history()[-1].operation == "append"
    code, out = cli("policy", str(tmp_path / "t"), "lossless")
    assert code == 1 and "Nothing was committed" in out, out


def test_an_explicit_builder_policy_cannot_get_past_the_table_policy(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("s", pa.string())]), policy="lossless")
    t.append({"s": ["x"]})
    update = t.update_schema(policy=fs.CastPolicy.explicit()).update_column("s", pa.int64())
    with pytest.raises(fs.HistoryUnreadableError, match="s: string -> long"):
        update.commit()
    assert t.schema.find("s").type == pa.string()


def test_an_append_that_would_evolve_past_the_table_policy_writes_nothing(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("n", pa.int64())]), policy="lossless")
    t.append({"n": [1]})
    with pytest.raises(fs.HistoryUnreadableError, match=r"schema 1 \(evolved by an append\)(.|\n)*n: long -> double"):
        t.append({"n": [0.5]}, policy=fs.CastPolicy.onehouse())  # onehouse would widen the column to double
    assert len(t.history()) == 2 and t.to_arrow().to_pylist() == [{"n": 1}]
    assert len(list((t.location / "data").iterdir())) == 1  # the refused append's file was removed


def test_a_concurrent_append_cannot_sneak_old_files_past_a_schema_change(tmp_path: Path) -> None:
    from fieldshift.table.files.data_files import write_data_file

    t = fs.Table.create(tmp_path / "t", pa.schema([("f", pa.float64())]), policy="hudi")
    float_schema = t.schema
    rows = pa.Table.from_pydict({"f": [1.5]}, schema=float_schema.to_arrow())
    late = write_data_file(t.location, float_schema, rows)  # a writer prepared float files on snapshot 0 ...
    t.update_schema().update_column("f", pa.string()).commit()  # ... while others commit float -> string
    t.update_schema().update_column("f", pa.binary()).commit()  # and string -> binary (no float file yet)
    with pytest.raises(fs.CommitConflictError, match="f: double -> binary"):
        t.catalog.commit(t.table_id, 0, [], [AddFiles((late,), float_schema.schema_id)], operation="append")
    assert t.scan().files() == [] and t.current_snapshot.snapshot_id == 2



def test_a_concurrent_append_cannot_sneak_values_past_a_checked_schema_change(tmp_path: Path) -> None:
    """binary -> string checks the values of the files committed before it; a writer that prepared files
    under the old schema meanwhile never had its values checked, so its commit must not be replayed."""
    from fieldshift.table.files.data_files import write_data_file

    t = fs.Table.create(tmp_path / "t", pa.schema([("b", pa.binary())]), policy="lossless")
    t.append({"b": [b"ok"]})
    binary_schema = t.schema
    rows = pa.Table.from_pydict({"b": [b"\xff\xfe"]}, schema=binary_schema.to_arrow())
    late = write_data_file(t.location, binary_schema, rows)  # a writer prepared invalid UTF-8 on snapshot 1 ...
    t.update_schema().update_column("b", pa.string()).commit()  # ... while another checked b as text
    with pytest.raises(fs.CommitConflictError, match="'b' would meet a cast that checks values"):
        t.catalog.commit(t.table_id, 1, [], [AddFiles((late,), binary_schema.schema_id)], operation="append")
    assert t.to_arrow().to_pylist() == [{"b": "ok"}]


@pytest.mark.parametrize("on_incompatible", ["fail", "quarantine"])
def test_an_append_racing_a_checked_schema_change_retries_and_checks_its_values(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_incompatible: str) -> None:
    """The same race through Table.append: the schema change lands while the append writes its file; the
    append retries on the new schema, where its invalid UTF-8 fails (or is quarantined) as any append's."""
    import fieldshift.table.write.write_commit as write_commit

    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("b", pa.binary())]), policy="lossless")
    t.append({"id": [1], "b": [b"ok"]})
    write = write_commit.write_partitioned

    def racing(*args: object, **kwargs: object) -> object:
        monkeypatch.setattr(write_commit, "write_partitioned", write)  # one race, then write as usual
        fs.Table.open(t.location).update_schema().update_column("b", pa.string()).commit()
        return write(*args, **kwargs)

    monkeypatch.setattr(write_commit, "write_partitioned", racing)
    bad = pa.table({"id": [2, 3], "b": [b"\xff\xfe", b"fine"]})
    if on_incompatible == "fail":
        with pytest.raises(fs.CastValueError, match="xff"):
            fs.Table.open(t.location).append(bad)
        expect = [{"id": 1, "b": "ok"}]
    else:
        result = fs.Table.open(t.location).append(bad, on_incompatible="quarantine")
        assert (result.rows_written, result.rows_quarantined) == (1, 1)
        expect = [{"id": 1, "b": "ok"}, {"id": 3, "b": "fine"}]
    reopened = fs.Table.open(t.location)
    assert reopened.schema.find("b").type == pa.string()
    assert sorted(reopened.to_arrow().to_pylist(), key=lambda r: r["id"]) == expect

def test_a_catalog_without_a_recorded_policy_reads_as_onehouse(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("v", pa.int64())]))
    t.append({"v": [1]})
    t.append({"v": [0.5]})
    with sqlite3.connect(t.catalog.path) as conn:  # as fieldshift wrote catalogs before policies
        conn.execute("UPDATE fs_table SET properties = '{}'")
    old = fs.Table.open(tmp_path / "t")
    assert old.policy == fs.CastPolicy.onehouse()
    assert old.to_arrow().column("v").to_pylist() == [1.0, 0.5]


# -- one location, one table; vacuum keeps to its own files (item 12) ---------------------------------
def test_item12_tables_of_a_shared_catalog_cannot_share_or_nest_locations(tmp_path: Path) -> None:
    cat = str(tmp_path / "shared.db")
    schema = pa.schema([("x", pa.int64())])
    fs.Table.create(tmp_path / "a", schema, catalog=cat, name="a")
    for where in ("a", "a/data/b", "."):
        with pytest.raises(fs.TableError, match="may not share a directory or nest"):
            fs.Table.create(tmp_path / where, schema, catalog=cat, name="b")
    own = fs.Table.create(tmp_path / "own", schema)
    with pytest.raises(fs.TableError, match="inside the table at"):
        fs.Table.create(tmp_path / "own" / "data" / "inner", schema)
    with pytest.raises(fs.TableError, match="its own catalog already exists"):
        fs.Table.create(own.location, schema, catalog=cat, name="c")
    assert [t[1] for t in fs.Table.open(tmp_path / "a", catalog=cat, name="a").catalog.tables()] == ["a"]


def test_item12_vacuum_keeps_other_tables_files_and_skips_directories(tmp_path: Path) -> None:
    cat = str(tmp_path / "shared.db")
    a = fs.Table.create(tmp_path / "a", pa.schema([("x", pa.int64())]), catalog=cat, name="a")
    fs.Table.create(tmp_path / "b", pa.schema([("y", pa.string())]), catalog=cat, name="b")
    with sqlite3.connect(cat) as conn:  # a catalog from before locations were checked: b shares a's
        conn.execute("UPDATE fs_table SET location = ? WHERE name = 'b'", (str(a.location),))
    b = fs.Table.open(tmp_path / "a", catalog=cat, name="b")
    a.append({"x": [1]})
    b.append({"y": ["kept"]})
    (a.location / "data" / "subdir").mkdir()
    (a.location / "data" / "subdir" / "f.parquet").write_bytes(b"not ours")
    (a.location / "quarantine").mkdir()
    (a.location / "quarantine" / "link").symlink_to(a.location / "data" / "subdir" / "f.parquet")
    import datetime as dt

    assert a.vacuum(older_than=dt.timedelta(0)) == []
    assert b.to_arrow().to_pylist() == [{"y": "kept"}] and a.to_arrow().to_pylist() == [{"x": 1}]
    assert (a.location / "data" / "subdir" / "f.parquet").exists()


# -- quarantine of batches of any source types (item 16) ------------------------------------------------
def test_item16_quarantine_lists_batches_of_different_source_types(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("k", pa.string()), ("n", pa.int32())]))
    t.append(pa.table({"k": ["b"], "n": ["x"]}), on_incompatible="quarantine")
    odd = pa.table({
        "k": ["c"], "n": pa.array([[1, 2]]),  # a list cannot become an int: the whole batch goes aside
        "ts": pa.array([2**62], pa.timestamp("us")),  # outside Python's datetime range
        "raw": pa.array([b"\x00\xff"]), "dec": pa.array([1], pa.decimal128(5, 2)).cast(pa.decimal128(5, 2)),
        "f": [float("nan")], "m": pa.array([[("k1", 1)]], pa.map_(pa.string(), pa.int64())),
        "s": pa.array([{"x": None, "y": [True]}]),
    })
    t.append(odd, on_incompatible="quarantine")
    q = t.quarantine()
    assert q.column_names == ["_fieldshift_reason", "_fieldshift_row", "_fieldshift_source_schema",
                              "_fieldshift_quarantined_at", "_fieldshift_snapshot_id"]
    rows = [json.loads(r) for r in q.column("_fieldshift_row").to_pylist()]
    assert rows[0] == {"k": "b", "n": "x"}
    assert rows[1]["n"] == [1, 2] and rows[1]["raw"] == "AP8=" and rows[1]["dec"] == "1.00"
    assert rows[1]["f"] == "NaN" and rows[1]["m"] == [["k1", 1]] and rows[1]["s"] == {"x": None, "y": [True]}
    assert "out of range" in rows[1]["ts"]
    assert q.column("_fieldshift_snapshot_id").to_pylist() == [1, 2]
    first, second = t.quarantine(grouped=True)
    assert first.schema.field("n").type == pa.string() and second.schema.field("n").type == pa.list_(pa.int64())
    assert second.column("ts").type == pa.timestamp("us")
    code, out = cli("quarantine", str(tmp_path / "t"), "--format", "json")
    assert code == 0, out
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["k"] for line in lines] == ["b", "c"] and lines[1]["n"] == [1, 2]
    code, out = cli("quarantine", str(tmp_path / "t"))
    assert code == 0 and "source schema 2 of 2" in out, out
    code, out = cli("quarantine", str(tmp_path / "t"), "--format", "csv")
    assert code == 0, out
    as_csv = list(csv.DictReader(io.StringIO(out)))
    assert [json.loads(r["_fieldshift_row"])["k"] for r in as_csv] == ["b", "c"]


# -- errors that name the file, the table and the schema (item 23) ---------------------------------------
def _one_file(t: fs.Table) -> Path:
    (f,) = t.scan().files()
    return t.location / f.path


def test_item23_a_replaced_data_file_names_the_file_and_the_problem(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("name", pa.string())]))
    t.append({"id": [1], "name": ["a"]})
    path = _one_file(t)
    pq.write_table(pa.table({"other": [1.5]}), path)
    with pytest.raises(fs.DataFileError, match=rf"{path.name}.*column 'id' \(int64, field id 1\) is missing"):
        t.to_arrow()
    pq.write_table(pa.table({"id": [7], "name": ["no ids"]}), path)  # right names, written without field ids
    with pytest.raises(fs.DataFileError, match=rf"{path.name}.*column 'id' has field id None, not 1"):
        t.to_arrow()
    code, out = cli("read", str(tmp_path / "t"))
    assert code == 1 and path.name in out, out


def test_item23_a_corrupt_schema_row_names_the_table_and_schema(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]), name=None)
    t.update_schema().add_column("x", pa.string()).commit()
    with sqlite3.connect(t.catalog.path) as conn:
        conn.execute("UPDATE fs_schema SET schema_json = '{\"type\": \"struct\", \"fields\": [' WHERE schema_id = 1")
    with pytest.raises(fs.CatalogFormatError, match=rf"schema 1 of table '{t.location}' is corrupt"):
        fs.Table.open(tmp_path / "t").to_arrow()
    code, out = cli("read", str(tmp_path / "t"))
    assert code == 1 and "is corrupt" in out, out


def test_item23_value_errors_in_a_scan_name_the_data_file(tmp_path: Path) -> None:
    # a commit never strands a value (value_check), so read back in time: the widened file into schema 0
    t = fs.Table.create(tmp_path / "t", pa.schema([("s", pa.int32())]), policy="explicit")
    t.append({"s": pa.array([2**40], pa.int64())})  # widens s to long: schema 1
    path = _one_file(t)
    with pytest.raises(fs.CastValueError, match=rf"data file {path} \(written with schema 1\): cannot cast"):
        t.scan(schema_id=0).to_arrow()


# -- no-op commits commit nothing (item 25) -----------------------------------------------------------------
def test_item25_a_no_op_schema_commit_records_nothing(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("a", pa.int64())]))
    current = t.schema
    assert t.update_schema().commit() == current
    assert t.update_schema().update_column("a", pa.int64()).commit() == current
    assert t.update_schema().add_column("b", pa.int32()).drop_column("b").commit() == current
    assert len(t.history()) == 1 and len(t.schemas()) == 1
    code, out = cli("alter", str(tmp_path / "t"), "ALTER a SET TYPE BIGINT")
    assert code == 0 and "nothing to change" in out and len(t.history()) == 1, out


# -- creating is atomic; a table opens wherever its directory is (item 18) ----------------------------------
CREATOR = Path(__file__).parents[1] / "create_process.py"


def _create_in_process(location: Path, kill_at: int, catalog: str | None = None) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, str(CREATOR), str(location), str(kill_at)] + (["--catalog", catalog] if catalog else [])
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def _usable(location: Path, catalog: str | None = None) -> None:
    """Whatever a killed create left is either no table (create then works) or a whole table."""
    name = location.name if catalog else None
    try:
        t = fs.Table.open(location, catalog=catalog, name=name)
    except fs.TableError as e:
        assert "no fieldshift table" in str(e) or "no table named" in str(e), e
        t = fs.Table.create(location, pa.schema([("id", pa.int64()), ("name", pa.string())]), catalog=catalog,
                            name=name)
    assert t.schema.names == ["id", "name"] and t.history()[-1].operation == "create"
    t.append({"id": [1], "name": ["x"]})
    assert t.to_arrow().to_pylist() == [{"id": 1, "name": "x"}]


@pytest.mark.parametrize("shared", [False, True], ids=["own-catalog", "shared-catalog"])
def test_item18_sigkill_anywhere_in_create_leaves_no_table_or_a_whole_one(tmp_path: Path, shared: bool) -> None:
    catalog = str(tmp_path / "shared.db") if shared else None
    full = _create_in_process(tmp_path / "probe", 0, catalog)
    assert full.returncode == 0, full.stderr
    lines = int(full.stdout)
    points = sorted({*range(1, lines, max(1, lines // (6 if shared else 12))), lines - 2, lines - 1, lines})
    for n in points:
        location = tmp_path / f"t{n}"
        killed = _create_in_process(location, n, catalog)
        assert killed.returncode == -signal.SIGKILL, (n, killed.stderr)
        _usable(location, catalog)
        fs.Table.open(location, catalog=catalog, name=location.name if catalog else None).vacuum()
        assert not list(location.glob(".fieldshift.db.*"))  # no temporary catalog left behind


def test_item18_create_recovers_a_half_made_location(tmp_path: Path) -> None:
    from fieldshift.table.catalog.sqlite import SqliteCatalog

    SqliteCatalog(tmp_path / "t" / "fieldshift.db").initialize()  # how an older create died: no table row
    with pytest.raises(fs.TableError, match=r"holds no table \(a create was interrupted\); run Table.create\(\) again"):
        fs.Table.open(tmp_path / "t")
    _usable(tmp_path / "t")


def test_item18_a_moved_or_copied_table_directory_opens_and_reads(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]), policy="hudi")
    t.append({"id": [1]})
    t.update_schema().add_column("s", pa.string()).commit()
    t.append({"id": [2], "s": ["b"]}, on_incompatible="quarantine")
    shutil.copytree(tmp_path / "t", tmp_path / "copy")
    shutil.move(tmp_path / "t", tmp_path / "moved")
    for where in ("copy", "moved"):
        opened = fs.Table.open(tmp_path / where)
        assert opened.location == tmp_path / where and opened.policy == fs.CastPolicy.hudi()
        assert opened.to_arrow().to_pylist() == [{"id": 1, "s": None}, {"id": 2, "s": "b"}]
    copy = fs.Table.open(tmp_path / "copy")
    copy.append({"id": [3]})
    assert len(fs.Table.open(tmp_path / "moved").to_arrow()) == 2
    code, out = cli("read", str(tmp_path / "copy"), "--format", "json")
    assert code == 0 and len(out.splitlines()) == 3, out


def test_item18_concurrent_creates_at_one_location_make_one_table(tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    outcomes: list[str] = []

    def create() -> None:
        try:
            fs.Table.create(tmp_path / "t", schema)
            outcomes.append("created")
        except fs.TableError as e:
            outcomes.append("exists" if "already exists" in str(e) else str(e))

    threads = [threading.Thread(target=create) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(outcomes) == ["created", "exists", "exists", "exists"]
    _usable(tmp_path / "t")


def test_a_column_named_like_a_struct_path_reads_only_itself(tmp_path: Path) -> None:
    """Found by the model test: pyarrow reads a selected name with a dot as a path, so selecting the
    column ``a.b`` also brought struct ``a`` (child ``b``) and the columns came back in file order; the
    scan then refused the file, or could read the wrong column. Files are read by leaf index."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("a.b", pa.int64()), ("x", pa.string())]))
    t.append(pa.table({"a.b": [1], "x": ["v"]}))
    t.append(pa.table({"a.b": [2], "x": ["w"], "a": pa.array([{"b": 7}], pa.struct([("b", pa.int64())]))}))
    assert t.scan(columns=["a.b", "x"]).to_arrow().to_pylist() == [{"a.b": 1, "x": "v"}, {"a.b": 2, "x": "w"}]
    assert t.scan(columns=["x", "a"]).to_arrow().to_pylist() == [{"x": "v", "a": None}, {"x": "w", "a": {"b": 7}}]
    assert t.scan(filter=(["a.b"], ">", 1)).to_arrow().column("x").to_pylist() == ["w"]
    assert t.scan(filter=(["a", "b"], "==", 7)).to_arrow().column("x").to_pylist() == ["w"]
