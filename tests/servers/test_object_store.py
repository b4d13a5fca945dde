"""Tables on an S3-compatible server (moto, started by the fixture on 127.0.0.1) with their catalog in a
SQLite file or PostgreSQL: every table operation, the CLI, killed writers and concurrent writer processes."""

from __future__ import annotations

import datetime as dt
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.table.files.storage import TableStorage
from fieldshift.table.maintenance import remove_expired_files
from tests.table.test_table_safety import BATCH_ROWS, WRITER, _check_whole_batches

SCHEMA = pa.schema([("writer", pa.int32()), ("batch", pa.int32()), ("value", pa.int64())])


def _objects(location: str) -> dict[str, int]:
    """Every object under the location, as the server lists it (relative path -> size)."""
    store = TableStorage(location)
    sel = pafs.FileSelector(store.base, recursive=True, allow_not_found=True)
    return {i.path[len(store.base) + 1:]: i.size for i in store.fs.get_file_info(sel) if i.type == pafs.FileType.File}


ROWS = pa.schema([("id", pa.int64()), ("region", pa.string()), ("v", pa.float64())])


def _rows(n: int, start: int = 0) -> pa.Table:
    ids = range(start, start + n)
    return pa.table({"id": ids, "region": [["eu", "us", "ap"][i % 3] for i in ids], "v": [float(i) for i in ids]},
                    schema=ROWS)


def test_an_object_is_invisible_until_its_upload_completes(s3_location: str) -> None:
    """The property atomic writes rest on, checked on the server: pyarrow's S3 output stream makes the
    object visible only on close, for a single put and for a multipart upload alike."""
    store = TableStorage(s3_location)
    for size in (1000, 12 << 20):  # 12 MiB: pyarrow uploads it in parts
        path = store.full(f"probe-{size}.bin")
        out = store.fs.open_output_stream(path)
        out.write(b"x" * size)
        assert store.fs.get_file_info(path).type == pafs.FileType.NotFound
        out.close()
        assert store.fs.get_file_info(path).size == size


def test_an_object_store_location_needs_a_catalog(s3_location: str) -> None:
    with pytest.raises(fs.StorageLocationError, match=r"without a catalog.*catalog="):
        fs.Table.create(s3_location, SCHEMA)
    assert _objects(s3_location) == {}  # nothing written
    with pytest.raises(fs.StorageLocationError, match="postgresql://"):
        fs.Table.open(s3_location)


def test_table_lifecycle_on_s3(s3_location: str, tmp_path: Path) -> None:
    catalog = str(tmp_path / "catalog.db")
    t = fs.Table.create(s3_location, ROWS, catalog=catalog, partition_by=["region"])
    assert t.location == s3_location and not t.storage.is_local
    first = t.append(_rows(30)).snapshot_id
    t.append(_rows(30, 30))
    t.update_schema().add_column("note", pa.string()).commit()
    t.append(_rows(10, 60).append_column("note", pa.array(["n"] * 10)))
    objects = _objects(s3_location)
    assert ".fieldshift-table" in objects and not any(k.endswith(".tmp") for k in objects)
    assert {k.split("/")[1] for k in objects if k.startswith("data/")} == {"region=eu", "region=us", "region=ap"}
    reopened = fs.Table.open(s3_location)  # by its marker, which names the catalog
    assert sorted(reopened.to_arrow().column("id").to_pylist()) == list(range(70))
    assert reopened.scan(filter=[("region", "=", "eu")]).to_arrow().num_rows == 24
    assert reopened.scan(snapshot_id=first).to_arrow().num_rows == 30  # time travel
    # compaction rewrites on the store; expiry and vacuum delete through the same filesystem
    before = set(_objects(s3_location))
    assert t.compact().files_written > 0
    removed = remove_expired_files(t.io, t.expire_snapshots(older_than=0, retain_last=1))
    assert removed and not set(removed) & set(_objects(s3_location))
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(70))
    # an orphan (a crashed writer's file) is vacuumed; an object fieldshift did not name stays
    store = t.storage
    store.put("data/" + "a" * 32 + ".parquet", b"orphan")
    store.put("data/README.txt", b"not ours")
    assert t.vacuum(older_than=0) == ["data/" + "a" * 32 + ".parquet"]
    assert "data/README.txt" in _objects(s3_location)
    assert set(_objects(s3_location)) != before
    with pytest.raises(fs.TableError, match="another table lives there"):
        fs.Table.create(s3_location, SCHEMA, catalog=str(tmp_path / "other.db"))


def test_keyed_upserts_deletes_and_quarantine_on_s3(s3_location: str, pg_uri: str) -> None:
    t = fs.Table.create(s3_location, pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())]),
                        identifier_fields=["k"], catalog=pg_uri, name="keyed")
    t.upsert({"k": [1, 2, 3], "v": ["a", "b", "c"]})
    t.upsert({"k": [2, 4], "v": ["B", "d"]})
    t.delete([3])
    got = fs.Table.open(s3_location, catalog=pg_uri, name="keyed").to_arrow().sort_by("k")
    assert got.to_pydict() == {"k": [1, 2, 4], "v": ["a", "B", "d"]}
    t.compact()
    assert t.to_arrow().sort_by("k").to_pydict() == got.to_pydict()
    u = fs.Table.create(s3_location + "-q", pa.schema([("n", pa.int32())]), catalog=pg_uri, name="q")
    result = u.append({"n": ["1", "two"]}, on_incompatible="quarantine")
    assert result.rows_quarantined == 2 and u.quarantine().num_rows == 2
    assert any(k.startswith("quarantine/") for k in _objects(s3_location + "-q"))


