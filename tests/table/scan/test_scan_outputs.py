"""Scan conveniences: ``limit`` stops reading early; pandas, polars and DuckDB results; missing extras named."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.extras import require
from fieldshift.table.files.storage import TableStorage
from fieldshift.table.scan.table_scan import Scan

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("s", pa.string())])


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The data files every scan opens, in order (``TableStorage.parquet_file`` is every data file read)."""
    seen: list[str] = []
    original = TableStorage.parquet_file

    def counting(self: TableStorage, rel: str, **options: object) -> object:
        seen.append(rel)
        return original(self, rel, **options)

    monkeypatch.setattr(TableStorage, "parquet_file", counting)
    return seen


@pytest.fixture
def plain(tmp_path: Path) -> fs.Table:
    """Five files of ten rows: ids 0-49 in order, ``s`` the id as text."""
    t = fs.Table.create(tmp_path / "plain", SCHEMA)
    for i in range(5):
        ids = list(range(10 * i, 10 * i + 10))
        t.append(pa.table({"id": ids, "s": [str(x) for x in ids]}, schema=SCHEMA))
    return t


@pytest.fixture
def keyed(tmp_path: Path) -> fs.Table:
    """A keyed table of four buckets whose rows need the merge: updates, a delete, a resurrected key."""
    t = fs.Table.create(tmp_path / "keyed", SCHEMA, identifier_fields=["id"], buckets=4)
    t.upsert(pa.table({"id": list(range(40)), "s": ["v1"] * 40}, schema=SCHEMA))
    t.upsert(pa.table({"id": list(range(0, 40, 3)), "s": ["v2"] * 14}, schema=SCHEMA))
    t.delete(list(range(0, 40, 5)))
    t.upsert(pa.table({"id": [5, 41], "s": ["back", "new"]}, schema=SCHEMA))
    return t


READS: dict[str, Callable[[Scan], pa.Table]] = {
    "to_arrow": lambda s: s.to_arrow(),
    "to_batches": lambda s: pa.Table.from_batches(list(s.to_batches()), schema=s.output_schema),
    "to_reader": lambda s: s.to_reader().read_all(),
}


def _rows(t: pa.Table) -> list[tuple[object, ...]]:
    return [tuple(r.values()) for r in t.to_pylist()] if t.num_columns else [()] * t.num_rows


def _check_limited(table: fs.Table, opened: list[str], limit: int, read: str, **scan: object) -> list[str]:
    """A limited scan's rows are the first ``min(limit, total)`` rows of the same scan without the limit
    (so a subset of them), and its count says so; returns the data files it opened, in order."""
    whole = _rows(READS[read](table.scan(**scan)))
    del opened[:]
    limited = READS[read](table.scan(**scan, limit=limit))
    files = list(opened)
    assert limited.schema == table.scan(**scan).output_schema
    rows = _rows(limited)
    assert len(rows) == min(limit, len(whole))
    assert rows == whole[:len(rows)]
    assert table.scan(**scan, limit=limit).count() == len(rows)
    return files


@pytest.mark.parametrize("read", sorted(READS))
def test_limit_on_a_plain_table_reads_only_the_files_it_needs(plain: fs.Table, opened: list[str],
                                                              read: str) -> None:
    every = [f.path for f in plain.scan().files()]
    assert len(every) == 5
    assert _check_limited(plain, opened, 15, read) == every[:2]  # 10 rows in the first file, 5 in the second
    assert _check_limited(plain, opened, 10, read) == every[:1]
    assert _check_limited(plain, opened, 1, read) == every[:1]
    assert _check_limited(plain, opened, 0, read) == []
    assert _check_limited(plain, opened, 50, read) == every
    assert _check_limited(plain, opened, 1000, read) == every
    # after the row filter: ids >= 13 and odd: 4 rows in the second file, 5 in the third
    odd = {"filter": [("id", ">=", 13), ("s", "in", [str(i) for i in range(1, 50, 2)])]}
    assert _check_limited(plain, opened, 6, read, **odd) == every[1:3]  # the first file pruned by its stats
    assert _check_limited(plain, opened, 2, read, columns=["s"], **odd) == every[1:2]
    assert _check_limited(plain, opened, 7, read, columns=[]) == every[:1]  # no columns: rows still counted


@pytest.mark.parametrize("read", sorted(READS))
def test_limit_on_a_keyed_table_counts_rows_after_the_merge_and_deletes(keyed: fs.Table, opened: list[str],
                                                                       read: str) -> None:
    total = keyed.scan().count()
    assert total == 40 - 8 + 2  # 8 deleted, 5 resurrected, 41 new
    del opened[:]
    keyed.scan().to_arrow()
    unlimited_files = len(opened)
    for limit in (0, 1, 5, total - 1, total, total + 10):
        files = _check_limited(keyed, opened, limit, read)
        assert len(files) <= unlimited_files
    assert len(_check_limited(keyed, opened, 1, read)) < unlimited_files  # one merge group read, not four
    merged = {"filter": ("s", "==", "v2")}  # older "v1" versions of these keys must not come back
    assert _check_limited(keyed, opened, 3, read, **merged)
    assert all(s == "v2" for _, s in _rows(keyed.scan(limit=100, **merged).to_arrow()))


