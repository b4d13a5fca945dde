"""The read-source interface has two implementations: the fieldshift catalog (``CatalogSource``) and a fake
format of the tests (``fake_source``). The one open-format scan (``OpenScan``) reads both; over the catalog
it must give what ``Table.scan`` gives, filters, pruning, deletes, merges, time travel and evolution
included."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.open_tables.source import ReadSource
from fieldshift.table.scan.catalog_source import CatalogSource
from fieldshift.table.scan.open_scan import OpenScan
from tests.table.fake_source import EXPECTED, FakeSource, write_fake_table

# -- the fake format ------------------------------------------------------------------------------


def test_the_fake_format_reads_through_the_interface(tmp_path: Path) -> None:
    source = FakeSource(write_fake_table(tmp_path))
    assert isinstance(source, ReadSource)
    assert [s.snapshot_id for s in source.snapshots()] == [1, 2]
    for snapshot_id, rows in EXPECTED.items():  # time travel: each snapshot in its own schema
        scan = OpenScan(source, source.content(snapshot_id))
        assert scan.to_arrow().sort_by("id").to_pylist() == rows
        assert scan.count() == len(rows)


def test_the_fake_format_prunes_by_statistics_and_partition_values(tmp_path: Path) -> None:
    source = FakeSource(write_fake_table(tmp_path))
    content = source.content(2)
    by_stats = OpenScan(source, content, filter="id >= 12")  # int32 bounds of old files, read as int64
    assert [Path(f.path).name for f in by_stats.files()] == ["c.parquet"]
    assert by_stats.to_arrow().column("id").to_pylist() == [20, 5_000_000_000]
    by_partition = OpenScan(source, content, ["id", "label"], filter="region = 'us'")
    assert [Path(f.path).name for f in by_partition.files()] == ["b.parquet"]
    assert by_partition.to_arrow().to_pylist() == [{"id": 10, "label": "x"}, {"id": 11, "label": "y"}]
    deleted = OpenScan(source, content, filter="id = 2")  # the position delete removed it
    assert deleted.to_arrow().num_rows == 0 and deleted.count() == 0


# -- the catalog against Table.scan --------------------------------------------------------------


def _compare(t: fs.Table, filters: list[Any], columns: list[str] | None = None, use_vectors: bool = True) -> None:
    """Every kept snapshot, every filter: OpenScan over the catalog source reads what Table.scan reads."""
    source = CatalogSource(t.io, t.io.metadata(), use_vectors=use_vectors)
    assert isinstance(source, ReadSource)
    for snap in t.history():
        content = source.content(snap.snapshot_id)
        for flt in filters:
            try:
                scan = t.scan(columns, flt, snapshot_id=snap.snapshot_id)
            except fs.FieldshiftError as e:  # a column the snapshot's schema does not have yet
                with pytest.raises(type(e)):
                    OpenScan(source, content, columns, flt)
                continue
            scan.use_vectors = use_vectors
            open_scan = OpenScan(source, content, columns, flt)
            expected, got = scan.to_arrow(), open_scan.to_arrow()
            key = [(scan.output_schema.names[0], "ascending")]
            assert got.schema == expected.schema, (snap.snapshot_id, flt)
            assert got.sort_by(key).to_pylist() == expected.sort_by(key).to_pylist(), (snap.snapshot_id, flt)
            assert open_scan.count() == scan.count(), (snap.snapshot_id, flt)
            if scan.keys is None:  # the same files pruned (a keyed scan keeps its delete files too)
                assert sorted(Path(f.path).name for f in open_scan.files()) == \
                    sorted(Path(f.path).name for f in scan.files()), (snap.snapshot_id, flt)


def test_an_evolving_table_reads_the_same_through_the_catalog_source(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int32()), ("name", pa.string())]))
    t.append({"id": pa.array([1, 2, 3], pa.int32()), "name": ["a", "b", "c"]})
    t.update_schema().update_column("id", pa.int64()).rename_column("name", "label").commit()
    t.update_schema().add_column("score", pa.float64()).commit()
    t.append({"id": pa.array([10, 5_000_000_000]), "label": ["x", None], "score": [0.5, None]})
    t.update_schema().drop_column("score").commit()
    t.append({"id": pa.array([20]), "label": ["z"]})
    _compare(t, [None, "id > 2", "id >= 10 and id < 20", "label is null", "label = 'b' or id = 20", "id in (1, 3)"])
    _compare(t, [None, "id < 5"], columns=["label"])


def test_a_partitioned_table_prunes_the_same_files_through_the_catalog_source(tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us")), ("region", pa.string())])
    t = fs.Table.create(tmp_path / "t", schema, partition_by=["days(ts)", "region"])
    base = dt.datetime(2024, 3, 1)
    for day in range(3):
        t.append({"id": [day * 10 + i for i in range(4)],
                  "ts": [base + dt.timedelta(days=day, hours=i) for i in range(4)],
                  "region": ["eu", "us", "eu", "us"]})
    with t.update_spec() as spec:
        spec.add_field("bucket(4, id)")
    t.append({"id": [100, 101], "ts": [base, base], "region": ["eu", "eu"]})
    _compare(t, [None, "region = 'us'", ("ts", ">=", base + dt.timedelta(days=1)), "region = 'eu' and id < 12",
                 "id = 101", ("ts", "<", base)])


def test_a_keyed_table_merges_the_same_through_the_catalog_source(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64()), ("ver", pa.int32())])
    t = fs.Table.create(tmp_path / "t", schema, identifier_fields=["id"], precombine="ver", buckets=2)
    t.append({"id": list(range(8)), "v": list(range(8)), "ver": [1] * 8})
    t.upsert({"id": [1, 2, 9], "v": [10, 20, 90], "ver": [2, 0, 1]})  # id 2's older ver loses
    t.delete({"id": [3]})
    t.upsert({"id": [3, 4], "v": [30, 40], "ver": [5, 5]})
    t.update_schema().update_column("ver", pa.int64()).commit()
    t.upsert({"id": [5], "v": [50], "ver": pa.array([7], pa.int64())})
    for use_vectors in (True, False):
        _compare(t, [None, "id = 2", "v >= 20", "id in (3, 4, 9)", "v < 5 or id = 5"], use_vectors=use_vectors)
    _compare(t, [None, "v > 1"], columns=["v"])


def test_a_keyed_table_without_deletion_vectors_merges_by_delete_files(tmp_path: Path) -> None:
    """Groups read without their vectors (as a table written before them) merge by key and delete files."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    t = fs.Table.create(tmp_path / "t", schema, identifier_fields=["id"])
    t.append({"id": [1, 2, 3], "v": [1, 2, 3]})
    t.upsert({"id": [2], "v": [22]})
    t.delete({"id": [1]})
    source = CatalogSource(t.io, t.io.metadata(), use_vectors=False)
    content = source.content(t.current_snapshot.snapshot_id)
    assert content.merge.kind == "key" and content.merge.key_ids == (1,)
    assert sorted(len(f.equality_deletes) for f in content.files if f.sequence_number == 1) == [0, 1]  # id 1's bucket
    for use_vectors in (False, True):
        _compare(t, [None, "v > 2", "id = 1"], use_vectors=use_vectors)


