"""Issue 31, DuckLake: DuckDB-written DuckLake tables read through ``fs.open_table`` against DuckDB's own
reader of them, in the same run.

1. Full scan of a table of 3 schema versions (10,000,000 rows; 1,000,000 with
   ``FIELDSHIFT_BENCH_SCALE=small``), in a DuckDB-file catalog, a third of the rows written under each
   version: version 0 ``id bigint, a integer, b varchar, f float``; version 1 promotes ``a`` to bigint and
   adds ``c double``; version 2 renames ``b`` to ``name`` and promotes ``f`` to double.
   ``fs.open_table(catalog, name="main.versions").to_arrow()`` vs DuckDB's ``SELECT * FROM lake.versions``
   fetched as an Arrow table (``to_arrow_table``), both with the same threads; target: ≤ 1.1× DuckDB.
   fieldshift's time includes opening the catalog (each read is a new ``open_table``); DuckDB is timed
   twice: the query alone on a connection that has the catalog attached (the target's baseline, the
   harder one), and connect + LOAD + ATTACH + query (what fieldshift does).
2. Cold plan of a one-partition filter on a table of 10,000 one-row files: ``p`` identity-partitioned
   with 100 values, written by 100 inserts of one row per partition (100 snapshots, 100 files per
   partition). fieldshift: a new ``fs.open_table(...)`` and ``scan(filter=p == 7).files()`` (the plan, no
   rows read); target: ≤ 0.3 s. DuckDB, in the same run: ``SELECT count(*) ... WHERE p = 7`` as the
   first query of a freshly attached catalog (its plan lists the same 100 files and reads their footers
   for the count), timed alone and with connect + LOAD + ATTACH. Where fieldshift's plan spent its time
   when this case was added (cProfile of one plan, 0.20 s and 417k calls under the profiler): the snapshot's
   file rows, partition values and the filter column's statistics, one catalog query each, about 0.10 s
   with the decoding of 10,000 partition values and 10,000 statistics; the per-file partition test 0.02 s;
   ``open_table`` 0.02 s. Since then statistics are decoded only for the files the partition test keeps
   and each distinct partition value once (279k calls).

Run: ``.venv/bin/python benchmarks/bench_ducklake.py`` (prints the numbers and writes ``ducklake.md``), or
through pytest with ``-m ""`` (pytest-benchmark timings).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from workloads import timed

import fieldshift as fs

pytestmark = [pytest.mark.bench, pytest.mark.slow]

SMALL = os.environ.get("FIELDSHIFT_BENCH_SCALE", "full").strip().lower() == "small"
ROWS = 1_000_000 if SMALL else 10_000_000
THREADS = int(os.environ.get("FIELDSHIFT_BENCH_THREADS", "2"))
NAME = "main.versions"
FILES_NAME = "main.files"
PARTS = 100  # partition values; each of PARTS inserts writes one file per value
FILES = PARTS * PARTS
PARTITION = 7


def _duckdb(catalog: Path) -> Any:
    """A DuckDB connection with the DuckLake catalog attached as ``lake`` (extension from its package)."""
    import importlib

    import duckdb

    conn = duckdb.connect()
    module = importlib.import_module("duckdb_extension_ducklake")
    ext = sorted((Path(module.__file__).parent / "extensions").glob("v*/*.duckdb_extension"))
    conn.execute(f"LOAD '{ext[-1]}'")
    conn.execute(f"SET threads = {THREADS}")
    conn.execute(f"ATTACH 'ducklake:{catalog}' AS lake (DATA_PATH '{catalog.parent / 'data'}/')")
    return conn


def three_versions(root: Path, rows: int = ROWS) -> Path:
    """The 3-schema-version table written by DuckDB; returns its catalog file."""
    root.mkdir(parents=True, exist_ok=True)
    catalog = root / "meta.ducklake"
    conn = _duckdb(catalog)
    per = rows // 3

    def insert(i: int, columns: str) -> None:
        conn.execute(f"INSERT INTO lake.versions SELECT {columns} FROM range({i * per}, {(i + 1) * per}) r(id)")

    conn.execute("CREATE TABLE lake.versions (id BIGINT, a INTEGER, b VARCHAR, f FLOAT)")
    insert(0, "id, id % 1000, 's' || (id % 100), id % 7")
    conn.execute("ALTER TABLE lake.versions ALTER a SET TYPE BIGINT")
    conn.execute("ALTER TABLE lake.versions ADD COLUMN c DOUBLE")
    insert(1, "id, id % 1000, 's' || (id % 100), id % 7, id")
    conn.execute("ALTER TABLE lake.versions RENAME b TO name")
    conn.execute("ALTER TABLE lake.versions ALTER f SET TYPE DOUBLE")
    insert(2, "id, id % 1000, 's' || (id % 100), id % 7, id")
    conn.close()
    return catalog


def many_files(root: Path, parts: int = PARTS) -> Path:
    """A table identity-partitioned on ``p`` (``parts`` values) of ``parts``² one-row files, one insert per
    snapshot writing one file per partition; returns its catalog file."""
    root.mkdir(parents=True, exist_ok=True)
    catalog = root / "meta.ducklake"
    conn = _duckdb(catalog)
    conn.execute("CREATE TABLE lake.files (id BIGINT, p INTEGER, v DOUBLE)")
    conn.execute("ALTER TABLE lake.files SET PARTITIONED BY (p)")
    for i in range(parts):
        conn.execute(f"INSERT INTO lake.files SELECT {i * parts} + r, r, 1.0 FROM range({parts}) t(r)")
    conn.close()
    written = len(list((root / "data").rglob("*.parquet")))
    assert written == parts * parts, f"{written} files written (inlined rows?), expected {parts * parts}"
    return catalog


def fieldshift_plan(catalog: Path) -> int:
    """Cold plan: a new view of the table, the files of one partition, no rows read."""
    with fs.open_table(catalog, format="ducklake", name=FILES_NAME) as t:
        return len(t.scan(filter=("p", "==", PARTITION)).files())


def fieldshift_plan_paths(catalog: Path) -> set[str]:
    with fs.open_table(catalog, format="ducklake", name=FILES_NAME) as t:
        return {f.path for f in t.scan(filter=("p", "==", PARTITION)).files()}


def duckdb_count(conn: Any) -> int:
    """DuckDB's count of the partition (its plan lists the partition's files; the count reads their footers)."""
    return int(conn.execute(f"SELECT count(*) FROM lake.files WHERE p = {PARTITION}").fetchone()[0])


def duckdb_plan(catalog: Path) -> int:
    """Connect, LOAD, ATTACH, count the partition: DuckDB's cold answer from nothing."""
    conn = _duckdb(catalog)
    try:
        return duckdb_count(conn)
    finally:
        conn.close()


