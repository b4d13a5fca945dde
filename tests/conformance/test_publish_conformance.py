"""Publishing fieldshift tables as Iceberg tables, read back by PyIceberg 0.12 (``StaticTable``) and by
DuckDB 1.5.5's ``iceberg_scan`` with exactly fieldshift's rows at every snapshot, each under its own schema."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from peers import duckdb_connection

from fieldshift.table import Table
from tests.table.publish_helpers import canonical, fieldshift_rows, pyiceberg_rows, static_table

pytestmark = pytest.mark.conformance


def duckdb_rows(location: Path, snapshot_id: int) -> list[str]:
    conn = duckdb_connection(extensions=("avro", "iceberg"))
    return canonical(conn.execute(f"SELECT * FROM iceberg_scan('{location}', snapshot_from_id={snapshot_id})").arrow()
                     .read_all())


def check_every_snapshot(t: Table) -> int:
    """Every published snapshot read by both peers equals fieldshift's scan of it; returns how many."""
    checked = 0
    for snap in t.history():
        if snap.snapshot_id == 0:
            continue
        expected = fieldshift_rows(t, snap.snapshot_id)
        assert pyiceberg_rows(t, snap.snapshot_id) == expected, f"PyIceberg, snapshot {snap.snapshot_id}"
        assert duckdb_rows(t.location, snap.snapshot_id) == expected, f"DuckDB, snapshot {snap.snapshot_id}"
        checked += 1
    return checked


def day(n: int) -> dt.datetime:
    return dt.datetime(2024, 1, 1) + dt.timedelta(days=n, hours=n)


def test_lifecycle_of_an_unkeyed_table_reads_back_at_every_snapshot(tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int32()), ("name", pa.string()), ("ts", pa.timestamp("us")),
                        ("s", pa.struct([("a", pa.int32()), ("b", pa.string())])), ("gone", pa.float64())])
    t = Table.create(tmp_path / "t", schema, partition_by=["day(ts)"])

    ids = range(4)
    t.append({"id": list(ids), "name": [f"n{i}" for i in ids], "ts": [day(i) for i in ids],
              "s": [{"a": i, "b": str(i)} for i in ids], "gone": [0.5, None, float("nan"), 2.0]})
    t.update_schema().rename_column("name", "label").commit()
    t.append({"id": [4, 5], "label": ["x", None], "ts": [day(4), day(5)], "s": [{"a": 4, "b": "4"}, None]})
    t.update_schema().drop_column("gone").commit()
    t.update_schema().drop_column("s.b").commit()
    t.update_schema().add_column("s.b", pa.string()).commit()  # re-added: a new id, old values not seen
    t.update_schema().update_column("id", pa.int64()).update_column("s.a", pa.int64()).commit()
    t.append({"id": [2**40], "label": ["wide"], "ts": [day(6)], "s": [{"a": 2**35, "b": "new"}]})
    t.update_spec().add_field("bucket(4, id)").commit()
    t.update_spec().add_field("truncate(3, label)").commit()
    t.append({"id": [7, 8], "label": ["seven", "eight"], "ts": [day(7), day(8)], "s": [None, {"a": 8, "b": "8"}],
              "extra": [1, 2]})  # on-write evolution: a new column
    t.overwrite({"id": [9, 10], "label": ["nine", None], "ts": [day(9), None], "s": [{"a": 9, "b": None}, None],
                 "extra": [9, None]})
    t.append({"id": [11], "label": ["eleven"], "ts": [day(11)], "s": [None], "extra": [11]})
    t.compact()
    result = t.publish()
    assert result.version == t.current_snapshot.snapshot_id + 1
    assert check_every_snapshot(t) == len(t.history()) - 1
    t.expire_snapshots(older_than=0, retain_last=3)
    t.publish()
    t.vacuum(older_than=0)
    assert check_every_snapshot(t) == 3
    from pyiceberg.catalog.sql import SqlCatalog

    uri = f"sqlite:///{tmp_path / 'iceberg.db'}"
    t.publish(register=(uri, "lake.lifecycle"))
    registered = SqlCatalog("default", uri=uri).load_table("lake.lifecycle")
    for snap in t.history():
        rows = registered.scan(snapshot_id=snap.snapshot_id).to_arrow()
        assert canonical(rows) == fieldshift_rows(t, snap.snapshot_id)


def test_filters_pushed_to_pyiceberg_never_skip_a_needed_file_and_prune_as_fieldshift(tmp_path: Path) -> None:
    from pyiceberg.expressions import EqualTo, GreaterThanOrEqual

    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("region", pa.string()),
                                                 ("ts", pa.timestamp("us"))]),
                     partition_by=["region", "day(ts)", "bucket(4, id)"])
    for i in range(6):
        t.append({"id": [i * 10 + j for j in range(3)], "region": ["eu" if i % 2 else "us"] * 3,
                  "ts": [day(i)] * 3})
    t.publish()
    head = t.current_snapshot.snapshot_id
    total = len(t.scan().files())
    for expr, fs_filter in [(EqualTo("region", "eu"), [("region", "==", "eu")]),
                            (GreaterThanOrEqual("ts", day(4).isoformat()), [("ts", ">=", day(4))]),
                            (EqualTo("id", 31), [("id", "==", 31)])]:
        planned = {task.file.file_path for task in static_table(t).scan(row_filter=expr).plan_files()}
        needed = {str(t.location / f.path) for f in t.scan(filter=fs_filter).files()}
        assert needed <= planned, expr  # never a file fieldshift needs skipped
        assert len(planned) == len(needed) < total, expr  # and pruned as fieldshift prunes
        assert pyiceberg_rows(t, head, expr) == canonical(t.scan(filter=fs_filter).to_arrow())


