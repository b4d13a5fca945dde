"""Keyed tables on Spark: reads merge per bucket on the executors; upserts, deletes and appends from Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from conftest import assert_same

import fieldshift as fs
from fieldshift.spark import read

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int32(), nullable=False), ("pre", pa.int64()), ("x", pa.string())])


def _keyed(tmp_path: Path) -> fs.Table:
    t = fs.Table.create(tmp_path / "k", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=3)
    t.upsert(pa.table({"id": pa.array(range(20), pa.int32()), "pre": [1] * 20, "x": [f"v{i}" for i in range(20)]}))
    t.upsert(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "pre": [2, 0, 2], "x": ["new", "lost", "new"],
                       "n": pa.array([2**40, 1, 2], pa.int64())}))  # a new schema: n added, keys cast down
    t.delete([4, 5])
    return t


def test_reads_merge_like_the_engine(spark: Any, tmp_path: Path) -> None:
    t = _keyed(tmp_path)
    expected = t.to_arrow()
    assert expected.num_rows == 18 and set(expected.column("x").to_pylist()) >= {"new", "v2"}
    assert_same(spark.read.format("fieldshift").load(str(t.location)), expected, t.schema)
    assert_same(read(spark, t.location), expected, t.schema, exact_nullability=False)
    old = t.scan(snapshot_id=1).to_arrow()
    assert_same(read(spark, t.location, snapshot_id=1), old, t.schemas_by_id()[0], exact_nullability=False)
    narrow = t.scan(columns=["x"]).to_arrow()
    assert_same(read(spark, t.location, columns=["x"]), narrow, t.schema.select(["x"]), exact_nullability=False)
    filtered = spark.read.format("fieldshift").load(str(t.location)).where("x = 'v1'")
    assert filtered.count() == 0  # the older version of key 1 never comes back
    t.compact()  # every bucket one file: the native and pyarrow routes read it without a merge
    assert_same(read(spark, t.location), expected, t.schema, exact_nullability=False)


def test_spark_upserts_deletes_and_insert_only_appends(spark: Any, tmp_path: Path) -> None:
    t = _keyed(tmp_path)
    want = {r["id"]: r for r in t.to_arrow().to_pylist()}
    df = spark.createDataFrame([(1, 9, "spark", 7), (30, 0, "fresh", None), (30, 1, "fresher", None)],
                               "id int, pre long, x string, n long")
    df.write.format("fieldshift").mode("append").option("operation", "upsert").save(str(t.location))
    want[1] = {"id": 1, "pre": 9, "x": "spark", "n": 7}
    want[30] = {"id": 30, "pre": 1, "x": "fresher", "n": None}
    spark.createDataFrame([(2,), (3,)], "id int").write.format("fieldshift").mode("append") \
        .option("operation", "delete").save(str(t.location))
    del want[2], want[3]
    got = {r["id"]: r for r in fs.Table.open(t.location).to_arrow().to_pylist()}
    assert got == want
    head = fs.Table.open(t.location).current_snapshot.snapshot_id
    with pytest.raises(Exception, match="already in the table"):
        spark.createDataFrame([(1, 0, "dup", None)], "id int, pre long, x string, n long").write \
            .format("fieldshift").mode("append").save(str(t.location))
    assert fs.Table.open(t.location).current_snapshot.snapshot_id == head
    spark.createDataFrame([(40, 0, "new", None)], "id int, pre long, x string, n long").write \
        .format("fieldshift").mode("append").save(str(t.location))
    assert fs.Table.open(t.location).scan().count() == len(want) + 1


def test_spark_keyed_writes_to_a_partitioned_table_land_in_its_partitions(spark: Any, tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "kp", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=2,
                        partition_by=["bucket(3, id)"])
    t.upsert(pa.table({"id": pa.array(range(12), pa.int32()), "pre": [1] * 12, "x": ["a"] * 12}))
    spark.createDataFrame([(i, 2, "spark") for i in (1, 5, 9)], "id int, pre long, x string").write \
        .format("fieldshift").mode("append").option("operation", "upsert").save(str(t.location))
    spark.createDataFrame([(2,), (7,)], "id int").write.format("fieldshift").mode("append") \
        .option("operation", "delete").save(str(t.location))
    t = fs.Table.open(t.location)
    files = t.scan().live_files()
    assert {f.spec_id for f in files} == {t.spec.spec_id} and all(len(f.partition) == 1 for f in files)
    got = {r["id"]: r["x"] for r in t.to_arrow().to_pylist()}
    assert got == {i: "spark" if i in (1, 5, 9) else "a" for i in range(12) if i not in (2, 7)}
    pruned = t.scan(filter=[("id", "==", 5)])
    assert [r["x"] for r in pruned.to_arrow().to_pylist()] == ["spark"]
    assert len(pruned.files()) < len(files)  # the other partitions are pruned by the key's bucket
    assert_same(read(spark, t.location), t.to_arrow(), t.schema, exact_nullability=False)


def test_spark_read_filters_keyed_tables_after_the_merge(spark: Any, tmp_path: Path) -> None:
    t = _keyed(tmp_path)
    for flt, columns in (([("x", "==", "v1")], None), ([("x", "==", "new")], ["id"]), ([("id", "<", 4)], ["x"])):
        want = t.scan(columns=columns, filter=flt).to_arrow()
        got = read(spark, t.location, columns=columns, filter=flt)
        assert got.columns == want.column_names
        assert sorted(map(tuple, (r.asDict().values() for r in got.collect()))) == \
            sorted(tuple(r.values()) for r in want.to_pylist())
    assert read(spark, t.location, filter=[("x", "==", "v1")]).count() == 0  # key 1's old version stays gone


def _reads(location: Path) -> tuple[fs.Table, dict[int, Any], list[dict[str, Any]]]:
    """The table, its deletion vectors, and its rows, after checking that the read through the vectors
    equals the full merge of every file (``use_vectors = False``)."""
    t = fs.Table.open(location)
    full = t.scan()
    full.use_vectors = False
    rows = sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"])
    assert rows == sorted(full.to_arrow().to_pylist(), key=lambda r: r["id"])
    return t, t.scan().deletion_vectors(), rows


def test_spark_upserts_and_deletes_record_deletion_vectors(spark: Any, tmp_path: Path) -> None:
    """Spark's upserts and deletes look up the rows they supersede on the driver and record them, as
    Table.upsert/delete do, so their buckets stay read + filter; where files written whole cannot be
    resolved (a row losing to a live one, one key from two tasks) they merge on read, and read the same."""
    t = fs.Table.create(tmp_path / "k", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=2)
    t.upsert(pa.table({"id": pa.array(range(20), pa.int32()), "pre": [1] * 20, "x": [f"v{i}" for i in range(20)]}))
    want = {i: {"id": i, "pre": 1, "x": f"v{i}"} for i in range(20)}

    def write(rows: list[tuple[Any, ...]], ddl: str, operation: str, parts: int = 1) -> None:
        chunks = [rows[k::parts] for k in range(parts)]
        df = spark.createDataFrame(chunks[0], ddl).coalesce(1)
        for chunk in chunks[1:]:
            df = df.union(spark.createDataFrame(chunk, ddl).coalesce(1))  # one task per chunk
        df.write.format("fieldshift").mode("append").option("operation", operation).save(str(t.location))

    write([(1, 5, "a"), (2, 5, "b"), (25, 0, "new")], "id int, pre long, x string", "upsert")
    want |= {1: {"id": 1, "pre": 5, "x": "a"}, 2: {"id": 2, "pre": 5, "x": "b"}, 25: {"id": 25, "pre": 0, "x": "new"}}
    table, vectors, rows = _reads(t.location)
    assert rows == sorted(want.values(), key=lambda r: r["id"])
    assert {f.file_id for f in table.scan().live_files()} <= set(vectors)  # every file resolved
    assert sum(len(v.positions) for v in vectors.values()) == 2  # keys 1 and 2 superseded in place

    write([(3,), (4,)], "id int", "delete")
    del want[3], want[4]
    table, vectors, rows = _reads(t.location)
    assert rows == sorted(want.values(), key=lambda r: r["id"])
    assert {f.file_id for f in table.scan().live_files()} <= set(vectors)
    assert sum(len(v.positions) for v in vectors.values()) == 4

    write([(5, 0, "late")], "id int, pre long, x string", "upsert")  # loses to the live pre=1: merges on read
    write([(7, 3, "x"), (7, 4, "y")], "id int, pre long, x string", "upsert", parts=2)  # one key, two tasks
    want[7] = {"id": 7, "pre": 4, "x": "y"}
    table, vectors, rows = _reads(t.location)
    assert rows == sorted(want.values(), key=lambda r: r["id"])
    assert not {f.file_id for f in table.scan().live_files()} <= set(vectors)  # some bucket merges on read
    assert table.compact().files_written and _reads(t.location)[2] == rows


def test_partial_upsert_from_spark_matches_table_upsert(spark: Any, tmp_path: Path) -> None:
    """``fss.write(..., operation="upsert", partial=True)`` (option ``partial``): the columns the DataFrame lacks
    keep each key's current values (tasks fill them from the planned snapshot), a carried null writes null, a new
    key gets nulls, a new column evolves in — Table.upsert(partial=True)'s answer on a twin."""
    import fieldshift.spark as fss

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("pre", pa.int64()), ("a", pa.string()),
                        ("b", pa.int64())])
    twins = [fs.Table.create(tmp_path / n, schema, identifier_fields=["id"], precombine="pre", buckets=2)
             for n in ("spark", "local")]
    for t in twins:
        t.upsert(pa.table({"id": list(range(8)), "pre": [1] * 8, "a": [f"a{i}" for i in range(8)],
                           "b": list(range(8))}, schema=schema))
    ours, local = twins
    rows = [(1, "x", None), (2, None, 5), (6, "z", 7), (20, "new", None)]
    df = spark.createDataFrame(rows, "id long, a string, c long").repartition(2)
    fss.write(df, ours.location, operation="upsert", partial=True)
    local.upsert(pa.table({"id": [r[0] for r in rows], "a": [r[1] for r in rows],
                           "c": pa.array([r[2] for r in rows], pa.int64())}), partial=True)
    assert ours.schema.names == local.schema.names == ["id", "pre", "a", "b", "c"]
    got = sorted(ours.to_arrow().to_pylist(), key=lambda r: r["id"])
    assert got == sorted(local.to_arrow().to_pylist(), key=lambda r: r["id"])
    assert got[1] == {"id": 1, "pre": 1, "a": "x", "b": 1, "c": None} and got[-1]["b"] is None
    head = ours.current_snapshot.snapshot_id
    with pytest.raises(fs.InvalidOptionError, match="partial"):
        fss.write(df, ours.location, partial=True)  # an append
    assert ours.current_snapshot.snapshot_id == head
