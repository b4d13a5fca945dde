"""Keyed tables (README "Primary-key tables"): upsert, delete, merge-on-read, compaction, expiry."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.kernels import murmur3
from fieldshift.table.catalog.sql import FORMAT_VERSION
from fieldshift.table.keyed.keys import KeySpec, bucket_of, merge_group
from fieldshift.table.keyed.merge import group_files, resolved
from fieldshift.table.maintenance import commit_compaction, prepare_compaction

SCHEMA = pa.schema([pa.field("id", pa.int32(), nullable=False), ("pre", pa.int64()), ("x", pa.string()),
                    ("n", pa.int32())])


def rows(t: fs.Table, **scan: object) -> list[dict]:
    return sorted(t.scan(**scan).to_arrow().to_pylist(), key=lambda r: r["id"])


def batch(ids: list[int], pre: list[int | None], x: list[str], **extra: pa.Array) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int32()), "pre": pa.array(pre, pa.int64()), "x": x, **extra})


@pytest.fixture
def keyed(tmp_path: Path) -> fs.Table:
    return fs.Table.create(tmp_path / "t", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=2)


def test_hudi_walkthrough_five_rows_row_2_at_v_3(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("rowId", pa.string(), nullable=False),
                        pa.field("partitionId", pa.string(), nullable=False), ("preComb", pa.int64()),
                        ("name", pa.string()), ("versionId", pa.string()), ("intToLong", pa.int32())])
    t = fs.Table.create(tmp_path / "h", schema, identifier_fields=["rowId", "partitionId"], precombine="preComb")
    t.upsert(pa.table({"rowId": ["row_1", "row_2", "row_3"], "partitionId": ["part_0"] * 3, "preComb": [0, 0, 0],
                       "name": ["bob", "john", "tom"], "versionId": ["v_0"] * 3,
                       "intToLong": pa.array([0, 0, 0], pa.int32())}, schema=schema))
    t.upsert(pa.table({"rowId": ["row_2", "row_5", "row_9"], "partitionId": ["part_0"] * 3, "preComb": [5, 5, 5],
                       "name": ["john", "maroon", "michael"], "versionId": ["v_3", "v_2", "v_2"],
                       "intToLong": pa.array([3, 2, 2], pa.int64()), "newField": ["newField_1"] * 3}))
    got = {r["rowId"]: r for r in t.to_arrow().to_pylist()}
    assert sorted(got) == ["row_1", "row_2", "row_3", "row_5", "row_9"]
    assert got["row_2"] == {"rowId": "row_2", "partitionId": "part_0", "preComb": 5, "name": "john",
                            "versionId": "v_3", "intToLong": 3, "newField": "newField_1"}
    assert got["row_1"]["newField"] is None and t.schema.find("intToLong").type == pa.int64()
    assert t.scan().count() == 5 and t.scan(snapshot_id=1).count() == 3


def test_upsert_precombine_ties_and_duplicates_in_a_batch(keyed: fs.Table) -> None:
    keyed.upsert(batch([1, 1, 2, 2, 3], [5, 7, 3, 3, None], ["a", "b", "c", "d", "e"]))
    assert [r["x"] for r in rows(keyed)] == ["b", "d", "e"]  # highest pre; the later row on a tie
    keyed.upsert(batch([1, 2, 3], [6, 3, 0], ["lower", "tie", "over-null"]))
    assert [r["x"] for r in rows(keyed)] == ["b", "tie", "over-null"]  # lower loses; a tie goes to the later commit


def test_delete_by_key_and_filter_then_upsert_brings_it_back(keyed: fs.Table) -> None:
    keyed.upsert(batch([1, 2, 3, 4], [9, 9, 9, 9], ["a", "b", "c", "d"]))
    assert keyed.delete([1, 9]).keys_deleted == 2
    assert keyed.delete(filter=[("x", "in", ["c", "zzz"])]).keys_deleted == 1
    assert [r["id"] for r in rows(keyed)] == [2, 4]
    nothing = keyed.delete(filter=[("x", "==", "none")])
    assert nothing.keys_deleted == 0 and nothing.snapshot_id == keyed.current_snapshot.snapshot_id
    keyed.upsert(batch([1], [0], ["back"]))  # a delete removes whatever the precombine; a later upsert returns
    assert [(r["id"], r["x"]) for r in rows(keyed)] == [(1, "back"), (2, "b"), (4, "d")]
    assert keyed.scan().count() == 3
    assert [r["id"] for r in rows(keyed, snapshot_id=1)] == [1, 2, 3, 4]  # time travel


def test_a_filter_on_a_non_key_column_never_resurrects_an_older_version(keyed: fs.Table) -> None:
    keyed.upsert(batch([1, 2], [1, 1], ["old", "old"]))
    keyed.upsert(batch([1], [2], ["new"]))
    for prune in (True, False):
        scan = keyed.scan(filter=[("x", "==", "old")])
        scan.prune = prune
        assert [r["id"] for r in scan.to_arrow().to_pylist()] == [2]
        assert scan.count() == 1
    keyed.delete([2])
    assert keyed.scan(filter=[("x", "==", "old")]).to_arrow().num_rows == 0


def test_key_filters_prune_files_and_equal_the_unpruned_read(keyed: fs.Table) -> None:
    for i in range(4):
        keyed.upsert(batch(list(range(i * 10, i * 10 + 10)), [i] * 10, [f"v{i}"] * 10))
    keyed.upsert(batch([5, 15], [9, 9], ["u", "u"]))
    keyed.delete([25])
    pruned = keyed.scan(filter=[("id", "<", 10)])
    full = keyed.scan(filter=[("id", "<", 10)])
    full.prune = False
    assert len(pruned.files()) < len(full.files())
    assert sorted(pruned.to_arrow().to_pylist(), key=str) == sorted(full.to_arrow().to_pylist(), key=str)
    assert len(pruned.to_arrow()) == 10


def test_merge_across_schema_versions_and_renamed_precombine(keyed: fs.Table) -> None:
    keyed.upsert(batch([1, 2], [1, 1], ["a", "b"], n=pa.array([1, 2], pa.int32())))
    keyed.update_schema().rename_column("pre", "ts").commit()  # the precombine is kept by field id
    keyed.upsert(pa.table({"id": pa.array([1], pa.int64()), "ts": pa.array([0], pa.int64()), "x": ["late"],
                           "n": pa.array([2**40], pa.int64()), "extra": [True]}))
    got = rows(keyed)
    assert [r["x"] for r in got] == ["a", "b"] and got[0]["extra"] is None and got[0]["n"] == 1
    keyed.upsert(pa.table({"id": pa.array([2], pa.int64()), "ts": pa.array([3], pa.int64()), "x": ["win"],
                           "n": pa.array([2**40], pa.int64()), "extra": [True]}))
    got = rows(keyed)
    assert got[1] == {"id": 2, "ts": 3, "x": "win", "n": 2**40, "extra": True}
    assert keyed.schema.find("id").type == pa.int32()  # keys are cast down checked, never widened
    with pytest.raises(fs.CastValueError):
        keyed.upsert(pa.table({"id": pa.array([2**40], pa.int64()), "ts": pa.array([3], pa.int64())}))


def test_keys_cannot_change(keyed: fs.Table) -> None:
    before = keyed.current_snapshot.snapshot_id
    for change in (lambda u: u.drop_column("id"), lambda u: u.rename_column("id", "key"),
                   lambda u: u.update_column("id", pa.int64()), lambda u: u.update_column("id", nullable=True),
                   lambda u: u.set_identifier_fields("id", "x")):
        with pytest.raises(fs.SchemaEvolutionError):
            change(keyed.update_schema()).commit()
    with pytest.raises(fs.KeyDeclarationError, match="pre"):
        keyed.update_schema().drop_column("pre").commit()
    assert keyed.current_snapshot.snapshot_id == before


@pytest.mark.parametrize(("fields", "kwargs", "match"), [
    ([pa.field("id", pa.int32())], {}, "nullable"),
    ([pa.field("id", pa.float64(), nullable=False)], {}, "float|double"),
    ([pa.field("id", pa.int32(), nullable=False)], {"buckets": 0}, "buckets"),
    ([pa.field("id", pa.int32(), nullable=False), ("s", pa.struct([("a", pa.int32())]))], {"precombine": "s"},
     "precombine"),
    ([pa.field("id", pa.int32(), nullable=False)], {"precombine": "id"}, "key column"),
])
def test_bad_key_declarations_are_refused(tmp_path: Path, fields: list, kwargs: dict, match: str) -> None:
    with pytest.raises(fs.SchemaEvolutionError, match=match):
        fs.Table.create(tmp_path / "t", pa.schema(fields), identifier_fields=["id"], **kwargs)
    assert not (tmp_path / "t" / "fieldshift.db").exists()


def test_append_is_insert_only_and_unkeyed_tables_refuse_upserts(keyed: fs.Table, tmp_path: Path) -> None:
    keyed.append(batch([1, 2], [1, 1], ["a", "b"]))
    head = keyed.current_snapshot.snapshot_id
    with pytest.raises(fs.DuplicateKeyError, match="id=2"):
        keyed.append(batch([3, 2], [1, 1], ["c", "b2"]))
    with pytest.raises(fs.DuplicateKeyError, match="id=4"):
        keyed.append(batch([4, 4], [1, 2], ["d", "d"]))
    assert keyed.current_snapshot.snapshot_id == head and len(rows(keyed)) == 2
    plain = fs.Table.create(tmp_path / "plain", SCHEMA)
    with pytest.raises(fs.NotKeyedError):
        plain.upsert(batch([1], [1], ["a"]))
    with pytest.raises(fs.NotKeyedError):
        plain.delete([1])


def test_compaction_rewrites_into_the_current_schema_and_keeps_concurrent_writes_newer(keyed: fs.Table) -> None:
    keyed.upsert(batch(list(range(20)), [1] * 20, ["v1"] * 20))
    keyed.update_schema().add_column("y", pa.int32()).commit()
    keyed.upsert(batch([1, 2, 3], [2, 2, 2], ["v2"] * 3, y=pa.array([7, 7, 7], pa.int32())))
    keyed.delete([4])
    expected = rows(keyed)
    pending = prepare_compaction(keyed.io, keyed.metadata(), 1 << 20)
    assert pending is not None
    keyed.upsert(batch([1], [2], ["concurrent"]))  # same precombine, committed after the compaction's base
    keyed.delete([2])
    commit_compaction(keyed.io, pending)
    compacted = [f for f in keyed.scan().live_files() if f.path in {a.path for a in pending.add}]
    assert compacted and all(f.schema_id == keyed.schema.schema_id for f in compacted)
    replaced = keyed.scan(snapshot_id=pending.base_snapshot_id).live_files()
    for f in compacted:  # the newest replaced file's sequence number, older than the concurrent commits
        assert f.sequence == max(r.sequence for r in replaced if r.bucket == f.bucket) <= pending.base_snapshot_id
    got = {r["id"]: r for r in rows(keyed)}
    assert got[1]["x"] == "concurrent" and 2 not in got and 4 not in got
    assert {k: v for k, v in got.items() if k != 1} == {r["id"]: r for r in expected if r["id"] not in (1, 2)}
    assert keyed.compact().snapshot_id is not None  # the concurrent files make the groups compactable again
    assert keyed.compact().snapshot_id is None  # now every bucket is one file of the current schema
    assert all(f.content == "data" and f.schema_id == keyed.schema.schema_id for f in keyed.scan().live_files())
    assert rows(keyed) == list(got.values())


def test_two_compactions_of_the_same_files_conflict(keyed: fs.Table) -> None:
    keyed.upsert(batch([1, 2], [1, 1], ["a", "b"]))
    keyed.upsert(batch([1, 2], [2, 2], ["c", "d"]))
    first, second = (prepare_compaction(keyed.io, keyed.metadata(), 1 << 20),
                     prepare_compaction(keyed.io, keyed.metadata(), 1 << 20))
    assert first is not None and second is not None
    commit_compaction(keyed.io, first)
    with pytest.raises(fs.CommitConflictError):
        commit_compaction(keyed.io, second)
    assert all((keyed.location / p).exists() is False for p in second.written)
    assert [r["x"] for r in rows(keyed)] == ["c", "d"]


def test_unkeyed_compaction_and_expiry_then_vacuum(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "u", SCHEMA)
    t.append(batch([1], [1], ["a"]))
    t.update_schema().update_column("n", pa.int64()).commit()
    t.append(batch([1], [1], ["dup"]))  # unkeyed: duplicates are just rows
    before = t.to_arrow().to_pylist()
    result = t.compact()
    assert result.files_removed == 2 and result.files_written == 1
    assert t.to_arrow().to_pylist() == before
    kept = t.expire_snapshots(older_than=0, retain_last=2)  # snapshot 3 still reads both old files
    assert kept.expired_snapshots == (0, 1, 2) and kept.unreferenced_files == ()
    assert t.scan(snapshot_id=3).to_arrow().to_pylist() == before
    with pytest.raises(fs.SnapshotExpiredError, match="expired"):
        t.scan(snapshot_id=2)
    expired = t.expire_snapshots(older_than=0)
    assert expired.expired_snapshots == (3,) and len(expired.unreferenced_files) == 2
    removed = t.vacuum(older_than=0)
    assert sorted(removed) == sorted(expired.unreferenced_files)
    assert t.to_arrow().to_pylist() == before
    assert [s.snapshot_id for s in t.history()] == [4]
    assert t.expire_snapshots(older_than=0).expired_snapshots == ()  # the head stays
    t.append(batch([2], [1], ["b"]))
    assert t.expire_snapshots(older_than=3600).expired_snapshots == ()  # too young


def test_buckets_follow_the_documented_hash(keyed: fs.Table) -> None:
    data = batch(list(range(200)), [0] * 200, ["v"] * 200)
    keyed.upsert(data)
    spec = keyed.keys
    assert isinstance(spec, KeySpec) and spec.buckets == 2
    for f in keyed.scan().live_files():
        ids = pq.read_table(keyed.location / f.path).column("id")
        assert set(bucket_of(pa.table({"id": ids}), spec).tolist()) == {f.bucket}
        assert merge_group(f, by_partition=False) == (f.bucket,)
        assert set(murmur3.bucket(ids, 2).to_pylist()) == {f.bucket}  # one key column: Iceberg's bucket[2]


def test_composite_keys_combine_column_hashes_as_documented() -> None:
    data = pa.table({"a": pa.array([1, 2, 3, 2**40], pa.int64()), "b": ["x", "", "ü", "row_2"]})
    spec = KeySpec((1, 2), ("a", "b"), None, None, 7)
    ha = [h & 0xFFFFFFFF for h in murmur3.iceberg_hash(data.column("a")).to_pylist()]
    hb = [h & 0xFFFFFFFF for h in murmur3.iceberg_hash(data.column("b")).to_pylist()]
    want = [(((x * 31 + y) & 0xFFFFFFFF) & 0x7FFFFFFF) % 7 for x, y in zip(ha, hb, strict=True)]
    assert bucket_of(data, spec).tolist() == want
    assert murmur3.iceberg_hash(pa.array([34], pa.int32())).to_pylist() == [2017239379]  # the Iceberg spec's value


def test_a_format_1_catalog_upgrades_in_place_and_reads_the_same_rows(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "old", SCHEMA)
    t.append(batch([1, 2], [1, 1], ["a", "b"]))
    before = t.to_arrow()
    db = tmp_path / "old" / "fieldshift.db"
    with sqlite3.connect(db) as conn:  # back to format 1: the columns keys added did not exist
        for column in ("content", "sequence", "bucket"):
            conn.execute(f"ALTER TABLE fs_data_file DROP COLUMN {column}")
        conn.execute("UPDATE fs_metadata SET value = '1' WHERE key = 'format_version'")
    reopened = fs.Table.open(tmp_path / "old")
    assert reopened.to_arrow().equals(before)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM fs_metadata WHERE key = 'format_version'").fetchone()[0] == \
            str(FORMAT_VERSION)
        assert conn.execute("SELECT content, sequence, bucket FROM fs_data_file").fetchall() == [("data", None, None)]
    reopened.append(batch([3], [1], ["c"]))
    assert reopened.scan().count() == 3 and reopened.compact().files_removed == 2


def test_a_format_2_keyed_catalog_upgrades_and_its_files_merge_until_compacted(tmp_path: Path) -> None:
    """Tables written before deletion vectors: every file is unresolved (merged on read), an upsert into
    them records no vectors, and compaction resolves them."""
    t = fs.Table.create(tmp_path / "old", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=2)
    db = tmp_path / "old" / "fieldshift.db"
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE fs_deletion_vector")
        conn.execute("UPDATE fs_metadata SET value = '2' WHERE key = 'format_version'")
    t = fs.Table.open(tmp_path / "old")
    t.upsert(batch([1, 2, 3], [1, 1, 1], ["a", "b", "c"]))
    t.upsert(batch([2], [2], ["B"]))
    with sqlite3.connect(db) as conn:  # as a format-2 writer left them: no vector rows
        conn.execute("DELETE FROM fs_deletion_vector")
    t.upsert(batch([3], [2], ["C"]))  # the bucket holds unresolved files: merged on read
    scan = t.scan()
    assert not all(resolved(scan, g) for g in group_files(scan.files()))
    assert sorted(t.to_arrow().column("x").to_pylist()) == ["B", "C", "a"]
    t.compact()
    scan = t.scan()
    assert all(resolved(scan, g) for g in group_files(scan.files()))
    assert sorted(t.to_arrow().column("x").to_pylist()) == ["B", "C", "a"]


def test_readme_primary_key_block_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (Path(__file__).parents[3] / "README.md").read_text()
    start = text.index("```python", text.index("### Primary-key tables")) + len("```python")
    monkeypatch.chdir(tmp_path)
    scope: dict = {"fs": fs, "pa": pa}
    exec(compile(text[start:text.index("```", start)], "README.md (Primary-key tables)", "exec"), scope)
    k = scope["k"]
    assert k.to_arrow().to_pylist() == [{"rowId": "row_2", "preComb": 5, "name": "john", "intToLong": 3,
                                         "newField": "newField_1"}]
    assert len(k.history()) == 1  # expire_snapshots(retain_last=1) keeps the head (the compaction) only


def test_upsert_quarantines_like_append_and_overwrite_stays_keyed(keyed: fs.Table) -> None:
    keyed.upsert(batch([1, 2], [1, 1], ["a", "b"]))
    result = keyed.upsert(pa.table({"id": pa.array([2, 3], pa.int32()), "pre": pa.array([5, 5], pa.int64()),
                                    "n": ["not a number", None]}), on_incompatible="quarantine")
    assert result.rows_written == 1 and result.rows_quarantined == 1
    assert keyed.quarantine().num_rows == 1 and [r["id"] for r in rows(keyed)] == [1, 2, 3]
    assert rows(keyed)[1]["x"] == "b"  # the set-aside row did not replace key 2
    with pytest.raises(fs.DuplicateKeyError):
        keyed.overwrite(batch([7, 7], [1, 1], ["x", "y"]))
    keyed.overwrite(batch([7, 8], [1, 1], ["x", "y"]))
    assert [r["id"] for r in rows(keyed)] == [7, 8]
    assert all(f.bucket is not None for f in keyed.scan().live_files())


def test_no_precombine_composite_string_keys_and_bad_delete_keys(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("k", pa.string(), nullable=False), pa.field("p", pa.string(), nullable=False),
                        ("v", pa.int32())])
    t = fs.Table.create(tmp_path / "c", schema, identifier_fields=["k", "p"], buckets=3)
    t.upsert({"k": ["a", "a", "b"], "p": ["x", "y", "x"], "v": [1, 2, 3]})
    t.upsert({"k": ["a", "a"], "p": ["x", "x"], "v": [10, 11]})  # no precombine: the later row, the later commit
    t.delete({"k": ["b", "zz"], "p": ["x", "x"]})
    t.upsert({"k": ["b"], "p": ["x"], "v": [30]})  # back after its delete
    t.delete([{"k": "a", "p": "y"}])
    got = sorted((r["k"], r["p"], r["v"]) for r in t.to_arrow().to_pylist())
    assert got == [("a", "x", 11), ("b", "x", 30)]
    head = t.current_snapshot.snapshot_id
    with pytest.raises(fs.SchemaEvolutionError, match="lack key"):
        t.delete({"k": ["a"]})
    with pytest.raises(fs.SchemaEvolutionError, match="nulls"):
        t.delete({"k": ["a", None], "p": ["x", "x"]})
    ints = fs.Table.create(tmp_path / "i", SCHEMA, identifier_fields=["id"])
    with pytest.raises(fs.CastValueError):
        ints.delete([2**40])
    assert t.current_snapshot.snapshot_id == head and ints.current_snapshot.snapshot_id == 0
    t.compact()
    assert sorted((r["k"], r["p"], r["v"]) for r in t.to_arrow().to_pylist()) == got


@pytest.mark.parametrize("bad", [["01"], [True], {"id": ["1"]}, [{"id": False}], pa.table({"id": ["1"]}),
                                 pa.table({"id": pa.array([True])}), [1, "01"], [True, 2]])
def test_delete_refuses_keys_of_another_kind_as_filters_refuse_literals(keyed: fs.Table, bad: object) -> None:
    """Issue 27: on an int key, delete(["01"]) and delete([True]) both deleted key 1 (Arrow parsed the text,
    counted True as 1). A scan filter refuses such literals; keys too, and nothing is deleted."""
    keyed.upsert(batch([0, 1, 2], [1, 1, 1], ["a", "b", "c"]))
    head = keyed.current_snapshot.snapshot_id
    with pytest.raises(fs.SchemaEvolutionError, match="'id'") as e:
        keyed.delete(bad)
    assert isinstance(e.value, fs.CastValueError) and "nothing was deleted" in str(e.value)
    with pytest.raises(fs.InvalidFilterError):
        keyed.scan(filter=("id", "==", "01")).to_arrow()
    assert keyed.current_snapshot.snapshot_id == head and [r["id"] for r in rows(keyed)] == [0, 1, 2]
    assert keyed.delete([1.0, 2]).keys_deleted == 2  # numbers of another width or kind compare exactly, as filters
    assert [r["id"] for r in rows(keyed)] == [0]


def test_string_and_date_keys_refuse_numbers_and_text(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("k", pa.string(), nullable=False), pa.field("d", pa.date32(), nullable=False),
                        ("v", pa.int32())])
    t = fs.Table.create(tmp_path / "s", schema, identifier_fields=["k", "d"])
    day = dt.date(2024, 1, 2)
    t.upsert({"k": ["1", "2"], "d": [day, day], "v": [1, 2]})
    head = t.current_snapshot.snapshot_id
    for bad in ({"k": [1], "d": [day]}, {"k": ["1"], "d": ["2024-01-02"]}, {"k": [b"1"], "d": [day]},
                {"k": ["1"], "d": [19724]}):
        with pytest.raises(fs.CastValueError, match=r"as a scan filter's literal is .*nothing was deleted"):
            t.delete(bad)
    assert t.current_snapshot.snapshot_id == head
    assert t.delete({"k": ["1"], "d": [dt.datetime(2024, 1, 2)]}).keys_deleted == 1  # a datetime, as filters take
    assert [r["k"] for r in t.to_arrow().to_pylist()] == ["2"]


def test_upsert_and_append_refuse_text_and_bools_in_an_int_key(keyed: fs.Table) -> None:
    """The write paths take keys through on-write evolution: text or bools into an int key are refused."""
    keyed.upsert(batch([1], [1], ["a"]))
    head = keyed.current_snapshot.snapshot_id
    for bad in (pa.table({"id": ["01"], "pre": [2], "x": ["b"]}), pa.table({"id": [True], "pre": [2], "x": ["b"]}),
                [{"id": "1", "pre": 2, "x": "b"}]):
        for write in (keyed.upsert, keyed.append):
            with pytest.raises(fs.IncompatibleTypeError, match="'id'"):
                write(bad)
    assert keyed.current_snapshot.snapshot_id == head and rows(keyed) == [{"id": 1, "pre": 1, "x": "a", "n": None}]
