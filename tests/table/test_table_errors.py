"""Bad input gets a specific error and leaves the table byte-for-byte as it was."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs


def _snapshot_bytes(root: Path) -> dict[str, str]:
    """A digest of every file under the table (the catalog's WAL is checkpointed first)."""
    db = root / "fieldshift.db"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.name.endswith(("-wal", "-shm"))}


@pytest.fixture
def table(tmp_path: Path) -> fs.Table:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("n", pa.int32()),
                        ("s", pa.struct([("x", pa.int32())]))])
    t = fs.Table.create(tmp_path / "t", schema, identifier_fields=["id"])
    t.append(pa.table({"id": [1, 2], "n": pa.array([1, 2], pa.int32()), "s": [{"x": 1}, None]},
                      schema=t.schema.to_arrow()))
    return t


BAD_INPUTS: dict[str, tuple[Callable[[fs.Table], object], type[Exception], str]] = {
    "string into int column fails": (
        lambda t: t.append({"id": [3], "n": ["x"]}), fs.IncompatibleTypeError, "'n'"),
    "underscore column cannot be added": (
        lambda t: t.append({"id": [3], "_secret": [1]}), fs.SchemaEvolutionError, "'_secret'"),
    "new column without evolve": (
        lambda t: t.append({"id": [3], "extra": [1]}, evolve=False), fs.SchemaEvolutionError, "'extra'"),
    "wider type without evolve": (
        lambda t: t.append({"id": [3], "n": pa.array([2**40], pa.int64())}, evolve=False),
        fs.SchemaEvolutionError, "'n'"),
    "null in a required column": (
        lambda t: t.append({"id": pa.array([None, 4], pa.int64()), "n": pa.array([1, 2], pa.int32())}),
        fs.SchemaEvolutionError, "'id'"),
    "required column missing": (
        lambda t: t.append({"n": pa.array([1], pa.int32())}), fs.RequiredFieldWithoutDefaultError, "'id'"),
    "struct into int column": (
        lambda t: t.append({"id": [3], "n": [{"a": 1}]}), fs.IncompatibleTypeError, "'n'"),
    "drop identifier": (
        lambda t: t.update_schema().drop_column("id").commit(), fs.IdentifierFieldChangeError, "'id'"),
    "rename identifier": (
        lambda t: t.update_schema().rename_column("id", "key").commit(), fs.IdentifierFieldChangeError, "'id'"),
    "unknown column in DDL": (
        lambda t: t.update_schema().drop_column("nope").commit(), fs.UnknownFieldError, "'nope'"),
    "narrowing DDL": (
        lambda t: t.update_schema().update_column("n", pa.int8()).commit(), fs.TypeChangeNotAllowedError, "'n'"),
    "duplicate input names": (
        lambda t: t.append(pa.table([pa.array([1]), pa.array([2])], names=["id", "id"])),
        fs.SchemaEvolutionError, "duplicate"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS), ids=list(BAD_INPUTS))
def test_bad_input_is_refused_and_table_unchanged(table: fs.Table, case: str) -> None:
    action, error, named = BAD_INPUTS[case]
    before = _snapshot_bytes(table.location)
    with pytest.raises(error) as info:
        action(table)
    assert named in str(info.value)
    assert _snapshot_bytes(table.location) == before


def test_missing_data_file_is_an_error_naming_the_file(table: fs.Table) -> None:
    path = next((table.location / "data").glob("*.parquet"))
    path.unlink()
    with pytest.raises(fs.DataFileError, match=path.name):
        table.to_arrow()


def test_corrupt_data_file_is_an_error_naming_the_file(table: fs.Table) -> None:
    path = next((table.location / "data").glob("*.parquet"))
    path.write_bytes(b"not parquet at all")
    with pytest.raises(fs.DataFileError, match=path.name):
        table.to_arrow()


def test_catalog_from_a_newer_format_is_refused(table: fs.Table) -> None:
    with sqlite3.connect(table.location / "fieldshift.db") as conn:
        conn.execute("UPDATE fs_metadata SET value = '99' WHERE key = 'format_version'")
    with pytest.raises(fs.CatalogFormatError, match="version 99"):
        fs.Table.open(table.location)


def test_not_a_catalog_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "fieldshift.db").write_bytes(b"garbage" * 100)
    with pytest.raises(fs.CatalogFormatError):
        fs.Table.open(tmp_path / "t")


def test_open_missing_and_create_twice(tmp_path: Path, table: fs.Table) -> None:
    with pytest.raises(fs.TableError, match="no fieldshift table"):
        fs.Table.open(tmp_path / "nowhere")
    with pytest.raises(fs.TableError, match="already exists"):
        fs.Table.create(table.location, table.schema)


def test_a_missing_snapshot_is_a_table_error(table: fs.Table) -> None:
    """Issue 27: scan(snapshot_id=999) raised SchemaEvolutionError; a missing snapshot is a table error,
    and an expired one is a kind of missing one (catching SnapshotNotFoundError catches both)."""
    for bad in (999, -1):
        with pytest.raises(fs.SnapshotNotFoundError, match=rf"no snapshot {bad}; its snapshots are \[0, 1\]") as e:
            table.scan(snapshot_id=bad)
        assert isinstance(e.value, fs.TableError) and not isinstance(e.value, fs.SchemaEvolutionError)
        assert not isinstance(e.value, fs.SnapshotExpiredError)
    assert issubclass(fs.SnapshotExpiredError, fs.SnapshotNotFoundError)
    for _ in range(3):
        table.upsert({"id": [7]})
    table.expire_snapshots(older_than=0, retain_last=1)
    with pytest.raises(fs.SnapshotNotFoundError, match="expired"):
        table.scan(snapshot_id=0)
