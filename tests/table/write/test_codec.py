"""Data files pick their codec by chunk size; small and large files read back the same either way."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import fieldshift as fs
from fieldshift.table.files.data_files import SMALL_CHUNK_BYTES, parquet_codec
from fieldshift.table.files.write_layout import CODEC_PROPERTY, UNCOMPRESSED_FILE_BYTES


def _codecs(location: Path) -> set[str]:
    out = set()
    for path in (location / "data").glob("*.parquet"):
        md = pq.read_metadata(path)
        out |= {md.row_group(g).column(c).compression for g in range(md.num_row_groups) for c in range(md.num_columns)}
    return out


def test_small_files_are_uncompressed_small_chunks_snappy_large_ones_zstd(tmp_path: Path) -> None:
    rows = SMALL_CHUNK_BYTES // 8 * 4  # about 4 x 64 KiB in each int64 column
    big = pa.table({"a": pa.array(range(rows), pa.int64()), "s": pa.array([f"v{i % 97}" for i in range(rows)])})
    small = big.slice(0, 3)
    wide = pa.table({f"c{i}": pa.array(range(6_000), pa.int64()) for i in range(8)})  # 47 KiB chunks, 375 KiB
    assert small.nbytes <= UNCOMPRESSED_FILE_BYTES < wide.nbytes
    assert parquet_codec(small) == "none" and parquet_codec(wide) == "snappy" and parquet_codec(big) == "zstd"
    for name, data, codec in (("small", small, "UNCOMPRESSED"), ("wide", wide, "SNAPPY"), ("big", big, "ZSTD")):
        t = fs.Table.create(tmp_path / name, data.schema)
        t.append(data)
        assert _codecs(tmp_path / name) == {codec}
        assert fs.Table.open(tmp_path / name).scan().to_arrow().equals(data)
    kept = fs.Table.create(tmp_path / "kept", small.schema, properties={CODEC_PROPERTY: "snappy"})
    kept.append(small)
    assert _codecs(tmp_path / "kept") == {"SNAPPY"}  # the table property still decides


def test_wide_tiny_table_reads_back_every_column(tmp_path: Path) -> None:
    """Many small chunks are decoded without Arrow's threads; nested columns still select by leaf."""
    data = pa.table({**{f"c{i}": pa.array([i, None], pa.int32()) for i in range(300)},
                     "st": pa.array([{"x": 1, "y": "a"}, None]), "l": pa.array([[1, 2], None]),
                     "a.b": pa.array(["dot", "ted"])})
    t = fs.Table.create(tmp_path / "t", data.schema)
    t.append(data)
    got = fs.Table.open(tmp_path / "t").scan(columns=["a.b", "st", "c7", "l"]).to_arrow()
    assert got.equals(data.select(["a.b", "st", "c7", "l"]))
