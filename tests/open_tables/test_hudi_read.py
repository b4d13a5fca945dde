"""Hudi tables read through ``fs.open_table``: one of hudi-rs' sample tables of each kind against hudi-rs'
own read (the smoke tests; ``make test-conformance`` reads all of them at every instant), and tables
written here by hand (``hudi_tables.py``) for schema evolution by name and by Hudi's internal schema,
partition pruning and the features refused by name."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.errors import (
    CatalogFormatError,
    InvalidNameError,
    MissingDependencyError,
    ReadOnlyTableError,
    SnapshotNotFoundError,
    UnsupportedFormatFeatureError,
)
from tests.open_tables.hudi_tables import HudiTableWriter, avro_record, internal_record, unzip_sample

I1, I2, I3 = "20240101000000000", "20240102000000000", "20240103000000000"


def hudi_rs_read(path: Path, instant: str | None = None) -> pa.Table:
    """hudi-rs' snapshot read (at ``instant``), its batches as one table."""
    from hudi import HudiReadOptions, HudiTableBuilder

    table = HudiTableBuilder.from_base_uri(str(path)).build()
    options = HudiReadOptions() if instant is None else HudiReadOptions().with_as_of_timestamp(instant)
    batches = table.read(options)
    return pa.Table.from_batches(batches) if batches else pa.table({})


def rows(table: pa.Table) -> list[str]:
    """The rows as sorted texts: equal for equal row multisets whatever the order."""
    return sorted(repr(sorted(r.items())) for r in table.to_pylist())


def by_name_table(path: Path) -> Path:
    """Three commits by name: ``name`` renamed to ``full_name`` (a drop and an add to a by-name reader),
    ``score`` int -> long, ``extra`` added; partitioned by ``city`` (Hive style)."""
    w = HudiTableWriter(path, "evo", partition_field="city")
    w.commit(I1, avro_record("evo", [("id", "int"), ("name", "string"), ("score", "int"), ("city", "string")]),
             {"city=sf": pa.table({"id": pa.array([1, 2], pa.int32()), "name": ["a", "b"],
                                   "score": pa.array([10, 20], pa.int32()), "city": ["sf", "sf"]})})
    w.commit(I2, avro_record("evo", [("id", "int"), ("full_name", "string"), ("score", "long"), ("city", "string"),
                                     ("extra", "string")]),
             {"city=la": pa.table({"id": pa.array([3], pa.int32()), "full_name": ["c"],
                                   "score": pa.array([30], pa.int64()), "city": ["la"], "extra": ["x"]})})
    w.commit(I3, avro_record("evo", [("id", "int"), ("full_name", "string"), ("score", "long"), ("city", "string"),
                                     ("extra", "string")]),
             {"city=ny": pa.table({"id": pa.array([4], pa.int32()), "full_name": ["d"],
                                   "score": pa.array([2**40], pa.int64()), "city": ["ny"], "extra": [None]})})
    return path


def internal_table(path: Path) -> Path:
    """Three commits under Hudi's internal schema: ``name`` renamed to ``full_name`` (same id), ``score``
    int -> long, then ``score`` dropped and a new string ``score`` added (a new id)."""
    w = HudiTableWriter(path, "iev")
    w.commit(I1, avro_record("iev", [("id", "int"), ("name", "string"), ("score", "int")]),
             {"": pa.table({"id": pa.array([1, 2], pa.int32()), "name": ["a", "b"],
                            "score": pa.array([10, 20], pa.int32())})},
             internal=internal_record(int(I1), [(5, "id", "int"), (6, "name", "string"), (7, "score", "int")]))
    w.commit(I2, avro_record("iev", [("id", "int"), ("full_name", "string"), ("score", "long")]),
             {"": pa.table({"id": pa.array([3], pa.int32()), "full_name": ["c"], "score": pa.array([30], pa.int64())})},
             internal=internal_record(int(I2), [(5, "id", "int"), (6, "full_name", "string"), (7, "score", "long")]))
    w.commit(I3, avro_record("iev", [("id", "int"), ("full_name", "string"), ("score", "string")]),
             {"": pa.table({"id": pa.array([4], pa.int32()), "full_name": ["d"], "score": ["forty"]})},
             internal=internal_record(int(I3), [(5, "id", "int"), (6, "full_name", "string"), (8, "score", "string")]))
    return path


