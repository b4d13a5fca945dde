"""Values as Iceberg's writers take them: partition values in the types Iceberg's partition struct has, and
bounds' Python values (dates as days, times and timestamps as microseconds). No catalog import: the
catalog's commit of a publishing table checks new files' partition values with ``partition_problem``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from fieldshift.errors import UnpublishableError
from fieldshift.schema.model import Schema
from fieldshift.schema.types import ListType, MapType, StructType
from fieldshift.table.partitions.partitioning import PartitionSpec
from fieldshift.table.publish.iceberg_types import iceberg_type_of

__all__ = ["check_partitions", "iceberg_value", "leaf_types", "partition_problem", "partition_values"]

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


def leaf_types(schema: Schema) -> dict[int, pa.DataType]:
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


def partition_values(spec: PartitionSpec, schema: Schema, values: tuple[Any, ...], where: str) -> list[Any]:
    """The file's partition values as Iceberg's partition struct holds them."""
    leaves = leaf_types(schema)
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


def partition_problem(spec: PartitionSpec, file_schema: Schema, values: tuple[Any, ...], where: str) -> str | None:
    """Why a file's partition values cannot be published (None: they can); checked before anything is written."""
    try:
        partition_values(spec, file_schema, values, where)
    except UnpublishableError as e:
        return str(e)
    return None


def check_partitions(files: Sequence[Any], specs: dict[int, PartitionSpec], schemas: dict[int, Schema],
                     table: str) -> None:
    """Refuse a commit to a publishing table of files whose partition values Iceberg cannot hold."""
    problems = [p for f in files if f.content == "data" and specs[f.spec_id].fields and f.schema_id in schemas
                and (p := partition_problem(specs[f.spec_id], schemas[f.schema_id], f.partition, f.path))]
    if problems:
        listed = "\n  ".join(problems)
        raise UnpublishableError(f"table {table!r} publishes as an Iceberg table, which could not hold these "
                                 f"partition values; nothing was committed (or stop publishing: set_publish(None)):"
                                 f"\n  {listed}")
