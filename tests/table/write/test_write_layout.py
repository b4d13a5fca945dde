"""The data-file layout (rows per file and row group, codec): measured defaults, table properties to set it,
and the same rows read back whatever the layout."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.errors import InvalidOptionError
from fieldshift.table.files.write_layout import (
    CODEC_PROPERTY,
    DEFAULT_LAYOUT,
    DICTIONARY_CHOICE_ROWS,
    DICTIONARY_PROPERTY,
    FILE_ROWS_PROPERTY,
    ROW_GROUP_BYTES_PROPERTY,
    ROW_GROUP_ROWS_PROPERTY,
    WriteLayout,
    write_layout,
)

OLD_LAYOUT = WriteLayout(row_group_rows=131_072, row_group_bytes=1 << 62)  # before issue 35


def _rows(n: int, offset: int = 0) -> pa.Table:
    ids = np.arange(offset, offset + n, dtype=np.int64)
    return pa.table({"id": ids, "x": ids * 0.5, "s": pa.array([f"v{i % 13}" for i in ids.tolist()])})


def _layout(location: Path) -> list[tuple[int, list[int], set[str]]]:
    """(rows, rows per row group, codecs) of every data file."""
    out = []
    for path in sorted((location / "data").rglob("*.parquet")):
        md = pq.read_metadata(path)
        groups = [md.row_group(g).num_rows for g in range(md.num_row_groups)]
        codecs = {md.row_group(g).column(c).compression for g in range(md.num_row_groups)
                  for c in range(md.num_columns)}
        out.append((md.num_rows, groups, codecs))
    return out


def test_group_rows_are_even_and_within_both_caps() -> None:
    t = _rows(1000)
    per_row = t.nbytes / t.num_rows
    assert WriteLayout(row_group_rows=300).group_rows(t) == 250  # 4 even groups, not 300+300+300+100
    assert WriteLayout(row_group_rows=1000).group_rows(t) == 1000
    assert WriteLayout(row_group_bytes=int(per_row * 100) + 1).group_rows(t) == 100
    assert DEFAULT_LAYOUT.group_rows(t) == 1000 and DEFAULT_LAYOUT.group_rows(t.slice(0, 0)) == 1
    assert OLD_LAYOUT.group_rows(_rows(300_000)) == 100_000  # 3 groups either way; now of even size


def test_default_row_groups_are_a_million_rows_up_to_256_mib() -> None:
    assert DEFAULT_LAYOUT.row_group_rows == DEFAULT_LAYOUT.file_rows == 1_048_576
    wide = pa.table({f"c{i}": pa.array(np.zeros(10, np.float64)) for i in range(100)})  # 800 bytes a row
    assert WriteLayout(row_group_bytes=8000).group_rows(wide) == 10
    assert WriteLayout(row_group_bytes=4000).group_rows(wide) == 5


def test_properties_set_the_layout_and_the_rows_read_back_the_same(tmp_path: Path) -> None:
    data = _rows(2_500)
    props = {FILE_ROWS_PROPERTY: "1000", ROW_GROUP_ROWS_PROPERTY: "300", CODEC_PROPERTY: "snappy"}
    t = fs.Table.create(tmp_path / "set", data.schema, properties=props)
    t.append(data)
    assert sorted(_layout(tmp_path / "set")) == [(500, [250, 250], {"SNAPPY"}),
                                                 (1000, [250] * 4, {"SNAPPY"}), (1000, [250] * 4, {"SNAPPY"})]
    plain = fs.Table.create(tmp_path / "plain", data.schema)
    plain.append(data)
    assert [(n, g) for n, g, _ in _layout(tmp_path / "plain")] == [(2500, [2500])]
    assert t.scan().to_arrow().sort_by("id").equals(plain.scan().to_arrow().sort_by("id"))
    assert fs.Table.open(tmp_path / "set").scan(filter="id < 1200").to_arrow().num_rows == 1200


def test_compaction_and_keyed_writes_keep_the_tables_layout(tmp_path: Path) -> None:
    props = {FILE_ROWS_PROPERTY: "600", ROW_GROUP_ROWS_PROPERTY: "200"}
    t = fs.Table.create(tmp_path / "t", _rows(1).schema, properties=props)
    for i in range(3):
        t.append(_rows(400, i * 400))
    t.compact()
    live = [f for f in _layout(tmp_path / "t") if f[0] != 400]  # the old files stay until vacuum
    assert sorted(n for n, _, _ in live) == [600, 600] and all(g == [200] * 3 for _, g, _ in live)
    schema = fs.Schema.from_arrow(pa.schema([pa.field("id", pa.int64(), nullable=False), ("x", pa.float64()),
                                             ("s", pa.string())]), assign_ids=True)
    k = fs.Table.create(tmp_path / "k", schema, identifier_fields=["id"], buckets=2,
                        properties={ROW_GROUP_ROWS_PROPERTY: "100"})
    k.append(_rows(1000).cast(schema.to_arrow()))
    files = _layout(tmp_path / "k")
    assert len(files) == 2 and all(max(g) <= 100 and sum(g) == n for n, g, _ in files)
    assert k.scan().to_arrow().sort_by("id").equals(_rows(1000).cast(schema.to_arrow()))


@pytest.mark.parametrize(("key", "value"), [(FILE_ROWS_PROPERTY, "0"), (ROW_GROUP_ROWS_PROPERTY, "many"),
                                            (ROW_GROUP_BYTES_PROPERTY, "-5"), (CODEC_PROPERTY, "brotli9"),
                                            (DICTIONARY_PROPERTY, "some"), (FILE_ROWS_PROPERTY, str(2**63)),
                                            (ROW_GROUP_ROWS_PROPERTY, "9" * 30),
                                            (ROW_GROUP_BYTES_PROPERTY, str(2**64))])
def test_a_bad_layout_property_is_refused_before_anything_is_created(tmp_path: Path, key: str, value: str) -> None:
    with pytest.raises(InvalidOptionError, match=key.replace(".", r"\.")):
        fs.Table.create(tmp_path / "t", _rows(1).schema, properties={key: value})
    assert not (tmp_path / "t").exists()
    assert write_layout({}) is DEFAULT_LAYOUT
    assert write_layout({CODEC_PROPERTY: "ZSTD", FILE_ROWS_PROPERTY: "1_000"}) == WriteLayout(file_rows=1000,
                                                                                               codec="zstd")


def test_the_largest_layout_numbers_write_and_read(tmp_path: Path) -> None:
    """Counts up to 2**63 - 1 are accepted, and every write with them works (a larger file-rows was accepted at
    create and then failed every append with a bare OverflowError from pyarrow's slice)."""
    top = str(2**63 - 1)
    props = {FILE_ROWS_PROPERTY: top, ROW_GROUP_ROWS_PROPERTY: top, ROW_GROUP_BYTES_PROPERTY: top}
    table = fs.Table.create(tmp_path / "t", _rows(1).schema, properties=props)
    table.append(_rows(10))
    table.compact()
    assert table.to_arrow().num_rows == 10


def _dictionary_pages(location: Path) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for path in (location / "data").rglob("*.parquet"):
        md = pq.read_metadata(path)
        for g in range(md.num_row_groups):
            for c in range(md.num_columns):
                col = md.row_group(g).column(c)
                out[col.path_in_schema] = out.get(col.path_in_schema, False) or col.has_dictionary_page
    return out


def test_only_columns_whose_values_repeat_are_dictionary_encoded(tmp_path: Path) -> None:
    data = _rows(20_000).append_column("flag", pa.array([i % 3 == 0 for i in range(20_000)]))
    auto = fs.Table.create(tmp_path / "auto", data.schema)
    auto.append(data)
    assert _dictionary_pages(tmp_path / "auto") == {"id": False, "x": False, "s": True, "flag": False}
    every = fs.Table.create(tmp_path / "all", data.schema, properties={DICTIONARY_PROPERTY: "all"})
    every.append(data)
    assert _dictionary_pages(tmp_path / "all") == {"id": True, "x": True, "s": True, "flag": False}
    assert auto.scan().to_arrow().equals(every.scan().to_arrow())
    assert DEFAULT_LAYOUT.dictionary_columns(data.slice(0, DICTIONARY_CHOICE_ROWS - 1)) is True  # the writer decides
    assert DEFAULT_LAYOUT.dictionary_columns(data.slice(0, DICTIONARY_CHOICE_ROWS)) == ["s", "flag"]
    small = fs.Table.create(tmp_path / "small", data.schema)  # a small file (an upsert's bucket): the same rule
    small.append(data.slice(0, 5_000))
    assert _dictionary_pages(tmp_path / "small") == {"id": False, "x": False, "s": True, "flag": False}
    assert small.scan().to_arrow().equals(every.scan().to_arrow().slice(0, 5_000))
    nested = data.append_column("st", pa.array([{"a": i} for i in range(20_000)]))
    assert DEFAULT_LAYOUT.dictionary_columns(nested) is True
    assert WriteLayout(dictionary="none").dictionary_columns(data) is False