def test_keyed_table_upserts_and_deletes_publish_as_position_deletes(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "k", pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                                                 pa.field("region", pa.string(), nullable=False)]),
                     identifier_fields=["id", "region"], buckets=2, partition_by=["region"], publish="iceberg")
    t.upsert({"id": [1, 2, 3, 4], "v": ["a", "b", "c", "d"], "region": ["eu", "eu", "us", "us"]})
    t.upsert({"id": [2, 3, 5], "v": ["B", "C", "e"], "region": ["eu", "us", "us"]})
    t.delete({"id": [1, 5], "region": ["eu", "us"]})
    t.upsert({"id": [1], "v": ["again"], "region": ["eu"]})
    t.compact()
    t.upsert({"id": [4], "v": ["D"], "region": ["us"]})
    assert check_every_snapshot(t) == len(t.history()) - 1
    summaries = [s.summary for s in static_table(t).metadata.snapshots]
    assert any(int(s["total-position-deletes"]) > 0 for s in summaries)  # the vectors were published as deletes


def test_v3_defaults_deletion_vectors_and_row_lineage_read_back_at_every_snapshot(tmp_path: Path) -> None:
    """A keyed table published as v2 until a default makes it v3: initial and write defaults in its schemas,
    deletion vectors in Puffin files, manifests rewritten by compaction; both peers read every snapshot."""
    t = Table.create(tmp_path / "k", pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                                                 pa.field("region", pa.string(), nullable=False)]),
                     identifier_fields=["id", "region"], buckets=2, partition_by=["region"], publish="iceberg")
    t.upsert({"id": [1, 2, 3, 4], "v": ["a", "b", "c", "d"], "region": ["eu", "eu", "us", "us"]})
    t.upsert({"id": [2], "v": ["B"], "region": ["eu"]})  # v2: a position-delete file
    t.update_schema().add_column("score", pa.int64(), default=7).commit()  # v3 from here on
    t.update_schema().add_column("tag", pa.string(), write_default="new").commit()
    t.upsert({"id": [3, 5], "v": ["C", "e"], "region": ["us", "us"], "score": [1, None]})
    t.delete({"id": [1], "region": ["eu"]})
    t.compact()
    t.upsert({"id": [4], "v": ["D"], "region": ["us"], "tag": ["t"]})
    meta = static_table(t).metadata
    assert meta.format_version == 3
    assert check_every_snapshot(t) == len(t.history()) - 1
    assert any(f.name.endswith(".puffin") for f in (t.location / "metadata" / "deletes").iterdir())
    t.expire_snapshots(older_than=0, retain_last=2)
    t.publish()
    t.vacuum(older_than=0)
    assert check_every_snapshot(t) == 2


@pytest.mark.parametrize("v3", [False, True])
def test_unresolved_key_buckets_publish_the_merge_as_deletes(tmp_path: Path, v3: bool) -> None:
    """Files committed without the key lookup (as Spark's executors commit them) merge by key on read; the
    published snapshots carry the merge's superseded rows as deletes (v2 position deletes, v3 vectors)."""
    from fieldshift.table.partitions.partition_write import write_partitioned
    from fieldshift.table.updates import AddFiles

    t = Table.create(tmp_path / "k", pa.schema([pa.field("id", pa.int64(), nullable=False), ("pre", pa.int32()),
                                                 ("v", pa.string())]),
                     identifier_fields=["id"], precombine="pre", buckets=2, publish="iceberg")
    if v3:
        t.update_schema().add_column("d", pa.string(), default="dflt").commit()
    t.upsert({"id": list(range(6)), "pre": [5] * 6, "v": [f"a{i}" for i in range(6)]})
    spark = pa.table({"id": pa.array([1, 2, 7], pa.int64()), "pre": pa.array([9, 1, 9], pa.int32()),
                      "v": ["s1", "s2", "s7"]})
    if v3:
        spark = spark.append_column("d", pa.array(["x"] * 3))
    files = write_partitioned(t.location, t.schema, t.spec, spark.cast(t.schema.to_arrow()), [], keys=t.keys)
    t.catalog.commit(t.table_id, t.current_snapshot.snapshot_id, [], [AddFiles(tuple(files), t.schema.schema_id)],
                     operation="upsert")
    t.upsert({"id": [2, 3], "pre": [10, 10], "v": ["u2", "u3"]})
    t.delete([4])
    t.publish()
    assert static_table(t).metadata.format_version == (3 if v3 else 2)
    assert check_every_snapshot(t) == len(t.history()) - 1
