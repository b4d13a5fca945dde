"""The ``fieldshift`` command line, run as a subprocess on real tables (read-only checks run in parallel)."""

from __future__ import annotations

import itertools
import json
import os
import pty
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import fieldshift as fs
from fieldshift.cli import app
from fieldshift.ddl.alter import apply_alter, parse_columns

CLI = [sys.executable, "-m", "fieldshift.cli"]
ENV = {**os.environ, "COLUMNS": "200"}
ENV.pop("NO_COLOR", None)
COLOUR = re.compile(r"\x1b\[[0-9;]*3[0-7]m")


@dataclass
class Run:
    code: int
    out: str
    err: str

    def __str__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


def start(cwd: Path, args: tuple[str, ...]) -> subprocess.Popen[str]:
    return subprocess.Popen([*CLI, *args], cwd=cwd, env=ENV, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def finish(p: subprocess.Popen[str]) -> Run:
    out, err = p.communicate(timeout=60)
    run = Run(p.returncode, out, err)
    assert "Traceback" not in err, run
    assert "\x1b" not in out + err, "colour or control codes in piped output"
    return run


def cli(cwd: Path, *args: str) -> Run:
    return finish(start(cwd, args))


def cli_all(cwd: Path, *commands: tuple[str, ...]) -> list[Run]:
    """Run independent commands at once: each pays interpreter start-up, so overlap them."""
    return [finish(p) for p in [start(cwd, c) for c in commands]]


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def caret_under(stderr: str, word: str) -> bool:
    """The caret line sits right under ``word`` in the echoed statement line above it."""
    lines = stderr.splitlines()
    for above, below in itertools.pairwise(lines):
        if below.strip() and set(below.strip()) == {"^"} and word in above:
            return below.index("^") == above.index(word)
    return False


def invoke(cwd: Path, *args: str) -> Run:
    """In-process (no start-up cost) for variations; the subprocess runs above prove the real entry point."""
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    finally:
        os.chdir(old)
    run = Run(result.exit_code, result.stdout, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit), run
    return run


# -- create, append, alter, read: Hudi's trips example end to end ------------------------------------
def test_create_append_alter_and_read(tmp_path: Path) -> None:
    (tmp_path / "v1.csv").write_text("rowId,partitionId,preComb,name,versionId,intToLong\n"
                                     "row_1,part_0,0,bob,v_0,0\nrow_2,part_0,0,john,v_0,0\nrow_3,part_0,0,tom,v_0,0\n")
    (tmp_path / "v2.json").write_text("\n".join(json.dumps(r) for r in [
        {"rowId": "row_2", "partitionId": "part_0", "preComb": 5, "name": "john", "versionId": "v_3",
         "intToLong": 3, "newField": "newField_1"},
        {"rowId": "row_5", "partitionId": "part_0", "preComb": 5, "name": "maroon", "versionId": "v_2",
         "intToLong": 2, "newField": "newField_1"},
        {"rowId": "row_9", "partitionId": "part_0", "preComb": 5, "name": "michael", "versionId": "v_2",
         "intToLong": 2, "newField": "newField_1"}]) + "\n")
    created = cli(tmp_path, "create", "trips", "--schema", "rowId string NOT NULL, partitionId string, "
                  "preComb bigint, name string, versionId string, intToLong int")
    assert created.code == 0 and "intToLong: int (id 6)" in created.out, created
    appended = cli(tmp_path, "append", "trips", "v1.csv")
    assert appended.code == 0 and re.search(r"rows written\s*│\s*3", appended.out), appended
    # CSV integers were fitted to the table's int, not written as long (which would widen the column)
    assert fs.Table.open(tmp_path / "trips").schema.find("intToLong").type == pa.int32()
    altered = cli(tmp_path, "alter", "trips", "ALTER TABLE hudi_trips_cow ADD COLUMNS(newField string); "
                  "ALTER TABLE hudi_trips_cow ALTER COLUMN intToLong TYPE bigint")
    assert altered.code == 0 and "schema 0 -> 1" in altered.out, altered
    assert "ADD COLUMN newField string" in altered.out and "int -> long" in altered.out
    assert cli(tmp_path, "append", "trips", "v2.json").code == 0

    everything, filtered = cli_all(
        tmp_path,
        ("read", "trips", "--format", "json"),
        ("read", "trips", "--where", "intToLong >= 2", "--where", "name != 'john'", "--columns",
         "rowId,intToLong", "--format", "csv"),
    )
    rows = {r["rowId"]: r for r in json_lines(everything.out)}
    assert len(json_lines(everything.out)) == 6 and rows["row_1"]["newField"] is None
    assert rows["row_5"] == {"rowId": "row_5", "partitionId": "part_0", "preComb": 5, "name": "maroon",
                             "versionId": "v_2", "intToLong": 2, "newField": "newField_1"}
    assert filtered.out.splitlines() == ['"rowId","intToLong"', '"row_5",2', '"row_9",2'], filtered

    old = invoke(tmp_path, "read", "trips", "--as-of", "1", "--format", "json")
    assert [sorted(r) for r in json_lines(old.out)] == [sorted(["rowId", "partitionId", "preComb", "name",
                                                                 "versionId", "intToLong"])] * 3
    limited = invoke(tmp_path, "read", "trips", "--limit", "2")
    assert "first 2 rows shown" in limited.out and "row_1" in limited.out, limited
    listed = invoke(tmp_path, "read", "trips", "--where", "rowId IN ('row_1', 'row_9')", "--format", "json")
    assert sorted(r["rowId"] for r in json_lines(listed.out)) == ["row_1", "row_9"]
    parquet = invoke(tmp_path, "read", "trips", "--format", "parquet", "--output", "out.parquet")
    assert parquet.code == 0 and parquet.out == "wrote 6 row(s) to out.parquet (parquet)\n"  # a confirmation
    written = pq.read_table(tmp_path / "out.parquet")
    assert written.num_rows == 6 and written.schema.field("newField").metadata[b"PARQUET:field_id"] == b"7"


# -- schema show / log / diff --------------------------------------------------------------------------
@pytest.fixture
def evolved(tmp_path: Path) -> Path:
    table = fs.Table.create(tmp_path / "t", parse_columns(
        "id bigint NOT NULL, name string, b string, score float, s struct<x: int, y: string>"))
    row = {"id": 1, "name": "ada", "b": "old", "score": 1.5, "s": {"x": 1, "y": "q"}}
    table.append(pa.Table.from_pylist([row], schema=table.schema.to_arrow()))
    apply_alter(table.update_schema(), "RENAME name TO full_name; DROP COLUMN b; "
                "ALTER score SET TYPE double; ADD COLUMN b string DEFAULT 'new' FIRST; "
                "ALTER COLUMN s.y FIRST").commit()
    return tmp_path


def test_schema_show_log_and_diff(evolved: Path) -> None:
    show, log, diff = cli_all(evolved, ("schema", "show", "t"), ("schema", "log", "t"),
                              ("schema", "diff", "t", "0"))
    assert show.code == 0 and "schema 1 (current)" in show.out, show
    assert "b: string (id 8) initial default 'new'" in show.out and "id: long not null (id 1)" in show.out
    assert "├── y: string (id 7)" in show.out  # nested, moved first
    assert "Schema versions" in log.out and "rename name to full_name" in log.out and "Snapshots" in log.out
    assert re.search(r"│ 1 \s*│[^\n]*│ append", log.out), log
    for kind in ("added", "dropped", "renamed", "retyped", "moved"):
        assert kind in diff.out, diff

    show_json = invoke(evolved, "schema", "show", "t", "--schema-id", "0", "--format", "json")
    assert [f["name"] for f in json.loads(show_json.out)["fields"]] == ["id", "name", "b", "score", "s"]
    kinds = {(c["kind"], c["field_id"]) for c in json_lines(invoke(evolved, "schema", "diff", "t", "0", "1",
                                                                   "--json").out)}
    assert kinds == {("added", 8), ("dropped", 3), ("renamed", 2), ("retyped", 4), ("moved", 7)}
    missing = invoke(evolved, "schema", "show", "t", "--schema-id", "9")
    assert missing.code == 2 and "no schema 9" in missing.err
    assert "same fields" in invoke(evolved, "schema", "diff", "t", "1", "1").out


# -- explain -------------------------------------------------------------------------------------------
def test_explain_per_written_schema_version(tmp_path: Path) -> None:
    table = fs.Table.create(tmp_path / "T", parse_columns("a string, b string, c string"))
    table.append({"a": ["a1"], "b": ["b1"], "c": ["c1"]})
    apply_alter(table.update_schema(), "ALTER TABLE T DROP COLUMN c").commit()
    apply_alter(table.update_schema(), "ALTER TABLE T ADD COLUMN c STRING").commit()
    table.append({"a": ["a2"], "b": ["b2"], "c": ["c2"]})
    narrowed = fs.Table.create(tmp_path / "n", parse_columns("x int"))
    narrowed.append({"x": pa.array([1], pa.int32())})
    apply_alter(narrowed.update_schema(), "ALTER x SET TYPE BIGINT").commit()
    narrowed.append({"x": [2]})

    now, narrowing = cli_all(tmp_path, ("explain", "T"), ("explain", "n", "--schema-id", "0"))
    assert now.code == 0 and "2 live data file(s), read as schema 2" in now.out, now
    assert "files written with schema 0: 1 file(s), 1 row(s)" in now.out
    assert re.search(r"│ c\s*│ null \(not in the file\)", now.out)
    assert re.search(r"│ c\s*│ in the file \(id 3\) but not in schema 2: not read", now.out)
    assert "files written with schema 2: 1 file(s), 1 row(s): identity" in now.out
    assert narrowing.code == 1 and "cannot be read as schema 0" in narrowing.out, narrowing

    then = invoke(tmp_path, "explain", "T", "--as-of", "1")
    assert then.code == 0 and "schema 2" not in then.out and "identity" in then.out
    assert "widen int -> long" in invoke(tmp_path, "explain", "n").out
    rows = json_lines(invoke(tmp_path, "read", "T", "--format", "json").out)
    assert sorted(rows, key=str) == [{"a": "a1", "b": "b1", "c": None}, {"a": "a2", "b": "b2", "c": "c2"}]


# -- append with on-write evolution, quarantine --------------------------------------------------------
def test_append_evolves_fails_or_quarantines(tmp_path: Path) -> None:
    fs.Table.create(tmp_path / "t", parse_columns("key string, col1 int"))
    (tmp_path / "long.csv").write_text("key,col1\nr1,3000000000\n")
    (tmp_path / "str.csv").write_text("key,col1\nr3,abc\n")
    (tmp_path / "extra.json").write_text('{"key": "r4", "col1": 1, "extra": 2}\n')
    widened = cli(tmp_path, "append", "t", "long.csv")
    assert widened.code == 0 and re.search(r"schema evolved\s*│ yes", widened.out), widened
    failed = cli(tmp_path, "append", "t", "str.csv")
    assert failed.code == 1 and failed.err.startswith("error:") and "--quarantine" in failed.err, failed
    quarantined = cli(tmp_path, "append", "t", "str.csv", "--quarantine")
    assert quarantined.code == 0 and "1 row(s) quarantined" in quarantined.out, quarantined
    (as_json,) = cli_all(tmp_path, ("quarantine", "t", "--format", "json"))
    (bad,) = json_lines(as_json.out)
    assert bad["col1"] == "abc" and "cannot cast 'abc'" in bad["_fieldshift_reason"]

    frozen = invoke(tmp_path, "append", "t", "extra.json", "--no-evolve")
    assert frozen.code == 1 and "'extra' is not in the table" in frozen.err, frozen
    as_table = invoke(tmp_path, "quarantine", "t")
    assert "_fieldshift_reason" in as_table.out and "abc" in as_table.out
    rows = json_lines(invoke(tmp_path, "read", "t", "--format", "json").out)
    assert rows == [{"key": "r1", "col1": 3000000000}]


# -- errors: exit codes, carets, no tracebacks -----------------------------------------------------------
def test_errors_have_exit_codes_and_point_at_the_problem(evolved: Path) -> None:
    syntax, unknown, where, missing, bad_format = cli_all(
        evolved,
        ("alter", "t", "ALTER TABLE t ADD COLUMNS(x foo)"),
        ("alter", "t", "ALTER TABLE t\n  DROP COLUMN nope"),
        ("read", "t", "--where", "id >> 3"),
        ("read", "missing"),
        ("read", "t", "--format", "xml"),
    )
    assert syntax.code == 2 and caret_under(syntax.err, "foo") and "expected a type" in syntax.err, syntax
    assert unknown.code == 1 and "no field at path 'nope'" in unknown.err and caret_under(unknown.err, "nope")
    assert where.code == 2 and caret_under(where.err, "> 3") and "expected a value" in where.err, where
    assert missing.code == 1 and "fieldshift create" in missing.err
    assert bad_format.code == 2 and "xml" in bad_format.err

    (evolved / "data.txt").write_text("x")
    where_value = invoke(evolved, "read", "t", "--where", "id > 'abc'")
    assert where_value.code == 2 and caret_under(where_value.err, "'abc'") and "long value" in where_value.err
    columns = invoke(evolved, "read", "t", "--columns", "nope")
    assert columns.code == 2 and "no top-level column 'nope'" in columns.err
    assert invoke(evolved, "alter", "t").code == 2
    assert invoke(evolved, "create", "t2", "--schema", "{not json").code == 2
    assert invoke(evolved, "append", "t", "data.txt").code == 2
    narrow = invoke(evolved, "alter", "t", "ALTER score SET TYPE float")
    assert narrow.code == 1 and "cannot change 'score' from double to float" in narrow.err
    assert [s.schema_id for s in fs.Table.open(evolved / "t").schemas()] == [0, 1]  # nothing committed


def test_alter_dry_run_and_policy(evolved: Path) -> None:
    dry = invoke(evolved, "alter", "t", "ADD COLUMN z int", "--dry-run")
    assert dry.code == 0 and "dry run: nothing was committed" in dry.out
    hudi = invoke(evolved, "alter", "t", "ALTER COLUMN s.x TYPE string", "--policy", "hudi", "--show-schema")
    assert hudi.code == 0 and "x: string (id 6)" in hudi.out, hudi
    assert [s.schema_id for s in fs.Table.open(evolved / "t").schemas()] == [0, 1, 2]
    assert invoke(evolved, "alter", "t", "ADD COLUMN q int", "--policy", "nope").code == 2


def test_create_from_iceberg_json_file_with_identifier(tmp_path: Path) -> None:
    (tmp_path / "schema.json").write_text(parse_columns("id bigint NOT NULL, v double").to_json())
    created = invoke(tmp_path, "create", "t", "--schema", "schema.json", "--identifier", "id")
    assert created.code == 0 and "id: long not null (id 1)" in created.out, created
    assert fs.Table.open(tmp_path / "t").schema.identifier_field_ids == (1,)
    again = invoke(tmp_path, "create", "t", "--schema", "x int")
    assert again.code == 1 and "already exists" in again.err


# -- terminal behaviour ----------------------------------------------------------------------------------
def _on_a_terminal(cwd: Path, args: tuple[str, ...], env: dict[str, str]) -> bytes:
    master, slave = pty.openpty()
    p = subprocess.Popen([*CLI, *args], cwd=cwd, env=env, stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    p.wait(timeout=60)
    os.close(master)
    return out


def test_colour_only_on_a_terminal_and_never_with_no_color(evolved: Path) -> None:
    coloured = _on_a_terminal(evolved, ("schema", "show", "t"), ENV).decode()
    plain = _on_a_terminal(evolved, ("schema", "show", "t"), {**ENV, "NO_COLOR": "1"}).decode()
    assert COLOUR.search(coloured) and "full_name" in coloured
    assert not COLOUR.search(plain) and "full_name" in plain


@pytest.mark.parametrize("command", [
    [], ["schema"], ["schema", "show"], ["schema", "log"], ["schema", "diff"], ["alter"], ["explain"],
    ["read"], ["append"], ["quarantine"], ["create"], ["demo"],
])
def test_help_everywhere(command: list[str]) -> None:
    result = CliRunner().invoke(app, [*command, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


def test_quarantine_table_output_keeps_every_source_schema(tmp_path: Path) -> None:
    """One terminal table per source schema, all in the one --output file (each used to overwrite the last)."""
    table = fs.Table.create(tmp_path / "t", parse_columns("key string, col1 int"))
    table.append(pa.table({"key": ["r1"], "col1": ["abc"]}), on_incompatible="quarantine")
    table.append(pa.table({"key": ["r2"], "col1": pa.array([[1, 2]], pa.list_(pa.int64()))}),
                 on_incompatible="quarantine")
    assert len(table.quarantine(grouped=True)) == 2
    run = invoke(tmp_path, "quarantine", "t", "-o", "q.txt")
    assert run.code == 0 and "wrote 2 row(s) to q.txt" in run.out, run
    text = (tmp_path / "q.txt").read_text()
    assert "source schema 1 of 2" in text and "source schema 2 of 2" in text
    assert "abc" in text and "r2" in text
