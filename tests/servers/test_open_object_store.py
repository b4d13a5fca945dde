"""Tables other formats wrote, on the S3 server (moto): a DuckLake table whose data path is an ``s3://`` prefix
(its catalog stays a local SQLite file, as DuckLake's catalogs are databases) and an Iceberg table PyIceberg
wrote into an ``s3://`` warehouse, read through ``fs.open_table`` at every snapshot, equal to the same
table read from local files. An Iceberg table's metadata and data files go through PyIceberg's FileIO with the
``properties=`` given (the endpoint and keys); a DuckLake table's data files are opened by ``pyarrow.fs`` from the
URI, with the credentials and endpoint of the environment (``AWS_*``, which the ``s3_server`` fixture sets).
Spark (local mode) reads both on its executors, never with its native scan."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from typer.testing import CliRunner

import fieldshift as fs
from fieldshift.cli import app
from tests.open_tables.test_ducklake_read import lake  # noqa: F401  (the hand-written DuckLake catalog fixture)
from tests.servers.conftest import S3_BUCKET
from tests.servers.test_spark_object_store import s3_spark  # noqa: F401  (a local Spark with the S3 environment)


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: tuple((v is None, str(v)) for v in r.values()))


def _store(endpoint: str) -> pafs.S3FileSystem:
    return pafs.S3FileSystem(endpoint_override=endpoint)


def _properties(endpoint: str) -> dict[str, str]:
    """PyIceberg FileIO properties for the server (given explicitly: the environment is not PyIceberg's source)."""
    return {"s3.endpoint": endpoint, "s3.access-key-id": os.environ["AWS_ACCESS_KEY_ID"],
            "s3.secret-access-key": os.environ["AWS_SECRET_ACCESS_KEY"], "s3.region": os.environ["AWS_REGION"]}


def test_a_ducklake_table_with_its_data_on_s3_reads_as_it_does_locally(s3_server: str, lake: Path,  # noqa: F811
                                                                        tmp_path: Path) -> None:
    prefix = f"{S3_BUCKET}/{uuid.uuid4().hex[:12]}/lake"
    pafs.copy_files(str(tmp_path / "lake"), prefix, destination_filesystem=_store(s3_server))
    local = fs.open_table(lake, format="ducklake", name="main.t")
    remote_catalog = tmp_path / "remote.sqlite"
    shutil.copy(lake, remote_catalog)
    shutil.rmtree(tmp_path / "lake")  # nothing local left to read by mistake
    with fs.open_table(remote_catalog, format="ducklake", name="main.t", data_path=f"s3://{prefix}/") as remote:
        assert [s.snapshot_id for s in remote.history()] == [s.snapshot_id for s in local.history()]
        want = {}
        for snap in (2, 3, 4, 5):
            got = remote.to_arrow(snapshot_id=snap)
            assert got.schema == local.scan(snapshot_id=snap).output_schema
            want[snap] = _rows(got)
        # the local read, from a second copy of the files (the first was removed above)
    pafs.copy_files(prefix, str(tmp_path / "lake"), source_filesystem=_store(s3_server))
    for snap, rows in want.items():
        assert rows == _rows(local.to_arrow(snapshot_id=snap)), snap
    assert sorted(r["id"] for r in want[5]) == [0, 2, 3, 11, 12, 20]  # deletes: a file, in the catalog, inlined rows
    with fs.open_table(remote_catalog, format="ducklake", name="main.t", data_path=f"s3://{prefix}/") as remote:
        assert remote.scan(filter=("id", ">=", 11)).count() == 3
        assert remote.scan(snapshot_id=4).count() == 6
    local.close()


def _pyiceberg_table(warehouse: str, catalog_db: Path, io: dict[str, str]) -> tuple[Any, dict[str, str]]:
    """The same small history in any warehouse: append, widen and rename, append, delete (a rewrite)."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, LongType, NestedField, StringType

    props = {"uri": f"sqlite:///{catalog_db}", "warehouse": warehouse, **io}
    catalog = SqlCatalog("objects", **props)
    catalog.create_namespace("db")
    tbl = catalog.create_table("db.t", Schema(NestedField(1, "id", LongType(), required=True),
                                              NestedField(2, "n", IntegerType()), NestedField(3, "s", StringType())))
    tbl.append(pa.Table.from_pylist([{"id": 1, "n": 10, "s": "a"}, {"id": 2, "n": 20, "s": "b"}],
                                    schema=tbl.schema().as_arrow()))
    with tbl.update_schema() as u:
        u.update_column("n", LongType())
        u.rename_column("s", "label")
    tbl.append(pa.Table.from_pylist([{"id": 3, "n": 2**40, "label": "c"}], schema=tbl.schema().as_arrow()))
    tbl.delete("id = 1")
    return catalog.load_table("db.t"), {"name": "objects", "type": "sql", **props}


def test_an_iceberg_table_in_an_s3_warehouse_reads_as_it_does_locally(s3_server: str, tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy", reason="PyIceberg's SqlCatalog needs pyiceberg[sql-sqlite]")
    io = _properties(s3_server)
    remote_tbl, remote_props = _pyiceberg_table(f"s3://{S3_BUCKET}/{uuid.uuid4().hex[:12]}/wh", tmp_path / "r.db", io)
    (tmp_path / "wh").mkdir()
    local_tbl, _ = _pyiceberg_table((tmp_path / "wh").as_uri(), tmp_path / "l.db", {})
    assert remote_tbl.metadata_location.startswith("s3://")
    by_file = fs.open_table(remote_tbl.metadata_location, properties=io)  # an s3:// metadata.json, detected
    by_catalog = fs.open_table(catalog=remote_props, name="db.t")
    local = fs.open_table(local_tbl.metadata_location)
    assert by_file.format == by_catalog.format == "iceberg"
    remote_snaps = [s.snapshot_id for s in by_file.history()]
    local_snaps = [s.snapshot_id for s in local.history()]
    assert len(remote_snaps) == len(local_snaps) == 3
    for rs, ls in zip(remote_snaps, local_snaps, strict=True):
        want = _rows(local.to_arrow(snapshot_id=ls))
        assert _rows(by_file.to_arrow(snapshot_id=rs)) == want == _rows(by_catalog.to_arrow(snapshot_id=rs))
        assert want == _rows(remote_tbl.scan(snapshot_id=rs).to_arrow())  # PyIceberg's own read agrees
    assert _rows(by_file.to_arrow()) == [{"id": 2, "n": 20, "label": "b"}, {"id": 3, "n": 2**40, "label": "c"}]
    assert by_file.scan(filter=("n", ">", 100)).count() == 1
    # the CLI, with the same properties as --source-option
    opts = [a for k, v in io.items() for a in ("--source-option", f"properties.{k}={v}")]
    result = CliRunner().invoke(app, ["read", remote_tbl.metadata_location, "--source-format", "iceberg", *opts,
                                      "-f", "json"])
    assert result.exit_code == 0, result.output
    assert sorted(line for line in result.output.splitlines() if line.startswith("{")) == \
        ['{"id": 2, "n": 20, "label": "b"}', '{"id": 3, "n": 1099511627776, "label": "c"}']


def test_an_iceberg_table_reads_with_its_credentials_only_in_properties(s3_server: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Metadata and data files both go through PyIceberg's FileIO with ``properties=``: no AWS_* variable set."""
    pytest.importorskip("sqlalchemy", reason="PyIceberg's SqlCatalog needs pyiceberg[sql-sqlite]")
    io = _properties(s3_server)
    tbl, _ = _pyiceberg_table(f"s3://{S3_BUCKET}/{uuid.uuid4().hex[:12]}/wh", tmp_path / "r.db", io)
    want = _rows(tbl.scan().to_arrow())
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(Exception):  # noqa: B017  (pyarrow's own S3 error: the data files need the properties)
        pafs.S3FileSystem().open_input_file(tbl.metadata_location.removeprefix("s3://")).read()
    assert _rows(fs.open_table(tbl.metadata_location, properties=io).to_arrow()) == want


def test_spark_reads_open_tables_on_s3_on_the_executors(s3_spark: Any, s3_server: str, lake: Path,  # noqa: F811
                                                        tmp_path: Path) -> None:
    """Object-store files never take Spark's native scan (pyspark has no Hadoop S3 connector): the plan says
    so per file, and the executors read them from the URI with the environment's credentials."""
    pytest.importorskip("sqlalchemy", reason="PyIceberg's SqlCatalog needs pyiceberg[sql-sqlite]")
    import fieldshift.spark as fss

    io = _properties(s3_server)
    tbl, props = _pyiceberg_table(f"s3://{S3_BUCKET}/{uuid.uuid4().hex[:12]}/wh", tmp_path / "r.db", io)
    plan = fss.plan_open_read(tbl.metadata_location, format="iceberg", properties=io)
    assert not plan.native and plan.other == 2 and "pyarrow (object-store location" in plan.explain(), plan.explain()
    want = _rows(fs.open_table(tbl.metadata_location, properties=io).to_arrow())
    df = fss.read(s3_spark, tbl.metadata_location, format="iceberg", properties=io)
    assert _rows(pa.Table.from_pylist([r.asDict() for r in df.collect()])) == want
    by_options = s3_spark.read.format("fieldshift").option("format", "iceberg").option("name", "db.t")
    for k, v in props.items():
        by_options = by_options.option(f"catalog.{k}", v)
    assert _rows(pa.Table.from_pylist([r.asDict() for r in by_options.load().collect()])) == want

    prefix = f"{S3_BUCKET}/{uuid.uuid4().hex[:12]}/lake"
    pafs.copy_files(str(tmp_path / "lake"), prefix, destination_filesystem=_store(s3_server))
    with fs.open_table(lake, format="ducklake", name="main.t") as local:
        want = _rows(local.to_arrow())
    df = fss.read(s3_spark, lake, format="ducklake", name="main.t", data_path=f"s3://{prefix}/")
    assert _rows(pa.Table.from_pylist([r.asDict() for r in df.collect()])) == want
