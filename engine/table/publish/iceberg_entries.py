"""One fieldshift data file as a PyIceberg ``DataFile``: its partition values in the types Iceberg's
partition struct has, and its column metrics (value and null counts, bounds in Iceberg's single-value
serialisation, written by PyIceberg's ``to_bytes``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa

from fieldshift.errors import UnpublishableError
from fieldshift.schema import Schema
from fieldshift.table.catalog import DataFile
from fieldshift.table.partitioning import PartitionSpec
from fieldshift.table.publish.iceberg_types import iceberg_type_of
from fieldshift.types import ListType, MapType, StructType

__all__ = ["data_file_entry", "iceberg_value", "partition_problem", "position_delete_entry"]

T = pa.types
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DAY = dt.date(1970, 1, 1)
_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)


def _micros(value: dt.datetime) -> int:
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def iceberg_value(t: pa.DataType, value: Any) -> Any:
    """A Python value of Arrow type ``t`` as PyIceberg's writers take it (dates as days, times and
    timestamps as microseconds); None for a value Iceberg's type of ``t`` cannot hold."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return _micros(value)
    if isinstance(value, dt.date):
        return (value - _EPOCH_DAY).days
    if isinstance(value, dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
    if isinstance(value, int) and not isinstance(value, bool) and T.is_integer(t):
        lo, hi = _LONG_RANGE if t == pa.int64() else _INT_RANGE
        return value if lo <= value <= hi else None
    return value


def _leaves(schema: Schema) -> dict[int, pa.DataType]:
    out: dict[int, pa.DataType] = {}

    def walk(fields: tuple[Any, ...]) -> None:
        for f in fields:
            if isinstance(f.type, StructType):
                walk(f.type.fields)
            elif isinstance(f.type, ListType):
                walk((f.type.element,))
            elif isinstance(f.type, MapType):
                walk((f.type.key, f.type.value))
            else:
                out[f.id] = f.type

    walk(schema.fields)
    return out


def _partition(spec: PartitionSpec, schema: Schema, values: tuple[Any, ...], where: str) -> list[Any]:
    """The file's partition values as Iceberg's partition struct holds them."""
    leaves = _leaves(schema)
    out = []
    for pf, value in zip(spec.fields, values, strict=True):
        kind = pf.transform.kind
        source = leaves.get(pf.source_id)
        if value is None or kind == "void":
            out.append(None)
        elif kind in ("year", "month", "day", "hour", "bucket"):
            out.append(int(value))
        else:  # identity and truncate keep the source column's type
            converted = iceberg_value(source, value) if source is not None else value
            if converted is None:  # a truncated value below the type's range (Iceberg's int wraps there)
                raise UnpublishableError(
                    f"{where}: partition field {pf.name!r} ({pf.transform}) holds {value!r}, outside the range of "
                    f"Iceberg's {iceberg_type_of(source)}; Iceberg readers would prune that file wrongly. Rewrite "
                    "the table's files (compact()) after changing the partition spec, or partition differently")
            out.append(converted)
    return out


def data_file_entry(f: DataFile, absolute_path: str, spec: PartitionSpec, file_schema: Schema) -> Any:
    """A PyIceberg ``DataFile`` for ``f`` (its schema ``file_schema``, its spec ``spec``)."""
    from pyiceberg.conversions import to_bytes
    from pyiceberg.manifest import DataFile as IcebergDataFile
    from pyiceberg.manifest import DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    leaves = _leaves(file_schema)
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
    partition = _partition(spec, file_schema, f.partition, absolute_path)
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
        partition=Record(*_partition(spec, file_schema, partition, absolute_path)), record_count=rows,
        file_size_in_bytes=size, spec_id=spec.spec_id)


def partition_problem(spec: PartitionSpec, file_schema: Schema, values: tuple[Any, ...], where: str) -> str | None:
    """Why a file's partition values cannot be published (None: they can); checked before anything is written."""
    try:
        _partition(spec, file_schema, values, where)
    except UnpublishableError as e:
        return str(e)
    return None
