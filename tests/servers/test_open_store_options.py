"""Object-store credentials given only as options reach every file a foreign table's read opens, with no
``AWS_*`` variable set: DuckLake's data and delete files, Delta's log and data files and Hudi's base files
through ``storage_options=`` (delta-rs' and hudi-rs' key names), and on Spark's executors the scan shipped
to them carries the options (Iceberg's ``properties=``, DuckLake's ``storage_options=``): a shipped task is
unpickled and read in a process whose environment holds no credential, as an executor's may not."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

import fieldshift as fs
from fieldshift.errors import InvalidOptionError
from tests.open_tables.hudi_tables import unzip_sample
from tests.open_tables.test_ducklake_read import lake  # noqa: F401  (the hand-written DuckLake catalog fixture)
from tests.servers.conftest import S3_BUCKET
from tests.servers.test_open_object_store import _properties, _pyiceberg_table, _rows

_AWS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION")


def _options(endpoint: str) -> dict[str, str]:
    return {"aws_access_key_id": os.environ["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": os.environ["AWS_SECRET_ACCESS_KEY"],
            "aws_region": os.environ["AWS_REGION"], "aws_endpoint_url": endpoint, "aws_allow_http": "true"}


def _upload(local: Path, endpoint: str) -> str:
    """A copy of ``local`` under a fresh prefix of the bucket (uploaded with the environment's credentials)."""
    prefix = f"{S3_BUCKET}/{uuid.uuid4().hex[:12]}/{local.name}"
    pafs.copy_files(str(local), prefix, destination_filesystem=pafs.S3FileSystem(endpoint_override=endpoint))
    return prefix


def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _AWS:
        monkeypatch.delenv(name, raising=False)


def test_ducklake_data_files_open_with_storage_options_only(s3_server: str, lake: Path, tmp_path: Path,  # noqa: F811
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    options = _options(s3_server)
    prefix = _upload(tmp_path / "lake", s3_server)
    with fs.open_table(lake, format="ducklake", name="main.t") as local:
        want = {s: _rows(local.to_arrow(snapshot_id=s)) for s in (2, 4, 5)}  # 4, 5: a delete file, inlined rows
    _no_environment(monkeypatch)
    with fs.open_table(lake, format="ducklake", name="main.t", data_path=f"s3://{prefix}/",
                       storage_options=options) as remote:
        for snap, rows in want.items():
            assert _rows(remote.to_arrow(snapshot_id=snap)) == rows, snap
        assert remote.scan(filter=("id", ">=", 11)).count() == 3
    with pytest.raises(InvalidOptionError, match="aws_nonsense"):
        fs.open_table(lake, format="ducklake", name="main.t", storage_options={"aws_nonsense": "1"})


def test_delta_log_and_files_open_with_storage_options_only(s3_server: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from deltalake import DeltaTable, write_deltalake

    local = tmp_path / "delta"
    write_deltalake(str(local), pa.table({"id": [1, 2, 3], "part": ["a", "b", "a"]}), partition_by=["part"])
    write_deltalake(str(local), pa.table({"id": [4], "part": ["b"], "x": [1.5]}), mode="append", schema_mode="merge")
    DeltaTable(str(local)).delete("id = 1")
    want = {v: _rows(fs.open_table(local, format="delta").to_arrow(snapshot_id=v)) for v in range(3)}
    prefix = _upload(local, s3_server)
    options = _options(s3_server)
    _no_environment(monkeypatch)
    # delta-rs' writer-side keys often share the dictionary: accepted, and nothing to a read
    with fs.open_table(f"s3://{prefix}", format="delta",
                       storage_options={**options, "AWS_S3_ALLOW_UNSAFE_RENAME": "true"}) as remote:
        assert [s.snapshot_id for s in remote.history()] == [0, 1, 2]
        for v, rows in want.items():
            assert _rows(remote.to_arrow(snapshot_id=v)) == rows, v


def test_hudi_base_files_open_with_the_storage_options_hudi_rs_takes(s3_server: str, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("hudi")
    base = unzip_sample("sample_table_cow_v6_nonpartitioned", tmp_path / "unzipped")
    with fs.open_table(base, format="hudi") as local:
        want = _rows(local.to_arrow())
    prefix = _upload(base, s3_server)
    options = _options(s3_server)
    _no_environment(monkeypatch)
    with fs.open_table(f"s3://{prefix}", format="hudi", storage_options=options) as remote:
        assert _rows(remote.to_arrow()) == want


_EXECUTOR = """
import pickle, sys
import pyarrow as pa
with open(sys.argv[1], "rb") as f:
    shipped = pickle.load(f)
batches = [scan.finish(b) for scan, task in shipped for b in scan.task_batches(task)]
with open(sys.argv[2], "wb") as f, pa.ipc.new_file(f, batches[0].schema) as w:
    for b in batches:
        w.write_batch(b)
"""


def _read_as_an_executor(table: fs.OpenTable, tmp_path: Path) -> list[dict[str, Any]]:
    """The scan's file tasks shipped as Spark ships them, read in a process with no AWS_* variable."""
    scan = table.scan()
    shipped = [(scan.shipped(task), task.shipped()) for task in scan.tasks() if task.kind in ("file", "merge")]
    assert shipped
    (tmp_path / "tasks.pickle").write_bytes(pickle.dumps(shipped))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["AWS_EC2_METADATA_DISABLED"] = "true"  # no instance credentials either
    done = subprocess.run([sys.executable, "-c", _EXECUTOR, str(tmp_path / "tasks.pickle"), str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return _rows(pa.ipc.open_file(pa.memory_map(str(tmp_path / "out"))).read_all())


def test_tasks_shipped_to_executors_carry_the_options(s3_server: str, lake: Path, tmp_path: Path,  # noqa: F811
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sqlalchemy", reason="PyIceberg's SqlCatalog needs pyiceberg[sql-sqlite]")
    io = _properties(s3_server)
    tbl, _ = _pyiceberg_table(f"s3://{S3_BUCKET}/{uuid.uuid4().hex[:12]}/wh", tmp_path / "r.db", io)
    prefix = _upload(tmp_path / "lake", s3_server)
    options = _options(s3_server)
    _no_environment(monkeypatch)
    with fs.open_table(tbl.metadata_location, properties=io) as iceberg:
        assert _read_as_an_executor(iceberg, tmp_path) == _rows(iceberg.to_arrow())
    with fs.open_table(lake, format="ducklake", name="main.t", data_path=f"s3://{prefix}/",
                       storage_options=options) as ducklake:
        files_only = [r for r in _rows(ducklake.to_arrow()) if r["id"] != 20]  # id 20 is an inlined row
        assert _read_as_an_executor(ducklake, tmp_path) == files_only
