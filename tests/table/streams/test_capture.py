"""``fieldshift.capture`` / ``fieldshift capture``: every landing file once, each with its own schema,
the table evolving on write, incompatible records quarantined with their file, kills and restarts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import fieldshift as fs
from fieldshift.cli import app
from fieldshift.table.catalog.stream_log import captured_sources


def _land_json(folder: Path, name: str, records: list[dict], at: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}"
    tmp.write_text("".join(json.dumps(r) + "\n" for r in records))
    os.utime(tmp, ns=(at * 10**9, at * 10**9))  # arrival order
    os.replace(tmp, folder / name)
    return folder / name


def _variant_records(i: int, n: int) -> list[dict]:
    """Variant ``i % 20`` of twenty schemas: extra columns come and go, numbers widen int -> double."""
    v = i % 20
    out = []
    for j in range(n):
        r: dict = {"id": i * 1000 + j, "v": v}
        if v % 2:
            r[f"extra{v % 5}"] = f"x{j}"
        if v % 3 == 0:
            r["score"] = j + 0.5 if v >= 10 else j
        if v % 4 == 0:
            r["nested"] = {"a": j, **({"b": "y"} if v >= 8 else {})}
        out.append(r)
    return out


def _ids(t: fs.Table) -> list[int]:
    return t.to_arrow().column("id").to_pylist()


def test_twenty_variants_evolve_once_per_file_and_restart_takes_only_new(tmp_path: Path) -> None:
    land, loc = tmp_path / "land", tmp_path / "t"
    for i in range(60):
        _land_json(land, f"f{i:03}.json", _variant_records(i, 5), i)
    result = fs.capture(land, loc, files_per_commit=7)
    t = fs.Table.open(loc)
    assert result.files == 60 and result.rows == 300 and result.commits == 9
    assert sorted(_ids(t)) == sorted(i * 1000 + j for i in range(60) for j in range(5))
    assert set(t.schema.names) == {"id", "v", "extra1", "extra2", "extra3", "extra4", "extra0", "score", "nested"}
    assert t.schema.find("score").type == pa.float64()  # int64 first, widened by the fractions
    assert t.schema.find("nested.b").type == pa.string()
    rows = {r["id"]: r for r in t.to_arrow().to_pylist()}
    assert rows[3001]["extra3"] == "x1" and rows[3001]["score"] == 1.0 and rows[0]["extra0"] is None  # missing: null
    assert rows[12003]["score"] == 3.5 and rows[12003]["nested"] == {"a": 3, "b": "y"}
    assert len(captured_sources(t.catalog, t.table_id)) == 60

    again = fs.capture(land, loc)
    assert again.files == 0 and len(fs.Table.open(loc).history()) == len(t.history())
    _land_json(land, "late.json", [{"id": -1, "v": 99, "brand_new": True}], 100)
    late = fs.capture(land, loc)
    t = fs.Table.open(loc)
    assert late.files == 1 and "add brand_new boolean" in late.schema_changes[0]
    assert sorted(_ids(t))[0] == -1 and len(_ids(t)) == 301


def test_onehouse_int_long_string_quarantine_or_fail(tmp_path: Path) -> None:
    """Parquet with exact types: col1 int, then long (widens), then string (quarantined or refused)."""
    land, loc = tmp_path / "land", tmp_path / "t"
    land.mkdir()
    steps = [pa.array([1, 2], pa.int32()), pa.array([2**40, 3], pa.int64()), pa.array(["x", None], pa.string())]
    for i, col1 in enumerate(steps):
        pq.write_table(pa.table({"id": pa.array([2 * i, 2 * i + 1], pa.int64()), "col1": col1}),
                       land / f"p{i}.parquet")
        os.utime(land / f"p{i}.parquet", ns=(i * 10**9, i * 10**9))
    with pytest.raises(fs.CaptureFileError, match=r"p2\.parquet.*col1"):
        fs.capture(land, loc, files_per_commit=1)
    t = fs.Table.open(loc)
    assert t.schema.find("col1").type == pa.int64() and sorted(_ids(t)) == [0, 1, 2, 3]
    fs.capture(land, loc, on_incompatible="quarantine")  # the restart takes p2 only, quarantining 'x'
    t = fs.Table.open(loc)
    assert sorted(_ids(t)) == [0, 1, 2, 3, 5]
    q = t.quarantine()
    assert q.num_rows == 1 and q.column("_fieldshift_reason")[0].as_py().startswith("[p2.parquet]")


def test_avro_csv_and_mixed_json_types(tmp_path: Path) -> None:
    land, loc = tmp_path / "land", tmp_path / "t"
    land.mkdir()
    schema = {"type": "record", "name": "r", "fields": [{"name": "id", "type": "long"},
                                                       {"name": "col1", "type": "int"}]}
    with open(land / "a.avro", "wb") as fh:
        fastavro.writer(fh, schema, [{"id": 1, "col1": 10}, {"id": 2, "col1": 20}])
    os.utime(land / "a.avro", ns=(10**9, 10**9))
    (land / "b.csv").write_text("id,col1,note\n3,30,hello\n")
    os.utime(land / "b.csv", ns=(2 * 10**9, 2 * 10**9))
    _land_json(land, "c.json", [{"id": 4, "col1": 40}, {"id": 5, "col1": "forty"}, {"id": 6, "col1": 7}], 3)
    fs.capture(land, loc, on_incompatible="quarantine")
    t = fs.Table.open(loc)
    assert t.schema.find("col1").type == pa.int32()  # Avro's int; small CSV/JSON integers do not widen it
    assert sorted(_ids(t)) == [1, 2, 3, 4, 6] and t.schema.names == ["id", "col1", "note"]
    assert t.quarantine().num_rows == 1


def test_watch_takes_files_as_they_land_until_stopped(tmp_path: Path) -> None:
    land, loc = tmp_path / "land", tmp_path / "t"
    land.mkdir()
    stop = threading.Event()
    seen: list[int] = []
    worker = threading.Thread(target=lambda: fs.capture(land, loc, watch=True, interval=0.05, stop=stop,
                                                        on_progress=lambda p: seen.append(p.files)))
    worker.start()
    for i in range(5):
        _land_json(land, f"w{i}.json", [{"id": i, "wave": i}], i)
        time.sleep(0.2)
    deadline = time.time() + 30
    while time.time() < deadline and (not seen or seen[-1] < 5):
        time.sleep(0.05)
    stop.set()
    worker.join(30)
    assert not worker.is_alive()
    assert sorted(_ids(fs.Table.open(loc))) == list(range(5)) and len(seen) >= 2


def test_idle_timeout_ends_a_watch(tmp_path: Path) -> None:
    land = tmp_path / "land"
    _land_json(land, "a.json", [{"id": 1}], 1)
    start = time.monotonic()
    assert fs.capture(land, tmp_path / "t", watch=True, interval=0.05, idle_timeout=0.3).files == 1
    assert time.monotonic() - start < 20


CAPTURE_SCRIPT = """
import sys, fieldshift as fs
fs.capture(sys.argv[1], sys.argv[2], files_per_commit=1,
           on_progress=lambda p: print(p.files, flush=True))
