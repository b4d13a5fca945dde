"""``to_arrow`` runs small tasks one after another in jobs (``OpenScan.small_task_rows``, ``open_scan._jobs``): the same
rows in the same order, the same counts and the same errors as a job per task."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.errors import DataFileError
from fieldshift.table.scan import open_scan
from fieldshift.table.scan.open_scan import JOB_ROWS, _jobs
from tests.table.scan.scan_switches import data_path, errors_by_switch


def test_jobs_group_small_tasks_in_order_and_keep_big_ones_alone() -> None:
    rows = [300_000, 70_000, 1_000, 5, 200_000, 65_535, 0]
    order = sorted(range(len(rows)), key=lambda i: -rows[i])
    jobs = _jobs(order, rows, 65_536)
    assert [i for job in jobs for i in job] == order  # every task once, in the same order
    assert jobs[:3] == [[0], [4], [1]] and jobs[3:] == [[5, 2, 3, 6]]
    assert _jobs(order, rows, 0) == [[i] for i in order]
    many = [1_000] * 600
    grouped = _jobs(list(range(600)), many, 65_536)
    assert [len(j) for j in grouped] == [JOB_ROWS // 1_000 + 1] * 2 + [600 - 2 * (JOB_ROWS // 1_000 + 1)]


def _table(tmp_path: Path) -> fs.Table:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("pre", pa.int32()), ("s", pa.string())])
    table = fs.Table.create(tmp_path / "t", schema, identifier_fields=["id"], precombine="pre", buckets=2)
    ids = np.arange(150_000, dtype=np.int64)
    table.upsert(pa.table({"id": ids, "pre": pa.array(np.zeros(len(ids)), pa.int32()),
                           "s": [f"s{i % 31}" if i % 9 else None for i in ids.tolist()]}))
    rng = np.random.default_rng(4)
    for pre in range(1, 8):  # 14 small update files
        part = np.sort(rng.choice(150_000, 3_000, replace=False)).astype(np.int64)
        table.upsert(pa.table({"id": part, "pre": pa.array(np.full(len(part), pre), pa.int32()),
                               "s": [f"u{pre}-{i}" for i in part.tolist()]}))
    return table


def test_small_tasks_in_jobs_read_alike(tmp_path: Path) -> None:
    table = _table(tmp_path)
    grouped, alone = table.scan(), table.scan()
    alone.pipeline().small_task_rows = 0
    got = grouped.to_arrow()
    assert got.equals(alone.to_arrow()) and got.num_rows == 150_000
    assert grouped.count() == alone.count() == 150_000
    assert table.scan(limit=10).to_arrow().num_rows == 10


def test_a_broken_small_file_is_the_same_error_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path)
    small = [f for f in table.scan().live_files() if f.record_count < 10_000]
    for f in small[3:5]:
        path = data_path(table, f)
        path.write_bytes(b"broken")
    messages = errors_by_switch(table, "small_task_rows", (open_scan.SMALL_TASK_ROWS, 0))
    assert messages[0] == messages[1]


def test_a_single_job_read_by_the_caller_reads_and_fails_alike(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """One job (every task small, or one task) is read by the calling thread (``OpenScan.caller_reads``): the same
    rows and the same error as on a pool thread, and no pool is made."""
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    table = fs.Table.create(tmp_path / "t", schema)
    for i in range(6):
        table.append(pa.table({"id": np.arange(i * 100, i * 100 + 100), "s": [f"v{j % 7}" for j in range(100)]}))
    pools: list[int] = []
    original = open_scan.ThreadPoolExecutor

    def counted(*args: object, **kwargs: object) -> object:
        pools.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(open_scan, "ThreadPoolExecutor", counted)
    inline, pooled = table.scan(), table.scan()
    pooled.pipeline().caller_reads = False
    got = inline.to_arrow()
    assert not pools and got.num_rows == 600
    assert got.equals(pooled.to_arrow()) and pools == [1]
    victim = data_path(table, table.scan().live_files()[2])
    victim.write_bytes(b"broken")
    messages = errors_by_switch(table, "caller_reads", (True, False))
    assert messages[0] == messages[1]


def test_the_caller_reads_jobs_beside_the_pool_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Several jobs, the calling thread taking its share (``OpenScan.caller_reads``): the same rows, and the first
    failing job's error (in job order) whichever thread met it, as on pool threads alone."""
    table = _table(tmp_path)
    monkeypatch.setattr(os, "cpu_count", lambda: 3)  # a pool of two beside the caller, whatever the machine
    fast, slow = table.scan(), table.scan()
    slow.pipeline().caller_reads = False
    for scan in (fast, slow):
        scan.pipeline().small_task_rows = 0  # a job per task: many jobs
    assert fast.to_arrow().equals(slow.to_arrow())
    small = [f for f in table.scan().live_files() if f.record_count < 10_000]
    for f in small[2:6]:
        path = data_path(table, f)
        path.write_bytes(b"broken")
    messages = []
    for flag in (True, False):
        scan = table.scan()
        scan.pipeline().caller_reads = flag
        scan.pipeline().small_task_rows = 0
        with pytest.raises(DataFileError) as e:
            scan.to_arrow()
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_run_jobs_keeps_job_order_and_raises_the_first_failure() -> None:
    jobs = list(range(12))

    def read(job: int) -> int:
        if job in (5, 9):
            raise ValueError(f"job {job}")
        return job * job

    assert open_scan._run_jobs(jobs[:5], read, 3) == [j * j for j in range(5)]
    assert open_scan._run_jobs(jobs[:5], read, 1) == [j * j for j in range(5)]
    with pytest.raises(ValueError, match="job 5"):
        open_scan._run_jobs(jobs, read, 3)


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("error", [KeyboardInterrupt, ValueError])
def test_run_jobs_hands_out_no_job_after_a_failure(workers: int, error: type[BaseException]) -> None:
    """Once a job failed no further job starts (as ``pool.map`` cancels the jobs not yet started): a Ctrl-C in a
    scan of thousands of files stops it, instead of reading every file first. Jobs started before still finish,
    so the first failure in job order is still the one raised."""
    started: list[int] = []

    def read(job: int) -> int:
        started.append(job)
        if job == 2:
            raise error(f"job {job}")
        return job

    with pytest.raises(error, match="job 2"):
        open_scan._run_jobs(list(range(200)), read, workers)
    assert len(started) <= 2 + workers  # the failed job, those before it, and one a thread may have taken meanwhile
