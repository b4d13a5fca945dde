"""Issue 31, DuckLake: a full scan of a DuckDB-written DuckLake table of 3 schema versions through
``fs.open_table`` against DuckDB's own read of it into Arrow, in the same run.

The table (10,000,000 rows; 1,000,000 with ``FIELDSHIFT_BENCH_SCALE=small``), in a DuckDB-file catalog,
a third of the rows written under each version: version 0 ``id bigint, a integer, b varchar, f float``;
version 1 promotes ``a`` to bigint and adds ``c double``; version 2 renames ``b`` to ``name`` and promotes
``f`` to double. ``fs.open_table(catalog, name="main.versions").to_arrow()`` vs DuckDB's
``SELECT * FROM lake.versions`` fetched as an Arrow table (``to_arrow_table``), both with the same
threads; target: ≤ 1.1× DuckDB. fieldshift's time includes opening the catalog (each read is a new
``open_table``); DuckDB is timed twice: the query alone on a connection that has the catalog attached
(the target's baseline, the harder one), and connect + LOAD + ATTACH + query (what fieldshift does).

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

import fieldshift as fs

pytestmark = [pytest.mark.bench, pytest.mark.slow]

SMALL = os.environ.get("FIELDSHIFT_BENCH_SCALE", "full").strip().lower() == "small"
ROWS = 1_000_000 if SMALL else 10_000_000
THREADS = int(os.environ.get("FIELDSHIFT_BENCH_THREADS", "2"))
NAME = "main.versions"


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


def _timed(fn: Callable[[Any], Any], arg: Any, rounds: int) -> tuple[float, float]:
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        fn(arg)
        times.append(time.perf_counter() - began)
    return statistics.median(times), min(times)


def main() -> None:
    """Build the table, time each reader alternately, write ``benchmarks/ducklake.md``."""
    with tempfile.TemporaryDirectory(prefix="fieldshift-bench-ducklake-") as d:
        began = time.perf_counter()
        catalog = three_versions(Path(d))
        built = time.perf_counter() - began
        ours, theirs = fieldshift_scan(catalog), duckdb_scan(catalog)
        assert ours.sort_by("id").equals(theirs.sort_by("id").cast(ours.schema))
        files = len(list((Path(d) / "data").rglob("*.parquet")))
        runs: dict[str, list[tuple[float, float]]] = {"fieldshift": [], "duckdb": [], "duckdb cold": []}
        for _ in range(3):  # alternate, so every reader sees the same load
            runs["fieldshift"].append(_timed(fieldshift_scan, catalog, 3))
            conn = _duckdb(catalog)
            duckdb_query(conn)  # the connection's first read, untimed
            runs["duckdb"].append(_timed(duckdb_query, conn, 3))
            conn.close()  # DuckDB holds the file: fieldshift cannot open it while attached here
            runs["duckdb cold"].append(_timed(duckdb_scan, catalog, 3))
    load = os.getloadavg()[0]

    def med(r: list[tuple[float, float]]) -> tuple[float, float]:
        return statistics.median(m for m, _ in r), min(lo for _, lo in r)

    (f, f_min), (p, p_min), (c, _) = med(runs["fieldshift"]), med(runs["duckdb"]), med(runs["duckdb cold"])
    lines = ["## Issue 31: DuckLake tables (`bench_ducklake.py`)", "",
             "Run by hand (`.venv/bin/python benchmarks/bench_ducklake.py`, which writes `ducklake.md`). The table "
             f"written by DuckDB {_version()} through its ducklake extension into a DuckDB-file catalog; both readers "
             f"on {THREADS} threads; each timed 3 times in each of 3 alternating rounds; medians of the rounds' "
             f"medians, and the fastest single read. 1-minute load average at the end: {load:.1f} on "
             f"{os.cpu_count()} cores. Building the table took {built:.0f} s.", "",
             "| case | fieldshift (open + read) | DuckDB query, attached | fieldshift ÷ DuckDB | min ÷ min "
             "| DuckDB attach + query | target |",
             "|---|---|---|---|---|---|---|",
             f"| full scan, {ROWS:,} rows in 3 schema versions ({files} files; a promoted int, an added column, "
             f"a rename, a promoted float) | {f * 1000:.0f} ms | {p * 1000:.0f} ms | {f / p:.2f}× | "
             f"{f_min / p_min:.2f}× | {c * 1000:.0f} ms | ≤ 1.1× |"]
    (Path(__file__).parent / "ducklake.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _version() -> str:
    import duckdb

    return str(duckdb.__version__)


if __name__ == "__main__":
    sys.exit(main())
