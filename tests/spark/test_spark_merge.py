"""``fieldshift.spark.merge``: MERGE INTO from a DataFrame, executors writing and the driver committing once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
import fieldshift.spark as fss


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


def test_spark_merge_refusals(spark: Any, tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    t.append({"id": [1, 2], "v": ["a", "b"]})
    head = t.current_snapshot.snapshot_id
    df = spark.createDataFrame([(1, "x"), (1, "y")], "id long, v string")
    with pytest.raises(fs.MergeMatchError):
        fss.merge(df, str(tmp_path / "t"), on="id").when_matched_update().execute()
    with pytest.raises(fs.InvalidOptionError, match="by_source"):
        fss.merge(df, str(tmp_path / "t"), on="id").when_not_matched_by_source_delete().execute()
    assert t.current_snapshot.snapshot_id == head
    star = fss.merge(spark.createDataFrame([(3, "c", 1.5)], "id long, v string, w double"), str(tmp_path / "t"),
                     on="id").when_not_matched_insert().execute()
    assert star.schema_evolved and star.rows_inserted == 1
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"])[-1] == {"id": 3, "v": "c", "w": 1.5}