# -- hudi-rs' sample tables (smoke; all of them in the conformance suite) ----------------------------
@pytest.mark.parametrize("sample", ["sample_table_cow_v6_nonpartitioned",
                                    "quickstart_trips_table_mor_avro_v6_trips_8i1u"])
def test_sample_table_equals_hudi_rs_at_every_instant(tmp_path: Path, sample: str) -> None:
    base = unzip_sample(sample, tmp_path)
    table = fs.open_table(base)  # detected by its .hoodie directory
    assert table.format == "hudi"
    history = table.history()
    assert len(history) == 2 and all(isinstance(s.snapshot_id, str) for s in history)
    for snap in history:
        ours = table.to_arrow(snapshot_id=snap.snapshot_id)
        theirs = hudi_rs_read(base, snap.snapshot_id)
        assert ours.schema.names == theirs.schema.names  # Hudi's meta columns first, as hudi-rs returns them
        assert [f.type for f in ours.schema] == [f.type for f in theirs.schema]  # the types hudi-rs gives
        assert rows(ours) == rows(theirs)
        assert table.scan(snapshot_id=snap.snapshot_id).count() == theirs.num_rows


def test_merge_on_read_slice_is_merged_by_hudi_rs_and_pruned_by_partition(tmp_path: Path) -> None:
    base = unzip_sample("quickstart_trips_table_mor_avro_v6_trips_8i1u", tmp_path)
    table = fs.open_table(base, format="hudi")
    scan = table.scan()
    assert len(scan.files()) == 2 and len(scan.reader_rows()) == 1  # san_francisco's slice has a log file
    theirs = hudi_rs_read(base)
    for city in ("san_francisco", "chennai"):
        s = table.scan(columns=["uuid", "fare"], filter=[("city", "=", city)])
        assert len(s.files()) + len(s.reader_rows()) == 1  # the other partitions are skipped by their paths
        want = theirs.filter(pa.compute.equal(theirs["city"], city)).select(["uuid", "fare"])
        assert rows(s.to_arrow()) == rows(want)
        assert s.count() == want.num_rows
    fares = table.to_arrow(filter=[("fare", ">", 30.0)])  # a filter on a data column: applied to rows
    assert rows(fares) == rows(theirs.filter(pa.compute.greater(theirs["fare"], 30.0)))


# -- schema evolution ---------------------------------------------------------------------------------
def test_by_name_evolution_is_hudis_by_name_read(tmp_path: Path) -> None:
    base = by_name_table(tmp_path / "t")
    table = fs.open_table(base, format="hudi", name="evo")
    assert [s.snapshot_id for s in table.history()] == [I1, I2, I3]
    schemas = table.schemas()
    assert sorted(schemas) == [0, 1]  # the third commit repeats the second's schema
    first, latest = schemas[0], table.schema
    assert first.find("score").id == latest.find("score").id and latest.find("score").type == pa.int64()
    assert latest.find("full_name").id not in {f.id for f in first.fields}  # by name, a rename is drop + add
    got = table.to_arrow(columns=["id", "full_name", "score", "city", "extra"]).sort_by("id").to_pylist()
    assert got == [
        {"id": 1, "full_name": None, "score": 10, "city": "sf", "extra": None},
        {"id": 2, "full_name": None, "score": 20, "city": "sf", "extra": None},
        {"id": 3, "full_name": "c", "score": 30, "city": "la", "extra": "x"},
        {"id": 4, "full_name": "d", "score": 2**40, "city": "ny", "extra": None},
    ]
    assert rows(table.to_arrow()) == rows(hudi_rs_read(base))  # hudi-rs reads by name too
    old = table.to_arrow(snapshot_id=I1)  # time travel reads the schema of that commit
    assert old.column_names[5:] == ["id", "name", "score", "city"] and old["score"].type == pa.int32()
    assert old.select(["id", "name", "score"]).sort_by("id").to_pylist() == [
        {"id": 1, "name": "a", "score": 10}, {"id": 2, "name": "b", "score": 20}]
    # hudi-rs reads an earlier instant's rows in the latest schema (full_name null, score long, extra)
    theirs = hudi_rs_read(base, I1)
    assert theirs.column_names[5:] == ["id", "full_name", "score", "city", "extra"]
    assert sorted(theirs["id"].to_pylist()) == sorted(old["id"].to_pylist())
    assert table.scan(as_of="2024-01-02T12:00:00Z").snapshot_id == I2
    assert table.scan(snapshot_id=int(I2)).snapshot_id == I2  # an instant given as a number reads as its text