"""


def test_killed_capture_restarts_with_every_record_exactly_once(tmp_path: Path) -> None:
    land, loc = tmp_path / "land", tmp_path / "t"
    n = 120
    for i in range(n):
        _land_json(land, f"f{i:03}.json", _variant_records(i, 20), i)
    for attempt in range(3):  # SIGKILL mid-way, several times, at whatever point it has reached
        proc = subprocess.Popen([sys.executable, "-c", CAPTURE_SCRIPT, str(land), str(loc)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        for _ in range(5 + 7 * attempt):
            if not proc.stdout.readline():
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
    partial = len(_ids(fs.Table.open(loc)))
    assert 0 < partial < n * 20
    fs.capture(land, loc)
    t = fs.Table.open(loc)
    ids = _ids(t)
    assert len(ids) == len(set(ids)) == n * 20  # none lost, none twice
    assert len(captured_sources(t.catalog, t.table_id)) == n
    t.vacuum(older_than=__import__("datetime").timedelta(0))  # orphans of the killed commits go
    assert {p.name for p in (loc / "data").glob("*.parquet")} == {Path(f.path).name for f in t.scan().files()}


def test_cli_capture_once_and_refusals(tmp_path: Path) -> None:
    land, loc = tmp_path / "land", tmp_path / "t"
    _land_json(land, "a.json", [{"id": 1, "col1": 1}], 1)
    _land_json(land, "b.json", [{"id": 2, "col1": "two"}], 2)
    runner = CliRunner()
    r = runner.invoke(app, ["capture", str(land), str(loc), "--once"])
    assert r.exit_code == 1 and "b.json" in r.output and "quarantine" in r.output
    r = runner.invoke(app, ["capture", str(land), str(loc), "--quarantine", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert "rows quarantined" in r.output and sorted(_ids(fs.Table.open(loc))) == [1]
    r = runner.invoke(app, ["capture", str(tmp_path / "nowhere"), str(loc)])
    assert r.exit_code == 2
    with pytest.raises(fs.InvalidOptionError):
        fs.capture(land, loc, format="xml")  # type: ignore[arg-type]


def test_cli_watch_stops_on_ctrl_c_with_a_summary(tmp_path: Path) -> None:
    land, loc = tmp_path / "land", tmp_path / "t"
    _land_json(land, "a.json", [{"id": 1}], 1)
    proc = subprocess.Popen([sys.executable, "-m", "fieldshift.cli", "capture", str(land), str(loc), "--watch",
                             "--interval", "0.1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "NO_COLOR": "1"})
    assert proc.stderr is not None
    assert proc.stderr.readline().startswith("captured 1 files")  # one line per commit off a terminal
    _land_json(land, "b.json", [{"id": 2, "late": "x"}], 2)
    assert proc.stderr.readline().startswith("captured 2 files")
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "rows written" in out and "add late string" in out
    assert sorted(_ids(fs.Table.open(loc))) == [1, 2]


def test_partitioned_targets_get_one_file_per_partition(tmp_path: Path) -> None:
    land = tmp_path / "land"
    _land_json(land, "a.json", [{"id": i, "col1": i % 3} for i in range(9)], 1)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("col1", pa.int64())])
    parted = fs.Table.create(tmp_path / "parted", schema, partition_by=["col1"])
    fs.capture(land, parted)
    files = parted.scan().live_files()
    assert sorted(f.partition for f in files) == [(0,), (1,), (2,)]
    assert all(f.spec_id == parted.spec.spec_id for f in files)
    assert sorted(_ids(parted)) == list(range(9))
    pruned = parted.scan(filter=[("col1", "==", 1)])
    assert len(pruned.files()) == 1 and sorted(r["id"] for r in pruned.to_arrow().to_pylist()) == [1, 4, 7]