def duckdb_plan_paths(catalog: Path) -> set[str]:
    conn = _duckdb(catalog)
    try:
        rows = conn.execute(f"SELECT DISTINCT filename FROM lake.files WHERE p = {PARTITION}").fetchall()
        return {r[0] for r in rows}
    finally:
        conn.close()


def fieldshift_scan(catalog: Path) -> pa.Table:
    with fs.open_table(catalog, format="ducklake", name=NAME) as t:
        return t.to_arrow()


def duckdb_query(conn: Any) -> pa.Table:
    """DuckDB's read of the table on a connection that has the catalog attached."""
    return conn.execute(f"SELECT * FROM lake.{NAME.split('.')[1]}").to_arrow_table()


def duckdb_scan(catalog: Path) -> pa.Table:
    """Attach, read, detach: DuckDB's read from nothing, as ``fieldshift_scan`` is."""
    conn = _duckdb(catalog)
    try:
        return duckdb_query(conn)
    finally:
        conn.close()


@pytest.fixture(scope="module")
def table() -> Iterator[Path]:
    pytest.importorskip("duckdb_extension_ducklake")
    with tempfile.TemporaryDirectory(prefix="fieldshift-bench-ducklake-") as d:
        yield three_versions(Path(d))


@pytest.mark.parametrize("reader", [fieldshift_scan, duckdb_scan], ids=["fieldshift", "duckdb-attach-and-read"])
def test_full_scan_of_three_schema_versions(benchmark: Any, table: Path, reader: Callable) -> None:
    benchmark.group = "ducklake full scan"
    out = benchmark.pedantic(reader, args=(table,), rounds=3, iterations=1, warmup_rounds=1)
    assert out.num_rows == ROWS // 3 * 3


def test_full_scan_duckdb_attached(benchmark: Any, table: Path) -> None:
    """DuckDB's query alone, the catalog attached once (closed before any other reader opens the file)."""
    benchmark.group = "ducklake full scan"
    conn = _duckdb(table)
    try:
        out = benchmark.pedantic(duckdb_query, args=(conn,), rounds=3, iterations=1, warmup_rounds=1)
    finally:
        conn.close()
    assert out.num_rows == ROWS // 3 * 3


@pytest.fixture(scope="module")
def files_table() -> Iterator[Path]:
    pytest.importorskip("duckdb_extension_ducklake")
    with tempfile.TemporaryDirectory(prefix="fieldshift-bench-ducklake-files-") as d:
        yield many_files(Path(d))


def test_plan_lists_duckdbs_files(files_table: Path) -> None:
    """The plan's files of the partition are exactly those DuckDB reads for the same filter."""
    ours = fieldshift_plan_paths(files_table)
    assert len(ours) == PARTS and ours == duckdb_plan_paths(files_table)


@pytest.mark.parametrize("planner", [fieldshift_plan, duckdb_plan], ids=["fieldshift", "duckdb-attach-and-count"])
def test_cold_plan_of_one_partition(benchmark: Any, files_table: Path, planner: Callable) -> None:
    benchmark.group = "ducklake one-partition plan"
    # fieldshift's plan has one file per snapshot of the partition; DuckDB's count has one row per file
    assert benchmark.pedantic(planner, args=(files_table,), rounds=5, iterations=1, warmup_rounds=1) == PARTS