def test_internal_schema_keeps_renamed_values_where_hudi_rs_reads_by_name(tmp_path: Path) -> None:
    base = internal_table(tmp_path / "t")
    table = fs.open_table(base, format="hudi")
    assert table.source.mode == "internal"
    assert table.schema.find("full_name").id == table.schemas()[0].find("name").id == 6  # Hudi's own id
    got = table.to_arrow(columns=["id", "full_name", "score"]).sort_by("id").to_pylist()
    assert got == [  # renamed values kept; the re-added score is a new column, null for older files
        {"id": 1, "full_name": "a", "score": None}, {"id": 2, "full_name": "b", "score": None},
        {"id": 3, "full_name": "c", "score": None}, {"id": 4, "full_name": "d", "score": "forty"},
    ]
    at_i2 = table.to_arrow(snapshot_id=I2, columns=["id", "full_name", "score"]).sort_by("id").to_pylist()
    assert at_i2 == [{"id": 1, "full_name": "a", "score": 10}, {"id": 2, "full_name": "b", "score": 20},
                     {"id": 3, "full_name": "c", "score": 30}]
    # hudi-rs ignores the internal schema and matches by name: the old names' values are lost and the
    # dropped score's old values come back as text. fieldshift reads by the ids Hudi recorded.
    theirs = hudi_rs_read(base).select(["id", "full_name", "score"]).sort_by("id").to_pylist()
    assert theirs[0] == {"id": 1, "full_name": None, "score": "10"}


def test_internal_schema_history_file_alone_gives_the_versions(tmp_path: Path) -> None:
    base = internal_table(tmp_path / "t")
    for commit in (base / ".hoodie").glob("*.commit"):  # only the history file keeps the versions now
        text = commit.read_text().replace('"latestSchema"', '"latestSchemaGone"')
        commit.write_text(text)
    table = fs.open_table(base, format="hudi")
    assert table.source.mode == "internal" and len(table.schemas()) == 3
    assert table.to_arrow(columns=["id", "full_name"]).sort_by("id")["full_name"].to_pylist() == ["a", "b", "c", "d"]


# -- pruning, ids, errors -----------------------------------------------------------------------------
def test_partition_paths_prune_hive_and_plain_layouts(tmp_path: Path) -> None:
    for hive in (True, False):
        w = HudiTableWriter(tmp_path / f"t{hive}", "p", partition_field="day", hive_style=hive)
        schema = avro_record("p", [("id", "int"), ("day", "int")])
        for i, day in enumerate((1, 2, 3)):
            w.commit(f"2024010{i + 1}000000000", schema,
                     {f"day={day}" if hive else str(day): pa.table({"id": pa.array([day], pa.int32()),
                                                                    "day": pa.array([day], pa.int32())})})
        table = fs.open_table(tmp_path / f"t{hive}", format="hudi")
        scan = table.scan(columns=["id"], filter=[("day", ">=", 2)])
        assert len(scan.files()) == 2
        assert sorted(scan.to_arrow()["id"].to_pylist()) == [2, 3]
        scan.prune = False
        assert len(scan.files()) == 3 and sorted(scan.to_arrow()["id"].to_pylist()) == [2, 3]


def test_refused_features_are_named(tmp_path: Path) -> None:
    def table_with(props: dict[str, str], where: str) -> Path:
        w = HudiTableWriter(tmp_path / where, where, properties=props)
        w.commit(I1, avro_record(where, [("id", "int")]), {"": pa.table({"id": pa.array([1], pa.int32())})})
        return tmp_path / where

    with pytest.raises(UnsupportedFormatFeatureError, match="bootstrapped"):
        fs.open_table(table_with({"hoodie.bootstrap.base.path": "/src"}, "boot"), format="hudi")
    with pytest.raises(UnsupportedFormatFeatureError, match="ORC"):
        fs.open_table(table_with({"hoodie.table.base.file.format": "ORC"}, "orc"), format="hudi")
    with pytest.raises(UnsupportedFormatFeatureError, match=r"version 6, 8, and 9\. Found: 5"):
        fs.open_table(table_with({"hoodie.table.version": "5"}, "v5"), format="hudi")
    with pytest.raises(UnsupportedFormatFeatureError, match=r"drop\.partition\.columns"):
        fs.open_table(table_with({"hoodie.datasource.write.drop.partition.columns": "true"}, "drop"), format="hudi")
    with pytest.raises(InvalidNameError, match=r"no \.hoodie"):
        fs.open_table(tmp_path, format="hudi")
    broken = table_with({}, "broken")
    (broken / ".hoodie" / f"{I1}.commit").write_text('{"extraMetadata": {"schema": "not json"}}')
    with pytest.raises(CatalogFormatError, match="not valid JSON"):
        fs.open_table(broken, format="hudi")


