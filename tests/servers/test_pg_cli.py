"""The `fieldshift` command with ``--catalog postgresql://...``: create, append, alter, read, history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import fieldshift as fs

CLI = [sys.executable, "-m", "fieldshift.cli"]


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})


def test_the_cli_on_a_postgresql_catalog(pg_uri: str, tmp_path: Path) -> None:
    (tmp_path / "rows.json").write_text('{"id": 1, "name": "a"}\n{"id": 2, "name": "b"}\n')
    created = run(tmp_path, "--catalog", pg_uri, "--table", "people", "create", "t", "--schema",
                  "id bigint NOT NULL, name string")
    assert created.returncode == 0, created.stderr
    assert run(tmp_path, "--catalog", pg_uri, "--table", "people", "append", "t", "rows.json").returncode == 0
    altered = run(tmp_path, "alter", "t", "ALTER TABLE people ADD COLUMNS(score double)",
                  env={"FIELDSHIFT_CATALOG": pg_uri})  # the catalog from the environment: the table at t
    assert altered.returncode == 0, altered.stderr
    shown = run(tmp_path, "schema", "show", "t")  # by the directory marker
    assert shown.returncode == 0 and "score" in shown.stdout, shown.stderr
    read = run(tmp_path, "--catalog", pg_uri, "--table", "people", "read", "--format", "json")  # no LOCATION
    assert read.returncode == 0, read.stderr
    assert [json.loads(line) for line in read.stdout.splitlines()] == [
        {"id": 1, "name": "a", "score": None}, {"id": 2, "name": "b", "score": None}]
    log = run(tmp_path, "schema", "log", "t")
    assert log.returncode == 0 and "score" in log.stdout, log.stderr
    table = fs.Table.open(tmp_path / "t", catalog=pg_uri, name="people")
    assert [s.operation for s in table.history()] == ["create", "append", "schema"]
    missing = run(tmp_path, "--catalog", pg_uri, "read", "nowhere")
    assert missing.returncode == 1 and "no table of catalog" in missing.stderr and "nowhere" in missing.stderr
    missing = run(tmp_path, "--catalog", pg_uri, "--table", "nobody", "read")
    assert missing.returncode == 1 and "no table named 'nobody'" in missing.stderr