@pytest.mark.parametrize("snapshot", [0, 1])
def test_the_catalog_source_lists_history_and_schemas(tmp_path: Path, snapshot: int) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]), partition_by=["bucket(2, id)"])
    t.append({"id": [1, 2]})
    t.update_schema().add_column("w", pa.string()).commit()
    source = CatalogSource(t.io, t.io.metadata())
    assert [s.snapshot_id for s in source.snapshots()] == [s.snapshot_id for s in t.history()]
    assert all(s.timestamp.tzinfo is not None for s in source.snapshots())
    assert dict(source.schemas()) == t.schemas_by_id()
    assert [f.transform for s in source.specs() for f in s.fields] == ["bucket[2]"]
    content = source.content(t.history()[snapshot].snapshot_id)
    assert content.schema == t.schemas_by_id()[t.history()[snapshot].schema_id]


def test_timestamps_prune_the_same_through_the_catalog_source(tmp_path: Path) -> None:
    """Identity partitions of timestamps and times (recorded as nanoseconds) and nanosecond statistics."""
    schema = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("ns")), ("at", pa.timestamp("us", "UTC")),
                        ("t", pa.time64("us")), ("s", pa.struct([("x", pa.int32())]))])
    t = fs.Table.create(tmp_path / "t", schema, partition_by=["at", "t"])
    base = dt.datetime(2024, 3, 1, 12, 0, 0, 1)
    for i in range(3):
        t.append(pa.table({"id": [i, i + 10], "ts": pa.array([1_700_000_000_000_000_001 + i] * 2, pa.timestamp("ns")),
                           "at": pa.array([base.replace(tzinfo=dt.UTC) + dt.timedelta(hours=i)] * 2,
                                          pa.timestamp("us", "UTC")),
                           "t": pa.array([dt.time(1, i, 0, 5)] * 2, pa.time64("us")),
                           "s": [{"x": i}, {"x": i + 10}]}, schema=schema))
    at = base.replace(tzinfo=dt.UTC) + dt.timedelta(hours=1)
    _compare(t, [None, ("at", "==", at), ("at", ">", at), ("t", "<", dt.time(1, 1, 0, 5)),
                 ("ts", ">", pa.scalar(1_700_000_000_000_000_002, pa.timestamp("ns")).as_py()), "s.x >= 10"])
    source = CatalogSource(t.io, t.io.metadata())
    content = source.content(t.current_snapshot.snapshot_id)
    assert len(OpenScan(source, content, filter=("at", "==", at)).files()) == 1


