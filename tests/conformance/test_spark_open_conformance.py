"""``fieldshift.spark.read(..., format="ducklake")`` on tables DuckDB 1.5.5 wrote: files without deletes go
through Spark's native Parquet scan, the rest through the executors, and the answer equals both the
Python route's and DuckDB's own at every snapshot tested (DuckDB's files carry field ids and DuckDB's own
type encodings, which the native check must judge from each file's footer)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import fieldshift as fs
import fieldshift.spark as fss
from tests.conformance.peers import duckdb_connection
from tests.conformance.test_ducklake_conformance import SEQUENCE, _attach, _build, _rows
from tests.spark.conftest import assert_same, spark  # noqa: F401  (the session fixture)

pytestmark = [pytest.mark.conformance, pytest.mark.spark]


def _same(df: Any, scan: Any) -> None:
    assert_same(df, scan.to_arrow(), scan.full_schema.select(scan.columns), exact_nullability=False)


def test_duckdb_written_ducklake_reads_natively_where_exact(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    conn = duckdb_connection()
    _attach(conn, str(tmp_path / "meta.ducklake"), tmp_path / "data")
    answers = _build(conn, tmp_path, SEQUENCE)
    source = str(tmp_path / "meta.ducklake")
    picked = [*sorted(answers)[1::4], max(answers)]  # every fourth snapshot and the latest: every kind of file
    # h (HUGEINT, which DuckDB writes as DOUBLE and reads as DECIMAL(38, 0)) and u8 (UTINYINT widened to
    # UBIGINT) keep every file DuckDB wrote off the native scan; without them, files lacking deletes go native
    columns = ["id", "s", "tags", "m", "f", "small"]
    native_seen = arrow_seen = 0
    with fs.open_table(source, format="ducklake", name="main.t") as table:
        for sid in picked:
            whole = table.scan(snapshot_id=sid)
            assert _rows(whole.to_arrow()) == _rows(answers[sid]), sid
            plan = fss.plan_open_read(source, format="ducklake", name="main.t", snapshot_id=sid)
            # h or u8 is in every file DuckDB wrote; the added file without field ids (external.parquet)
            # lacks both and reads natively by name
            assert all(f.by_name for f in plan.native), plan.explain()
            _same(fss.read(spark, source, format="ducklake", name="main.t", snapshot_id=sid), whole)
            plan = fss.plan_open_read(source, format="ducklake", name="main.t", snapshot_id=sid, columns=columns)
            native_seen += len(plan.native)
            arrow_seen += plan.other
            scan = table.scan(snapshot_id=sid, columns=columns)
            df = fss.read(spark, source, format="ducklake", name="main.t", snapshot_id=sid, columns=columns)
            _same(df, scan)
            assert len(df.inputFiles()) == len(plan.native)
            _same(fss.read(spark, source, format="ducklake", name="main.t", snapshot_id=sid, columns=columns,
                           route="arrow"), scan)
    assert native_seen >= 3 and arrow_seen >= 3, (native_seen, arrow_seen)  # both routes, across the snapshots


def test_duckdb_types_take_the_native_scan_only_where_spark_reads_them_alike(spark: Any,  # noqa: F811
                                                                             tmp_path: Path) -> None:
    conn = duckdb_connection()
    _attach(conn, str(tmp_path / "meta.ducklake"), tmp_path / "data", ", DATA_INLINING_ROW_LIMIT 0")
    conn.execute("CREATE TABLE lake.t (i32 INTEGER, u16 USMALLINT, u32 UINTEGER, f FLOAT, d DOUBLE, "
                 "dec DECIMAL(10, 2), dt DATE, ts TIMESTAMP, tstz TIMESTAMPTZ, s VARCHAR, bl BLOB, l INTEGER[], "
                 "st STRUCT(a INTEGER, b VARCHAR), m MAP(VARCHAR, INTEGER))")
    conn.execute("INSERT INTO lake.t VALUES (-3, 65535, 4294967295, 1.5, 2.5, 3.25, '2024-01-02', "
                 "'2024-01-02 03:04:05.123456', '2024-01-02 03:04:05+02', 'x', '\\xAA\\x00'::BLOB, [1, NULL], "
                 "{'a': 1, 'b': NULL}, MAP {'k': 1}), (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
                 "NULL, NULL, NULL, NULL)")
    conn.execute("ALTER TABLE lake.t ALTER i32 SET TYPE BIGINT")
    conn.execute("ALTER TABLE lake.t ALTER f SET TYPE DOUBLE")
    conn.execute("ALTER TABLE lake.t ADD COLUMN extra VARCHAR DEFAULT 'dflt'")
    conn.execute("INSERT INTO lake.t (i32, s, extra) VALUES (7, 'late', 'e')")
    conn.execute("CREATE TABLE lake.odd (id INTEGER, h HUGEINT, t TIME, j JSON)")  # types Spark reads otherwise
    conn.execute("INSERT INTO lake.odd VALUES (1, 123456789012, '12:00:01', '{\"a\": 1}')")
    conn.execute("DETACH lake")
    source = str(tmp_path / "meta.ducklake")
    with fs.open_table(source, format="ducklake", name="main.t") as t:
        plan = fss.plan_open_read(source, format="ducklake", name="main.t")
        assert len(plan.native) == 2 and plan.other == 0, plan.explain()  # widened, defaulted: all native
        _same(fss.read(spark, source, format="ducklake", name="main.t"), t.scan())
    with fs.open_table(source, format="ducklake", name="main.odd") as t:
        plan = fss.plan_open_read(source, format="ducklake", name="main.odd")
        assert not plan.native and plan.other == 1, plan.explain()
        _same(fss.read(spark, source, format="ducklake", name="main.odd"), t.scan())
