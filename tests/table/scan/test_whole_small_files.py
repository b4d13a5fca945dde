"""Small data files read in one request and decoded from memory (``OpenScan.whole_small_files``): the same rows in
the same order as opening them like big ones, and the same errors for a missing or corrupt file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.errors import DataFileError
from fieldshift.table.files.storage import TableStorage
from fieldshift.table.scan import open_scan
from tests.table.scan.scan_switches import data_path

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("pre", pa.int32()), ("v", pa.string())])


def _rows(ids: np.ndarray, pre: int) -> pa.Table:
    return pa.table({"id": ids.astype(np.int64), "pre": pa.array(np.full(len(ids), pre), pa.int32()),
                     "v": [f"v{pre}-{i}" if i % 5 else None for i in ids]})


def _table(tmp_path: Path) -> fs.Table:
    table = fs.Table.create(tmp_path / "t", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=2)
    table.upsert(_rows(np.arange(3_000), 0))
    for i in range(1, 4):
        table.upsert(_rows(np.arange(i * 100, i * 100 + 500), i))
    table.update_schema().add_column("e", pa.int32()).commit()
    table.upsert(_rows(np.arange(2_000, 2_100), 9).append_column("e", pa.array(np.arange(100), pa.int32())))
    return table


def test_small_files_read_whole_give_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path)
    calls: list[str] = []
    original = TableStorage.parquet_file

    def counted(self: TableStorage, rel: str, *, whole: bool = False, **options: object) -> object:
        if whole:
            calls.append(rel)
        return original(self, rel, whole=whole, **options)

    monkeypatch.setattr(TableStorage, "parquet_file", counted)
    fast, slow = table.scan(), table.scan()
    slow.pipeline().whole_small_files = False
    got = fast.to_arrow()
    files = len(table.scan().live_files())
    assert len(calls) == files  # every file of this table is small
    calls.clear()
    assert got.equals(slow.to_arrow()) and not calls
    assert got.num_rows == 3_000
    assert pa.Table.from_batches(list(fast.to_batches()), schema=got.schema).equals(got)
    monkeypatch.setattr(open_scan, "WHOLE_FILE_BYTES", 0)  # no file is small: none is read whole
    calls.clear()
    assert table.scan().to_arrow().equals(got) and not calls


@pytest.mark.parametrize("whole", [True, False])
def test_a_missing_or_corrupt_small_file_is_a_data_file_error(tmp_path: Path, whole: bool) -> None:
    table = _table(tmp_path)
    victim = data_path(table, table.scan().live_files()[-1])
    victim.write_bytes(b"not parquet at all")
    scan = table.scan()
    scan.pipeline().whole_small_files = whole
    with pytest.raises(DataFileError, match="unreadable"):
        scan.to_arrow()
    victim.unlink()
    scan = table.scan()
    scan.pipeline().whole_small_files = whole
    with pytest.raises(DataFileError, match="missing"):
        scan.to_arrow()
