"""Publishing a table as an Iceberg table (the smoke tests of the default suite; the peers' conformance
tests are tests/conformance/test_publish_conformance.py): PyIceberg's StaticTable reads every published
snapshot with fieldshift's rows; catch-up is incremental and idempotent; bad input is a named error."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from fieldshift.cli import app
from fieldshift.errors import InvalidOptionError, UnpublishableError
from fieldshift.table import Table
from tests.table.publish_helpers import fieldshift_rows, pyiceberg_rows, static_table


def _table(tmp_path: Path) -> Table:
    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int32()), ("name", pa.string()),
                                                 ("ts", pa.timestamp("us"))]), partition_by=["day(ts)"])
    t.append({"id": [1, 2], "name": ["a", None], "ts": [dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 2, 5)]})
    t.update_schema().rename_column("name", "label").update_column("id", pa.int64()).commit()
    t.append({"id": [2**40], "label": ["c"], "ts": [None]})
    return t


def _metadata(t: Table) -> list[str]:
    return sorted(p.name for p in (t.location / "metadata").iterdir())


def test_publish_reads_back_every_snapshot_in_pyiceberg(tmp_path: Path) -> None:
    t = _table(tmp_path)
    result = t.publish()
    head = t.current_snapshot.snapshot_id
    assert result.written == tuple(range(1, head + 2)) and result.version == head + 1
    assert (t.location / "metadata" / "version-hint.text").read_text() == str(head + 1)
    for snap in t.history()[1:]:
        assert pyiceberg_rows(t, snap.snapshot_id) == fieldshift_rows(t, snap.snapshot_id)
    st = static_table(t)
    assert st.metadata.snapshots[0].snapshot_id == 1  # the empty snapshot 0 is the table without snapshots
    assert [f.name for f in st.schema().fields] == ["id", "label", "ts"]
    assert st.schemas()[0].find_field("name").field_id == st.schema().find_field("label").field_id


def test_publish_catches_up_incrementally_and_is_idempotent(tmp_path: Path) -> None:
    t = _table(tmp_path)
    t.publish()
    before = _metadata(t)
    assert t.publish().written == ()
    assert _metadata(t) == before
    t.append({"id": [9], "label": ["z"], "ts": [dt.datetime(2024, 1, 3)]})
    result = t.publish()
    assert result.written == (t.current_snapshot.snapshot_id + 1,)
    added = sorted(set(_metadata(t)) - set(before))
    assert len([n for n in added if n.endswith("-m.avro")]) == 1  # older manifests reused, not rewritten
    assert pyiceberg_rows(t, t.current_snapshot.snapshot_id) == fieldshift_rows(t, t.current_snapshot.snapshot_id)


def test_a_lost_hint_and_concurrent_catch_ups_never_go_backwards(tmp_path: Path) -> None:
    t = _table(tmp_path)
    t.publish()
    hint = t.location / "metadata" / "version-hint.text"
    hint.unlink()  # a crash after the metadata files, before the hint
    assert t.publish().written == ()  # the versions are found, not written again
    assert hint.read_text() == str(t.current_snapshot.snapshot_id + 1)
    t.append({"id": [5], "label": ["e"], "ts": [None]})
    others = [Table.open(t.location) for _ in range(3)]
    results: list = []
    threads = [threading.Thread(target=lambda o=o: results.append(o.publish())) for o in others]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(len(r.written) for r in results) == [0, 0, 1]  # exactly one process wrote the new version
    head = t.current_snapshot.snapshot_id
    assert hint.read_text() == str(head + 1)
    assert pyiceberg_rows(t, head) == fieldshift_rows(t, head)


def test_unsigned_columns_are_refused_by_name_and_nothing_is_written(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("n", pa.uint32()),
                                                 ("s", pa.struct([("u", pa.uint8())]))]))
    with pytest.raises(UnpublishableError, match=r"(?s)\bn \(uint32\).*s\.u \(uint8\).*unsigned"):
        t.publish()
    assert not (t.location / "metadata").exists()


def test_a_cast_iceberg_cannot_make_is_refused_until_compacted_and_expired(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("code", pa.int32())]))
    t.append({"id": [1], "code": [7]})
    t.update_schema().update_column("code", pa.string()).commit()
    with pytest.raises(UnpublishableError,
                       match=r"code: files of schema \d+ hold int\d+, schema \d+ reads string.*compact\(\)"):
        t.publish()
    assert not (t.location / "metadata").exists()
    t.compact()
    t.expire_snapshots(older_than=0, retain_last=1)
    t.publish()
    head = t.current_snapshot.snapshot_id
    assert pyiceberg_rows(t, head) == fieldshift_rows(t, head) == ['{"code": "7", "id": 1}']


def test_cli_publish_iceberg(tmp_path: Path) -> None:
    t = _table(tmp_path)
    out = CliRunner().invoke(app, ["publish", str(t.location), "--iceberg"])
    assert out.exit_code == 0, out.output
    assert "published" in out.output
    assert static_table(t).current_snapshot().snapshot_id == t.current_snapshot.snapshot_id
    refused = CliRunner().invoke(app, ["publish", str(t.location)])
    assert refused.exit_code != 0 and "--iceberg" in refused.output


# -- publishing on commit ---------------------------------------------------------------------------
def _published_head(t: Table) -> int:
    return int((t.location / "metadata" / "version-hint.text").read_text()) - 1


def test_a_table_created_to_publish_catches_up_after_every_commit(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us"))]),
                     publish="iceberg", partition_by=["day(ts)"])
    assert _metadata(t) == ["v1.metadata.json", "version-hint.text"]
    t.append({"id": [1], "ts": [dt.datetime(2024, 5, 1)]})
    assert _published_head(t) == t.current_snapshot.snapshot_id
    t.update_schema().add_column("note", pa.string()).commit()
    t.update_spec().add_field("bucket(2, id)").commit()
    t.set_policy("iceberg")
    t.append({"id": [2], "ts": [None], "note": ["n"]})
    again = Table.open(t.location)  # another process's commits publish too: the property is the table's
    again.append({"id": [3], "ts": [dt.datetime(2024, 5, 2)], "note": [None]})
    assert _published_head(t) == t.current_snapshot.snapshot_id
    for snap in t.history()[1:]:
        assert pyiceberg_rows(t, snap.snapshot_id) == fieldshift_rows(t, snap.snapshot_id)


def test_set_publish_turns_publishing_on_and_off(tmp_path: Path) -> None:
    t = _table(tmp_path)
    assert not (t.location / "metadata").exists()
    t.set_publish("iceberg")
    assert _published_head(t) == t.current_snapshot.snapshot_id
    assert Table.open(t.location).properties["fieldshift.publish"] == "iceberg"
    t.set_publish(None)
    t.append({"id": [7], "label": ["q"], "ts": [None]})
    assert _published_head(t) == t.current_snapshot.snapshot_id - 1  # no longer caught up on commit
    with pytest.raises(ValueError, match="iceberg"):
        t.set_publish("delta")


def test_a_commit_iceberg_could_not_read_is_refused_before_it_commits(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("code", pa.int64())]), publish="iceberg")
    t.append({"id": [1], "code": [7]})
    head = t.current_snapshot.snapshot_id
    with pytest.raises(UnpublishableError, match=r"(?s)nothing was committed.*code: files of schema"):
        t.update_schema().update_column("code", pa.string()).commit()
    with pytest.raises(UnpublishableError, match=r"u \(uint16\)"):
        t.append({"id": [2], "code": [1], "u": pa.array([1], pa.uint16())})  # on-write evolution
    assert t.current_snapshot.snapshot_id == head and _published_head(t) == head
    with pytest.raises(UnpublishableError, match=r"n \(uint8\)"):
        Table.create(tmp_path / "u", pa.schema([("n", pa.uint8())]), publish="iceberg")
    assert not (tmp_path / "u").exists()


def test_a_failed_catch_up_warns_and_the_next_commit_catches_up(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import fieldshift.table.publish.iceberg_publish as pub

    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]), publish="iceberg")
    real = pub.publish_iceberg

    def crash(*args: object) -> object:
        raise OSError("disk full")

    monkeypatch.setattr(pub, "publish_iceberg", crash)
    with pytest.warns(pub.PublishWarning, match="disk full"):
        t.append({"id": [1]})
    assert t.current_snapshot.snapshot_id == 1 and _published_head(t) == 0  # the commit stands, one behind
    monkeypatch.setattr(pub, "publish_iceberg", real)
    t.append({"id": [2]})
    assert _published_head(t) == 2
    assert pyiceberg_rows(t, 1) == fieldshift_rows(t, 1)


# -- expiry and vacuum ------------------------------------------------------------------------------
def test_expiry_expires_published_snapshots_and_vacuum_keeps_what_they_name(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]), publish="iceberg")
    for i in range(3):
        t.append({"id": [i]})
    t.overwrite({"id": [10]})
    t.compact()
    head = t.current_snapshot.snapshot_id
    expired = t.expire_snapshots(older_than=0, retain_last=2)
    assert expired.expired_snapshots
    st = static_table(t)
    kept = [s.snapshot_id for s in t.history()]
    assert [s.snapshot_id for s in st.metadata.snapshots] == [k for k in kept if k]
    assert st.current_snapshot().snapshot_id == head
    removed = t.vacuum(older_than=0)
    assert any(r.startswith("metadata/") and r.endswith(".avro") for r in removed)
    assert any(r.startswith("metadata/v") for r in removed)  # versions naming expired snapshots
    for k in kept:
        if k:
            assert pyiceberg_rows(t, k) == fieldshift_rows(t, k)


def test_vacuum_keeps_files_a_published_snapshot_names_after_publishing_stopped(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]), publish="iceberg")
    t.append({"id": [1]})
    t.overwrite({"id": [2]})
    t.set_publish(None)
    t.expire_snapshots(older_than=0, retain_last=1)  # fieldshift forgets snapshot 1; Iceberg's metadata still has it
    t.vacuum(older_than=0)
    assert pyiceberg_rows(t, 1) == ['{"id": 1}']  # its file was kept
    t.publish()  # the expiry reaches the published metadata: now the file may go
    removed = t.vacuum(older_than=0)
    assert any(r.startswith("data/") for r in removed)
    assert pyiceberg_rows(t, t.current_snapshot.snapshot_id) == ['{"id": 2}']


# -- registering in a PyIceberg SQL catalog --------------------------------------------------------
def test_register_in_a_sql_catalog_and_the_pointer_moves_at_every_catch_up(tmp_path: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    uri = f"sqlite:///{tmp_path / 'iceberg.db'}"
    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]), publish="iceberg")
    t.append({"id": [1]})
    out = CliRunner().invoke(app, ["publish", str(t.location), "--iceberg", "--register", uri, "lake.events"])
    assert out.exit_code == 0, out.output
    catalog = SqlCatalog("default", uri=uri)
    assert catalog.load_table("lake.events").scan().to_arrow().to_pylist() == [{"id": 1}]
    t.append({"id": [2]})  # publishing on commit moves the registered pointer too
    loaded = SqlCatalog("default", uri=uri).load_table("lake.events")
    assert loaded.current_snapshot().snapshot_id == t.current_snapshot.snapshot_id
    assert sorted(r["id"] for r in loaded.scan().to_arrow().to_pylist()) == [1, 2]
    with pytest.raises(InvalidOptionError, match=r"NAMESPACE\.NAME"):
        t.publish(register=(uri, "nodot"))


def test_manifests_of_finished_blocks_are_merged_and_rewritten_when_a_file_goes(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
    for i in range(40):
        t.append({"id": [i]})
    t.publish()
    st = static_table(t)
    manifests = st.current_snapshot().manifests(st.io)
    assert len(manifests) == 1 + 9  # files of snapshots 1-31 share one; 32-40 one each
    t.compact()
    t.publish()
    for sid in (5, 33, 40, t.current_snapshot.snapshot_id):
        assert pyiceberg_rows(t, sid) == fieldshift_rows(t, sid)


# -- keyed tables -------------------------------------------------------------------------------------
def test_keyed_upserts_and_deletes_read_back_through_position_deletes(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "k", pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())]),
                     identifier_fields=["id"], buckets=2, publish="iceberg")
    t.upsert({"id": [1, 2, 3], "v": ["a", "b", "c"]})
    t.upsert({"id": [2, 4], "v": ["B", "d"]})
    t.delete([3])
    for snap in t.history()[1:]:
        assert pyiceberg_rows(t, snap.snapshot_id) == fieldshift_rows(t, snap.snapshot_id)
    assert sorted(p.name for p in (t.location / "metadata" / "deletes").iterdir())  # position-delete files
    assert pyiceberg_rows(t, t.current_snapshot.snapshot_id) == ['{"id": 1, "v": "a"}', '{"id": 2, "v": "B"}',
                                                                 '{"id": 4, "v": "d"}']


def test_vacuum_removes_position_deletes_only_expired_snapshots_named(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "k", pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())]),
                     identifier_fields=["id"], buckets=1, publish="iceberg")
    t.upsert({"id": [1, 2], "v": ["a", "b"]})
    t.upsert({"id": [2], "v": ["B"]})
    t.upsert({"id": [1], "v": ["A"]})
    before = set((t.location / "metadata" / "deletes").iterdir())
    t.expire_snapshots(older_than=0, retain_last=1)
    removed = t.vacuum(older_than=0)
    assert any(r.startswith("metadata/deletes/") for r in removed)
    assert set((t.location / "metadata" / "deletes").iterdir()) < before
    head = t.current_snapshot.snapshot_id
    assert pyiceberg_rows(t, head) == fieldshift_rows(t, head) == ['{"id": 1, "v": "A"}', '{"id": 2, "v": "B"}']


def test_a_truncate_value_outside_its_int_range_is_refused_by_name(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "t", pa.schema([("x", pa.int32())]), partition_by=["truncate(10, x)"])
    t.append(pa.table({"x": pa.array([-(2**31)], pa.int32())}))  # floor to a multiple of 10: below int32
    with pytest.raises(UnpublishableError, match=r"x_trunc.*truncate\[10\].*-2147483650.*prune"):
        t.publish()
    assert not (t.location / "metadata").exists()


def test_a_commit_of_a_partition_value_iceberg_cannot_hold_is_refused_when_publishing(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "t", pa.schema([("x", pa.int32())]), partition_by=["truncate(10, x)"],
                     publish="iceberg")
    t.append(pa.table({"x": pa.array([5], pa.int32())}))
    head = t.current_snapshot.snapshot_id
    with pytest.raises(UnpublishableError, match=r"(?s)nothing was committed.*x_trunc"):
        t.append(pa.table({"x": pa.array([-(2**31)], pa.int32())}))
    assert t.current_snapshot.snapshot_id == head == _published_head(t)


def test_a_dotted_name_that_collides_with_a_nested_path_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    """Iceberg indexes fields by dotted path: a column 'a.b' beside struct a's field b is refused by name
    (PyIceberg raised a raw ValueError while publishing, found by the model test on PostgreSQL)."""
    t = Table.create(tmp_path / "t", pa.schema([("a", pa.struct([("b", pa.int32())])), ("a.b", pa.int32())]))
    t.append(pa.table({"a": [{"b": 1}], "a.b": pa.array([2], pa.int32())},
                      schema=pa.schema([("a", pa.struct([("b", pa.int32())])), ("a.b", pa.int32())])))
    with pytest.raises(UnpublishableError, match=r"rename one of the two columns") as e:
        t.publish()
    assert "nothing was written" in str(e.value)
    assert not (tmp_path / "t" / "metadata").exists()


def test_buckets_written_without_the_key_lookup_publish_the_rows_the_merge_supersedes(tmp_path: Path) -> None:
    """Spark's executors (and a commit that lost a race) leave buckets unresolved: publishing runs the key
    merge and writes the superseded rows as position deletes, without a fieldshift snapshot of its own."""
    from fieldshift.table.partitions.partition_write import write_partitioned
    from fieldshift.table.updates import AddFiles

    t = Table.create(tmp_path / "k", pa.schema([pa.field("id", pa.int64(), nullable=False), ("pre", pa.int32()),
                                                 ("v", pa.string())]),
                     identifier_fields=["id"], precombine="pre", buckets=2, publish="iceberg")
    t.upsert({"id": list(range(8)), "pre": [5] * 8, "v": [f"a{i}" for i in range(8)]})
    spark = pa.table({"id": pa.array([1, 2, 3, 9], pa.int64()), "pre": pa.array([9, 1, 9, 9], pa.int32()),
                      "v": ["s1", "s2-loses", "s3", "s9"]})  # key 2's precombine is lower: the old row wins
    files = write_partitioned(t.location, t.schema, t.spec, spark.cast(t.schema.to_arrow()), [], keys=t.keys)
    t.catalog.commit(t.table_id, t.current_snapshot.snapshot_id, [], [AddFiles(tuple(files), t.schema.schema_id)],
                     operation="upsert")
    t.upsert({"id": [3, 4], "pre": [10, 10], "v": ["u3", "u4"]})  # written unresolved too: the bucket merges
    t.delete([5])
    heads = t.history()[1:]
    t.publish()
    assert _published_head(t) == t.current_snapshot.snapshot_id
    for snap in heads:
        assert pyiceberg_rows(t, snap.snapshot_id) == fieldshift_rows(t, snap.snapshot_id), snap.snapshot_id
    assert [s.snapshot_id for s in t.history()[1:]] == [s.snapshot_id for s in heads]  # no snapshot of its own
    assert pyiceberg_rows(t, t.current_snapshot.snapshot_id) == fieldshift_rows(t, t.current_snapshot.snapshot_id)
    rows = {r["id"]: r["v"] for r in t.to_arrow().to_pylist()}
    assert rows == {0: "a0", 1: "s1", 2: "a2", 3: "u3", 4: "u4", 6: "a6", 7: "a7", 9: "s9"}


def test_file_rows_remembered_between_catch_ups_follow_removals_expiry_and_a_new_table(tmp_path: Path) -> None:
    """A process re-reads only the file rows added or ended since its last catch-up; files removed, rows
    forgotten by expiry, and another table made at the same place are all seen."""
    import shutil

    def check(t: Table) -> None:
        head = t.current_snapshot.snapshot_id
        assert pyiceberg_rows(t, head) == fieldshift_rows(t, head)

    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]), publish="iceberg")
    for i in range(4):
        t.append({"id": [i]})
    t.compact()  # every file ended, one added
    check(t)
    t.expire_snapshots(older_than=0, retain_last=1)
    t.vacuum(older_than=0)  # the ended files' rows are forgotten
    t.append({"id": [9]})
    check(t)
    t = Table.create(tmp_path / "b", pa.schema([("id", pa.int64())]), publish="iceberg")
    for i in range(3):
        t.append({"id": [i]})
    check(t)
    shutil.rmtree(tmp_path / "b")
    t = Table.create(tmp_path / "b", pa.schema([("id", pa.int64())]))  # not publishing on commit
    for i in range(3):  # as many rows with the same file ids as before, other files
        t.append({"id": [100 + i]})
    t.publish()  # the first catch-up of the new table in this process
    check(t)
    assert pyiceberg_rows(t, t.current_snapshot.snapshot_id) == ['{"id": 100}', '{"id": 101}', '{"id": 102}']
