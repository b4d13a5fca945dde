"""The Spark routes (``fieldshift.spark.read(spark, source, format=...)``) on the conformance tables of
Iceberg, Delta, Hudi and Paimon: at the snapshots tested, Spark's rows equal the peer's own read (DuckDB's
``iceberg_scan``, delta-rs' ``QueryBuilder``, hudi-rs, pypaimon) and, type for type, fieldshift's Python
route. A subset of each format's conformance tables, chosen to cover both routes: files Spark's native
Parquet scan reads exactly, and files with deletes, mapped columns or merges that the executors read.
One shared Spark session (tests/spark/conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
import fieldshift.spark as fss
from tests.conformance.delta_peers import delta_rs_read, plain_rows, write_versions
from tests.conformance.peers import duckdb_connection
from tests.conformance.test_hudi_conformance import hudi_rs, rows
from tests.conformance.test_iceberg_conformance import SCHEMA, canonical, duckdb_read
from tests.open_tables.hudi_tables import unzip_sample
from tests.open_tables.iceberg_tables import IcebergBuilder
from tests.spark.conftest import assert_same, spark  # noqa: F401  (the session fixture)

pytestmark = [pytest.mark.conformance, pytest.mark.spark]

DELTA = Path(__file__).parent / "data" / "delta"


def _spark_equals(spark: Any, table: fs.OpenTable, source: str, fmt: str, snapshot_id: Any,  # noqa: F811
                  **options: Any) -> tuple[pa.Table, Any]:
    """Spark's read of ``snapshot_id`` equals fieldshift's Python read, type for type; (that read, the plan)."""
    scan = table.scan(snapshot_id=snapshot_id)
    expected = scan.to_arrow()
    df = fss.read(spark, source, format=fmt, snapshot_id=snapshot_id, **options)
    assert_same(df, expected, scan.full_schema.select(scan.columns), exact_nullability=False)
    plan = fss.plan_open_read(source, format=fmt, snapshot_id=snapshot_id, **options)
    return expected, plan


# -- Iceberg: position deletes, deletion vectors and equality deletes (DuckDB's reader as the peer) ---
def test_iceberg_deletes_on_spark_read_as_duckdb(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    conn = duckdb_connection(extensions=("avro", "iceberg"))
    conn.execute("SET TimeZone = 'UTC'")
    for version in (2, 3):
        b = IcebergBuilder(tmp_path / f"v{version}", SCHEMA, format_version=version)
        a = b.data([{"id": i, "cat": "a", "n": i} for i in range(6)])
        c = b.data([{"id": i, "cat": "c", "n": i} for i in range(10, 16)])
        b.commit([a, c])
        if version == 2:
            b.commit([b.position_deletes([(a, 0), (c, 5), (a, 3)])], operation="delete")
            b.commit([b.equality_deletes([{"cat": "c", "n": 12}], [2, 3])], operation="delete")
        else:
            b.commit(b.deletion_vectors([(a, [0, 3]), (c, [0, 5])]), operation="delete")
        b.commit([b.data([{"id": 20, "cat": "a", "n": 20}])])  # a file without deletes: the native scan's
        native = other = 0
        with fs.open_table(b.metadata_path) as table:
            for snap in table.history():
                ours, plan = _spark_equals(spark, table, b.metadata_path, "iceberg", snap.snapshot_id)
                native, other = native + len(plan.native), other + plan.other
                expected = duckdb_read(conn, b.metadata_path, snap.snapshot_id)
                assert canonical(ours) == canonical(expected), (version, snap)
        assert native and other, (version, native, other)  # both routes, across the snapshots


def test_iceberg_evolved_table_on_spark_reads_as_pyiceberg(spark: Any, catalog: Any) -> None:  # noqa: F811
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, FloatType, IntegerType, LongType, NestedField, StringType

    tbl = catalog.create_table("db.t", Schema(NestedField(1, "id", LongType()), NestedField(2, "a", IntegerType()),
                                              NestedField(3, "b", StringType()), NestedField(4, "f", FloatType())))
    tbl.append(pa.Table.from_pylist([{"id": i, "a": i, "b": f"s{i}", "f": i / 2} for i in range(4)],
                                    schema=tbl.schema().as_arrow()))
    with tbl.update_schema() as u:
        u.update_column("a", LongType())
        u.add_column("c", DoubleType())
        u.rename_column("b", "name")
    tbl.append(pa.Table.from_pylist([{"id": 9, "a": 2**40, "name": "late", "f": 1.5, "c": 0.25}],
                                    schema=tbl.schema().as_arrow()))
    tbl.delete("id = 2")  # PyIceberg rewrites the file
    metadata = tbl.metadata_location
    with fs.open_table(metadata) as table:
        for snap in table.history():
            ours, _ = _spark_equals(spark, table, metadata, "iceberg", snap.snapshot_id)
            theirs = tbl.scan(snapshot_id=snap.snapshot_id).to_arrow()
            assert canonical(ours) == canonical(theirs), snap


# -- Delta: deltalake-written versions and upstream column-mapped / deletion-vector tables ------------
@pytest.mark.parametrize("name", ["dv-with-columnmapping", "table-with-columnmapping-mode-name",
                                  "data-reader-partition-values", "multi-part-checkpoint"])
def test_delta_upstream_tables_on_spark_read_as_delta_rs(spark: Any, name: str) -> None:  # noqa: F811
    path = str(DELTA / name)
    with fs.open_table(path, format="delta") as table:
        versions = [s.snapshot_id for s in table.history()]
        for v in sorted({versions[0], versions[-1]}):
            ours, _ = _spark_equals(spark, table, path, "delta", v)
            assert plain_rows(ours) == plain_rows(delta_rs_read(path, v).select(ours.column_names)), (name, v)


def test_delta_written_versions_on_spark_read_as_delta_rs(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    latest = write_versions(tmp_path / "t")
    path = str(tmp_path / "t")
    native = 0
    with fs.open_table(path, format="delta") as table:
        for v in range(latest + 1):
            ours, plan = _spark_equals(spark, table, path, "delta", v)
            assert plain_rows(ours) == plain_rows(delta_rs_read(path, v).select(ours.column_names)), v
            # files without column mapping carry no field ids and are read by name; a partition value a file
            # lacks keeps it on the executors' route, except the null partition's (Spark's missing column)
            assert all("__HIVE_DEFAULT_PARTITION__" in f.path for f in plan.native), plan.explain()
            native += len(plan.native)
        assert native, "the null partition's file never took the native scan"


# -- Hudi: hudi-rs' sample tables, copy-on-write and merge-on-read ------------------------------------
@pytest.mark.parametrize("sample", ["sample_table_cow_v8_complexkeygen_hivestyle",
                                    "sample_table_mor_parquet_v6_nonpartitioned",
                                    "sample_table_mor_avro_v9_txns_simple_nometa"])
def test_hudi_samples_on_spark_read_as_hudi_rs(spark: Any, tmp_path: Path, sample: str) -> None:  # noqa: F811
    base = str(unzip_sample(sample, tmp_path))
    with fs.open_table(base, format="hudi") as table:
        history = table.history()
        for snap in [history[0], history[-1]]:
            ours, _ = _spark_equals(spark, table, base, "hudi", snap.snapshot_id)
            assert rows(ours) == rows(hudi_rs(Path(base), snap.snapshot_id)), snap.snapshot_id


# -- Paimon: a pypaimon-written primary-key table of several sorted runs ------------------------------
def test_paimon_primary_key_table_on_spark_reads_as_pypaimon(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    from tests.conformance.paimon_peers import PaimonPeer

    wh = tmp_path / "warehouse"
    peer = PaimonPeer(wh, tmp_path / "scratch")
    s0 = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("v", pa.int32())])
    peer.create("db.t", s0, primary_keys=["id"])
    peer.write("db.t", [{"id": i, "name": f"n{i}", "v": i} for i in range(6)], s0)
    peer.write("db.t", [{"id": i, "name": f"u{i}", "v": 10 * i} for i in (1, 4)], s0)
    peer.alter("db.t", ["add", "c", "STRING"], ["retype", "v", "BIGINT"])
    s1 = pa.schema([*s0.remove(2), ("v", pa.int64()), ("c", pa.string())])
    peer.write("db.t", [{"id": 2, "name": "late", "v": 2**40, "c": "x"}], s1)
    peer.run()
    with fs.open_table(wh, format="paimon", name="db.t") as table:
        ids = [s.snapshot_id for s in table.history()]
        expected = peer.read("db.t", ids)
        for sid in ids:
            ours, _ = _spark_equals(spark, table, str(wh), "paimon", sid, name="db.t")
            want = expected[sid]
            assert ours.sort_by("id").to_pylist() == want.select(ours.column_names).sort_by("id").to_pylist(), sid
