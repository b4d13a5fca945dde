"""Spark reads of tables other formats wrote (issues 31, 32): ``spark.read.format("fieldshift")`` with
``option("format", ...)`` and ``fieldshift.spark.read(..., format=...)`` give ``fs.open_table``'s answer;
executors read and evolve the files (tasks of a pickled scan), pushed filters prune files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
import fieldshift.spark as fss
from tests.open_tables.test_ducklake_read import lake  # noqa: F401  (the hand-written DuckLake catalog fixture)
from tests.spark.conftest import assert_same

pytestmark = pytest.mark.spark  # tests/servers runs these on a standalone cluster and over Spark Connect too


def _same(df: Any, table: fs.OpenTable, **scan: Any) -> None:
    s = table.scan(**scan)
    assert_same(df, s.to_arrow(), s.full_schema.select(s.columns), exact_nullability=False)


def test_ducklake_through_the_data_source_and_read(spark: Any, lake: Path) -> None:  # noqa: F811
    with fs.open_table(lake, format="ducklake", name="main.t") as t:
        fss.register(spark)

        def base() -> Any:  # a reader keeps the options set on it: a new one per read
            return spark.read.format("fieldshift").option("format", "ducklake").option("name", "main.t")

        _same(base().load(str(lake)), t)  # position deletes, an initial default, inlined rows
        _same(base().option("snapshot_id", 2).load(str(lake)), t, snapshot_id=2)  # that snapshot's schema
        _same(base().option("as_of", "2024-05-01T12:02:30Z").load(str(lake)), t, snapshot_id=2)
        pruned = base().load(str(lake)).filter("id >= 11")
        _same(pruned, t, filter=("id", ">=", 11))
        _same(fss.read(spark, lake, format="ducklake", name="main.t", columns=["name"], filter=("id", ">=", 11)),
              t, columns=["name"], filter=("id", ">=", 11))


def test_pushed_filters_prune_open_table_tasks(spark: Any, lake: Path) -> None:  # noqa: F811
    fss.register(spark)
    base = spark.read.format("fieldshift").option("format", "ducklake").option("name", "main.t").load(str(lake))
    # a task per live file plus one for the inlined rows; the pushed filter prunes file a (ids 0..3)
    assert base.rdd.getNumPartitions() == 3 and base.filter("id >= 11").rdd.getNumPartitions() == 2


def test_iceberg_through_spark(spark: Any, tmp_path: Path) -> None:
    pytest.importorskip("pyiceberg", reason="Iceberg reads need pyiceberg (the dev and iceberg extras)")
    pytest.importorskip("fastavro", reason="the hand-written tables' manifests need fastavro (the dev extra)")
    from tests.open_tables.iceberg_tables import IcebergBuilder
    from tests.open_tables.test_iceberg_read import BY_CAT, SCHEMA

    b = IcebergBuilder(tmp_path / "t", SCHEMA, spec=BY_CAT)
    a = b.data([{"id": 1, "cat": "a", "n": 3}, {"id": 2, "cat": "a", "n": None}, {"id": 3, "cat": "a", "n": 4}],
               ("a",))
    s1 = b.commit([a, b.data([{"id": 4, "cat": "c", "n": 3}], ("c",))])
    wider = json.loads(json.dumps(SCHEMA))
    wider["fields"][2]["type"] = "long"  # int -> long: the old files are cast on the executors
    b.evolve(wider)
    b.commit([b.equality_deletes([{"n": 3}], [3], ("a",)), b.position_deletes([(a, 2)], ("a",)),
              b.data([{"id": 5, "cat": "c", "n": 2**40}], ("c",))], operation="overwrite")
    t = fs.open_table(b.metadata_path)
    latest = fss.read(spark, b.metadata_path, format="iceberg")
    _same(latest, t)
    _same(fss.read(spark, b.metadata_path, format="iceberg", snapshot_id=s1), t, snapshot_id=s1)
    _same(fss.read(spark, b.metadata_path, format="iceberg", filter=("cat", "==", "c")), t, filter=("cat", "==", "c"))


def test_delta_through_spark(spark: Any, tmp_path: Path) -> None:
    from tests.open_tables.test_delta_read import add, commit, data, metadata, protocol, schema_string

    root = tmp_path / "delta"
    (root / "_delta_log").mkdir(parents=True)
    one = data(root, "a.parquet", pa.table({"id": pa.array([1, 2], pa.int64())}))
    commit(root, 0, protocol(), metadata(schema_string(("id", "long"))), add(one, 2))
    two = data(root, "b.parquet", pa.table({"id": pa.array([3], pa.int64()), "x": pa.array(["z"])}))
    commit(root, 1, metadata(schema_string(("id", "long"), ("x", "string"))), add(two, 1))
    t = fs.open_table(root, format="delta")
    df = spark.read.format("fieldshift").option("format", "delta").load(str(root))
    _same(df, t)
    _same(fss.read(spark, root, format="delta", snapshot_id=0), t, snapshot_id=0)
    with pytest.raises(fs.InvalidOptionError, match="schema_id= is for fieldshift tables"):
        fss.read(spark, root, format="delta", schema_id=0)


def test_paimon_merge_groups_are_merged_on_the_executors(spark: Any, tmp_path: Path) -> None:
    pytest.importorskip("fastavro", reason="Paimon manifests need fastavro (the dev and paimon extras)")
    from tests.open_tables.paimon_tables import DataFile, PaimonBuilder
    from tests.open_tables.test_paimon_read import KEYED, _rows

    b = PaimonBuilder(tmp_path, primary_keys=["k"], options={"bucket": "1"})
    b.schema(KEYED)
    b.commit([DataFile(_rows((1, "a", 1), (2, "b", 2), (3, "c", 3)))])
    b.commit([DataFile(_rows((2, "B", 20), (3, None, None)), kinds=[2, 3])])  # 2 updated, 3 deleted
    t = fs.open_table(tmp_path, format="paimon", name="db.t")
    df = fss.read(spark, tmp_path, format="paimon", name="db.t")
    _same(df, t)
    assert sorted((r.k, r.name) for r in df.collect()) == [(1, "a"), (2, "B")]
    _same(fss.read(spark, tmp_path, format="paimon", name="db.t", snapshot_id=1), t, snapshot_id=1)


def test_hudi_merge_on_read_slices_are_read_on_the_driver(spark: Any, tmp_path: Path) -> None:
    pytest.importorskip("hudi", reason="Hudi reads need the hudi package (the hudi extra)")
    from tests.open_tables.hudi_tables import unzip_sample

    base = unzip_sample("quickstart_trips_table_mor_avro_v6_trips_8i1u", tmp_path)
    t = fs.open_table(base, format="hudi")
    _same(fss.read(spark, base, format="hudi", columns=["uuid", "fare", "city"]), t, columns=["uuid", "fare", "city"])


def test_fieldshift_table_as_of_through_spark(spark: Any, tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", fs.Schema.from_arrow(pa.schema([("v", pa.int64())]), assign_ids=True))
    t.append(pa.table({"v": pa.array([1], pa.int64())}))
    t.append(pa.table({"v": pa.array([2], pa.int64())}))
    first = next(s for s in t.history() if s.operation == "append")
    df = fss.read(spark, tmp_path / "t", as_of=first.committed_at)
    assert [r.v for r in df.collect()] == [1]
    with pytest.raises(fs.InvalidOptionError, match="not both"):
        fss.read(spark, tmp_path / "t", as_of=first.committed_at, snapshot_id=first.snapshot_id)


def test_open_table_options_from_the_data_source_options() -> None:
    from fieldshift.spark.open_read import table_options

    opts = {"path": "/x", "format": "iceberg", "catalog.type": "sql", "catalog.uri": "sqlite:///c.db",
            "properties.s3.endpoint": "http://h:9000", "storage_options.aws_region": "eu",
            "data_path": "/d", "catalog": json.dumps({"warehouse": "file:///wh", "type": "rest"})}
    assert table_options(opts) == {"catalog": {"warehouse": "file:///wh", "type": "sql", "uri": "sqlite:///c.db"},
                                   "properties": {"s3.endpoint": "http://h:9000"},
                                   "storage_options": {"aws_region": "eu"}, "data_path": "/d"}
    assert table_options({"properties": json.dumps({"S3.Region": "x"})}) == {"properties": {"S3.Region": "x"}}
    with pytest.raises(fs.InvalidOptionError, match=r"unknown option 'propertes\.s3\.endpoint'"):
        table_options({"propertes.s3.endpoint": "x"})
    with pytest.raises(fs.InvalidOptionError, match="option 'storage_options' takes a JSON object"):
        table_options({"storage_options": "[1]"})


def test_iceberg_catalog_and_properties_options_through_spark(spark: Any, tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy", reason="PyIceberg's SqlCatalog needs pyiceberg[sql-sqlite]")
    from tests.cli.test_cli_other_formats import _catalog_table

    props = _catalog_table(tmp_path)
    t = fs.open_table(catalog=props, name="db.t")
    reader = spark.read.format("fieldshift").option("format", "iceberg").option("name", "db.t")
    for k, v in props.items():
        reader = reader.option(f"catalog.{k}", v)
    _same(reader.load(), t)
    _same(fss.read(spark, None, format="iceberg", name="db.t", catalog=props, columns=["label"]), t,
          columns=["label"])
    bogus = {"py-io-impl": "nonesuch.FileIO"}  # properties reach PyIceberg's FileIO: this one cannot load
    with pytest.raises(Exception, match=r"nonesuch\.FileIO"):
        fss.read(spark, None, format="iceberg", name="db.t", catalog=props, properties=bogus).collect()
    with pytest.raises(Exception, match=r"nonesuch\.FileIO"):
        reader.option("properties.py-io-impl", "nonesuch.FileIO").load().collect()
    with pytest.raises(Exception, match=r"unknown option 'catalogue\.uri'"):
        reader.option("catalogue.uri", "x").load().collect()
    with pytest.raises(fs.InvalidOptionError, match="are for tables another format wrote"):
        fss.read(spark, tmp_path, properties={"a": "b"})


# -- Spark's native Parquet scan for the files that need nothing but a plan --------------------------------
def _files(df: Any) -> set[str]:
    """The files Spark's own file scans of ``df`` read (the data source's tasks list none)."""
    return {f.replace("file://", "") for f in df.inputFiles()}


def test_ducklake_files_without_deletes_take_the_native_scan(spark: Any, lake: Path) -> None:  # noqa: F811
    data = lake.parent / "lake" / "main" / "t"
    with fs.open_table(lake, format="ducklake", name="main.t") as t:
        for snap in (2, 3, 4, 5):
            df = fss.read(spark, lake, format="ducklake", name="main.t", snapshot_id=snap)
            _same(df, t, snapshot_id=snap)
            _same(fss.read(spark, lake, format="ducklake", name="main.t", snapshot_id=snap, route="arrow"), t,
                  snapshot_id=snap)
        # 3: file a (id int32, a dropped column) read as id int64 with score's initial default 1.5, natively
        plan = fss.plan_open_read(lake, format="ducklake", name="main.t", snapshot_id=3)
        assert len(plan.native) == 1 and plan.other == 0, plan.explain()
        assert "1 file(s) of layout 0 (id, name, old): native Parquet scan" in plan.explain()
        df = fss.read(spark, lake, format="ducklake", name="main.t", snapshot_id=3)
        assert _files(df) == {str(data / "a.parquet")}
        assert sorted((r.id, r.score) for r in df.collect()) == [(0, 1.5), (1, 1.5), (2, 1.5), (3, 1.5)]
        # 4: a has a delete file (pyarrow on the executors), b none (native)
        plan = fss.plan_open_read(lake, format="ducklake", name="main.t", snapshot_id=4)
        assert "1 file(s): pyarrow (position delete files)" in plan.explain(), plan.explain()
        assert [Path(f.path).name for f in plan.native] == ["b.parquet"]
        df = fss.read(spark, lake, format="ducklake", name="main.t", snapshot_id=4, filter=("id", ">=", 2),
                      columns=["name"])
        _same(df, t, snapshot_id=4, filter=("id", ">=", 2), columns=["name"])
        assert _files(df) == {str(data / "b.parquet")}
        assert _files(fss.read(spark, lake, format="ducklake", name="main.t", snapshot_id=4, route="arrow")) == set()
        # 5: b's row 0 is deleted in the catalog, a keeps its delete file, and inlined rows: nothing native
        plan = fss.plan_open_read(lake, format="ducklake", name="main.t")
        assert not plan.native and "pyarrow (deletes kept in the catalog)" in plan.explain(), plan.explain()
        assert "pyarrow (inlined rows, read on the driver)" in plan.explain()
        with pytest.raises(ValueError, match=r"a\.parquet cannot be read natively: position delete files"):
            fss.read(spark, lake, format="ducklake", name="main.t", route="native")


def test_iceberg_files_without_deletes_take_the_native_scan(spark: Any, tmp_path: Path) -> None:
    pytest.importorskip("pyiceberg", reason="Iceberg reads need pyiceberg (the dev and iceberg extras)")
    pytest.importorskip("fastavro", reason="the hand-written tables' manifests need fastavro (the dev extra)")
    from tests.open_tables.iceberg_tables import IcebergBuilder
    from tests.open_tables.test_iceberg_read import BY_CAT, SCHEMA

    b = IcebergBuilder(tmp_path / "t", SCHEMA, spec=BY_CAT)
    a = b.data([{"id": 1, "cat": "a", "n": 3}, {"id": 2, "cat": "a", "n": None}, {"id": 3, "cat": "a", "n": 4}],
               ("a",))
    c = b.data([{"id": 4, "cat": "c", "n": 3}], ("c",))
    b.commit([a, c])
    wider = json.loads(json.dumps(SCHEMA))
    wider["fields"][2]["type"] = "long"  # int -> long: Spark's scan widens the old files itself
    b.evolve(wider)
    e = b.data([{"id": 5, "cat": "c", "n": 2**40}], ("c",))
    b.commit([b.equality_deletes([{"n": 3}], [3], ("a",)), e], operation="overwrite")
    t = fs.open_table(b.metadata_path)
    plan = fss.plan_open_read(b.metadata_path, format="iceberg")
    # a: an equality delete of its partition applies; c (older, other partition) and e carry none
    assert sorted(Path(f.path).name for f in plan.native) == sorted(Path(x.path).name for x in (c, e))
    assert plan.other == 1 and "pyarrow (equality deletes)" in plan.explain(), plan.explain()
    df = fss.read(spark, b.metadata_path, format="iceberg")
    _same(df, t)
    assert len(_files(df)) == 2
    _same(fss.read(spark, b.metadata_path, format="iceberg", filter=("n", ">", 3)), t, filter=("n", ">", 3))
    b.commit([b.position_deletes([(e, 0)], ("c",))], operation="delete")
    t = fs.open_table(b.metadata_path)
    plan = fss.plan_open_read(b.metadata_path, format="iceberg")
    assert [Path(f.path).name for f in plan.native] == [Path(c.path).name], plan.explain()
    _same(fss.read(spark, b.metadata_path, format="iceberg"), t)


def test_a_pyiceberg_table_reads_natively_equal_to_the_arrow_route(spark: Any, tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy", reason="PyIceberg's SqlCatalog needs pyiceberg[sql-sqlite]")
    from tests.cli.test_cli_other_formats import _catalog_table

    props = _catalog_table(tmp_path)  # files written by PyIceberg before and after a rename
    t = fs.open_table(catalog=props, name="db.t")
    plan = fss.plan_open_read(None, format="iceberg", name="db.t", catalog=props)
    assert len(plan.native) == 2 and plan.other == 0, plan.explain()
    native = fss.read(spark, None, format="iceberg", name="db.t", catalog=props)
    _same(native, t)
    assert len(_files(native)) == 2
    _same(fss.read(spark, None, format="iceberg", name="db.t", catalog=props, route="arrow"), t)


def test_delta_files_without_column_mapping_read_natively_by_name(spark: Any, tmp_path: Path) -> None:
    """Delta without column mapping resolves columns by name, as Spark's own scan does: files whose columns
    carry the read names (nested ones too) take the native scan, requested without field ids (the session
    reads by id where ids are requested), and equal the executor-side route and delta-rs."""
    from deltalake import DeltaTable, write_deltalake

    p = str(tmp_path / "t")
    s = pa.struct([("a", pa.int64()), ("b", pa.string())])
    write_deltalake(p, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": pa.array([{"a": 1, "b": "x"}] * 3, s),
                                 "tags": pa.array([["p"], [], None], pa.list_(pa.string()))}))
    write_deltalake(p, pa.table({"id": pa.array([4], pa.int64()), "s": pa.array([None], s),
                                 "tags": pa.array([["q"]], pa.list_(pa.string())), "x": pa.array([1.5])}),
                    mode="append", schema_mode="merge")
    DeltaTable(p).delete("id = 2")
    t = fs.open_table(p, format="delta")
    plan = fss.plan_open_read(p, format="delta")
    assert len(plan.native) == 2 and plan.other == 0 and "by name" in plan.explain(), plan.explain()
    native = fss.read(spark, p, format="delta")
    assert len(_files(native)) == 2
    _same(native, t)
    _same(fss.read(spark, p, format="delta", route="arrow"), t)
    _same(fss.read(spark, p, format="delta", filter=("id", ">", 2)), t, filter=("id", ">", 2))
    theirs = DeltaTable(p).to_pyarrow_table().select(t.schema.names).sort_by("id")
    assert t.to_arrow().sort_by("id").to_pylist() == theirs.to_pylist()


def test_files_whose_column_names_differ_from_the_read_names_stay_on_the_executors(spark: Any,
                                                                                   tmp_path: Path) -> None:
    """Delta column mapping ``name`` without field ids in the files: the name mapping resolves the physical
    names, which Spark's by-name scan would not find."""
    from tests.open_tables.test_delta_read import add, commit, data, metadata, protocol, schema_string

    one = data(tmp_path, "a.parquet", pa.table({"col-1": pa.array([1, 2], pa.int64())}))
    commit(tmp_path, 0, protocol(2), metadata(schema_string(("id", "long"), mapped=True),
                                              **{"delta.columnMapping.mode": "name"}), add(one, 2))
    t = fs.open_table(tmp_path, format="delta")
    plan = fss.plan_open_read(tmp_path, format="delta")
    assert not plan.native and "the file names it 'col-1'" in plan.explain(), plan.explain()
    _same(fss.read(spark, tmp_path, format="delta"), t)


