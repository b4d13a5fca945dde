"""Issue 17's scale curves: columns 10 → 10,000, schema versions 1 → 1,000, data files 1 → 100,000.

Each point records ``curve`` (the axis), ``op``, ``impl`` and ``x`` in its extra_info; ``curves.py``
draws one log-log chart per axis and computes each curve's cost per unit at its largest size against
a tenth of it. ``FIELDSHIFT_BENCH_SCALE=small`` stops every axis a factor of ten earlier.
Peers run on the same schemas and the same Parquet files: PyIceberg's projection
(``_to_requested_schema``) and its scan planning (``plan_files`` over the same files registered in a
SQLite catalog, up to 1,000 files), pyarrow, DuckDB and polars reading the files.
"""

from __future__ import annotations

import itertools
import uuid
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import workloads as w
from workloads import dropped, run

import fieldshift as fs
from fieldshift.planner import clear_plan_cache
from fieldshift.table.catalog.sqlite import DataFile
from fieldshift.table.files.data_files import write_data_file
from fieldshift.table.files.file_cache import clear_file_cache
from fieldshift.table.updates import AddFiles

pytestmark = [pytest.mark.bench, pytest.mark.slow]

COLUMNS = [10, 100, 1_000] + ([] if w.SMALL else [10_000])
VERSIONS = [1, 10, 100] + ([] if w.SMALL else [1_000])
FILES = [1, 10, 100, 1_000, 10_000] + ([] if w.SMALL else [100_000])
APPLY_ROWS = 1_000
REAL_FILES = 1_000  # up to this many files are all real Parquet (peers read them); beyond, only the point's
ROWS_PER_FILE = 100
_TMP: dict[str, Path] = {}


def _rounds(x: int, big: int) -> int:
    return 3 if x >= big else 5


def _tmp(factory: pytest.TempPathFactory, name: str) -> Path:
    if name not in _TMP:
        _TMP[name] = factory.mktemp(name)
    return _TMP[name]


# ------------------------------------------------------------------------------------------------
# columns
# ------------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _wide(columns: int) -> tuple[fs.Schema, fs.Schema, pa.RecordBatch]:
    file_schema, read_schema = w.wide_schemas(columns)
    batch = w.make_batches(file_schema.to_arrow(), APPLY_ROWS, APPLY_ROWS, seed=w.SEED + columns)[0]
    return file_schema, read_schema, batch


@pytest.mark.parametrize("columns", COLUMNS)
def test_columns_plan(benchmark: Any, columns: int) -> None:
    """Cold planning (plan cache cleared) of a ``columns``-wide evolution (widening, renames, defaults)."""
    file_schema, read_schema, _ = _wide(columns)
    fs.plan(file_schema, read_schema, policy=w.W1_POLICY)  # the schemas' own Arrow forms are built once
    run(benchmark, lambda: fs.plan(file_schema, read_schema, policy=w.W1_POLICY), role=f"curve.columns.plan.{columns}",
        curve="columns", op="plan", impl="fieldshift", x=columns, rounds=_rounds(columns, 10_000), warmup=1,
        setup=clear_plan_cache)


@pytest.mark.parametrize("caches", ["warm", "cold"])
@pytest.mark.parametrize("impl", ["fieldshift", "plain", "pyiceberg"])
@pytest.mark.parametrize("columns", COLUMNS)
def test_columns_apply(benchmark: Any, columns: int, impl: str, caches: str) -> None:
    """One 1,000-row batch of ``columns`` columns evolved (PyIceberg: ``_to_requested_schema``); cold:
    caches evicted before every round (10,000 columns write ~48 MB, 1,000 fit the CPU's caches)."""
    file_schema, read_schema, batch = _wide(columns)
    if impl == "fieldshift":
        fn = fs.plan(file_schema, read_schema, policy=w.W1_POLICY).apply
    elif impl == "plain":
        fn = w.plain_evolver(file_schema, read_schema)
    else:
        fn = w.iceberg_evolver(file_schema, read_schema)
    cold = caches == "cold"
    run(benchmark, dropped(lambda: fn(batch)), role=f"curve.columns.apply{'_cold' if cold else ''}.{impl}.{columns}",
        curve="columns", op="apply, caches cold" if cold else "apply", impl=impl, x=columns, rows=APPLY_ROWS,
        rounds=_rounds(columns, 10_000) + (2 if cold else 0), warmup=1, setup=w.caches_cold if cold else None)


