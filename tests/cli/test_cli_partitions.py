"""``fieldshift create --partition-by``, partition ALTER statements and ``schema show``'s spec history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import fieldshift as fs

CLI = [sys.executable, "-m", "fieldshift.cli"]
ENV = {**os.environ, "COLUMNS": "200"}


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    run = subprocess.run([*CLI, *args], cwd=cwd, env=ENV, text=True, capture_output=True, timeout=120)
    assert "Traceback" not in run.stderr, run.stderr
    return run


def test_partitioned_create_alter_show_and_pruned_read(tmp_path: Path) -> None:
    made = cli(tmp_path, "create", "t", "--schema", "id bigint, ts timestamp, region string",
               "--partition-by", "days(ts)", "--partition-by", "bucket(4, id)")
    assert made.returncode == 0 and "partitioned by day(ts) AS ts_day, bucket[4](id) AS id_bucket_4" in made.stdout
    (tmp_path / "rows.json").write_text("\n".join(json.dumps(
        {"id": i, "ts": f"2024-01-0{1 + i % 3}T0{i % 10}:00:00", "region": "eu"}) for i in range(30)))
    assert cli(tmp_path, "append", "t", "rows.json").returncode == 0
    replaced = cli(tmp_path, "alter", "t", "ALTER TABLE t REPLACE PARTITION FIELD days(ts) WITH hours(ts)")
    assert replaced.returncode == 0, replaced.stdout + replaced.stderr
    assert "partition spec 0 -> 1" in replaced.stdout and "replace partition field ts_day (day)" in replaced.stdout
    assert cli(tmp_path, "append", "t", "rows.json").returncode == 0
    shown = cli(tmp_path, "schema", "show", "t")
    assert "day(ts) AS ts_day, bucket[4](id) AS id_bucket_4" in shown.stdout
    assert "1 (current)" in shown.stdout and "hour(ts) AS ts_hour, bucket[4](id) AS id_bucket_4" in shown.stdout
    dropped = cli(tmp_path, "alter", "t", "DROP COLUMN ts")
    assert dropped.returncode == 1 and "partition field 'ts_hour'" in dropped.stderr
    bad = cli(tmp_path, "alter", "t", "ADD PARTITION FIELD hours(region)")
    assert bad.returncode == 1 and "hour is not defined for string" in bad.stderr
    read = cli(tmp_path, "read", "t", "--where", "ts = '2024-01-02 04:00:00'", "--format", "json")
    assert read.returncode == 0 and len(read.stdout.strip().splitlines()) == 2
    t = fs.Table.open(tmp_path / "t")
    assert [s.spec_id for s in t.specs()] == [0, 1] and {f.spec_id for f in t.scan().files()} == {0, 1}
    syntax = cli(tmp_path, "alter", "t", "ADD PARTITION FIELD bucket(id)")  # a partition statement's own error
    assert syntax.returncode == 2 and "whole number" in syntax.stderr, syntax.stderr
