"""Arrow layouts Parquet does not keep as written, and how data files keep them anyway.

- Parquet has no 64-bit date: pyarrow reads a ``date64`` column (at any depth) back as ``date32``.
  Readers cast it back, exactly, to the recorded type.
- pyarrow writes a non-nullable fixed-size list under a null struct or list entry as an empty list,
  then refuses to read the file ("Expected all lists to be of size=N"). Writers mark such a list
  nullable in the file; readers restore the recorded nullability (the nulls lie under null parents).
- Parquet has no seconds unit: pyarrow stores seconds as milliseconds and restores the unit, except
  inside a map, where it refuses to read the file (so too for a date64 or a nullability it must
  restore there). Writers store seconds inside maps as milliseconds and date64 as date32; readers
  restore date64 and leave units to the plan, which converts them checked.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import pyarrow as pa

from fieldshift.errors import SchemaEvolutionError
from fieldshift.kernels.layout import rebuild_as, relabel, same_values

__all__ = ["for_parquet", "restore_types"]


def _relaxed(t: pa.DataType, under_nullable: bool, in_map: bool) -> pa.DataType:
    """``t`` with every non-nullable fixed-size list below a nullable level made nullable, and
    seconds inside a map stored as milliseconds."""
    if pa.types.is_struct(t):
        return pa.struct([_relaxed_field(t.field(i), under_nullable, in_map) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(_relaxed_field(t.key_field, under_nullable, True),
                       _relaxed_field(t.item_field, under_nullable, True), keys_sorted=t.keys_sorted)
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_relaxed_field(t.value_field, under_nullable, in_map), t.list_size)
    if pa.types.is_large_list(t):
        return pa.large_list(_relaxed_field(t.value_field, under_nullable, in_map))
    if pa.types.is_list(t):
        return pa.list_(_relaxed_field(t.value_field, under_nullable, in_map))
    if in_map and pa.types.is_timestamp(t) and t.unit == "s":
        return pa.timestamp("ms", t.tz)
    if in_map and pa.types.is_time32(t) and t.unit == "s":
        return pa.time32("ms")
    if in_map and pa.types.is_date64(t):
        return pa.date32()
    return t


def _relaxed_field(f: pa.Field, under_nullable: bool, in_map: bool = False) -> pa.Field:
    nullable = f.nullable or (under_nullable and pa.types.is_fixed_size_list(f.type))
    return f.with_type(_relaxed(f.type, under_nullable or f.nullable, in_map)).with_nullable(nullable)


@functools.lru_cache(maxsize=256)
def _loosened(t: pa.DataType) -> pa.DataType:
    """``t`` with every field nullable: two types equal after this differ in nullability only."""
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_loosened(t.field(i).type)).with_nullable(True)
                          for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_loosened(t.key_type)),
                       t.item_field.with_type(_loosened(t.item_type)).with_nullable(True), keys_sorted=t.keys_sorted)
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(_loosened(t.value_type)).with_nullable(True), t.list_size)
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(_loosened(t.value_type)).with_nullable(True))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_loosened(t.value_type)).with_nullable(True))
    return t


def for_parquet(table: pa.Table) -> pa.Table:
    """``table`` in a schema pyarrow's Parquet writer and reader agree on (same values, same ids)."""
    schema = pa.schema([_relaxed_field(f, False) for f in table.schema], metadata=table.schema.metadata)
    if schema.equals(table.schema, check_metadata=True):
        return table
    columns = []
    for column, field in zip(table.columns, schema, strict=True):
        if column.type.equals(field.type):
            columns.append(column)
            continue
        try:  # never Arrow's nested cast: it breaks lists of nulls and refuses nulls under null parents
            columns.append(pa.chunked_array([rebuild_as(c, field.type) for c in column.chunks], field.type))
        except pa.ArrowInvalid as e:
            raise SchemaEvolutionError(
                f"column {field.name!r} holds timestamp[s] values in a map beyond year 292,000,000, which Parquet "
                f"cannot store ({e}); nothing was written. Drop or fix those values.") from None
    return pa.Table.from_arrays(columns, schema=schema)


def restore_types(batch: pa.RecordBatch, types: Sequence[pa.DataType]) -> pa.RecordBatch:
    """Columns read back in another layout (date32 for date64, a relaxed list) in the recorded ``types``."""
    for i, want in enumerate(types):
        field = batch.schema.field(i)
        if field.type.equals(want):
            continue
        column = batch.column(i)
        if _loosened(field.type).equals(_loosened(want)):  # nullability only: the nulls are below null parents
            restored = relabel(column, want)
        elif not same_values(field.type, want):  # a date32 for a date64
            loose = rebuild_as(column, _loosened(want))
            restored = relabel(loose, want)
        else:
            continue  # a unit or string layout: the plan converts it, checked
        batch = batch.set_column(i, field.with_type(want), restored)
    return batch