@cache
def _wide_table(columns: int, root: Path) -> tuple[Path, str]:
    schema = pa.schema([pa.field(f"c{i}", pa.int32() if i % 2 else pa.string()) for i in range(columns)])
    location = root / f"wide{columns}"
    t = fs.Table.create(location, schema)
    t.append(pa.table({f"c{i}": pa.array([1, 2], pa.int32()) if i % 2 else pa.array(["a", "b"])
                       for i in range(columns)}))
    (data,) = sorted((location / "data").glob("*.parquet"))
    return location, str(data)


@pytest.mark.parametrize("impl", ["fieldshift", "pyarrow", "duckdb", "polars"])
@pytest.mark.parametrize("columns", COLUMNS)
def test_columns_scan(benchmark: Any, columns: int, impl: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A 2-row table of ``columns`` columns: open and scan (peers read its one Parquet file)."""
    location, path = _wide_table(columns, _tmp(tmp_path_factory, "wide"))
    if impl == "fieldshift":
        fn: Any = lambda: fs.Table.open(location).scan().to_arrow()  # noqa: E731
    elif impl == "pyarrow":
        fn = lambda: pq.read_table(path)  # noqa: E731
    elif impl == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.execute(f"SET threads = {w.THREADS}")
        fn = lambda: con.sql(f"SELECT * FROM read_parquet('{path}')").to_arrow_table()  # noqa: E731
    else:
        import polars as pl

        fn = lambda: pl.read_parquet(path)  # noqa: E731
    run(benchmark, dropped(fn), role=f"curve.columns.scan.{impl}.{columns}", curve="columns", op="scan", impl=impl,
        x=columns, rounds=_rounds(columns, 10_000), warmup=1)


@pytest.mark.parametrize("columns", COLUMNS)
def test_columns_update(benchmark: Any, columns: int) -> None:
    """``update_schema()``: add 100 columns and apply, on a ``columns``-wide schema."""
    base, _, _ = _wide(columns)

    def update() -> fs.Schema:
        u = base.update()
        for i in range(100):
            u.add_column(f"new{i}", pa.int64())
        return u.apply()

    run(benchmark, dropped(lambda: update().fields), role=f"curve.columns.update.{columns}", curve="columns",
        op="update 100 (apply)", impl="fieldshift", x=columns, rounds=_rounds(columns, 10_000), warmup=1)


@pytest.mark.parametrize("columns", COLUMNS)
def test_columns_update_commit(benchmark: Any, columns: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Add 100 columns to a ``columns``-wide table and commit (catalog checks and column rows included)."""
    location, _ = _wide_table(columns, _tmp(tmp_path_factory, "wide_commit"))  # a table of its own: it grows
    t = fs.Table.open(location)
    counter = itertools.count()

    def commit() -> fs.Schema:
        u = t.update_schema()
        k = next(counter)
        for i in range(100):
            u.add_column(f"r{k}_{i}", pa.int64())
        return u.commit()

    run(benchmark, dropped(lambda: commit().fields), role=f"curve.columns.commit.{columns}", curve="columns",
        op="update 100 (commit)", impl="fieldshift", x=columns, rounds=_rounds(columns, 10_000), warmup=1)


@pytest.mark.parametrize("columns", COLUMNS)
def test_columns_update_calls(benchmark: Any, columns: int) -> None:
    """``columns / 2`` update_column calls (int → long, float → double) in one builder, then apply."""
    base, _, _ = _wide(columns)
    targets = [(f.name, pa.int64() if f.type == pa.int32() else pa.float64()) for f in base.fields
               if f.type in (pa.int32(), pa.float32())]

    def update() -> fs.Schema:
        u = base.update()
        for name, t in targets:
            u.update_column(name, t)
        return u.apply()

    run(benchmark, dropped(lambda: update().fields), role=f"curve.columns.update_calls.{columns}", curve="columns",
        op="update_column × columns/2", impl="fieldshift", x=columns, calls=len(targets),
        rounds=_rounds(columns, 10_000), warmup=1)


# ------------------------------------------------------------------------------------------------
# schema versions
# ------------------------------------------------------------------------------------------------
@cache
def _versions_table(versions: int, root: Path) -> tuple[Path, list[tuple[str, fs.Schema]]]:
    """``versions`` schema versions (each renames the second column), one 10-row file written under each:
    the schema keeps its width, so only the history grows."""
    location = root / f"v{versions}"
    t = fs.Table.create(location, pa.schema([("id", pa.int64()), ("name", pa.string()), ("x", pa.int32())]))
    written = []
    for v in range(versions):
        if v:
            t.update_schema().rename_column(t.schema.fields[1].name, f"name{v}").commit()
        schema = t.schema
        data = pa.table({"id": pa.array(range(v * 10, v * 10 + 10), pa.int64()),
                         schema.fields[1].name: [f"s{v}"] * 10, "x": pa.array([v] * 10, pa.int32())})
        before = {p.name for p in (location / "data").glob("*.parquet")} if v else set()
        t.append(data)
        (new,) = [p for p in (location / "data").glob("*.parquet") if p.name not in before]
        written.append((str(new), schema))
    return location, written


@pytest.mark.parametrize("op", ["plan", "read", "read.pyiceberg"])
@pytest.mark.parametrize("versions", VERSIONS)
def test_versions(benchmark: Any, versions: int, op: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A table whose ``versions`` schema versions each wrote one file: plan a scan, read it.

    PyIceberg's peer reads each file with pyarrow and projects it into the current schema by field id."""
    location, written = _versions_table(versions, _tmp(tmp_path_factory, "versions"))
    if op == "plan":
        fn: Any = lambda: fs.Table.open(location).scan().files()  # noqa: E731
    elif op == "read":
        fn = lambda: fs.Table.open(location).scan().to_arrow()  # noqa: E731
    else:
        from pyiceberg.io.pyarrow import _to_requested_schema

        current = w.to_iceberg_schema(fs.Table.open(location).schema)
        files = [(path, w.to_iceberg_schema(schema)) for path, schema in written]

        def fn() -> pa.Table:
            batches = [_to_requested_schema(current, s, b) for path, s in files
                       for b in pq.read_table(path).to_batches()]
            return pa.Table.from_batches(batches)
    impl = "pyiceberg" if op.endswith("pyiceberg") else "fieldshift"
    run(benchmark, dropped(fn), role=f"curve.versions.{op}.{versions}", curve="versions",
        op=op.split(".")[0], impl=impl, x=versions, rounds=_rounds(versions, 1_000), warmup=1)


# ------------------------------------------------------------------------------------------------
# data files
# ------------------------------------------------------------------------------------------------
FILE_SCHEMA = pa.schema([("id", pa.int64()), ("value", pa.int64()), ("name", pa.string())])


def _file_rows(i: int) -> pa.Table:
    lo = i * ROWS_PER_FILE
    return pa.table({"id": pa.array(range(lo, lo + ROWS_PER_FILE), pa.int64()),
                     "value": pa.array(range(lo, lo + ROWS_PER_FILE), pa.int64()),
                     "name": [f"n{i}"] * ROWS_PER_FILE})


@cache
def _files_table(files: int, root: Path) -> tuple[Path, list[str]]:
    """``files`` data files of 100 rows, ``value`` i*100 .. i*100+99 in file i, one schema id.

    Up to ``REAL_FILES`` every file is real Parquet; beyond, the catalog records each file with
    its statistics and only the file holding the point read's value is written (statistics prune
    the others: no scan opens them)."""
    location = root / f"f{files}"
    t = fs.Table.create(location, FILE_SCHEMA)
    schema = t.schema
    value_id, id_id = schema.find("value").id, schema.find("id").id
    point = files // 2
    real: list[str] = []
    batch: list[DataFile] = []
    for i in range(files):
        lo = i * ROWS_PER_FILE
        if files <= REAL_FILES or i == point:
            f = write_data_file(location, schema, _file_rows(i).cast(schema.to_arrow()))
            real.append(str(location / f.path))
        else:
            stats = {value_id: (ROWS_PER_FILE, 0, lo, lo + ROWS_PER_FILE - 1),
                     id_id: (ROWS_PER_FILE, 0, lo, lo + ROWS_PER_FILE - 1)}
            f = DataFile(f"data/{uuid.uuid4().hex}.parquet", schema.schema_id, ROWS_PER_FILE, 2048, stats)
        batch.append(f)
        if len(batch) == 10_000 or i == files - 1:
            head = t.current_snapshot
            t.catalog.commit(t.table_id, head.snapshot_id, [], [AddFiles(tuple(batch), schema.schema_id)],
                             operation="append")
            batch = []
    return location, real


@cache
def _iceberg_files_table(files: int, root: Path) -> Any:
    """The same ``files`` files (written again without field ids, which ``add_files`` refuses) registered in
    a PyIceberg table on a SQLite catalog: one manifest entry with column bounds per file."""
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse = root / f"ice{files}"
    warehouse.mkdir()
    catalog = SqlCatalog("bench", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}")
    catalog.create_namespace("bench")
    table = catalog.create_table("bench.files", schema=FILE_SCHEMA)
    paths = []
    for i in range(files):
        path = warehouse / f"{i}.parquet"
        pq.write_table(_file_rows(i).cast(FILE_SCHEMA), path)
        paths.append(f"file://{path}")
    table.add_files(paths)
    return table


FILE_CASES = [(n, op) for n in FILES for op in ("plan", "plan_cold", "plan_all", "point_read", "count")] + \
    [(n, op) for n in FILES if n <= REAL_FILES for op in ("point_read.duckdb", "point_read.polars", "plan.pyiceberg")]


@pytest.mark.parametrize(("files", "op"), FILE_CASES)
def test_files(benchmark: Any, files: int, op: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """``files`` data files: plan a point filter's scan (warm: the snapshot's file list cached by an earlier
    scan; cold: read from the catalog), plan a full scan, read the point, count rows."""
    location, real = _files_table(files, _tmp(tmp_path_factory, "files"))
    peer = op.split(".")[1] if "." in op else None  # peers read real files only (up to REAL_FILES)
    point = (files // 2) * ROWS_PER_FILE + 5
    t = fs.Table.open(location)
    setup = None
    if op in ("plan", "plan_cold"):
        fn: Any = lambda: t.scan(filter=("value", "==", point)).files()  # noqa: E731
        setup = clear_file_cache if op == "plan_cold" else None  # cold: the file list read from the catalog
    elif op == "plan_all":
        fn = lambda: t.scan().files()  # noqa: E731
    elif op == "point_read":
        fn = lambda: t.scan(filter=("value", "==", point)).to_arrow()  # noqa: E731
    elif op == "count":
        fn = lambda: [t.scan().count()]  # noqa: E731
    elif peer == "pyiceberg":
        from pyiceberg.expressions import EqualTo

        ice = _iceberg_files_table(files, _tmp(tmp_path_factory, "files_iceberg"))
        fn = lambda: list(ice.scan(row_filter=EqualTo("value", point)).plan_files())  # noqa: E731
    elif peer == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.execute(f"SET threads = {w.THREADS}")
        listed = ", ".join(f"'{p}'" for p in real)
        fn = lambda: con.sql(f"SELECT * FROM read_parquet([{listed}]) WHERE value = {point}").to_arrow_table()  # noqa: E731
    else:
        import polars as pl

        fn = lambda: pl.scan_parquet(real).filter(pl.col("value") == point).collect()  # noqa: E731
    got = fn()
    if op.startswith("point_read") or peer == "pyiceberg":  # PyIceberg plans the one file the bounds keep
        assert len(got) == 1
    run(benchmark, dropped(fn), role=f"curve.files.{op}.{files}", curve="files", op=op.split(".")[0],
        impl=peer or "fieldshift", x=files, rounds=_rounds(files, 100_000), warmup=1, setup=setup)
