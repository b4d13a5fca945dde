"""Issue 31, Iceberg: reading a PyIceberg-written table through ``fs.open_table`` against PyIceberg itself,
in the same run.

1. Full scan of a table of 3 schema versions (10,000,000 rows; 1,000,000 with
   ``FIELDSHIFT_BENCH_SCALE=small``): version 0 ``id long, a int, b string, f float``; version 1 promotes
   ``a`` to long and adds ``c double``; version 2 renames ``b`` to ``name`` and promotes ``f`` to double; a
   third of the rows written under each. ``fs.open_table(metadata).to_arrow()`` vs PyIceberg's
   ``StaticTable.from_metadata(metadata).scan().to_arrow()``; target: ≤ 1.0× PyIceberg.
2. Planning a one-partition filter on a table of 10,000 files (1,000 small), identity-partitioned, one
   file per partition: ``fs.open_table(metadata).scan(filter=...).files()`` vs PyIceberg's
   ``scan(row_filter=...).plan_files()``, both cold (a new table object, PyIceberg's manifest cache
   cleared); target: ≤ PyIceberg.

Run: ``.venv/bin/python benchmarks/bench_iceberg.py`` (prints the numbers and writes ``iceberg.md``, which
``report.py`` appends to the README), or through pytest with ``-m ""`` (pytest-benchmark timings).
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

import numpy as np
import pyarrow as pa
import pytest
from workloads import timed

import fieldshift as fs

pytestmark = [pytest.mark.bench, pytest.mark.slow]

SMALL = os.environ.get("FIELDSHIFT_BENCH_SCALE", "full").strip().lower() == "small"
ROWS = 1_000_000 if SMALL else 10_000_000
FILES = 1_000 if SMALL else 10_000
PARTITION = 4_321 % FILES


def _catalog(root: Path) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    (root / "wh").mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("bench", uri=f"sqlite:///{root / 'cat.db'}", warehouse=(root / "wh").as_uri())
    catalog.create_namespace("db")
    return catalog


def three_versions(root: Path, rows: int = ROWS) -> str:
    """The 3-schema-version table; returns its metadata file."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, FloatType, IntegerType, LongType, NestedField, StringType

    catalog = _catalog(root)
    tbl = catalog.create_table("db.versions", Schema(
        NestedField(1, "id", LongType()), NestedField(2, "a", IntegerType()), NestedField(3, "b", StringType()),
        NestedField(4, "f", FloatType())))
    per = rows // 3

    def part(i: int) -> pa.Table:
        ids = np.arange(i * per, (i + 1) * per, dtype=np.int64)
        cols: dict[str, Any] = {"id": ids, "a": (ids % 1000).astype(np.int32),
                                "b": pa.array(np.char.mod("s%d", ids % 100)), "f": (ids % 7).astype(np.float32)}
        names = [f.name for f in tbl.schema().fields]
        if "c" in names:
            cols["c"] = ids.astype(np.float64)
        if "name" in names:
            cols["name"] = cols.pop("b")
        return pa.table(cols).select(names).cast(tbl.schema().as_arrow())

    tbl.append(part(0))
    with tbl.update_schema() as u:
        u.update_column("a", LongType())
        u.add_column("c", DoubleType())
    tbl.append(part(1))
    with tbl.update_schema() as u:
        u.rename_column("b", "name")
        u.update_column("f", DoubleType())
    tbl.append(part(2))
    return catalog.load_table("db.versions").metadata_location


