"""Iceberg tables read through ``fs.open_table``: a small table PyIceberg writes (the smoke test: every
snapshot reads as PyIceberg reads it), and tables written by hand (``tests/open_tables/iceberg_tables.py``) for the
Iceberg spec's rules PyIceberg cannot exercise: position deletes, deletion vectors, equality deletes and
their sequence numbers, initial defaults, promoted bounds, and the refusals. ``make test-conformance``
compares the same kinds of tables with DuckDB's ``iceberg_scan`` and PyIceberg at every snapshot."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.open_tables import iceberg_values
from tests.open_tables.iceberg_tables import IcebergBuilder

pytest.importorskip("pyiceberg", reason="Iceberg reads need pyiceberg (the dev and iceberg extras)")
pytest.importorskip("fastavro", reason="the hand-written tables' manifests need fastavro (the dev extra)")

SCHEMA = {"type": "struct", "fields": [
    {"id": 1, "name": "id", "type": "long", "required": True},
    {"id": 2, "name": "cat", "type": "string", "required": False},
    {"id": 3, "name": "n", "type": "int", "required": False},
]}
BY_CAT = [{"source-id": 2, "field-id": 1000, "name": "cat", "transform": "identity"}]


def ids(table: pa.Table) -> list[int]:
    return sorted(table["id"].to_pylist())


def rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: r["id"])


# -- a table PyIceberg writes ------------------------------------------------------------------------
def test_pyiceberg_table_reads_as_pyiceberg_reads_it_at_every_snapshot(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy", reason="PyIceberg's SqlCatalog needs pyiceberg[sql-sqlite]")
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, LongType, NestedField, StringType

    (tmp_path / "wh").mkdir()
    props = {"uri": f"sqlite:///{tmp_path / 'cat.db'}", "warehouse": (tmp_path / "wh").as_uri()}
    catalog = SqlCatalog("smoke", **props)
    catalog.create_namespace("db")
    tbl = catalog.create_table("db.t", Schema(NestedField(1, "id", LongType(), required=True),
                                              NestedField(2, "n", IntegerType()), NestedField(3, "s", StringType())))

    def append(data: list[dict[str, Any]]) -> None:
        tbl.append(pa.Table.from_pylist(data, schema=tbl.schema().as_arrow()))

    append([{"id": 1, "n": 10, "s": "a"}, {"id": 2, "n": 20, "s": "b"}])
    with tbl.update_schema() as u:
        u.update_column("n", LongType())  # int -> long: the old file keeps int and 4-byte bounds
        u.rename_column("s", "label")
        u.add_column("extra", StringType())
    append([{"id": 3, "n": 2**40, "label": "c", "extra": "x"}])
    tbl.delete("id = 1")  # PyIceberg rewrites the file without the row
    tbl.overwrite(pa.Table.from_pylist([{"id": 9, "n": 9, "label": "z", "extra": None}],
                                       schema=tbl.schema().as_arrow()), overwrite_filter="id = 3")
    tbl = catalog.load_table("db.t")

    by_catalog = fs.open_table(catalog={"name": "smoke", "type": "sql", **props}, name="db.t")
    by_file = fs.open_table(tbl.metadata_location)  # format detected from the .metadata.json name
    assert by_catalog.format == by_file.format == "iceberg"
    history = by_catalog.history()
    assert [s.snapshot_id for s in history] == [s.snapshot_id for s in tbl.snapshots()]
    for snap in tbl.snapshots():
        want = rows(tbl.scan(snapshot_id=snap.snapshot_id).to_arrow())
        assert rows(by_catalog.to_arrow(snapshot_id=snap.snapshot_id)) == want
        assert rows(by_file.to_arrow(snapshot_id=snap.snapshot_id)) == want
    first = history[0]
    old = by_file.scan(snapshot_id=first.snapshot_id)
    assert old.output_schema.names == ["id", "n", "s"]  # time travel reads with that snapshot's schema
    assert rows(by_file.to_arrow()) == [{"id": 2, "n": 20, "label": "b", "extra": None},
                                        {"id": 9, "n": 9, "label": "z", "extra": None}]
    assert by_file.scan(filter=("n", ">", 15)).count() == 1
    assert by_file.resolve(as_of=first.timestamp.replace(tzinfo=None)) == first.snapshot_id  # naive = UTC
    with pytest.raises(fs.SnapshotNotFoundError, match="first"):
        by_file.scan(as_of=first.timestamp - dt.timedelta(seconds=1))
    with pytest.raises(fs.SnapshotNotFoundError, match="no snapshot 12345"):
        by_file.scan(snapshot_id=12345)
    with pytest.raises(fs.ReadOnlyTableError, match="Iceberg writer"):
        by_file.append(pa.table({"id": [1]}))
    with pytest.raises(fs.InvalidNameError, match=r"no table .db\.nope.*db\.t"):
        fs.open_table(catalog={"name": "smoke", "type": "sql", **props}, name="db.nope")


# -- locations ---------------------------------------------------------------------------------------
def test_a_table_directory_resolves_through_version_hint(tmp_path: Path) -> None:
    b = IcebergBuilder(tmp_path / "t", SCHEMA)
    b.commit([b.data([{"id": 1, "cat": "a", "n": 1}])])
    b.commit([b.data([{"id": 2, "cat": "b", "n": 2}])])
    for source in (tmp_path / "t", tmp_path / "t" / "metadata", b.metadata_path):
        t = fs.open_table(source)  # detected: a directory with metadata/version-hint.text
        assert ids(t.to_arrow()) == [1, 2]
        assert t.name == "t"
    (tmp_path / "t" / "metadata" / "version-hint.text").unlink()
    with pytest.raises(fs.InvalidOptionError, match="cannot tell the format"):
        fs.open_table(tmp_path / "t")
    with pytest.raises(fs.InvalidNameError, match=r"v3\.metadata\.json"):  # the newest, a hint to the user
        fs.open_table(tmp_path / "t", format="iceberg")


def test_missing_pyiceberg_is_a_named_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = IcebergBuilder(tmp_path / "t", SCHEMA)
    monkeypatch.setitem(sys.modules, "pyiceberg", None)  # as if it were not installed
    with pytest.raises(fs.MissingDependencyError, match="'iceberg' extra"):
        fs.open_table(b.metadata_path)


# -- deletes: the spec's sequence-number and scoping rules -------------------------------------------
def test_position_deletes_apply_to_older_and_same_commit_files_only(tmp_path: Path) -> None:
    b = IcebergBuilder(tmp_path / "t", SCHEMA)
    a = b.data([{"id": i, "cat": "a", "n": i} for i in range(4)])
    s1 = b.commit([a])
    c = b.data([{"id": i, "cat": "c", "n": i} for i in range(10, 14)])
    # one delete file naming rows of two data files, one of them added by the same commit
    deletes = b.position_deletes([(a, 0), (a, 3), (c, 1)])
    s2 = b.commit([c, deletes], operation="overwrite")
    later = b.data([{"id": 20, "cat": "a", "n": 20}])  # a newer file: position 0 of it is not deleted
    s3 = b.commit([later])
    t = fs.open_table(b.metadata_path)
    assert ids(t.to_arrow(snapshot_id=s1)) == [0, 1, 2, 3]
    assert ids(t.to_arrow(snapshot_id=s2)) == [1, 2, 10, 12, 13]
    assert ids(t.to_arrow(snapshot_id=s3)) == [1, 2, 10, 12, 13, 20]
    assert t.scan(snapshot_id=s3).count() == 6  # from the metadata and the positions alone


def test_deletion_vectors_in_one_puffin_file_and_they_supersede_position_delete_files(tmp_path: Path) -> None:
    b = IcebergBuilder(tmp_path / "t", SCHEMA, format_version=3)
    a = b.data([{"id": i, "cat": "a", "n": i} for i in range(5)])
    c = b.data([{"id": i, "cat": "c", "n": i} for i in range(10, 15)])
    b.commit([a, c])
    legacy = b.position_deletes([(a, 4)])  # written before the vectors (an upgraded v2 table's)
    s2 = b.commit([legacy], operation="delete")
    vectors = b.deletion_vectors([(a, [0, 2]), (c, [4])])  # the vector for a holds all of a's deletes...
    s3 = b.commit(vectors, operation="delete")
    t = fs.open_table(b.metadata_path)
    assert ids(t.to_arrow(snapshot_id=s2)) == [0, 1, 2, 3, 10, 11, 12, 13, 14]
    # ...so the legacy file is ignored for a: row 4 of a is live again, as the spec's rule reads
    assert ids(t.to_arrow(snapshot_id=s3)) == [1, 3, 4, 10, 11, 12, 13]
    assert t.scan(snapshot_id=s3).count() == 7


def test_a_bare_deletion_vector_blob_is_refused(tmp_path: Path) -> None:
    b = IcebergBuilder(tmp_path / "t", SCHEMA, format_version=3)
    a = b.data([{"id": i, "cat": "a", "n": i} for i in range(3)])
    b.commit([a])
    (vector,) = b.deletion_vectors([(a, [1])])
    path = Path(vector.path.removeprefix("file://"))
    blob = path.read_bytes()[vector.offset:vector.offset + vector.size]
    path.write_bytes(blob)  # what older DuckDB versions wrote: the blob without its Puffin container
    vector.offset, vector.file_size = 0, len(blob)
    b.commit([vector], operation="delete")
    with pytest.raises(fs.UnsupportedFormatFeatureError, match="not a Puffin file"):
        fs.open_table(b.metadata_path).to_arrow()


def test_equality_deletes_follow_sequence_numbers_partitions_and_nulls(tmp_path: Path) -> None:
    b = IcebergBuilder(tmp_path / "t", SCHEMA, spec=BY_CAT)
    a = b.data([{"id": 1, "cat": "a", "n": 3}, {"id": 2, "cat": "a", "n": None}, {"id": 3, "cat": "a", "n": 4}],
               ("a",))
    c = b.data([{"id": 4, "cat": "c", "n": 3}], ("c",))
    b.commit([a, c])
    # deletes n = 3 and n IS NULL in partition a only; the new row of the same commit survives (equal seq)
    same_commit = b.data([{"id": 5, "cat": "a", "n": 3}], ("a",))
    deletes = b.equality_deletes([{"n": 3}, {"n": None}], [3], ("a",))
    s2 = b.commit([same_commit, deletes], operation="overwrite")
    t = fs.open_table(b.metadata_path)
    assert ids(t.to_arrow(snapshot_id=s2)) == [3, 4, 5]
    assert t.scan(snapshot_id=s2).count() == 3
    assert ids(t.to_arrow(snapshot_id=s2, columns=["id"])) == [3, 4, 5]  # n is read for the deletes anyway
    assert ids(t.to_arrow(snapshot_id=s2, filter=("id", ">=", 3))) == [3, 4, 5]


def test_global_multi_column_equality_deletes_on_a_promoted_and_then_dropped_column(tmp_path: Path) -> None:
    b = IcebergBuilder(tmp_path / "t", SCHEMA)  # unpartitioned: its equality deletes are global
    a = b.data([{"id": 1, "cat": "a", "n": 3}, {"id": 2, "cat": "b", "n": 3}, {"id": 3, "cat": None, "n": 7}])
    b.commit([a])
    wider = json.loads(json.dumps(SCHEMA))
    wider["fields"][2]["type"] = "long"  # n: int -> long; the old file keeps int values
    b.evolve(wider)
    deletes = b.equality_deletes([{"cat": "b", "n": 3}, {"cat": None, "n": 7}], [2, 3])
    s2 = b.commit([deletes], operation="delete")
    dropped = {"type": "struct", "fields": wider["fields"][:2]}  # n is dropped: the deletes still compare it
    b.evolve(dropped)
    s3 = b.commit([b.data([{"id": 4, "cat": "b"}])])
    t = fs.open_table(b.metadata_path)
    assert ids(t.to_arrow(snapshot_id=s2)) == [1]
    assert rows(t.to_arrow(snapshot_id=s3)) == [{"id": 1, "cat": "a"}, {"id": 4, "cat": "b"}]


# -- schemas, defaults, name mappings, partitions ----------------------------------------------------
def test_v3_initial_defaults_fill_files_written_before_the_column(tmp_path: Path) -> None:
    b = IcebergBuilder(tmp_path / "t", SCHEMA, format_version=3)
    s1 = b.commit([b.data([{"id": 1, "cat": "a", "n": 1}])])
    added = json.loads(json.dumps(SCHEMA))
    added["fields"].append({"id": 4, "name": "score", "type": "double", "required": True,
                            "initial-default": 2.5, "write-default": 0.0})
    added["fields"].append({"id": 5, "name": "day", "type": "date", "required": False,
                            "initial-default": "2024-02-29"})
    b.evolve(added)
    b.commit([b.data([{"id": 2, "cat": "b", "n": 2, "score": 9.0, "day": None}])])
    t = fs.open_table(b.metadata_path)
    assert rows(t.to_arrow()) == [
        {"id": 1, "cat": "a", "n": 1, "score": 2.5, "day": dt.date(2024, 2, 29)},
        {"id": 2, "cat": "b", "n": 2, "score": 9.0, "day": None}]
    assert t.scan(snapshot_id=s1).output_schema.names == ["id", "cat", "n"]
    assert t.scan(filter=("score", "==", 2.5)).to_arrow()["id"].to_pylist() == [1]
    assert sorted(t.schemas()) == [0, 1] and t.schema.field(4).initial_default == 2.5


def test_files_without_field_ids_read_through_the_name_mapping(tmp_path: Path) -> None:
    mapping = [{"field-id": 1, "names": ["id"]}, {"field-id": 2, "names": ["cat", "category"]},
               {"field-id": 3, "names": ["n"]}]
    b = IcebergBuilder(tmp_path / "t", SCHEMA, properties={"schema.name-mapping.default": json.dumps(mapping)})
    plain = pa.schema([("id", pa.int64()), ("category", pa.string()), ("n", pa.int32())])  # no ids, an alias
    f = b.data([{"id": 1, "cat": "a", "n": 5}])
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([{"id": 1, "category": "a", "n": 5}], schema=plain),
                   f.path.removeprefix("file://"))
    b.commit([f])
    assert rows(fs.open_table(b.metadata_path).to_arrow()) == [{"id": 1, "cat": "a", "n": 5}]


def test_identity_partition_values_fill_a_column_the_file_lacks(tmp_path: Path) -> None:
    b = IcebergBuilder(tmp_path / "t", SCHEMA, spec=BY_CAT)
    without_cat = fs.Schema.from_json({"type": "struct", "fields": [SCHEMA["fields"][0], SCHEMA["fields"][2]]})
    f = b.data([{"id": 1, "n": 5}], ("hive",), schema=without_cat)  # a migrated Hive file: cat in the path only
    b.commit([f])
    assert rows(fs.open_table(b.metadata_path).to_arrow()) == [{"id": 1, "cat": "hive", "n": 5}]


def test_pruning_by_partition_and_by_bounds_written_before_a_promotion(tmp_path: Path) -> None:
    b = IcebergBuilder(tmp_path / "t", SCHEMA, spec=BY_CAT)
    small = b.data([{"id": 1, "cat": "a", "n": 10}, {"id": 2, "cat": "a", "n": 20}], ("a",))
    other = b.data([{"id": 3, "cat": "b", "n": 30}], ("b",))
    b.commit([small, other])
    wider = json.loads(json.dumps(SCHEMA))
    wider["fields"][2]["type"] = "long"
    b.evolve(wider)
    big = b.data([{"id": 4, "cat": "a", "n": 2**40}], ("a",))  # 8-byte bounds; the old files keep 4-byte ones
    b.commit([big])
    t = fs.open_table(b.metadata_path)
    cases = [(("n", ">", 25), 2), (("n", "<", 15), 1), (("cat", "==", "b"), 1), (("n", "==", 2**40), 1),
             ([("cat", "==", "a"), ("n", ">", 15)], 2)]
    for flt, kept in cases:
        scan = t.scan(filter=flt)
        assert len(scan.files()) == kept, flt
        full = t.scan(filter=flt)
        full.prune = False
        assert ids(scan.to_arrow()) == ids(full.to_arrow()), flt  # pruning never drops a row
    assert iceberg_values.decode_bound(b"\x05\x00\x00\x00", pa.int64()) == (5, pa.int32())
    assert iceberg_values.decode_bound(b"\x00\x00\xc0\x3f", pa.float64()) == (1.5, pa.float32())
    assert iceberg_values.decode_bound(b"\x01\x00\x00\x00", pa.timestamp("us"))[1] == pa.date32()


# -- refusals ----------------------------------------------------------------------------------------
def test_unsupported_features_are_named_errors_naming_the_file(tmp_path: Path) -> None:
    b = IcebergBuilder(tmp_path / "v4", SCHEMA)
    b.commit([b.data([{"id": 1, "cat": "a", "n": 1}])])
    meta = json.loads(Path(b.metadata_path).read_text())
    meta["format-version"] = 4
    Path(b.metadata_path).write_text(json.dumps(meta))
    with pytest.raises(fs.UnsupportedFormatFeatureError, match=r"format version 4.*reads versions 1, 2, 3"):
        fs.open_table(b.metadata_path)

    b = IcebergBuilder(tmp_path / "enc", SCHEMA)
    f = b.data([{"id": 1, "cat": "a", "n": 1}])
    f.key_metadata = b"\x01key"
    b.commit([f])
    with pytest.raises(fs.UnsupportedFormatFeatureError, match=rf"{f.path} is encrypted"):
        fs.open_table(b.metadata_path).to_arrow()

    b = IcebergBuilder(tmp_path / "orc", SCHEMA)
    f = b.data([{"id": 1, "cat": "a", "n": 1}], file_format="ORC")
    b.commit([f])
    with pytest.raises(fs.UnsupportedFormatFeatureError, match=rf"{f.path} is ORC"):
        fs.open_table(b.metadata_path).to_arrow()

    b = IcebergBuilder(tmp_path / "geo", {"type": "struct", "fields": [
        {"id": 1, "name": "id", "type": "long", "required": True},
        {"id": 2, "name": "shape", "type": "geometry", "required": False}]}, format_version=3)
    with pytest.raises(fs.UnsupportedFormatFeatureError, match="geometry"):
        fs.open_table(b.metadata_path).schemas()


def test_manifests_whose_partition_summaries_rule_the_filter_out_are_not_read(tmp_path: Path) -> None:
    b = IcebergBuilder(tmp_path / "t", SCHEMA, spec=BY_CAT)
    for cat in "abc":  # three fast appends: three manifests, one partition each
        b.commit([b.data([{"id": ord(cat), "cat": cat, "n": 1}, {"id": ord(cat) + 100, "cat": cat, "n": 2}],
                         (cat,))])
    t = fs.open_table(b.metadata_path)
    everything = t.to_arrow()
    for flt in [("cat", "==", "b"), ("cat", ">", "a"), ("cat", "in", ["a", "c"]), ("cat", "<=", "a"),
                ("cat", "is_null"), [("cat", "==", "b"), ("n", "==", 2)]]:
        scan = t.scan(filter=flt)
        want = everything.filter(scan.filter.expression) if scan.filter.expression is not None else everything
        assert ids(scan.to_arrow()) == ids(want), flt  # the same rows as filtering everything
        assert len(scan.content.files) < 3, flt  # a skipped manifest's files never reach the scan
    assert len(t.scan(filter=("n", "==", 2)).content.files) == 3  # not a partition column: all read


def test_a_table_without_snapshots_reads_as_empty(tmp_path: Path) -> None:
    t = fs.open_table(IcebergBuilder(tmp_path / "t", SCHEMA).metadata_path)
    assert t.history() == [] and t.schema.names == ["id", "cat", "n"]
    assert t.to_arrow().num_rows == 0 and t.to_arrow().column_names == ["id", "cat", "n"]
    assert t.scan(filter=("n", ">", 1)).count() == 0
    with pytest.raises(fs.SnapshotNotFoundError, match="no snapshot"):
        t.scan(as_of=dt.datetime(2030, 1, 1))


def test_only_iceberg_sources_prune_through_year_month_day_hour_and_bucket(tmp_path: Path) -> None:
    """A partition value under ``year`` is Iceberg's years since 1970 only where the source says so: a
    source whose year is the calendar year (DuckLake's) is pruned by identity values alone."""
    from fieldshift.open_tables.source import DataFileEntry, PartitionValue, SnapshotContent, SourceSnapshot
    from fieldshift.table.scan.open_scan import OpenScan

    schema = fs.Schema.from_json({"type": "struct", "fields": [
        {"id": 1, "name": "id", "type": "long", "required": True},
        {"id": 2, "name": "ts", "type": "timestamp", "required": False}]})
    path = tmp_path / "f.parquet"
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([{"id": 1, "ts": dt.datetime(2024, 5, 1)}], schema=schema.to_arrow()), path)

    class Source:
        format, name, writer, policy = "test", "t", "a test", fs.CastPolicy.iceberg()

        def __init__(self, year: int, transforms: str | None) -> None:
            self.year, self.partition_transforms = year, transforms

        def snapshots(self) -> tuple[SourceSnapshot, ...]:
            return (SourceSnapshot(1, dt.datetime(2024, 1, 1, tzinfo=dt.UTC), 0),)

        def schemas(self) -> dict[int, fs.Schema]:
            return {0: schema}

        def content(self, snapshot_id: int) -> SnapshotContent:
            f = DataFileEntry(str(path), 1, partition=(PartitionValue(2, "year", self.year),))
            return SnapshotContent(self.snapshots()[0], schema, (f,))

    flt = ("ts", ">=", dt.datetime(2024, 1, 1))
    for year, transforms in ((2024, None), (54, "iceberg")):  # both say "2024", each in its own terms
        source = Source(year, transforms)
        assert OpenScan(source, source.content(1), filter=flt).to_arrow().num_rows == 1
    iceberg = Source(53, "iceberg")  # 2023 in Iceberg's terms: pruned
    assert OpenScan(iceberg, iceberg.content(1), filter=flt).files() == []
