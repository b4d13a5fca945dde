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

__all__ = ["data_file_entry", "deletion_vector_entry", "position_delete_entry"]

def data_file_entry(f: DataFile, absolute_path: str, spec: PartitionSpec, file_schema: Schema,
                    format_version: int = 2, first_row_id: int | None = None) -> Any:
    """A PyIceberg ``DataFile`` for ``f`` (its schema ``file_schema``, its spec ``spec``) of a manifest of
    ``format_version`` (v3: with ``first_row_id``, None for a file that inherits its manifest's)."""
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
        _table_format_version=format_version,  # type: ignore[arg-type]
        first_row_id=first_row_id,
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


def deletion_vector_entry(puffin_path: str, puffin_size: int, data_path: str, offset: int, length: int,
                          cardinality: int, spec: PartitionSpec, file_schema: Schema, partition: tuple[Any, ...]
                          ) -> Any:
    """A PyIceberg v3 ``DataFile`` for one deletion vector: a blob of a Puffin file, naming its data file."""
    from pyiceberg.manifest import DataFile as IcebergDataFile
    from pyiceberg.manifest import DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    return IcebergDataFile.from_args(
        _table_format_version=3, content=DataFileContent.POSITION_DELETES, file_path=puffin_path,
        file_format=FileFormat.PUFFIN,
        partition=Record(*partition_values(spec, file_schema, partition, data_path)), record_count=cardinality,
        file_size_in_bytes=puffin_size, spec_id=spec.spec_id, referenced_data_file=data_path, content_offset=offset,
        content_size_in_bytes=length)
