"""Partitioned writes: split rows by the spec's transforms, one or more files per partition.

Source columns stay in the files (no identity column is elided), and the directory names
(``data/ts_day=2024-01-31/...``) are only for people browsing: the catalog records each file's spec
id and typed partition values, and no reader looks at paths.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from fieldshift.schema.model import Schema, split_path
from fieldshift.table.catalog.sqlite import DataFile
from fieldshift.table.files.data_files import write_data_file
from fieldshift.table.files.storage import TableStorage, open_storage
from fieldshift.table.files.write_layout import DEFAULT_LAYOUT, WriteLayout
from fieldshift.table.keyed.keyed_write import Placement, write_bucketed
from fieldshift.table.keyed.keys import KeySpec
from fieldshift.table.partitions.partitioning import PartitionSpec

__all__ = ["MAX_FILE_ROWS", "partition_directory", "source_column", "split_by_spec", "write_partitioned"]

MAX_FILE_ROWS = 1_048_576
_MAX_SEGMENT = 100


def source_column(schema: Schema, data: pa.Table, field_id: int) -> pa.Array:
    """The values of a (possibly struct-nested) column; a null struct makes its children null."""
    parts = split_path(schema.path_of(field_id))
    column = data.column(parts[0])
    arr = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    for part in parts[1:]:
        arr = arr.flatten()[arr.type.get_field_index(part)]
    return arr


def split_by_spec(schema: Schema, spec: PartitionSpec, data: pa.Table) -> Iterator[tuple[tuple[Any, ...], pa.Table]]:
    """(partition values, rows) of every partition ``data`` touches, in order of first appearance."""
    if not spec.fields:
        yield (), data
        return
    sources = [source_column(schema, data, f.source_id) for f in spec.fields]
    keys = [f.transform.keys(arr) for f, arr in zip(spec.fields, sources, strict=True)]
    if data.num_rows == 0:
        return
    names = [f"k{i}" for i in range(len(keys))]
    grouped = pa.table([*keys, pa.array(np.arange(data.num_rows, dtype=np.int64))], names=[*names, "row"]) \
        .group_by(names, use_threads=False).aggregate([("row", "list")])
    rows = grouped.column("row_list").to_pylist()
    values = [grouped.column(n).to_pylist() for n in names]
    for g in sorted(range(grouped.num_rows), key=lambda i: rows[i][0]):
        partition = tuple(f.transform.value(values[i][g], src.type)
                          for i, (f, src) in enumerate(zip(spec.fields, sources, strict=True)))
        yield partition, data.take(pa.array(rows[g], pa.int64()))


def partition_directory(schema: Schema, spec: PartitionSpec, partition: tuple[Any, ...]) -> str:
    """``data/ts_day=2024-01-31/id_bucket_16=3`` (names and values URL-quoted, each segment kept short)."""
    segments = ["data"]
    for f, v in zip(spec.fields, partition, strict=True):
        src = schema.field(f.source_id).type if schema.has_field(f.source_id) else None
        human = f.transform.human(v, src) if src is not None else str(v)
        segment = f"{urllib.parse.quote(f.name, safe='')}={urllib.parse.quote(human, safe='')}"
        segments.append(segment[:_MAX_SEGMENT])
    return "/".join(segments)


def write_partitioned(location: TableStorage | Path, schema: Schema, spec: PartitionSpec, data: pa.Table,
                      written: list[str], max_rows: int = MAX_FILE_ROWS, *, keys: KeySpec | None = None,
                      content: str = "data", layout: WriteLayout = DEFAULT_LAYOUT) -> list[DataFile]:
    """Write ``data`` as files of at most ``max_rows`` rows per partition (and, for a keyed table, per
    hidden key bucket within it), row groups and codec as ``layout`` says; paths go to ``written`` as they
    land (a failure midway removes this call's files before raising)."""
    files: list[DataFile] = []
    first = len(written)
    try:
        for partition, rows in split_by_spec(schema, spec, data):
            directory = partition_directory(schema, spec, partition) if spec.fields else "data"
            if keys is not None:
                files += write_bucketed(location, schema, rows, keys, written, max_rows=max_rows,
                                        where=Placement(content, spec.spec_id, partition, directory), layout=layout)
                continue
            for start in range(0, rows.num_rows, max_rows):
                f = write_data_file(location, schema, rows.slice(start, max_rows), spec_id=spec.spec_id,
                                    partition=partition, directory=directory, layout=layout)
                written.append(f.path)
                files.append(f)
    except BaseException:
        storage = open_storage(location)
        for path in written[first:]:  # nothing half-written stays behind, whoever the caller is
            storage.delete(path)
        raise
    return files
