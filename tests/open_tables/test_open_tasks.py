"""An open scan's tasks, and a scan pickled for executors: read task by task without its source (the
metadata connection stays on the driver), it gives the rows ``to_arrow`` gives (issue 31's Spark route)."""

from __future__ import annotations

import pickle
from pathlib import Path

import fieldshift as fs
from tests.open_tables.test_ducklake_read import lake  # noqa: F401  (the hand-written DuckLake catalog fixture)


def _by_tasks(scan: object) -> list[dict]:
    shipped = pickle.loads(pickle.dumps(scan))
    assert not hasattr(shipped.source, "snapshots")  # detached: no metadata access on executors
    tasks = [pickle.loads(pickle.dumps(t.shipped())) for t in scan.tasks()]  # type: ignore[attr-defined]
    rows = [r for t in tasks for b in shipped.task_batches(t) for r in shipped.finish(b).to_pylist()]
    return sorted(rows, key=lambda r: r["id"])


def test_a_pickled_ducklake_scan_reads_deletes_inlined_rows_and_filters(lake: Path) -> None:  # noqa: F811
    with fs.open_table(lake, name="main.t") as t:
        for kwargs in ({}, {"snapshot_id": 2}, {"filter": ("id", ">=", 11)}, {"columns": ["id", "score"]}):
            scan = t.scan(**kwargs)
            kinds = sorted({task.kind for task in scan.tasks()})
            assert _by_tasks(scan) == sorted(scan.to_arrow().to_pylist(), key=lambda r: r["id"]), kwargs
        assert kinds == ["file", "inlined"]


def test_a_pickled_iceberg_scan_applies_equality_and_position_deletes(tmp_path: Path) -> None:
    import pytest

    pytest.importorskip("pyiceberg", reason="Iceberg reads need pyiceberg (the dev and iceberg extras)")
    pytest.importorskip("fastavro", reason="the hand-written tables' manifests need fastavro (the dev extra)")
    from tests.open_tables.iceberg_tables import IcebergBuilder
    from tests.open_tables.test_iceberg_read import BY_CAT, SCHEMA

    b = IcebergBuilder(tmp_path / "t", SCHEMA, spec=BY_CAT)
    a = b.data([{"id": 1, "cat": "a", "n": 3}, {"id": 2, "cat": "a", "n": None}, {"id": 3, "cat": "a", "n": 4}],
               ("a",))
    b.commit([a, b.data([{"id": 4, "cat": "c", "n": 3}], ("c",))])
    b.commit([b.equality_deletes([{"n": 3}], [3], ("a",)), b.position_deletes([(a, 2)], ("a",))],
             operation="overwrite")
    scan = fs.open_table(b.metadata_path).scan(columns=["id"])
    assert [r["id"] for r in _by_tasks(scan)] == [2, 4]
    assert sorted(scan.to_arrow()["id"].to_pylist()) == [2, 4]
