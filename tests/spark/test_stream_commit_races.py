"""The sink's driver side against concurrent writers, without a Spark session: PySpark makes one writer
for the executors and another for the commit, so these tests do the same with real tables and files."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql.datasource import CaseInsensitiveDict
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

import fieldshift as fs
from fieldshift.spark.stream_sink import FieldshiftStreamWriter
from fieldshift.table.catalog.stream_log import stream_commit

SCHEMA = StructType([StructField("id", LongType()), StructField("col1", IntegerType()),
                     StructField("note", StringType())])


def _writer(t: fs.Table, ckpt: Path) -> FieldshiftStreamWriter:
    options = CaseInsensitiveDict({"path": str(t.location), "checkpointLocation": str(ckpt)})
    return FieldshiftStreamWriter(options, SCHEMA, False)


def _batch(start: int) -> pa.RecordBatch:
    return pa.record_batch({"id": pa.array([start, start + 1], pa.int64()), "col1": pa.array([1, 2], pa.int32()),
                            "note": ["a", "b"]})


def _on_disk(t: fs.Table) -> set[str]:
    return {p.name for p in (t.location / "data").glob("*.parquet")}


def test_concurrent_schema_change_is_rebased_not_mistagged(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("col1", pa.int32())]))
    message = _writer(t, tmp_path / "ck").write(iter([_batch(0)]))  # planned: schema 1 adds 'note'
    t.update_schema().add_column("other", pa.string()).commit()  # meanwhile another writer takes schema id 1
    _writer(t, tmp_path / "ck").commit([message], 0)
    t = fs.Table.open(t.location)
    assert t.schema.names == ["id", "col1", "other", "note"]
    assert t.to_arrow().to_pylist() == [{"id": 0, "col1": 1, "other": None, "note": "a"},
                                        {"id": 1, "col1": 2, "other": None, "note": "b"}]
    assert _on_disk(t) == {Path(f.path).name for f in t.scan().files()}  # the mistagged files are gone


def test_concurrent_rename_keeps_the_batch_by_id(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("col1", pa.int32()), ("note", pa.string())]))
    message = _writer(t, tmp_path / "ck").write(iter([_batch(0)]))  # no evolution: written as schema 0
    t.update_schema().rename_column("note", "remark").commit()
    _writer(t, tmp_path / "ck").commit([message], 0)
    assert sorted(fs.Table.open(t.location).to_arrow().column("remark").to_pylist()) == ["a", "b"]


def test_replayed_commit_and_empty_batch(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("col1", pa.int32()), ("note", pa.string())]))
    first = _writer(t, tmp_path / "ck").write(iter([_batch(0)]))
    _writer(t, tmp_path / "ck").commit([first], 0)
    replay = _writer(t, tmp_path / "ck").write(iter([_batch(0)]))  # the same batch, written again
    _writer(t, tmp_path / "ck").commit([replay], 0)
    t = fs.Table.open(t.location)
    assert t.to_arrow().num_rows == 2 and len(_on_disk(t)) == 1
    _writer(t, tmp_path / "ck").commit([], 1)  # an empty micro-batch: its id is recorded
    stream = f"path:{(tmp_path / 'ck').resolve()}"
    assert stream_commit(t.catalog, t.table_id, stream, 1) == t.current_snapshot.snapshot_id
    _writer(t, tmp_path / "other-ck").commit([_writer(t, tmp_path / "other-ck").write(iter([_batch(5)]))], 0)
    assert fs.Table.open(t.location).to_arrow().num_rows == 4  # another stream's batch 0 is its own


def _keyed(tmp_path: Path, *cols: tuple[str, pa.DataType]) -> fs.Table:
    return fs.Table.create(tmp_path / "t", pa.schema([pa.field("id", pa.int64(), nullable=False), *cols]),
                           identifier_fields=["id"], buckets=2)


def test_keyed_append_racing_an_append_of_the_same_key_fails_files_removed(tmp_path: Path) -> None:
    t = _keyed(tmp_path, ("col1", pa.int32()), ("note", pa.string()))
    message = _writer(t, tmp_path / "ck").write(iter([_batch(0)]))  # insert-only: keys 0 and 1
    t.append({"id": pa.array([1], pa.int64()), "col1": pa.array([9], pa.int32()), "note": ["z"]})  # meanwhile
    head = t.current_snapshot.snapshot_id
    with pytest.raises(fs.DuplicateKeyError, match=r"batch 0 of the stream: key \(id=1\).*'operation', 'upsert'"):
        _writer(t, tmp_path / "ck").commit([message], 0)
    assert t.current_snapshot.snapshot_id == head and len(_on_disk(t)) == 1  # the batch's files removed


def test_keyed_upsert_rebased_over_a_concurrent_schema_change_stays_bucketed(tmp_path: Path) -> None:
    t = _keyed(tmp_path, ("col1", pa.int32()))
    t.upsert({"id": pa.array([0, 7], pa.int64()), "col1": pa.array([5, 5], pa.int32())})
    options = CaseInsensitiveDict({"path": str(t.location), "checkpointLocation": str(tmp_path / "ck"),
                                   "operation": "upsert"})
    message = FieldshiftStreamWriter(options, SCHEMA, False).write(iter([_batch(0)]))  # adds 'note' as schema 1
    t.update_schema().add_column("other", pa.string()).commit()  # meanwhile another writer takes schema id 1
    FieldshiftStreamWriter(options, SCHEMA, False).commit([message], 0)
    t = fs.Table.open(t.location)
    assert t.history()[-1].operation == "upsert"
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 0, "col1": 1, "other": None, "note": "a"}, {"id": 1, "col1": 2, "other": None, "note": "b"},
        {"id": 7, "col1": 5, "other": None, "note": None}]
    assert all(f.bucket is not None for f in t.scan().files())  # the rewritten files kept their key buckets
    assert _on_disk(t) == {Path(f.path).name for f in t.scan().files()}


def test_a_micro_batch_plans_once_and_commits_what_the_tasks_planned(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """PySpark builds a second writer for the commit; it plans nothing (the old code planned twice per micro-batch:
    a table open, a metadata read and plan_write more) and commits the same rows, schema and summary."""
    import pickle

    import fieldshift.spark.batch_writer as batch_writer

    plans: list[int] = []
    real = batch_writer.plan_write
    monkeypatch.setattr(batch_writer, "plan_write", lambda *a, **k: plans.append(1) or real(*a, **k))
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("col1", pa.int32())]))
    driver = _writer(t, tmp_path / "ck")
    assert plans == []  # PySpark's commit runner makes writers like this one: none of them plans
    task = pickle.loads(pickle.dumps(driver))  # pickled for the tasks, on the driver: planned there
    assert plans == [1]
    message = pickle.loads(pickle.dumps(task.write(iter([_batch(0)]))))
    _writer(t, tmp_path / "ck").commit([message], 0)
    assert plans == [1]
    t = fs.Table.open(t.location)
    assert t.schema.names == ["id", "col1", "note"]  # evolved by the tasks' plan
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == [{"id": 0, "col1": 1, "note": "a"},
                                                                        {"id": 1, "col1": 2, "note": "b"}]
    assert t.current_snapshot.summary["changes"] == list(task.plan.changes) != []
    assert _on_disk(t) == {Path(f.path).name for f in t.scan().files()}


def test_a_plan_that_fails_fails_on_the_driver_before_any_task(tmp_path: Path) -> None:
    import pickle

    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("col1", pa.int32())]))
    options = CaseInsensitiveDict({"path": str(t.location), "checkpointLocation": str(tmp_path / "ck"),
                                   "operation": "upsert"})
    writer = FieldshiftStreamWriter(options, SCHEMA, False)
    with pytest.raises(fs.NotKeyedError, match="upsert"):
        pickle.dumps(writer)  # what PySpark does before it starts the tasks
