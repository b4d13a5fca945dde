"""Data files pick their codec: snappy on a local disk; on an object store by chunk size. Small and large files
read back the same either way."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

import fieldshift as fs
from fieldshift.schema.model import Schema
from fieldshift.table.files.data_files import SMALL_CHUNK_BYTES, parquet_codec, write_data_file
from fieldshift.table.files.storage import TableStorage


def _codecs(location: Path) -> set[str]:
    out = set()
    for path in (location / "data").glob("*.parquet"):
        md = pq.read_metadata(path)
        out |= {md.row_group(g).column(c).compression for g in range(md.num_row_groups) for c in range(md.num_columns)}
    return out


def _pair() -> tuple[pa.Table, pa.Table]:
    rows = SMALL_CHUNK_BYTES // 8 * 4  # about 4 x 64 KiB in each int64 column
    big = pa.table({"a": pa.array(range(rows), pa.int64()), "s": pa.array([f"v{i % 97}" for i in range(rows)])})
    return big.slice(0, 3), big


def test_on_an_object_store_small_chunks_are_snappy_large_ones_zstd(tmp_path: Path) -> None:
    small, big = _pair()
    assert parquet_codec(small, local=False) == "snappy" and parquet_codec(big, local=False) == "zstd"
    (tmp_path / "bucket" / "t" / "data").mkdir(parents=True)  # a local stand-in for the store: no implicit folders
    store = TableStorage("s3://bucket/t", filesystem=pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()))
    schema = Schema.from_arrow(big.schema, assign_ids=True)
    for data, codec in ((small, "SNAPPY"), (big, "ZSTD")):
        f = write_data_file(store, schema, data.cast(schema.to_arrow()))
        md = pq.read_metadata(tmp_path / "bucket" / "t" / f.path)
        assert {md.row_group(0).column(c).compression for c in range(md.num_columns)} == {codec}


def test_on_a_local_disk_every_file_is_snappy(tmp_path: Path) -> None:
    small, big = _pair()
    assert parquet_codec(small) == parquet_codec(big) == "snappy"
    for name, data in (("small", small), ("big", big)):
        t = fs.Table.create(tmp_path / name, data.schema)
        t.append(data)
        assert _codecs(tmp_path / name) == {"SNAPPY"}
        assert fs.Table.open(tmp_path / name).scan().to_arrow().equals(data)


def test_wide_tiny_table_reads_back_every_column(tmp_path: Path) -> None:
    """Many small chunks are decoded without Arrow's threads; nested columns still select by leaf."""
    data = pa.table({**{f"c{i}": pa.array([i, None], pa.int32()) for i in range(300)},
                     "st": pa.array([{"x": 1, "y": "a"}, None]), "l": pa.array([[1, 2], None]),
                     "a.b": pa.array(["dot", "ted"])})
    t = fs.Table.create(tmp_path / "t", data.schema)
    t.append(data)
    got = fs.Table.open(tmp_path / "t").scan(columns=["a.b", "st", "c7", "l"]).to_arrow()
    assert got.equals(data.select(["a.b", "st", "c7", "l"]))