def test_a_paimon_tag_and_branch_through_spark(spark: Any, tmp_path: Path) -> None:
    """An append table's id-less files read natively by name; a tag whose snapshot expired reads on the
    executors by the tagged id; a branch reads by its ``$branch_`` name."""
    pytest.importorskip("fastavro", reason="Paimon manifests need fastavro (the dev and paimon extras)")
    import shutil

    from tests.open_tables.paimon_tables import DataFile, PaimonBuilder

    b = PaimonBuilder(tmp_path, "db.t")
    b.schema([{"id": 0, "name": "id", "type": "INT NOT NULL"}, {"id": 1, "name": "v", "type": "STRING"}])
    s = pa.schema([("id", pa.int32()), ("v", pa.string())])
    b.commit([DataFile(pa.Table.from_pylist([{"id": 1, "v": "a"}], s))])
    b.commit([DataFile(pa.Table.from_pylist([{"id": 2, "v": "b"}], s))])
    (b.root / "tag").mkdir()
    (b.root / "tag" / "tag-first").write_text((b.root / "snapshot" / "snapshot-1").read_text())
    branch = b.root / "branch" / "branch-dev"
    branch.mkdir(parents=True)
    shutil.copytree(b.root / "schema", branch / "schema")
    shutil.copytree(b.root / "tag", branch / "snapshot")
    (branch / "snapshot" / "tag-first").rename(branch / "snapshot" / "snapshot-1")
    (b.root / "snapshot" / "snapshot-1").unlink()
    t = fs.open_table(tmp_path, format="paimon", name="db.t")
    plan = fss.plan_open_read(tmp_path, format="paimon", name="db.t")
    assert len(plan.native) == 2 and "by name" in plan.explain(), plan.explain()
    _same(fss.read(spark, tmp_path, format="paimon", name="db.t"), t)
    tagged = fss.read(spark, tmp_path, format="paimon", name="db.t", snapshot_id="first", route="arrow")
    assert [(r.id, r.v) for r in tagged.collect()] == [(1, "a")]
    dev = fss.read(spark, tmp_path, format="paimon", name="db.t$branch_dev", route="arrow")
    assert [(r.id, r.v) for r in dev.collect()] == [(1, "a")]
