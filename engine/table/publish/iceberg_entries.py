"""One fieldshift data file as a PyIceberg ``DataFile``: its partition values (``iceberg_values``) and its
column metrics (value and null counts, bounds in Iceberg's single-value
serialisation, written by PyIceberg's ``to_bytes``)."""

from __future__ import annotations

from typing import Any

from fieldshift.schema.model import Schema
from fieldshift.table.catalog.sqlite import DataFile
from fieldshift.table.partitions.partitioning import PartitionSpec
from fieldshift.table.publish.iceberg_types import iceberg_type_of
from fieldshift.table.publish.iceberg_values import iceberg_value, leaf_types, partition_values

__all__ = ["data_file_entry", "position_delete_entry"]

def data_file_entry(f: DataFile, absolute_path: str, spec: PartitionSpec, file_schema: Schema) -> Any:
    """A PyIceberg ``DataFile`` for ``f`` (its schema ``file_schema``, its spec ``spec``)."""
    from pyiceberg.conversions import to_bytes
    from pyiceberg.manifest import DataFile as IcebergDataFile
    from pyiceberg.manifest import DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    leaves = leaf_types(file_schema)
    values: dict[int, int] = {}
    nulls: dict[int, int] = {}
    lower: dict[int, bytes] = {}
    upper: dict[int, bytes] = {}
    for fid, (count, null_count, lo, hi) in f.stats.items():
        t = leaves.get(fid)
        values[fid], nulls[fid] = count, null_count
        it = iceberg_type_of(t) if t is not None else None
        if it is None or lo is None or hi is None:
            continue
        a, b = iceberg_value(t, lo), iceberg_value(t, hi)
        if a is None or b is None:
            continue
        lower[fid], upper[fid] = to_bytes(it, a), to_bytes(it, b)
    partition = partition_values(spec, file_schema, f.partition, absolute_path)
    return IcebergDataFile.from_args(
        content=DataFileContent.DATA,
        file_path=absolute_path,
        file_format=FileFormat.PARQUET,
        partition=Record(*partition),
        record_count=f.record_count,
        file_size_in_bytes=f.file_size,
        value_counts=values,
        null_value_counts=nulls,
        lower_bounds=lower,
        upper_bounds=upper,
        spec_id=spec.spec_id,
    )


def position_delete_entry(absolute_path: str, rows: int, size: int, spec: PartitionSpec, file_schema: Schema,
                          partition: tuple[Any, ...]) -> Any:
    """A PyIceberg ``DataFile`` for a position-delete file of one partition of ``spec``."""
    from pyiceberg.manifest import DataFile as IcebergDataFile
    from pyiceberg.manifest import DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    return IcebergDataFile.from_args(
        content=DataFileContent.POSITION_DELETES, file_path=absolute_path, file_format=FileFormat.PARQUET,
        partition=Record(*partition_values(spec, file_schema, partition, absolute_path)), record_count=rows,
        file_size_in_bytes=size, spec_id=spec.spec_id)