def test_count_with_a_limit_stops_reading(plain: fs.Table, opened: list[str]) -> None:
    assert plain.scan(limit=5).count() == 5 and not opened  # answered from the catalog
    assert plain.scan(filter=("id", ">=", 0), limit=12).count() == 12
    assert len(opened) == 2


@pytest.mark.parametrize(("limit", "error"), [(-1, fs.InvalidOptionError), (True, TypeError), ("3", TypeError),
                                              (2.0, TypeError)])
def test_a_bad_limit_is_refused_before_reading(plain: fs.Table, opened: list[str], limit: object,
                                               error: type[Exception]) -> None:
    with pytest.raises(error, match="limit"):
        plain.scan(limit=limit)  # type: ignore[arg-type]
    assert not opened


def test_pandas_polars_and_duckdb_results_equal_the_arrow_one(plain: fs.Table) -> None:
    import duckdb
    import polars as pl

    scan = plain.scan(columns=["s", "id"], filter=("id", "<", 25), limit=20)
    expected = scan.to_arrow()
    assert expected.num_rows == 20
    frame = scan.to_pandas()
    assert list(frame.columns) == ["s", "id"] and frame["id"].tolist() == expected["id"].to_pylist()
    assert scan.to_pandas(types_mapper=pd_arrow_types).dtypes["s"] != frame.dtypes["s"]  # kwargs reach pyarrow
    polars_frame = scan.to_polars()
    assert isinstance(polars_frame, pl.DataFrame) and polars_frame.to_arrow().cast(expected.schema).equals(expected)
    con = scan.to_duckdb("evens")
    assert isinstance(con, duckdb.DuckDBPyConnection)
    assert con.sql("SELECT count(*), sum(id) FROM evens").fetchall() == [(20, sum(range(20)))]
    mine = duckdb.connect()
    assert plain.scan(limit=3).to_duckdb("first", connection=mine) is mine
    assert mine.sql("SELECT id FROM first ORDER BY id").fetchall() == [(0,), (1,), (2,)]


def pd_arrow_types(t: pa.DataType) -> object:
    import pandas as pd

    return pd.ArrowDtype(t)


@pytest.mark.parametrize(("module", "call"), [
    ("pandas", lambda s: s.to_pandas()),
    ("polars", lambda s: s.to_polars()),
    ("duckdb", lambda s: s.to_duckdb("t")),
])
def test_a_missing_library_names_the_extra_to_install(plain: fs.Table, monkeypatch: pytest.MonkeyPatch,
                                                      module: str, call: Callable[[Scan], object]) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # importing it now fails as if it were not installed
    with pytest.raises(fs.MissingDependencyError, match=rf"pip install {module}\b.*'{module}' extra") as info:
        call(plain.scan())
    assert isinstance(info.value, ImportError) and isinstance(info.value, fs.FieldshiftError)
    assert module in str(info.value)


def test_a_broken_library_is_not_reported_as_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fs_broken_lib.py").write_text("import fs_no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="fs_no_such_dependency") as info:
        require("fs_broken_lib", "broken", "a test")
    assert not isinstance(info.value, fs.MissingDependencyError)
    assert fs.SparkNotInstalledError.__mro__[1] is fs.MissingDependencyError  # one class catches every missing extra



def test_the_extras_the_errors_name_exist() -> None:
    import tomllib

    extras = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text())[
        "project"]["optional-dependencies"]
    for module in ("pandas", "polars", "duckdb"):
        assert any(req.startswith(module) for req in extras[module]), (module, extras.get(module))


def test_a_scan_policy_given_by_name_or_of_another_kind(tmp_path: Path) -> None:
    """``scan(policy=...)`` takes a policy's name as ``set_policy`` does; anything else that is no ``CastPolicy`` is
    a TypeError saying so (it was an AttributeError on ``str.classify`` from inside the planner, once files were
    read)."""
    from fieldshift.errors import InvalidOptionError
    from fieldshift.schema.policy import CastPolicy

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.int32())])
    table = fs.Table.create(tmp_path / "p", schema)
    table.append(pa.table({"id": [1, 2], "a": pa.array([1, 2], pa.int32())}, schema=schema))
    by_name = table.scan(policy="hudi")
    assert by_name.policy == CastPolicy.hudi() and by_name.to_arrow().num_rows == 2
    with pytest.raises(InvalidOptionError, match="unknown policy"):
        table.scan(policy="nonsense")
    with pytest.raises(TypeError, match="policy must be a CastPolicy"):
        table.scan(policy={"name": "hudi"})  # type: ignore[arg-type]