def test_the_catalog_source_loads_statistics_only_for_files_partition_pruning_keeps(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``content`` lists files without statistics, built once per snapshot; a filtered scan asks the catalog for
    the statistics of the files its partition values leave (the 100,000-file case), and prunes as before."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("region", pa.string())]),
                        partition_by=["region"])
    for i, region in enumerate(["eu", "us", "eu", "us"]):
        t.append({"id": [i * 10, i * 10 + 1], "region": [region, region]})
    source = CatalogSource(t.io, t.io.metadata())
    asked: list[list[int]] = []
    real = type(t.io.catalog).file_stats
    monkeypatch.setattr(type(t.io.catalog), "file_stats", lambda self, ids: asked.append(list(ids)) or real(self, ids))
    content = source.content(t.current_snapshot.snapshot_id)
    assert asked == [] and all(not f.stats for f in content.files)
    assert CatalogSource(t.io, t.io.metadata()).content(t.current_snapshot.snapshot_id).files[0] is content.files[0]
    scan = OpenScan(source, content, filter="region = 'us' and id >= 30")
    kept = scan.files()
    us = sorted(f.file_id for f in content.files if f.partition[0].value == "us")
    assert [sorted(ids) for ids in asked] == [us]  # the eu files' statistics were never read
    expected = t.scan(filter="region = 'us' and id >= 30").files()
    assert [Path(f.path).name for f in kept] == [Path(f.path).name for f in expected]
    assert len(kept) == 1 and scan.to_arrow().column("id").to_pylist() == [30, 31]


def test_the_catalog_source_plans_once_per_schema_id_and_refuses_a_replaced_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fieldshift file holds exactly its schema id's columns (``exact_schemas``): the scan plans each schema
    version once without a footer, and a file whose columns are not its schema's is refused, as ``Table.scan``
    refuses it, instead of being read by the names it happens to have."""
    import fieldshift.table.scan.open_scan as open_scan

    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int32()), ("name", pa.string())]))
    for i in range(3):
        t.append({"id": pa.array([i], pa.int32()), "name": [str(i)]})
    t.update_schema().update_column("id", pa.int64()).commit()
    t.append({"id": [10], "name": ["x"]})
    source = CatalogSource(t.io, t.io.metadata())
    monkeypatch.setattr(open_scan, "plan", lambda *a, **k: pytest.fail("planned from a footer"))
    scan = OpenScan(source, source.content(t.current_snapshot.snapshot_id))
    assert sorted(scan.to_arrow().column("id").to_pylist()) == [0, 1, 2, 10]
    assert sorted(scan._schema_plans) == [0, 1]  # one plan per schema version, four files
    assert scan.file_plan(scan.files()[0]) is scan.plan_of(0)
    path = Path(next(f.path for f in scan.files() if f.schema_id == 1))
    pq.write_table(pa.table({"id": [7], "name": ["no ids"]}), path)  # right names, written without field ids
    for read in (t.to_arrow, OpenScan(source, source.content(t.current_snapshot.snapshot_id)).to_arrow):
        with pytest.raises(fs.DataFileError, match=rf"{path.name}.*column 'id' has field id None, not 1"):
            read()


def test_groups_resolved_by_deletion_vectors_read_and_count_without_a_merge(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A keyed table's groups whose deletion vectors removed every older version are ``resolved_groups``: their
    files are read on their own, with no merge, and counted from record counts minus deleted positions."""
    import fieldshift.table.scan.open_scan as open_scan

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    t = fs.Table.create(tmp_path / "t", schema, identifier_fields=["id"], buckets=2)
    t.append({"id": list(range(8)), "v": list(range(8))})
    t.upsert({"id": [1, 2, 9], "v": [10, 20, 90]})
    t.delete({"id": [3]})
    snapshot = t.current_snapshot.snapshot_id
    source = CatalogSource(t.io, t.io.metadata())
    content = source.content(snapshot)
    assert content.resolved_groups == {f.merge_group for f in content.files} == {0, 1}
    monkeypatch.setattr(open_scan, "merge_versions", lambda *a, **k: pytest.fail("merged a resolved group"))
    scan = OpenScan(source, content)
    assert {task.kind for task in scan.tasks()} == {"file"}
    assert scan.to_arrow().sort_by("id").to_pylist() == t.scan().to_arrow().sort_by("id").to_pylist()
    monkeypatch.setattr(OpenScan, "evolved_batches", lambda *a, **k: pytest.fail("read a file to count it"))
    assert scan.count() == t.scan().count() == 8
    unresolved = CatalogSource(t.io, t.io.metadata(), use_vectors=False).content(snapshot)
    assert unresolved.resolved_groups == frozenset()  # every group has several files: merged by key