def test_a_missing_object_is_a_data_file_error_naming_its_uri(s3_location: str, tmp_path: Path) -> None:
    t = fs.Table.create(s3_location, SCHEMA, catalog=str(tmp_path / "c.db"))
    t.append(pa.table({"writer": pa.array([1], pa.int32()), "batch": pa.array([0], pa.int32()),
                       "value": pa.array([5], pa.int64())}))
    path = t.scan().files()[0].path
    t.storage.delete(path)
    with pytest.raises(fs.DataFileError, match=f"{s3_location}/{path} is missing"):
        t.to_arrow()


def test_capture_into_a_table_on_s3(s3_location: str, tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    for i in range(3):
        pq.write_table(pa.table({"id": [i, i + 10], "name": [f"r{i}", None]}), landing / f"{i}.parquet")
    t = fs.Table.create(s3_location, pa.schema([("id", pa.int64()), ("name", pa.string())]),
                        catalog=str(tmp_path / "c.db"))
    assert fs.capture(landing, t).files == 3
    assert fs.capture(landing, s3_location).files == 0  # opened by its marker; nothing new
    assert sorted(t.to_arrow().column("id").to_pylist()) == [0, 1, 2, 10, 11, 12]


def test_the_cli_on_an_s3_location(s3_location: str, tmp_path: Path) -> None:
    catalog = str(tmp_path / "c.db")
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"id": i, "name": f"n{i}"}) + "\n" for i in range(5)))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "fieldshift.cli", *args], capture_output=True, text=True,
                              timeout=120)

    missing = cli("create", s3_location, "--schema", "id bigint, name string")
    assert missing.returncode != 0 and "--catalog" in missing.stderr
    assert cli("--catalog", catalog, "create", s3_location, "--schema", "id bigint, name string").returncode == 0
    assert cli("append", s3_location, str(data)).returncode == 0  # found by its marker
    shown = cli("--catalog", catalog, "read", s3_location, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    assert sorted(json.loads(line)["id"] for line in shown.stdout.splitlines()) == list(range(5))
    assert cli("vacuum", s3_location).returncode == 0


def _spawn(location: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(WRITER), location, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_sigkilled_writer_leaves_no_partial_object(s3_location: str, tmp_path: Path) -> None:
    table = fs.Table.create(s3_location, SCHEMA, catalog=str(tmp_path / "c.db"))
    committed: set[tuple[int, int]] = set()
    for seed in range(3):
        proc = _spawn(s3_location, "--writer", str(seed), "--batches", "100000")
        assert proc.stdout is not None
        seen = [proc.stdout.readline() for _ in range(2 + seed)]  # the loop runs: it acknowledged appends
        assert all(ln.startswith("appended") for ln in seen), seen
        time.sleep(0.03 * (seed + 1))  # then somewhere inside an append: mid-upload or mid-commit
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        assert proc.returncode == -signal.SIGKILL  # killed inside its loop, not after it
        acknowledged = {(int(w), int(b)) for _, w, b in (ln.split() for ln in [*seen, *out.splitlines()]
                                                         if ln.startswith("appended"))}
        landed = set(_check_whole_batches(fs.Table.open(s3_location)))
        assert acknowledged <= landed and len(landed - acknowledged - committed) <= 1
        committed = landed
        store = table.storage
        for rel in _objects(s3_location):  # every visible object is whole: no partial upload shows
            if rel.endswith(".parquet"):
                assert store.parquet_file(rel).metadata.num_rows == BATCH_ROWS
    referenced = {f.path for f in table.scan().files()}
    table.vacuum(older_than=0)  # files of the killed appends that never committed go
    assert {k for k in _objects(s3_location) if k.endswith(".parquet")} == referenced
    assert set(_check_whole_batches(fs.Table.open(s3_location))) == committed


def test_concurrent_writer_processes_with_a_postgresql_catalog_lose_no_commit(s3_location: str, pg_uri: str) -> None:
    fs.Table.create(s3_location, SCHEMA, catalog=pg_uri)
    procs = [_spawn(s3_location, "--writer", str(w), "--batches", "8", "--alter") for w in (1, 2, 3)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    table = fs.Table.open(s3_location, catalog=pg_uri)
    assert sorted(_check_whole_batches(table)) == [(w, b) for w in (1, 2, 3) for b in range(8)]
    for snap in table.history():
        table.scan(snapshot_id=snap.snapshot_id).to_arrow()
    assert table.vacuum(older_than=dt.timedelta(0)) == []  # no commit lost, no orphan left


def test_storage_options_and_a_given_filesystem(s3_server: str, s3_location: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Without AWS_ENDPOINT_URL in the environment the endpoint comes from PyIceberg-style storage_options,
    or from a ready pyarrow filesystem."""
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    options = {"s3.endpoint": s3_server, "s3.access-key-id": "testing", "s3.secret-access-key": "testing",
               "s3.region": "us-east-1"}
    t = fs.Table.create(s3_location, SCHEMA, catalog=str(tmp_path / "c.db"), storage_options=options)
    t.append(pa.table({"writer": pa.array([1], pa.int32()), "batch": pa.array([0], pa.int32()),
                       "value": pa.array([9], pa.int64())}))
    given = pafs.S3FileSystem(endpoint_override=s3_server, access_key="testing", secret_key="testing",
                              region="us-east-1")
    assert fs.Table.open(s3_location, filesystem=given).to_arrow().column("value").to_pylist() == [9]
    assert fs.Table.open(s3_location, storage_options=options).scan().files()[0].record_count == 1
