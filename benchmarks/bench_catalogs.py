"""Catalogs beyond one machine: commit throughput of 8 concurrent writer processes and scan planning
over 100,000 data files, PostgreSQL catalog vs SQLite catalog.

The PostgreSQL server is a real one (``pgserver``) on this machine's Unix socket, so the numbers
leave out network latency. The 100,000-file tables are built in bulk commits of 10,000 files each
through ``catalog.commit`` with statistics for every file; the files themselves are not written
(planning reads only the catalog), which keeps the build to seconds.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.catalog.metadata_cache import clear_schema_cache
from fieldshift.table.catalog.sqlite import DataFile
from fieldshift.table.files.file_cache import clear_file_cache
from fieldshift.table.updates import AddFiles

pytestmark = [pytest.mark.bench, pytest.mark.slow]

WRITERS = 8
COMMITS_PER_WRITER = 25
FILES = 100_000
FILES_PER_COMMIT = 10_000
WRITER = Path(__file__).with_name("catalog_writer.py")
SCHEMA = pa.schema([("writer", pa.int32()), ("batch", pa.int32()), ("value", pa.int64())])


@pytest.fixture(scope="module")
def pg_uri() -> Iterator[str]:
    pgserver = pytest.importorskip("pgserver")
    root = Path(tempfile.mkdtemp(prefix="fieldshift-bench-pg-"))
    root.chmod(0o755)  # pgserver's own user must enter it when run as root
    server = pgserver.get_server(root / "data", cleanup_mode="stop")
    yield server.get_uri()
    from fieldshift.table.catalog.postgres import close_pools

    close_pools()
    server.cleanup()
    shutil.rmtree(root, ignore_errors=True)


def _catalog(kind: str, root: Path, request: pytest.FixtureRequest) -> str:
    if kind == "sqlite":
        return str(root / "catalog.db")
    import psycopg

    schema = f"bench_{uuid.uuid4().hex[:8]}"
    uri = request.getfixturevalue("pg_uri")
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return f"{uri}&options=-csearch_path%3D{schema}"


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def concurrent_commits(location: Path) -> dict[str, Any]:
    """8 writer processes append small batches at once; commits/s, latency percentiles, lost commits."""
    go = location.parent / "go"
    procs = [subprocess.Popen([sys.executable, str(WRITER), str(location), str(w), str(COMMITS_PER_WRITER), str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(WRITERS)]
    time.sleep(3)  # every writer has imported fieldshift and opened the table
    start = time.perf_counter()
    go.touch()
    latencies: list[float] = []
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, err[-3000:]
        latencies += json.loads(out)
    wall = time.perf_counter() - start
    go.unlink()
    table = fs.Table.open(location)
    landed = table.scan(columns=["writer", "batch"]).to_arrow()
    pairs = set(zip(landed.column("writer").to_pylist(), landed.column("batch").to_pylist(), strict=True))
    expected = {(w, b) for w in range(WRITERS) for b in range(COMMITS_PER_WRITER)}
    return {"commits": len(latencies), "commits_per_s": round(len(latencies) / wall, 1),
            "p50_ms": round(_p(latencies, 0.5) * 1000, 1), "p99_ms": round(_p(latencies, 0.99) * 1000, 1),
            "lost_commits": len(expected - pairs), "snapshots": len(table.history()) - 1}


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_commit_throughput_8_writers(benchmark: Any, kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    catalog = _catalog(kind, tmp_path, request)
    runs: list[dict[str, Any]] = []

    def run() -> None:
        location = tmp_path / f"t{len(runs)}"
        fs.Table.create(location, SCHEMA, catalog=catalog, name=location.name)
        runs.append(concurrent_commits(location))

    benchmark.pedantic(run, rounds=1, iterations=1)
    result = runs[-1]
    assert result["lost_commits"] == 0 and result["snapshots"] == WRITERS * COMMITS_PER_WRITER, result
    benchmark.extra_info.update({"role": f"catalog.commits.{kind}", "writers": WRITERS, **result})
    print(kind, benchmark.extra_info)


def build_many_files(location: Path, catalog: str, files: int = FILES) -> fs.Table:
    """A table of ``files`` data files (each 100 rows of distinct ``value`` ranges), committed in bulk."""
    table = fs.Table.create(location, SCHEMA, catalog=catalog, name=location.name)
    field_id = table.schema.find("value").id
    for start in range(0, files, FILES_PER_COMMIT):
        batch = [DataFile(f"data/{uuid.uuid4().hex}.parquet", table.schema.schema_id, 100, 2048,
                          {field_id: (100, 0, i * 100, i * 100 + 99)}) for i in range(start, start + FILES_PER_COMMIT)]
        head = table.current_snapshot
        table.catalog.commit(table.table_id, head.snapshot_id, [], [AddFiles(tuple(batch), table.schema.schema_id)],
                             operation="append")
    return table


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_scan_planning_100k_files(benchmark: Any, kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    catalog = _catalog(kind, tmp_path, request)
    build_start = time.perf_counter()
    table = build_many_files(tmp_path / "many", catalog)
    build_s = time.perf_counter() - build_start

    t = fs.Table.open(tmp_path / "many")
    narrow = ("value", "<", 1000)  # pruned by every file's statistics: 10 files remain

    def plan() -> int:
        return len(t.scan(filter=narrow).files())

    assert benchmark.pedantic(plan, rounds=3, iterations=1) == 10
    timings = {}
    for name, run in (("open_s", lambda: fs.Table.open(tmp_path / "many").scan().files()),
                      ("plan_all_s", lambda: t.scan().files()),
                      ("plan_filtered_s", lambda: t.scan(filter=narrow).files())):
        for temperature in ("cold", "warm"):  # cold: as a new process, no cached file list or schemas
            best = float("inf")
            for _ in range(3):
                if temperature == "cold":
                    clear_file_cache()
                    clear_schema_cache()
                started = time.perf_counter()
                run()
                best = min(best, time.perf_counter() - started)
            timings[name if temperature == "warm" else f"{name}_cold"] = round(best, 3)
    assert len(t.scan().files()) == FILES
    benchmark.extra_info.update({"role": f"catalog.planning.{kind}", "files": FILES, "build_s": round(build_s, 1),
                                 "snapshots": len(table.history()), **timings})
    print(kind, benchmark.extra_info)


def main() -> None:
    """Run the four measurements once and print a Markdown table (``python benchmarks/bench_catalogs.py``)."""
    sys.exit(pytest.main([__file__, "-q", "-s", "-p", "no:cacheprovider", "-m", "", "--benchmark-enable",
                          "--benchmark-json", str(Path(tempfile.gettempdir()) / "bench_catalogs.json")]))


if __name__ == "__main__":
    main()
