"""The CLI on tables other formats wrote: ``read``, ``schema show``, ``schema log`` and ``explain`` with
``--source-format`` and the root ``--table``, ``--where``, ``--columns`` and ``--as-of`` (issues 31, 32),
on the small hand-written tables of the open-table tests."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

import fieldshift as fs
from fieldshift.cli import app
from tests.open_tables.test_ducklake_read import lake  # noqa: F401  (the hand-written DuckLake catalog fixture)

RUNNER = CliRunner()


def cli(*args: str) -> tuple[int, str]:
    result = RUNNER.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def json_rows(output: str) -> list[dict]:
    return sorted((json.loads(line) for line in output.splitlines() if line.startswith("{")), key=lambda r: r["id"])


def test_read_ducklake_with_table_where_columns_and_as_of(lake: Path) -> None:  # noqa: F811
    code, out = cli("--table", "main.t", "read", str(lake), "--source-format", "ducklake", "-f", "json")
    assert code == 0, out
    with fs.open_table(lake, name="main.t") as t:
        assert json_rows(out) == sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"])
    code, out = cli("--table", "main.t", "read", str(lake), "--source-format", "ducklake", "-f", "json",
                    "--where", "id >= 11", "--columns", "id,name")
    assert code == 0, out
    assert json_rows(out) == [{"id": 11, "name": "l"}, {"id": 12, "name": None}, {"id": 20, "name": "in"}]
    by_id = cli("--table", "main.t", "read", str(lake), "--source-format", "ducklake", "-f", "json", "--as-of", "2")
    by_time = cli("--table", "main.t", "read", str(lake), "--source-format", "ducklake", "-f", "json",
                  "--as-of", "2024-05-01T12:02:30")  # naive: UTC; snapshot 2 at 12:02
    assert by_id[0] == by_time[0] == 0, by_id[1] + by_time[1]
    assert json_rows(by_id[1]) == json_rows(by_time[1]) and [r["id"] for r in json_rows(by_id[1])] == [0, 1, 2, 3]
    assert set(json_rows(by_id[1])[0]) == {"id", "name", "old"}  # that snapshot's own schema
    code, out = cli("--table", "main.t", "read", str(lake), "--source-format", "ducklake", "--as-of",
                    "2000-01-01T00:00:00Z")
    assert code == 1 and "no snapshot at or before" in out
    code, out = cli("--table", "main.t", "read", str(lake), "--source-format", "ducklake", "--columns", "nope")
    assert code == 2 and "no top-level column 'nope'" in out
    code, out = cli("--table", "main.t", "read", str(lake), "--source-format", "ducklake", "--policy", "safe")
    assert code == 2 and "--policy applies to fieldshift tables" in out
    code, out = cli("read", str(lake), "--source-format", "nonesuch")
    assert code == 2 and "use one of" in out


def test_schema_show_log_and_explain_ducklake(lake: Path) -> None:  # noqa: F811
    code, out = cli("--table", "main.t", "schema", "show", str(lake), "--source-format", "ducklake")
    assert code == 0, out
    assert "score" in out and "old" not in out and "(current)" in out
    code, out = cli("--table", "main.t", "schema", "show", str(lake), "--source-format", "ducklake", "--as-of", "2")
    assert code == 0 and "old" in out and "score" not in out, out
    code, out = cli("--table", "main.t", "schema", "show", str(lake), "--source-format", "ducklake",
                    "--format", "json")
    assert code == 0, out
    assert [f["name"] for f in json.loads(out)["fields"]] == ["id", "name", "score"]
    code, out = cli("--table", "main.t", "schema", "log", str(lake), "--source-format", "ducklake")
    assert code == 0, out
    assert "Snapshots" in out and "altered_table" in out and "2024-05-01 12:03:00" in out
    code, out = cli("--table", "main.t", "explain", str(lake), "--source-format", "ducklake", "--where", "id >= 11")
    assert code == 0, out
    assert "1 kept, 1 pruned" in out and "filter: (id >= 11)" in out and "a.parquet" in out
    assert "inlined rows: 1" in out
    code, out = cli("--table", "main.t", "explain", str(lake), "--source-format", "ducklake", "--as-of", "2")
    assert code == 0 and "@ snapshot 2 " in out and "1 kept, 0 pruned" in out, out


def test_a_foreign_table_without_source_format_says_which_flag(lake: Path, tmp_path: Path) -> None:  # noqa: F811
    code, out = cli("read", str(lake))
    assert code == 2 and "is a ducklake table" in out and "--source-format ducklake" in out
    code, out = cli("explain", str(tmp_path / "t"), "--where", "v > 1")  # not a table at all
    assert code == 2 and "--source-format" in out


def test_iceberg_and_delta_through_the_cli(tmp_path: Path) -> None:
    pytest.importorskip("pyiceberg", reason="Iceberg reads need pyiceberg (the dev and iceberg extras)")
    pytest.importorskip("fastavro", reason="the hand-written tables' manifests need fastavro (the dev extra)")
    from tests.open_tables.iceberg_tables import IcebergBuilder
    from tests.open_tables.test_delta_read import add, commit, data, metadata, protocol, schema_string

    schema = {"type": "struct", "fields": [{"id": 1, "name": "id", "type": "long", "required": True},
                                           {"id": 2, "name": "n", "type": "int", "required": False}]}
    b = IcebergBuilder(tmp_path / "ice", schema)
    s1 = b.commit([b.data([{"id": 1, "n": 10}, {"id": 2, "n": 20}])])
    b.commit([b.data([{"id": 3, "n": 30}])])
    code, out = cli("read", str(tmp_path / "ice"), "--source-format", "iceberg", "-f", "json", "--where", "n > 15")
    assert code == 0, out
    assert json_rows(out) == [{"id": 2, "n": 20}, {"id": 3, "n": 30}]
    code, out = cli("read", str(tmp_path / "ice"), "--source-format", "iceberg", "-f", "json", "--as-of", str(s1))
    assert code == 0 and [r["id"] for r in json_rows(out)] == [1, 2], out
    code, out = cli("schema", "log", str(tmp_path / "ice"), "--source-format", "iceberg")
    assert code == 0 and str(s1) in out, out

    root = tmp_path / "delta"
    (root / "_delta_log").mkdir(parents=True)
    name = data(root, "f.parquet", pa.table({"id": pa.array([1, 2], pa.int64())}))
    commit(root, 0, protocol(), metadata(schema_string(("id", "long"))), add(name, 2))
    code, out = cli("read", str(root), "--source-format", "delta", "-f", "json")
    assert code == 0 and json_rows(out) == [{"id": 1}, {"id": 2}], out
    code, out = cli("read", str(root))
    assert code == 2 and "--source-format delta" in out


def test_the_cli_names_every_format_open_table_reads() -> None:
    from fieldshift.cli import open_cmds
    from fieldshift.table.open_table import FORMATS

    assert open_cmds.FORMATS == FORMATS  # kept apart so the CLI starts without the table layer


def _catalog_table(tmp_path: Path) -> dict[str, str]:
    """A PyIceberg SQL catalog holding db.t (two appends, a rename between them); its properties."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    (tmp_path / "wh").mkdir()
    props = {"name": "cli", "type": "sql", "uri": f"sqlite:///{tmp_path / 'cat.db'}",
             "warehouse": (tmp_path / "wh").as_uri()}
    catalog = SqlCatalog("cli", **{k: v for k, v in props.items() if k not in ("name", "type")})
    catalog.create_namespace("db")
    tbl = catalog.create_table("db.t", Schema(NestedField(1, "id", LongType(), required=True),
                                              NestedField(2, "s", StringType())))
    tbl.append(pa.Table.from_pylist([{"id": 1, "s": "a"}], schema=tbl.schema().as_arrow()))
    with tbl.update_schema() as u:
        u.rename_column("s", "label")
    tbl.append(pa.Table.from_pylist([{"id": 2, "label": "b"}], schema=tbl.schema().as_arrow()))
    return props


