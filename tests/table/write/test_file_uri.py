"""A ``file://`` URI is a local table location: the same table as its plain path, written by rename."""

from __future__ import annotations

import pickle
from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.files.storage import TableStorage, is_object_store

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def test_a_file_uri_table_is_the_plain_path_table(tmp_path: Path) -> None:
    uri = (tmp_path / "t").as_uri()
    t = fs.Table.create(uri, SCHEMA)
    assert t.location == tmp_path / "t" and t.storage.is_local
    assert (tmp_path / "t" / "fieldshift.db").is_file()  # its own catalog, as for a plain path
    first = t.append({"id": [1, 2], "name": ["a", "b"]}).snapshot_id
    fs.Table.open(tmp_path / "t").append({"id": [3], "name": ["c"]})
    again = fs.Table.open(uri)
    assert sorted(again.to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert again.scan(snapshot_id=first).to_arrow().num_rows == 2
    files = sorted(p.relative_to(tmp_path / "t").as_posix() for p in (tmp_path / "t" / "data").rglob("*.parquet"))
    assert files == sorted(f.path for f in again.scan().files())  # renamed into place, no temporary left
    orphan = tmp_path / "t" / "data" / ("b" * 32 + ".parquet")
    orphan.write_bytes(b"left by a crashed writer")
    assert again.vacuum(older_than=0) == ["data/" + "b" * 32 + ".parquet"] and not orphan.exists()


def test_a_file_uri_in_a_shared_catalog(tmp_path: Path) -> None:
    catalog = str(tmp_path / "shared.db")
    t = fs.Table.create((tmp_path / "t").as_uri(), SCHEMA, catalog=catalog, name="t")
    t.append({"id": [1], "name": ["a"]})
    assert fs.Table.open(tmp_path / "t").to_arrow().num_rows == 1  # by its directory's marker
    assert fs.Table.open("x", catalog=catalog, name="t").location == tmp_path / "t"


def test_storage_pickles_as_its_location(tmp_path: Path) -> None:
    store = TableStorage((tmp_path / "t").as_uri())
    again = pickle.loads(pickle.dumps(store))
    assert again.location == store.location == tmp_path / "t"
    assert not is_object_store(str(tmp_path)) and not is_object_store("file:///x") and is_object_store("s3://b/t")


def test_storage_writes_lists_and_deletes_local_files(tmp_path: Path) -> None:
    store = TableStorage(tmp_path)
    size = store.write_parquet("data/p=1/x.parquet", pa.table({"a": [1, 2]}))
    assert size == (tmp_path / "data" / "p=1" / "x.parquet").stat().st_size
    assert [e.rel for e in store.list_files("data")] == ["data/p=1/x.parquet"]
    assert store.read_table("data/p=1/x.parquet").num_rows == 2 and store.exists("data/p=1/x.parquet")
    store.delete("data/p=1/x.parquet")
    store.delete("data/p=1/x.parquet")  # already gone is fine
    with pytest.raises(FileNotFoundError):
        store.delete("data/p=1/x.parquet", missing_ok=False)
    assert store.list_files("nothing") == []
