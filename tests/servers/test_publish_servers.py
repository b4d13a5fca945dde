"""Publishing where the table lives: a table on S3 (moto) with its catalog in PostgreSQL, published on
every commit (v2, then v3 with Puffin deletion vectors once a default arrives), read back by PyIceberg from
the bucket with fieldshift's rows at every snapshot; the object store's create-if-absent race."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

import fieldshift as fs
from fieldshift.table.files.storage import TableStorage
from tests.table.publish_helpers import canonical, fieldshift_rows


def _pyiceberg_rows(location: str, snapshot_id: int) -> list[str]:
    from pyiceberg.table import StaticTable

    props = {"s3.endpoint": os.environ["AWS_ENDPOINT_URL"], "s3.access-key-id": "testing",
             "s3.secret-access-key": "testing", "s3.region": "us-east-1"}
    return canonical(StaticTable.from_metadata(location, props).scan(snapshot_id=snapshot_id).to_arrow())


def test_a_table_on_s3_with_a_postgresql_catalog_publishes_on_commit(s3_location: str, pg_uri: str) -> None:
    t = fs.Table.create(s3_location, pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())]),
                        catalog=pg_uri, identifier_fields=["k"], publish="iceberg")
    t.upsert({"k": [1, 2, 3], "v": ["a", "b", "c"]})
    t.update_schema().add_column("w", pa.float64(), default=1.5).commit()  # v3 from here: Puffin vectors
    t.upsert({"k": [2], "v": ["B"], "w": [0.5]})
    t.delete([3])
    for snap in t.history()[1:]:
        assert _pyiceberg_rows(s3_location, snap.snapshot_id) == fieldshift_rows(t, snap.snapshot_id)
    assert any(f.path.endswith(".puffin") for f in t.storage.fs.get_file_info(
        pafs.FileSelector(t.storage.full("metadata/deletes"))))
    t.expire_snapshots(older_than=0, retain_last=1)
    removed = t.vacuum(older_than=0)
    assert any(r.startswith("metadata/") for r in removed)
    head = t.current_snapshot.snapshot_id
    assert _pyiceberg_rows(s3_location, head) == fieldshift_rows(t, head)


def test_two_catch_ups_racing_on_s3_may_both_write_a_version_and_each_object_is_whole(
        s3_location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pyarrow.fs (and fsspec without s3fs) has no conditional put, so on an object store create-if-absent is
    an existence check then one upload (README, "Publishing"): two catch-ups past the check at once both
    upload the same version. What stays guaranteed: each upload is one whole object (a reader sees one
    process's version or the other's, never a mix), both describe the same snapshot with the same rows,
    every file either names exists, and the next catch-up goes on from whichever object is there."""
    t = fs.Table.create(s3_location, pa.schema([("id", pa.int64())]), catalog=str(tmp_path / "c.db"))
    t.append({"id": [1]})
    t.publish()
    t.append({"id": [2]})  # publishing is off: this snapshot is caught up by the two racers
    head = t.current_snapshot.snapshot_id
    version = f"metadata/v{head + 1}.metadata.json"
    both_checked = threading.Barrier(2)
    real_exists = TableStorage.exists

    def exists(self: TableStorage, rel: str) -> bool:
        found = real_exists(self, rel)
        if rel == version:
            both_checked.wait(timeout=30)  # neither uploads before both found the version absent
        return found

    monkeypatch.setattr(TableStorage, "exists", exists)
    racers = [fs.Table.open(s3_location) for _ in range(2)]
    results: list = []
    threads = [threading.Thread(target=lambda r=r: results.append(r.publish())) for r in racers]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    monkeypatch.setattr(TableStorage, "exists", real_exists)
    assert [r.written for r in results] == [(head + 1,), (head + 1,)]  # the residual race: both uploaded it
    meta = json.loads(t.storage.read_bytes(version))  # one whole object: the last upload
    assert meta["current-snapshot-id"] == head
    for entry in meta["snapshots"]:
        assert t.storage.exists(entry["manifest-list"][len(s3_location) + 1:])
    assert _pyiceberg_rows(s3_location, head) == fieldshift_rows(t, head)
    t.append({"id": [3]})
    assert t.publish().written == (head + 2,)  # the next catch-up goes on from the object that is there
    assert _pyiceberg_rows(s3_location, head + 1) == fieldshift_rows(t, head + 1)