def many_files(root: Path, files: int = FILES) -> str:
    """An identity-partitioned table of ``files`` one-row files (one append, one manifest)."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DoubleType, IntegerType, LongType, NestedField

    catalog = _catalog(root)
    tbl = catalog.create_table("db.files", Schema(NestedField(1, "id", LongType()), NestedField(2, "p", IntegerType()),
                                                  NestedField(3, "v", DoubleType())),
                               partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "p")))
    tbl.append(pa.table({"id": pa.array(range(files), pa.int64()), "p": pa.array(range(files), pa.int32()),
                         "v": pa.array(np.ones(files))}))
    return catalog.load_table("db.files").metadata_location


def fieldshift_scan(metadata: str) -> pa.Table:
    return fs.open_table(metadata).to_arrow()


def pyiceberg_scan(metadata: str) -> pa.Table:
    from pyiceberg.table import StaticTable

    return StaticTable.from_metadata(metadata).scan().to_arrow()


def fieldshift_plan(metadata: str) -> int:
    from pyiceberg.manifest import clear_manifest_cache

    clear_manifest_cache()
    return len(fs.open_table(metadata).scan(filter=("p", "==", PARTITION)).files())


def pyiceberg_plan(metadata: str) -> int:
    from pyiceberg.manifest import clear_manifest_cache
    from pyiceberg.table import StaticTable

    clear_manifest_cache()
    return len(list(StaticTable.from_metadata(metadata).scan(row_filter=f"p == {PARTITION}").plan_files()))


@pytest.fixture(scope="module")
def tables() -> Iterator[tuple[str, str]]:
    pytest.importorskip("pyiceberg_core", reason="PyIceberg's partitioned writes need pyiceberg-core")
    with tempfile.TemporaryDirectory(prefix="fieldshift-bench-iceberg-") as d:
        yield three_versions(Path(d) / "versions"), many_files(Path(d) / "files")


@pytest.mark.parametrize("reader", [fieldshift_scan, pyiceberg_scan], ids=["fieldshift", "pyiceberg"])
def test_full_scan_of_three_schema_versions(benchmark: Any, tables: tuple[str, str], reader: Callable) -> None:
    benchmark.group = "iceberg full scan"
    out = benchmark.pedantic(reader, args=(tables[0],), rounds=3, iterations=1, warmup_rounds=1)
    assert out.num_rows == ROWS // 3 * 3


@pytest.mark.parametrize("planner", [fieldshift_plan, pyiceberg_plan], ids=["fieldshift", "pyiceberg"])
def test_cold_plan_of_one_partition(benchmark: Any, tables: tuple[str, str], planner: Callable) -> None:
    benchmark.group = "iceberg one-partition plan"
    assert benchmark.pedantic(planner, args=(tables[1],), rounds=5, iterations=1, warmup_rounds=1) == 1



def main() -> None:
    """Build both tables, time each reader alternately, write ``benchmarks/iceberg.md``."""
    with tempfile.TemporaryDirectory(prefix="fieldshift-bench-iceberg-") as d:
        began = time.perf_counter()
        versions = three_versions(Path(d) / "versions")
        files = many_files(Path(d) / "files")
        built = time.perf_counter() - began
        assert fieldshift_scan(versions).sort_by("id").equals(
            pyiceberg_scan(versions).sort_by("id").cast(fieldshift_scan(versions).schema))
        scan: dict[str, list[tuple[float, float]]] = {"fieldshift": [], "pyiceberg": []}
        plan: dict[str, list[tuple[float, float]]] = {"fieldshift": [], "pyiceberg": []}
        for _ in range(3):  # alternate, so both sides see the same load
            scan["fieldshift"].append(timed(fieldshift_scan, versions, 3))
            scan["pyiceberg"].append(timed(pyiceberg_scan, versions, 3))
            plan["fieldshift"].append(timed(fieldshift_plan, files, 3))
            plan["pyiceberg"].append(timed(pyiceberg_plan, files, 3))
    load = os.getloadavg()[0]

    def med(runs: list[tuple[float, float]]) -> tuple[float, float]:
        return statistics.median(m for m, _ in runs), min(lo for _, lo in runs)

    (sf, sf_min), (sp, sp_min) = med(scan["fieldshift"]), med(scan["pyiceberg"])
    (pf, pf_min), (pp, pp_min) = med(plan["fieldshift"]), med(plan["pyiceberg"])
    lines = ["## Issue 31: Iceberg tables (`bench_iceberg.py`)", "",
             "Run by hand (`.venv/bin/python benchmarks/bench_iceberg.py`, which writes `iceberg.md`; `make bench` "
             "appends that file here). Both tables written by PyIceberg 0.12 (SQL catalog); each reader timed 3 times "
             "in each of 3 alternating rounds; medians of the rounds' medians, and the fastest single read. "
             f"1-minute load average at the end: {load:.1f} on {os.cpu_count()} cores. Building both tables took "
             f"{built:.0f} s.", "",
             "| case | fieldshift | PyIceberg | fieldshift ÷ PyIceberg | min ÷ min | target |",
             "|---|---|---|---|---|---|",
             f"| full scan, {ROWS:,} rows in 3 schema versions (promotions, an added and a renamed column) "
             f"| {sf * 1000:.0f} ms | {sp * 1000:.0f} ms | {sf / sp:.2f}× | {sf_min / sp_min:.2f}× | ≤ 1.0× |",
             f"| cold plan of a one-partition filter, {FILES:,} files (one manifest) | {pf * 1000:.0f} ms "
             f"| {pp * 1000:.0f} ms | {pf / pp:.2f}× | {pf_min / pp_min:.2f}× | ≤ 1.0× |"]
    (Path(__file__).parent / "iceberg.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