def test_snapshot_ids_writes_and_missing_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = by_name_table(tmp_path / "t")
    table = fs.open_table(base, format="hudi")
    with pytest.raises(SnapshotNotFoundError, match="no completed instant '20230101000000000'"):
        table.scan(snapshot_id="20230101000000000")
    with pytest.raises(SnapshotNotFoundError, match="no snapshot at or before"):
        table.scan(as_of="2023-01-01T00:00:00Z")
    with pytest.raises(TypeError, match="snapshot_id must be a string"):
        table.scan(snapshot_id=1.5)  # type: ignore[arg-type]
    with pytest.raises(ReadOnlyTableError, match="Apache Hudi"):
        table.append(pa.table({"id": [5]}))
    monkeypatch.setitem(sys.modules, "hudi", None)
    with pytest.raises(MissingDependencyError, match=r"fieldshift\[hudi\]"):
        fs.open_table(base, format="hudi")


def test_a_numbered_formats_ids_given_as_text_read_as_numbers() -> None:
    """The view takes a snapshot id in the kind its format uses: text for Hudi, numbers for the others."""
    import datetime as dt

    from fieldshift.open_tables.source import SourceSnapshot
    from fieldshift.schema.policy import CastPolicy
    from fieldshift.table.open_table import OpenTable

    class Numbered:
        format, name, writer, policy = "numbered", "t", "a writer", CastPolicy.lossless()

        def snapshots(self) -> tuple[SourceSnapshot, ...]:
            return (SourceSnapshot(3, dt.datetime(2024, 1, 1, tzinfo=dt.UTC), 0),)

    view = OpenTable(Numbered())  # type: ignore[arg-type]
    assert view.resolve(" 3") == 3 and view.resolve(3) == 3
    with pytest.raises(TypeError, match="snapshot_id must be an int"):
        view.resolve("three")


def _archive_first_commit(base: Path) -> None:
    """What Hudi's archiver does to the timeline (v6 layout): the first commit's instant files leave
    ``.hoodie`` (for ``.hoodie/archived``); its base files stay, live until rewritten."""
    hoodie = base / ".hoodie"
    for f in hoodie.glob(f"{I1}*"):
        f.rename(hoodie / "archived" / f.name)


@pytest.mark.parametrize("maker", [by_name_table, internal_table], ids=["by-name", "internal-schema"])
def test_archived_instants_are_named_and_their_files_still_read(tmp_path: Path, maker: Any) -> None:
    base = maker(tmp_path / "t")
    before = fs.open_table(base, format="hudi").to_arrow()
    _archive_first_commit(base)
    table = fs.open_table(base, format="hudi")
    assert [s.snapshot_id for s in table.history()] == [I2, I3]
    assert rows(table.to_arrow()) == rows(before)  # the archived commit's file is still read, by its schema
    if maker is by_name_table:  # hudi-rs reads an internal-schema table by name (see above): not an oracle there
        assert rows(table.to_arrow()) == rows(hudi_rs_read(base))
    with pytest.raises(SnapshotNotFoundError, match="archived"):
        table.scan(snapshot_id=I1)
    with pytest.raises(SnapshotNotFoundError, match="no snapshot at or before"):
        table.scan(as_of="2024-01-01T12:00:00Z")


def test_an_archived_files_unknown_internal_schema_is_named_not_read_by_later_names(tmp_path: Path) -> None:
    """Without ``.hoodie/.schema``, the archived commit's internal schema (``name`` before its rename to
    ``full_name``) is nowhere: reading its file by the oldest version left would null ``full_name``."""
    import shutil

    base = internal_table(tmp_path / "t")
    _archive_first_commit(base)
    shutil.rmtree(base / ".hoodie" / ".schema")
    table = fs.open_table(base, format="hudi")
    with pytest.raises(UnsupportedFormatFeatureError, match=f"instant {I1}, which is archived"):
        table.to_arrow()
