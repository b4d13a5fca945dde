"""Publishing where the table lives: a table on S3 (moto) with its catalog in PostgreSQL, published on
every commit, read back by PyIceberg from the bucket with fieldshift's rows at every snapshot."""

from __future__ import annotations

import os

import pyarrow as pa

import fieldshift as fs
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
    t.update_schema().add_column("w", pa.float64()).commit()
    t.upsert({"k": [2], "v": ["B"], "w": [0.5]})
    t.delete([3])
    for snap in t.history()[1:]:
        assert _pyiceberg_rows(s3_location, snap.snapshot_id) == fieldshift_rows(t, snap.snapshot_id)
    t.expire_snapshots(older_than=0, retain_last=1)
    removed = t.vacuum(older_than=0)
    assert any(r.startswith("metadata/") for r in removed)
    head = t.current_snapshot.snapshot_id
    assert _pyiceberg_rows(s3_location, head) == fieldshift_rows(t, head)
