"""A keyed table's catalog entries come in merge-group order (bucket by bucket), not in the snapshot's file-id
order: the positions of their statistics must follow each file, or the columnar statistics test (``prune_vector``,
on at least ``MIN_FILES`` files) reads another file's bounds and drops files that hold matching rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

import fieldshift as fs
from fieldshift.table.scan.prune_vector import MIN_FILES

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def test_a_keyed_point_lookup_over_many_files_finds_its_row(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", SCHEMA, identifier_fields=["id"], buckets=2)
    appends = MIN_FILES // 2 + 1  # two bucket files per append: the files of one bucket are not adjacent by id
    for c in range(appends):
        ids = np.arange(c * 10, c * 10 + 10)
        t.append(pa.table({"id": ids, "v": [f"r{i}" for i in ids]}))
    assert len(t.scan().live_files()) >= MIN_FILES
    files = t.scan().pipeline().content.files
    assert files.ids.tolist() == [files[i].file_id for i in range(len(files))]  # each entry's own id
    for k in range(0, appends * 10, 7):
        fast, slow = t.scan(filter=fs.col("id") == k), t.scan(filter=fs.col("id") == k)
        slow.vector_prune = False
        assert fast.to_arrow().column("v").to_pylist() == [f"r{k}"], k
        assert sorted(f.path for f in fast.files()) == sorted(f.path for f in slow.files()), k
