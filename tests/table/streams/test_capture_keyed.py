"""Capture into keyed tables: ``operation="upsert"`` (the latest row per key wins, later files over
earlier ones) and insert-only appends, across schema drift and a killed capture's restart, against a
plain-Python model keyed by id."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from typer.testing import CliRunner

import fieldshift as fs
from fieldshift.cli import app
from fieldshift.table.catalog.stream_log import captured_sources


def _land(folder: Path, name: str, records: list[dict], at: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}"
    tmp.write_text("".join(json.dumps(r) + "\n" for r in records))
    os.utime(tmp, ns=(at * 10**9, at * 10**9))  # arrival order
    os.replace(tmp, folder / name)


def _records(i: int) -> list[dict]:
    """File ``i``: keys overlapping earlier files; a ``note`` column from file 5 on, ``v`` a double from 9 on."""
    out = []
    for j in range(12):
        r: dict[str, Any] = {"id": (i * 7 + j * 3) % 40, "v": i * 100 + j + (0.5 if i >= 9 else 0)}
        if i >= 5 and j % 2:
            r["note"] = f"f{i}r{j}"
        out.append(r)
    return out


def _model(files: int) -> dict[int, dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = {}
    for i in range(files):
        for r in _records(i):  # a later row replaces an earlier one of its key
            rows[r["id"]] = {"id": r["id"], "v": float(r["v"]), "note": r.get("note")}
    return rows


def _by_key(t: fs.Table) -> dict[int, dict[str, Any]]:
    got = t.to_arrow().to_pylist()
    assert len(got) == len({r["id"] for r in got})  # one row per key
    return {r["id"]: {"id": r["id"], "v": float(r["v"]), "note": r.get("note")} for r in got}


def _keyed(loc: Path) -> fs.Table:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    return fs.Table.create(loc, schema, identifier_fields=["id"])


CAPTURE_SCRIPT = """
import sys, fieldshift as fs
fs.capture(sys.argv[1], sys.argv[2], files_per_commit=1, operation="upsert",
           on_progress=lambda p: print(p.files, flush=True))
"""


def test_upsert_capture_across_drift_and_a_killed_restart_equals_the_model(tmp_path: Path) -> None:
    land, loc = tmp_path / "land", tmp_path / "t"
    n = 24
    for i in range(n):
        _land(land, f"f{i:03}.json", _records(i), i)
    _keyed(loc)
    proc = subprocess.Popen([sys.executable, "-c", CAPTURE_SCRIPT, str(land), str(loc)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    for _ in range(6):
        assert proc.stdout.readline()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    t = fs.Table.open(loc)
    done = len(captured_sources(t.catalog, t.table_id))
    assert 6 <= done < n
    assert _by_key(t) == _model(done)  # what the killed capture committed is a prefix, each file once
    progress = fs.capture(land, loc, operation="upsert")
    assert progress.files == n - done
    t = fs.Table.open(loc)
    assert _by_key(t) == _model(n)
    assert t.schema.to_arrow().field("v").type == pa.float64() and "note" in t.schema.names
    assert {s.summary.get("writer") for s in t.history()[1:]} == {"capture"}
    assert {s.operation for s in t.history()[1:]} == {"upsert"}
    assert fs.capture(land, loc, operation="upsert").files == 0  # a second run: nothing new


def test_insert_only_capture_refuses_known_keys_and_records_nothing(tmp_path: Path) -> None:
    land, loc = tmp_path / "land", tmp_path / "t"
    _land(land, "a.json", [{"id": 1, "v": 1}, {"id": 2, "v": 2}], 1)
    t = _keyed(loc)
    assert fs.capture(land, t).rows == 2
    _land(land, "b.json", [{"id": 3, "v": 3}, {"id": 2, "v": 20}], 2)
    head = t.current_snapshot.snapshot_id
    with pytest.raises(fs.DuplicateKeyError, match="id=2"):
        fs.capture(land, t)
    assert t.current_snapshot.snapshot_id == head and set(captured_sources(t.catalog, t.table_id)) == \
        {str((land / "a.json").resolve())}
    assert sorted(_by_key(t)) == [1, 2]
    r = CliRunner().invoke(app, ["capture", str(land), str(loc), "--operation", "upsert"])
    assert r.exit_code == 0, r.output
    assert _by_key(fs.Table.open(loc))[2]["v"] == 20 and sorted(_by_key(fs.Table.open(loc))) == [1, 2, 3]


def test_upsert_capture_needs_a_keyed_table(tmp_path: Path) -> None:
    land = tmp_path / "land"
    _land(land, "a.json", [{"id": 1, "v": 1}], 1)
    with pytest.raises(fs.NotKeyedError, match="identifier_fields"):
        fs.capture(land, tmp_path / "new", operation="upsert")
    assert not (tmp_path / "new").exists()
    plain = fs.Table.create(tmp_path / "plain", pa.schema([("id", pa.int64())]))
    with pytest.raises(fs.NotKeyedError):
        fs.capture(land, plain, operation="upsert")
    assert len(plain.history()) == 1
    with pytest.raises(fs.InvalidOptionError, match="operation"):
        fs.capture(land, plain, operation="merge")  # type: ignore[arg-type]
