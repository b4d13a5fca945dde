"""``fieldshift.spark.merge``: MERGE INTO from a DataFrame, executors writing and the driver committing once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
import fieldshift.spark as fss
from fieldshift.table.keyed.merge import group_files, resolved


def _rows(t: fs.Table) -> list[dict[str, Any]]:
    return sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"])


@pytest.mark.parametrize("keyed", [True, False])
def test_spark_merge_matches_table_merge(spark: Any, tmp_path: Path, keyed: bool) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=not keyed), ("v", pa.string()), ("n", pa.int64())])
    kw: dict[str, Any] = {"identifier_fields": ["id"]} if keyed else {}
    ours, theirs = (fs.Table.create(tmp_path / name, schema, **kw) for name in ("spark", "local"))
    for t in (ours, theirs):
        t.append(pa.table({"id": list(range(10)), "v": [f"v{i}" for i in range(10)], "n": list(range(10))},
                          schema=schema))
    source = [(i, f"s{i}", "d" if i % 3 == 0 else "u") for i in range(5, 15)]
    df = spark.createDataFrame(source, "id long, v string, op string")
    got = (fss.merge(df, str(tmp_path / "spark"), on="id", partitions=3)
           .when_matched_delete(condition="source.op = 'd'").when_matched_update(set={"v": "source.v"})
           .when_not_matched_insert(values={"id": "source.id", "v": "source.v"}).execute())
    want = (theirs.merge(pa.table({"id": [r[0] for r in source], "v": [r[1] for r in source],
                                   "op": [r[2] for r in source]}), on="id")
            .when_matched_delete(condition="source.op = 'd'").when_matched_update(set={"v": "source.v"})
            .when_not_matched_insert(values={"id": "source.id", "v": "source.v"}).execute())
    assert (got.rows_inserted, got.rows_updated, got.rows_deleted) == (want.rows_inserted, want.rows_updated,
                                                                       want.rows_deleted) == (5, 3, 2)
    assert _rows(ours) == _rows(theirs)
    assert len(ours.history()) == 3  # one commit


def _twins(tmp_path: Path, keyed: bool) -> tuple[fs.Table, fs.Table]:
    """Two equal tables of three files each (an unkeyed one holds a null id too)."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=not keyed), ("v", pa.string()), ("n", pa.int64())])
    kw: dict[str, Any] = {"identifier_fields": ["id"], "buckets": 2} if keyed else {}
    twins = tuple(fs.Table.create(tmp_path / name, schema, **kw) for name in ("spark", "local"))
    for t in twins:
        for i in range(3):
            ids: list[int | None] = list(range(i * 6, i * 6 + 6))
            if not keyed and i == 1:
                ids[0] = None
            t.append(pa.table({"id": ids, "v": [f"v{n}" for n in range(6)], "n": [i] * 6}, schema=schema))
    return twins[0], twins[1]


def _sorted(t: fs.Table) -> list[dict[str, Any]]:
    return sorted(t.to_arrow().to_pylist(), key=repr)


@pytest.mark.parametrize("keyed", [True, False])
def test_spark_merge_by_source_delete_matches_table_merge(spark: Any, tmp_path: Path, keyed: bool) -> None:
    """``when_not_matched_by_source_delete`` on Spark (target units listed by tasks, anti-joined with the
    source) gives ``Table.merge``'s rows and counts: with conditions, source null keys (they match nothing,
    so the target row of that id goes), and an empty source; one commit each."""
    ours, theirs = _twins(tmp_path, keyed)
    source = [(1, "a"), (2, "b"), (None, "z"), (7, "c"), (15, "d"), (40, "e")]
    arrow = pa.table({"id": pa.array([r[0] for r in source], pa.int64()), "v": [r[1] for r in source]})
    df = spark.createDataFrame(source, "id long, v string")

    def clauses(b: Any) -> Any:
        return (b.when_matched_update(set={"v": "source.v"}, condition="target.n > 0")
                .when_not_matched_insert(values={"id": "source.id", "v": "source.v"}, condition="source.v != 'z'")
                .when_not_matched_by_source_delete(condition="target.v = 'v5'")
                .when_not_matched_by_source_delete(condition="target.n = 0"))

    got = clauses(fss.merge(df, str(ours.location), on="id", partitions=2)).execute()
    want = clauses(theirs.merge(arrow, on="id")).execute()
    counts = (want.rows_inserted, want.rows_updated, want.rows_deleted)
    assert (got.rows_inserted, got.rows_updated, got.rows_deleted) == counts
    assert counts == (1, 2, 6)  # 40; 7 and 15; ids 0, 3, 4, 5 (n = 0) and v5 of files 1, 2 (11 and 17)
    assert _sorted(ours) == _sorted(theirs)
    assert len(ours.history()) == 5  # one commit
    empty = spark.createDataFrame([], "id long, v string")
    got = fss.merge(empty, str(ours.location), on="id").when_not_matched_by_source_delete(
        condition="target.v in ('v1', 'v2')").execute()
    want = theirs.merge(pa.table({"id": pa.array([], pa.int64()), "v": pa.array([], pa.string())}), on="id") \
        .when_not_matched_by_source_delete(condition="target.v in ('v1', 'v2')").execute()
    assert got.rows_deleted == want.rows_deleted == 5  # ids 1, 2, 8, 13, 14
    assert _sorted(ours) == _sorted(theirs)
    if keyed:  # the workers' files were resolved at commit (deletion vectors): no bucket merges on read
        scan = ours.scan()
        assert all(resolved(scan, g) for g in group_files(scan.files()))


def test_spark_merge_refusals(spark: Any, tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    t.append({"id": [1, 2], "v": ["a", "b"]})
    head = t.current_snapshot.snapshot_id
    df = spark.createDataFrame([(1, "x"), (1, "y")], "id long, v string")
    with pytest.raises(fs.MergeMatchError):
        fss.merge(df, str(tmp_path / "t"), on="id").when_matched_update().execute()
    with pytest.raises(fs.MergeMatchError):  # the clauses' job runs first: nothing written by the second
        fss.merge(df, str(tmp_path / "t"), on="id").when_matched_delete().when_not_matched_by_source_delete() \
            .execute()
    assert t.current_snapshot.snapshot_id == head
    star = fss.merge(spark.createDataFrame([(3, "c", 1.5)], "id long, v string, w double"), str(tmp_path / "t"),
                     on="id").when_not_matched_insert().execute()
    assert star.schema_evolved and star.rows_inserted == 1
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"])[-1] == {"id": 3, "v": "c", "w": 1.5}