def test_the_catalog_source_prunes_statistics_through_each_schema_versions_plan(tmp_path: Path) -> None:
    """Bounds of int files read as double convert exactly through the plan's cast (``stats.may_match``), so
    the scan over the catalog source rules out the same file ``Table.scan`` does."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("x", pa.int32())]))
    t.append({"id": [1, 2], "x": pa.array([1, 5], pa.int32())})
    t.append({"id": [3, 4], "x": pa.array([200, 300], pa.int32())})
    t.update_schema().update_column("x", pa.float64()).commit()
    _compare(t, [None, "x > 100", "x <= 5.0", "x = 250"])
    source = CatalogSource(t.io, t.io.metadata())
    scan = OpenScan(source, source.content(t.current_snapshot.snapshot_id), filter="x > 100")
    assert len(scan.files()) == 1 and scan.to_arrow().column("id").to_pylist() == [3, 4]


def test_a_filtered_scan_of_many_catalog_files_builds_entries_only_for_the_files_it_keeps(tmp_path: Path) -> None:
    """The catalog's entries come as a lazy sequence: integer bounds of all files pruned at once
    (``prune_vector``), entries built only for the survivors, and the same files kept as without it."""
    from fieldshift.table.records import DataFile
    from fieldshift.table.scan.prune_vector import MIN_FILES
    from fieldshift.table.updates import AddFiles

    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    n = MIN_FILES + 16
    files = tuple(DataFile(f"data/{i}.parquet", 0, 10, 100, {1: (10, 0, i * 10, i * 10 + 9)}) for i in range(n))
    t.catalog.commit(t.table_id, t.current_snapshot.snapshot_id, [], [AddFiles(files, 0)], operation="append")
    source = CatalogSource(t.io, t.io.metadata())
    content = source.content(t.current_snapshot.snapshot_id)
    cases = {"id = 205": ["20.parquet"], "id >= 770 or id < 5": ["0.parquet", "77.parquet", "78.parquet", "79.parquet"]}
    for flt, expected in cases.items():
        kept = [Path(f.path).name for f in OpenScan(source, content, filter=flt).files()]
        assert kept == expected == [Path(f.path).name for f in t.scan(filter=flt).files()]
    assert sum(e is not None for e in content.files._built) == 5  # type: ignore[attr-defined]
    for flt, expected in cases.items():  # each file's statistics checked one by one: the same files
        slow = OpenScan(source, content, filter=flt)
        slow.vector_prune = False
        assert [Path(f.path).name for f in slow.files()] == expected


def test_partition_values_of_a_retyped_column_prune_only_where_the_keys_stay_the_same(tmp_path: Path) -> None:
    """Files bucketed on an int column read after it became a string: the string's bucket is another key, so
    their partition values must not prune (``partition_evolution.same_keys``), through the catalog source too."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int32()), ("v", pa.string())]),
                        partition_by=["bucket(4, id)"], policy="onehouse-widen-to-string")
    t.append({"id": pa.array([1, 2, 3, 4, 5], pa.int32()), "v": list("abcde")})
    with t.update_spec() as spec:
        spec.remove_field("bucket(4, id)")
    t.update_schema().update_column("id", pa.string()).commit()
    t.append({"id": ["5"], "v": ["z"]})
    _compare(t, [None, ("id", "==", "5"), ("id", "in", ["1", "5"])])
    source = CatalogSource(t.io, t.io.metadata())
    scan = OpenScan(source, source.content(t.current_snapshot.snapshot_id), filter=("id", "==", "5"))
    assert sorted(scan.to_arrow().column("v").to_pylist()) == ["e", "z"]
