"""``StoreFiles``: the storage options of a DuckLake, Delta or Hudi read (the S3 reads themselves are in
tests/servers/test_open_store_options.py)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.errors import InvalidOptionError
from fieldshift.open_tables.store_files import StoreFiles


def test_options_survive_pickling_and_local_files_open(tmp_path: Path) -> None:
    pq.write_table(pa.table({"v": [1, 2, 3]}), tmp_path / "f.parquet")
    files = StoreFiles({"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "aws_allow_http": "true", "region": "r"}, "t")
    shipped = pickle.loads(pickle.dumps(files))  # what a Spark executor receives
    assert shipped.options == files.options
    assert shipped.footer_rows(str(tmp_path / "f.parquet")) == 3
    with shipped.open(str(tmp_path / "f.parquet")) as f:
        assert pq.read_table(f).num_rows == 3


def test_unknown_keys_are_named_where_only_fieldshift_reads(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionError, match="endpint"):
        StoreFiles({"endpint": "x"}, "Delta table t")
    StoreFiles({"aws_s3_allow_unsafe_rename": "true"}, "Delta table t")  # delta-rs' writer keys: accepted
    StoreFiles({"hoodie.some.option": "x"}, "Hudi table t", strict=False)  # Hudi's go on to hudi-rs
    from deltalake import write_deltalake

    write_deltalake(str(tmp_path / "d"), pa.table({"v": [1]}))
    with pytest.raises(InvalidOptionError, match="endpint"):
        fs.open_table(tmp_path / "d", storage_options={"endpint": "x"})
    with fs.open_table(tmp_path / "d", storage_options={"aws_region": "us-east-1"}) as t:  # local: unused
        assert t.to_arrow()["v"].to_pylist() == [1]
