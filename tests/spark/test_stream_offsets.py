"""The streaming source's offsets and the sink's stream identity, driven directly on real tables (the
driver-side halves of spark/stream_source.py and spark/stream_sink.py, without a Spark session)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxFiles, ReadMaxRows

import fieldshift as fs
from fieldshift.spark import schema_to_spark
from fieldshift.spark.stream_sink import stream_id_of
from fieldshift.spark.stream_source import FieldshiftStreamReader
from fieldshift.table.files.data_files import write_data_file
from fieldshift.table.updates import AddFiles, ReplaceAll


def _reader(t: fs.Table, **options: str) -> FieldshiftStreamReader:
    return FieldshiftStreamReader({"path": str(t.location), **options}, schema_to_spark(t.schema), t.schema)


def _rows(start: int, n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})


def _emitted(reader: FieldshiftStreamReader, start: dict, end: dict) -> list[int]:
    ids: list[int] = []
    for p in reader.partitions(start, end):
        for batch in reader.read(p):
            ids += batch.column(0).to_pylist()
    return sorted(ids)


def test_offsets_limits_and_compaction_skipped(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", _rows(0, 0).schema)
    start = _reader(t).initialOffset()
    assert start == {"snapshot": 1, "file": 0}  # only what is committed after the query starts
    for i in range(4):
        t.append(_rows(i * 10, 10))
    r = _reader(t, maxFilesPerTrigger="3")
    assert r.getDefaultReadLimit() == ReadMaxFiles(3)
    mid = r.latestOffset(start, r.getDefaultReadLimit())
    assert mid == {"snapshot": 3, "file": 1} and _emitted(r, start, mid) == list(range(30))
    # a compaction rewrites the live rows into one file: nothing new to emit
    live = t.to_arrow()
    f = write_data_file(t.location, t.schema, live.cast(t.schema.to_arrow()))
    head = t.current_snapshot
    t.catalog.commit(t.table_id, head.snapshot_id, [], [AddFiles((f,), head.schema_id), ReplaceAll()],
                     operation="compact")
    t.append(_rows(100, 5))
    end = r.latestOffset(mid, ReadAllAvailable())
    assert end == {"snapshot": 6, "file": 1} and _emitted(r, mid, end) == [*range(30, 40), *range(100, 105)]
    assert r.latestOffset(end, ReadAllAvailable()) == end  # nothing new: the same offset, no batch
    rows = _reader(t, maxRowsPerTrigger="15")
    assert rows.latestOffset(start, rows.getDefaultReadLimit()) == {"snapshot": 1, "file": 1}  # 10 + 10 > 15
    assert rows.latestOffset(start, ReadMaxRows(25)) == {"snapshot": 2, "file": 1}


def test_available_now_stops_at_the_head_it_saw(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", _rows(0, 0).schema)
    r = _reader(t, startingSnapshotId="0")
    start = r.initialOffset()
    t.append(_rows(0, 3))
    r.prepareForTriggerAvailableNow()
    t.append(_rows(3, 3))  # after the target: left for the next run
    end = r.latestOffset(start, ReadAllAvailable())
    assert _emitted(r, start, end) == [0, 1, 2]


def test_bad_options_and_unknown_start(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", _rows(0, 0).schema)
    with pytest.raises(fs.InvalidOptionError, match="maxFilesPerTrigger"):
        _reader(t, maxFilesPerTrigger="0")
    with pytest.raises(fs.InvalidOptionError, match="startingSnapshotId"):
        _reader(t, startingSnapshotId="latest")
    t.append(_rows(0, 1))
    t.append(_rows(1, 1))
    assert t.expire_snapshots(older_than=0, retain_last=1).expired_snapshots == (0, 1)
    with pytest.raises(fs.StreamOffsetExpiredError, match="startingSnapshotId 1"):
        _reader(t, startingSnapshotId="1").initialOffset()
    with pytest.raises(fs.StreamOffsetExpiredError, match="new checkpointLocation"):
        _reader(t).latestOffset({"snapshot": 1, "file": 0}, ReadAllAvailable())


def test_stream_identity(tmp_path: Path) -> None:
    with pytest.raises(fs.InvalidOptionError, match="checkpointLocation"):
        stream_id_of({})
    ck = tmp_path / "ck"
    assert stream_id_of({"checkpointLocation": str(ck)}) == f"path:{ck.resolve()}"
    assert stream_id_of({"checkpointLocation": f"file://{ck}"}) == f"path:{ck.resolve()}"
    ck.mkdir()
    (ck / "metadata").write_text(json.dumps({"id": "q-123"}) + "\n")
    assert stream_id_of({"checkpointLocation": str(ck)}) == "query:q-123"


def test_keyed_table_upserts_and_deletes_fail_unless_skipped_and_compaction_is_passed_over(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())]),
                        identifier_fields=["id"], buckets=2)
    start = _reader(t).initialOffset()
    t.append({"id": pa.array([1, 2, 3], pa.int64()), "v": pa.array([1, 1, 1], pa.int64())})  # insert-only: new rows
    t.append({"id": pa.array([4], pa.int64()), "v": pa.array([1], pa.int64())})
    t.compact()  # rewrites rows already emitted: passed over
    assert t.history()[-1].operation == "compact"
    t.append({"id": pa.array([5], pa.int64()), "v": pa.array([1], pa.int64())})
    r = _reader(t)
    end = r.latestOffset(start, ReadAllAvailable())
    assert _emitted(r, start, end) == [1, 2, 3, 4, 5]

    changes = [lambda: t.upsert({"id": pa.array([2], pa.int64()), "v": pa.array([9], pa.int64())}),
               lambda: t.delete([3])]
    for new_id, change in zip((20, 21), changes, strict=True):
        before = end
        change()
        t.append({"id": pa.array([new_id], pa.int64()), "v": pa.array([1], pa.int64())})
        with pytest.raises(fs.StreamChangeCommitError, match=r"skipChangeCommits.*true") as e:
            r.latestOffset(before, ReadAllAvailable())
        assert repr(t.history()[-2].operation) in str(e.value)  # 'upsert', then 'delete'
        skipping = _reader(t, skipChangeCommits="true")
        end = skipping.latestOffset(before, ReadAllAvailable())
        assert _emitted(skipping, before, end) == [new_id]  # the change passed over, the append after it emitted


def test_unkeyed_deletes_and_updates_fail_unless_skipped(tmp_path: Path) -> None:
    """A delete or update by filter on a plain table changes rows the stream emitted: as keyed changes."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
    start = _reader(t).initialOffset()
    t.append(_rows(0, 5))
    r = _reader(t)
    end = r.latestOffset(start, ReadAllAvailable())
    assert _emitted(r, start, end) == [0, 1, 2, 3, 4]
    changes = [lambda: t.delete(filter="id = 1"), lambda: t.update({"id": 40}, where="id = 2")]
    for new_id, change in zip((20, 21), changes, strict=True):
        before = end
        change()
        t.append(_rows(new_id, 1))
        with pytest.raises(fs.StreamChangeCommitError, match=r"skipChangeCommits.*true") as e:
            _reader(t).latestOffset(before, ReadAllAvailable())
        assert repr(t.history()[-2].operation) in str(e.value)  # 'delete', then 'update'
        skipping = _reader(t, skipChangeCommits="true")
        end = skipping.latestOffset(before, ReadAllAvailable())
        assert _emitted(skipping, before, end) == [new_id]