def test_an_iceberg_table_in_a_pyiceberg_catalog_through_source_options(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy", reason="PyIceberg's SqlCatalog needs pyiceberg[sql-sqlite]")
    props = _catalog_table(tmp_path)
    opts = [a for k, v in props.items() for a in ("--source-option", f"catalog.{k}={v}")]
    code, out = cli("read", "db.t", "--source-format", "iceberg", *opts, "-f", "json")
    assert code == 0, out
    with fs.open_table(catalog=props, name="db.t") as t:
        assert json_rows(out) == sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == \
            [{"id": 1, "label": "a"}, {"id": 2, "label": "b"}]
        first = t.history()[0].snapshot_id
    code, out = cli("--table", "db.t", "read", "db.t", "--source-format", "iceberg", *opts, "-f", "json",
                    "--where", "id > 1")  # --table saying the same name is fine
    assert code == 0 and json_rows(out) == [{"id": 2, "label": "b"}], out
    code, out = cli("--table", "db.other", "read", "db.t", "--source-format", "iceberg", *opts)
    assert code == 2 and "give one" in out
    code, out = cli("schema", "show", "db.t", "--source-format", "iceberg", *opts, "--as-of", str(first))
    assert code == 0 and "s: string (id 2)" in out and "label" not in out, out  # that snapshot's schema
    code, out = cli("schema", "log", "db.t", "--source-format", "iceberg", *opts)
    assert code == 0 and str(first) in out, out
    code, out = cli("explain", "db.t", "--source-format", "iceberg", *opts, "--where", "id > 1")
    assert code == 0 and "snapshot" in out, out
    code, out = cli("read", "db.nope", "--source-format", "iceberg", *opts)
    assert code != 0 and "db.nope" in out


def test_source_options_reach_open_table_and_unknown_keys_are_named(lake: Path, tmp_path: Path) -> None:  # noqa: F811
    # data_path: the catalog's files moved elsewhere
    moved = tmp_path / "moved"
    (tmp_path / "lake").rename(moved)
    code, out = cli("--table", "main.t", "read", str(lake), "--source-format", "ducklake", "-f", "json")
    assert code != 0  # the catalog's own data path is gone
    code, out = cli("--table", "main.t", "read", str(lake), "--source-format", "ducklake", "-f", "json",
                    "--source-option", f"data_path={moved}/")
    assert code == 0, out
    assert [r["id"] for r in json_rows(out)] == [0, 2, 3, 11, 12, 20]
    for bad, says in (("catalg.type=sql", "unknown --source-option 'catalg.type'"),
                      ("properties.=x", "names no key after 'properties'"), ("data_path", "write KEY=VALUE"),
                      ("properties.s3.region=x", "for a DuckLake table")):
        code, out = cli("--table", "main.t", "read", str(lake), "--source-format", "ducklake",
                        "--source-option", bad)
        assert code != 0 and says in " ".join(out.split()), (bad, out)
    code, out = cli("read", str(lake), "--source-option", "data_path=x")
    assert code == 2 and "--source-option is for --source-format tables" in out


def test_properties_go_to_pyiceberg_through_the_cli(tmp_path: Path) -> None:
    pytest.importorskip("fastavro", reason="the hand-written tables' manifests need fastavro (the dev extra)")
    from tests.open_tables.iceberg_tables import IcebergBuilder

    b = IcebergBuilder(tmp_path / "ice", {"type": "struct", "fields": [
        {"id": 1, "name": "id", "type": "long", "required": True}]})
    b.commit([b.data([{"id": 1}])])
    code, out = cli("read", str(b.metadata_path), "--source-format", "iceberg", "-f", "json",
                    "--source-option", "properties.py-io-impl=nonesuch.FileIO")
    assert code != 0 and "nonesuch.FileIO" in out  # PyIceberg was given the FileIO property
    code, out = cli("read", str(b.metadata_path), "--source-format", "iceberg", "-f", "json",
                    "--source-option", "properties.py-io-impl=pyiceberg.io.pyarrow.PyArrowFileIO")
    assert code == 0 and json_rows(out) == [{"id": 1}], out


def test_open_options_from_flat_pairs() -> None:
    from fieldshift.table.open_options import open_options, parse_pairs

    pairs = parse_pairs(["catalog.type=sql", "catalog.uri=sqlite:///a=b.db", "properties.s3.endpoint=http://h:1",
                         "storage_options.AWS_REGION=eu", "data_path=/d"])
    assert open_options(pairs) == {"catalog": {"type": "sql", "uri": "sqlite:///a=b.db"},
                                   "properties": {"s3.endpoint": "http://h:1"},
                                   "storage_options": {"AWS_REGION": "eu"}, "data_path": "/d"}
    with pytest.raises(fs.InvalidOptionError, match="given twice"):
        open_options([("catalog.type", "sql"), ("catalog.type", "rest")])
    with pytest.raises(fs.InvalidOptionError, match="unknown option 'endpoint'"):
        open_options([("endpoint", "x")])


def test_a_paimon_tag_through_as_of(tmp_path: Path) -> None:
    pytest.importorskip("fastavro", reason="Paimon manifests need fastavro (the dev and paimon extras)")
    from tests.open_tables.paimon_tables import DataFile, PaimonBuilder

    b = PaimonBuilder(tmp_path, "db.t")
    b.schema([{"id": 0, "name": "id", "type": "INT NOT NULL"}])
    s = pa.schema([("id", pa.int32())])
    b.commit([DataFile(pa.Table.from_pylist([{"id": 1}], s))])
    b.commit([DataFile(pa.Table.from_pylist([{"id": 2}], s))])
    (b.root / "tag").mkdir()
    (b.root / "tag" / "tag-first").write_text((b.root / "snapshot" / "snapshot-1").read_text())
    code, out = cli("--table", "db.t", "read", str(tmp_path), "--source-format", "paimon", "--as-of", "first",
                    "-f", "json")
    assert code == 0, out
    assert json_rows(out) == [{"id": 1}]