def _fresh_count(catalog: Path) -> float:
    """DuckDB's count as the first query of a freshly attached catalog, the attach untimed."""
    conn = _duckdb(catalog)
    try:
        began = time.perf_counter()
        assert duckdb_count(conn) == PARTS
        return time.perf_counter() - began
    finally:
        conn.close()



def main() -> None:
    """Build both tables, time each reader alternately, write ``benchmarks/ducklake.md``."""
    with tempfile.TemporaryDirectory(prefix="fieldshift-bench-ducklake-") as d:
        began = time.perf_counter()
        catalog = three_versions(Path(d) / "versions")
        built = time.perf_counter() - began
        began = time.perf_counter()
        many = many_files(Path(d) / "files")
        built_files = time.perf_counter() - began
        ours, theirs = fieldshift_scan(catalog), duckdb_scan(catalog)
        assert ours.sort_by("id").equals(theirs.sort_by("id").cast(ours.schema))
        assert fieldshift_plan_paths(many) == duckdb_plan_paths(many)  # also the untimed first calls
        files = len(list((Path(d) / "versions" / "data").rglob("*.parquet")))
        runs: dict[str, list[tuple[float, float]]] = {"fieldshift": [], "duckdb": [], "duckdb cold": []}
        plan: dict[str, list[tuple[float, float]]] = {"fieldshift": [], "duckdb": [], "duckdb cold": []}
        for _ in range(3):  # alternate, so every reader sees the same load
            runs["fieldshift"].append(timed(fieldshift_scan, catalog, 3))
            conn = _duckdb(catalog)
            duckdb_query(conn)  # the connection's first read, untimed
            runs["duckdb"].append(timed(duckdb_query, conn, 3))
            conn.close()  # DuckDB holds the file: fieldshift cannot open it while attached here
            runs["duckdb cold"].append(timed(duckdb_scan, catalog, 3))
            plan["fieldshift"].append(timed(fieldshift_plan, many, 5))
            counts = [_fresh_count(many) for _ in range(5)]
            plan["duckdb"].append((statistics.median(counts), min(counts)))
            plan["duckdb cold"].append(timed(duckdb_plan, many, 5))
    load = os.getloadavg()[0]

    def med(r: list[tuple[float, float]]) -> tuple[float, float]:
        return statistics.median(m for m, _ in r), min(lo for _, lo in r)

    (f, f_min), (p, p_min), (c, _) = med(runs["fieldshift"]), med(runs["duckdb"]), med(runs["duckdb cold"])
    (pf, pf_min), (pd, pd_min), (pc, pc_min) = med(plan["fieldshift"]), med(plan["duckdb"]), med(plan["duckdb cold"])
    lines = ["## Issue 31: DuckLake tables (`bench_ducklake.py`)", "",
             "Run by hand (`.venv/bin/python benchmarks/bench_ducklake.py`, which writes `ducklake.md`). Both tables "
             f"written by DuckDB {_version()} through its ducklake extension into DuckDB-file catalogs; both readers "
             f"on {THREADS} threads. Full scan: each reader timed 3 times, plan: 5 times, in each of 3 alternating "
             "rounds; medians of the rounds' medians, and the fastest single run. 1-minute load average at the end: "
             f"{load:.1f} on {os.cpu_count()} cores. Building the tables took {built:.0f} s and {built_files:.0f} s.",
             "",
             "| case | fieldshift (open + read or plan) | DuckDB query, attached | fieldshift ÷ DuckDB | min ÷ min "
             "| DuckDB attach + query | target |",
             "|---|---|---|---|---|---|---|",
             f"| full scan, {ROWS:,} rows in 3 schema versions ({files} files; a promoted int, an added column, "
             f"a rename, a promoted float) | {f * 1000:.0f} ms | {p * 1000:.0f} ms | {f / p:.2f}× | "
             f"{f_min / p_min:.2f}× | {c * 1000:.0f} ms | ≤ 1.1× |",
             f"| cold plan of a one-partition filter (`p == {PARTITION}`), {FILES:,} one-row files in {PARTS} "
             f"partitions and {PARTS} snapshots; {PARTS} files match (fieldshift: new `open_table` + "
             f"`scan(filter).files()`, no rows read; DuckDB: `count(*)` of the partition as the first query on a "
             f"fresh attach, which also reads the {PARTS} footers) | {pf * 1000:.0f} ms (min {pf_min * 1000:.0f}) "
             f"| {pd * 1000:.0f} ms | {pf / pd:.2f}× | {pf_min / pd_min:.2f}× | {pc * 1000:.0f} ms "
             f"(min {pc_min * 1000:.0f}) | ≤ 300 ms |", "",
             "The plan is cold as a new `open_table` is: a process's first one also imports `duckdb` and the scan "
             "modules (about 0.5 s more), as DuckDB's first attach loads its extension; the benchmark makes both "
             "first calls untimed (they check that fieldshift's plan lists exactly the files DuckDB reads)."]
    (Path(__file__).parent / "ducklake.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _version() -> str:
    import duckdb

    return str(duckdb.__version__)


if __name__ == "__main__":
    sys.exit(main())
