"""An open scan's tasks, and a scan pickled for executors: read task by task without its source (the
metadata connection stays on the driver), it gives the rows ``to_arrow`` gives (issue 31's Spark route)."""

from __future__ import annotations

import pickle
from pathlib import Path

import fieldshift as fs
from tests.test_open_ducklake import lake  # noqa: F401  (the hand-written DuckLake catalog fixture)


def _by_tasks(scan: object) -> list[dict]:
    shipped = pickle.loads(pickle.dumps(scan))
    assert not hasattr(shipped.source, "snapshots")  # detached: no metadata access on executors
    rows = [r for t in shipped.tasks() for b in shipped.task_batches(t) for r in shipped.finish(b).to_pylist()]
    return sorted(rows, key=lambda r: r["id"])


def test_a_pickled_ducklake_scan_reads_deletes_inlined_rows_and_filters(lake: Path) -> None:  # noqa: F811
    with fs.open_table(lake, name="main.t") as t:
        for kwargs in ({}, {"snapshot_id": 2}, {"filter": ("id", ">=", 11)}, {"columns": ["id", "score"]}):
            scan = t.scan(**kwargs)
            kinds = sorted({task.kind for task in scan.tasks()})
            assert _by_tasks(scan) == sorted(scan.to_arrow().to_pylist(), key=lambda r: r["id"]), kwargs
        assert kinds == ["file", "inlined"]
