"""The command line as a new user meets it: plain help, --version, CLI-worded errors, counts, progress."""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

import fieldshift as fs
from fieldshift.cli import app

CLI = [sys.executable, "-m", "fieldshift.cli"]
ENV = {**os.environ, "COLUMNS": "200"}
ENV.pop("NO_COLOR", None)
TYPE_PLACEHOLDER = re.compile(r"<(?:bool|str|int|float|path|list\[[^\]]*\]|int range|float range)>")
BRACED_ARGUMENT = re.compile(r"\{[a-z_]+\}")


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*CLI, *args], cwd=cwd, env=env or ENV, text=True, capture_output=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def invoke(cwd: Path, *args: str) -> tuple[int, str, str]:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    finally:
        os.chdir(old)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _all_commands(command: object, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name, sub in getattr(command, "commands", {}).items():
        found += _all_commands(sub, (*path, name))
    return found


def test_every_help_page_is_free_of_type_placeholders_and_offers_quiet() -> None:
    commands = _all_commands(typer.main.get_command(app))
    assert ("vacuum",) in commands and ("warmup",) in commands and ("schema", "show") in commands
    for command in commands:
        result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, command
        assert not TYPE_PLACEHOLDER.search(result.output), (command, result.output)
        assert not BRACED_ARGUMENT.search(result.output), (command, result.output)
        assert "--quiet" in result.output, command
    read_help = CliRunner().invoke(app, ["read", "--help"], env={"COLUMNS": "200"}).output
    assert "Usage: root read [OPTIONS] LOCATION" in read_help or "read [OPTIONS] LOCATION" in read_help
    assert "[table|csv|json|parquet]" in read_help and "INTEGER" in read_help


def test_version(tmp_path: Path) -> None:
    done = run(tmp_path, "--version")
    assert done.returncode == 0 and done.stdout.strip() == f"fieldshift {fs.__version__}"


def test_errors_speak_cli(tmp_path: Path) -> None:
    assert invoke(tmp_path, "create", "t", "--schema", "a bigint, b string")[0] == 0
    code, _, err = invoke(tmp_path, "create", "t", "--schema", "a bigint")
    assert code == 1 and "already exists" in err and "fieldshift schema show" in err and "Table.open" not in err
    (tmp_path / "bad.json").write_text('{"a": "three", "b": "x"}\n')
    code, _, err = invoke(tmp_path, "append", "t", "bad.json", "--no-evolve")
    assert code == 1 and "on_incompatible" not in err and "evolve=" not in err, err
    code, _, err = invoke(tmp_path, "read", "nowhere")
    assert code == 1 and "fieldshift create" in err and "Table.create" not in err


def test_misspelt_keyword_is_pointed_at(tmp_path: Path) -> None:
    assert invoke(tmp_path, "create", "t", "--schema", "a bigint")[0] == 0
    code, _, err = invoke(tmp_path, "alter", "t", "ADD COLUM x int")
    lines = err.splitlines()
    statement = next(i for i, line in enumerate(lines) if "ADD COLUM x int" in line)
    assert code == 2 and "COLUMN" in err
    assert lines[statement + 1].index("^") == lines[statement].index("COLUM")
    assert lines[statement + 1].strip() == "^" * len("COLUM")


def test_where_literal_of_another_kind_reads_like_the_python_api(tmp_path: Path) -> None:
    table = fs.Table.create(tmp_path / "t", pa.schema([("a", pa.int64())]))
    table.append(pa.table({"a": pa.array([1, 2, 3, -5], pa.int64())}))
    code, out, err = invoke(tmp_path, "read", "t", "--where", "a > 1.5", "--format", "json")
    assert code == 0, err
    python = table.scan(filter=[("a", ">", 1.5)]).to_arrow().column("a").to_pylist()
    assert [int(x) for x in re.findall(r'"a": ?(-?\d+)', out)] == python == [2, 3]


def test_alter_counts_agree_with_its_table(tmp_path: Path) -> None:
    assert invoke(tmp_path, "create", "t", "--schema", "a bigint, b string")[0] == 0
    code, out, _ = invoke(tmp_path, "alter", "t", "ALTER COLUMN a COMMENT 'x'; RENAME b TO b2; RENAME b2 TO b3")
    assert code == 0 and "2 change(s) from 3 clause(s)" in out, out
    body = [line for line in out.splitlines() if line.startswith("│")]
    assert len(body) == 2, out


def test_vacuum_removes_orphans_only(tmp_path: Path) -> None:
    table = fs.Table.create(tmp_path / "t", pa.schema([("a", pa.int64())]))
    table.append(pa.table({"a": pa.array([1], pa.int64())}))
    live = next((tmp_path / "t" / "data").glob("*.parquet"))
    orphan = live.with_name(f"{uuid.uuid4().hex}.parquet")
    shutil.copy(live, orphan)
    os.utime(orphan, (time.time() - 7200, time.time() - 7200))
    code, out, _ = invoke(tmp_path, "vacuum", "t")
    assert code == 0 and "removed 1 unreferenced file(s)" in out and orphan.name in out
    assert live.exists() and not orphan.exists()
    assert fs.Table.open(tmp_path / "t").scan().to_arrow().num_rows == 1


def _terminal_output(cwd: Path, *args: str) -> str:
    """stdout and stderr of the command run on a pseudo-terminal (where progress bars appear)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([*CLI, *args], cwd=cwd, env=ENV, stdout=slave, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait(timeout=60)
    os.close(master)
    return out.decode(errors="replace")


@pytest.mark.parametrize("quiet", [False, True])
def test_progress_on_a_terminal_unless_quiet(tmp_path: Path, quiet: bool) -> None:
    fs.Table.create(tmp_path / "t", pa.schema([("a", pa.int64()), ("s", pa.string())]))
    n = 3_000_000
    pq.write_table(pa.table({"a": pa.array(range(n), pa.int64()), "s": pa.array([str(i % 97) for i in range(n)])}),
                   tmp_path / "big.parquet", row_group_size=100_000)
    out = _terminal_output(tmp_path, "append", "t", "big.parquet", *(["--quiet"] if quiet else []))
    assert "rows written" in out and "3000000" in out, out
    assert ("reading big.parquet" in out) is not quiet, out
