"""Per-task work units (``spark/task_units.py``): a distributed merge's by-source pass and an update ship each
task only its own unit, so the bytes per task do not grow with the number of units, and answers stay
``Table.merge``'s and ``Table.update``'s."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
import fieldshift.spark as fss
from fieldshift.spark import task_units

pyspark = pytest.importorskip("pyspark")
from pyspark import cloudpickle  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("n", pa.int64())])


def _table(path: Path, files: int, keyed: bool) -> fs.Table:
    kw: dict[str, Any] = {"identifier_fields": ["id"], "buckets": files} if keyed else {}
    t = fs.Table.create(path, SCHEMA, **kw)
    if keyed:
        t.append(pa.table({"id": list(range(4 * files)), "v": ["a"] * 4 * files, "n": list(range(4 * files))},
                          schema=SCHEMA))
    else:
        for i in range(files):
            t.append(pa.table({"id": [2 * i, 2 * i + 1], "v": ["a", "b"], "n": [i, i]}, schema=SCHEMA))
    return t


def _shipped(monkeypatch: pytest.MonkeyPatch, df_type: type) -> list[int]:
    """Record the pickled size of every function handed to ``mapInArrow`` (what Spark sends each task)."""
    sizes: list[int] = []
    real = df_type.mapInArrow

    def recording(self: Any, func: Any, schema: Any, *args: Any, **kwargs: Any) -> Any:
        sizes.append(len(cloudpickle.dumps(func)))
        return real(self, func, schema, *args, **kwargs)

    monkeypatch.setattr(df_type, "mapInArrow", recording)
    return sizes


@pytest.mark.parametrize("connect_route", [False, True])
def test_each_task_receives_its_own_unit_only(spark: Any, connect_route: bool) -> None:
    units = [("x" * (100 + i),) for i in range(12)]
    rows = [(i, pickle.dumps(u, protocol=pickle.HIGHEST_PROTOCOL)) for i, u in enumerate(units)]

    def unit_inputs(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        got = [b for b in batches if b.num_rows]
        count = sum(b.num_rows for b in got)
        size = sum(len(x) for b in got for x in b.column(task_units.UNIT_COLUMN).to_pylist())
        yield pa.record_batch({"rows": [count], "bytes": [size]})  # a closure: pickled by value for the workers

    frame = task_units.connect_unit_frame(spark, rows) if connect_route else task_units.unit_frame(spark, units)
    per_task = frame.mapInArrow(unit_inputs, "rows long, bytes long").collect()
    assert len(per_task) == len(units)
    assert all(r["rows"] == 1 for r in per_task)  # one unit per task, never the list
    assert sorted(r["bytes"] for r in per_task) == sorted(len(b) for _, b in rows)
    got = frame.mapInArrow(lambda bs: iter([pa.record_batch({"u": [repr(u) for u in task_units.task_units(bs)]})]),
                           "u string").collect()
    assert sorted(r["u"] for r in got) == sorted(repr(u) for u in units)


@pytest.mark.parametrize("keyed", [True, False])
def test_the_function_each_task_runs_does_not_grow_with_the_units(spark: Any, tmp_path: Path, keyed: bool,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    df_type = type(spark.range(1))
    sizes = _shipped(monkeypatch, df_type)
    shipped: dict[int, list[int]] = {}
    for files in (2, 16):
        ours, theirs = (_table(tmp_path / f"{name}{files:02d}", files, keyed) for name in ("s", "l"))
        source = [(0, "s0"), (3, "s3")]
        df = spark.createDataFrame(source, "id long, v string")
        got = (fss.merge(df, str(ours.location), on="id")
               .when_matched_update(set={"v": "source.v"})
               .when_not_matched_by_source_delete(condition="target.n >= 1").execute())
        want = (theirs.merge(pa.table({"id": [0, 3], "v": ["s0", "s3"]}), on="id")
                .when_matched_update(set={"v": "source.v"})
                .when_not_matched_by_source_delete(condition="target.n >= 1").execute())
        assert (got.rows_updated, got.rows_deleted) == (want.rows_updated, want.rows_deleted)
        assert ours.to_arrow().sort_by("id").equals(theirs.to_arrow().sort_by("id"))
        up = fss.update(spark, str(ours.location), set={"v": "u"}, where="n = 0")
        assert up.rows_updated == theirs.update({"v": "u"}, where="n = 0").rows_updated > 0
        assert ours.to_arrow().sort_by("id").equals(theirs.to_arrow().sort_by("id"))
        shipped[files] = list(sizes)
        sizes.clear()
    # the same functions (merge's, by-source's, the update's) for 2 and 16 units, the same size each
    assert len(shipped[2]) == len(shipped[16]) >= 3
    assert all(abs(a - b) <= 16 for a, b in zip(shipped[2], shipped[16], strict=True)), shipped
