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
