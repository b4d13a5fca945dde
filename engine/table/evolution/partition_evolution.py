"""Schema changes against the partition spec: which source columns may be dropped, renamed or retyped.

Partition fields reference their source column by field id, so a rename keeps the field. Dropping a
column the current spec uses is refused, as the Flink Table Store proposal says ("Modify/Drop/Rename
on Partition keys is not supported" while the key is in a valid schema; renames are allowed here
because nothing is found by name). A type change of such a column is allowed only when every
transform of the column gives the same key for every old value, so old files' recorded partition
values stay right and pruning stays exact. Allowed pairs (old -> new):

========================  ==========================================================================
transform                 allowed type changes of its source column
========================  ==========================================================================
identity                  integer -> wider integer (same values); float -> double; decimal(P,S) ->
                          decimal(P',S) with P' >= P; string <-> large_string/string_view; binary <->
                          large_binary/binary_view; date32 <-> date64; timestamp unit changes with the
                          same zone (values are recorded as nanoseconds); time unit changes
bucket[N]                 integer -> wider integer (Iceberg hashes every integer as a long); decimal
                          precision widening; string and binary layouts; date32 <-> date64; timestamp
                          and time unit changes with the same zone (hashed as microseconds)
truncate[W]               integer -> wider integer; decimal precision widening; string and binary layouts
year, month, day          date32 <-> date64; date -> timestamp (midnight keeps the day); timestamp unit
                          changes with the same zone
hour                      timestamp unit changes with the same zone
void                      anything
========================  ==========================================================================

Everything else (int -> string, long -> double, date -> timestamp under identity or bucket, a zone
change, a narrowing) is refused with :class:`PartitionKeyChangeError` naming the spec field. Scans use
the same table: a file whose source type and the read type are not an allowed pair is not pruned by
that partition field (its statistics still apply).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from fieldshift.errors import PartitionKeyChangeError
from fieldshift.schema.model import Schema
from fieldshift.schema.types import int_range
from fieldshift.table.partitions.partitioning import PartitionSpec
from fieldshift.table.partitions.transforms import Transform

__all__ = ["check_schema_change", "same_keys"]

T = pa.types


def _int_contains(old: pa.DataType, new: pa.DataType) -> bool:
    (a, b), (c, d) = int_range(old), int_range(new)
    return c <= a and b <= d


def _text(t: pa.DataType) -> bool:
    return T.is_string(t) or T.is_large_string(t) or T.is_string_view(t)


def _blob(t: pa.DataType) -> bool:
    return T.is_binary(t) or T.is_large_binary(t) or T.is_binary_view(t)


def _layouts(old: pa.DataType, new: pa.DataType) -> bool:
    """Same values, another Arrow layout: strings, binaries, dates, timestamp units (same zone), time units."""
    if (_text(old) and _text(new)) or (_blob(old) and _blob(new)) or (T.is_date(old) and T.is_date(new)):
        return True
    if T.is_timestamp(old) and T.is_timestamp(new):
        return old.tz == new.tz
    return T.is_time(old) and T.is_time(new)


def same_keys(transform: Transform, old: Any, new: Any) -> bool:
    """Whether ``transform`` maps every value of type ``old``, cast to ``new``, to the same partition key."""
    if old == new or transform.kind == "void":
        return True
    if not isinstance(old, pa.DataType) or not isinstance(new, pa.DataType) or transform.refusal(new) is not None:
        return False
    k = transform.kind
    if k in ("identity", "bucket", "truncate"):
        if T.is_integer(old) and T.is_integer(new):
            return _int_contains(old, new)
        if T.is_decimal(old) and T.is_decimal(new):
            return old.scale == new.scale and new.precision >= old.precision
        if k == "identity" and T.is_floating(old) and T.is_floating(new):
            return new.bit_width >= old.bit_width
        if k == "truncate":
            return (_text(old) and _text(new)) or (_blob(old) and _blob(new))
        return _layouts(old, new)
    if k in ("year", "month", "day"):
        if T.is_date(old) and T.is_timestamp(new):
            return True
        return _layouts(old, new) and not (T.is_timestamp(old) and T.is_date(new))
    return T.is_timestamp(old) and T.is_timestamp(new) and old.tz == new.tz  # hour


def check_schema_change(spec: PartitionSpec, old: Schema, new: Schema, *, table: str) -> None:
    """Refuse dropping or retyping (beyond :func:`same_keys`) a source column of the current ``spec``."""
    for f in spec.fields:
        if f.transform.kind == "void" or not old.has_field(f.source_id):
            continue
        path = old.path_of(f.source_id)
        if not new.has_field(f.source_id):
            raise PartitionKeyChangeError(
                f"table {table!r}: cannot drop column {path!r} (field id {f.source_id}): partition field "
                f"{f.name!r} ({f.transform}) of the current spec {spec.spec_id} uses it. Modify/Drop on a "
                "partition key is not supported while the key is in the current spec (renames are fine: fields "
                f"are by id). Remove the partition field first (table.update_spec().remove_field({f.name!r}) or "
                f"ALTER TABLE ... DROP PARTITION FIELD {f.name}); files written with it keep their partitions")
        before, after = old.field(f.source_id).type, new.field(f.source_id).type
        if not same_keys(f.transform, before, after):
            raise PartitionKeyChangeError(
                f"table {table!r}: cannot change column {path!r} (field id {f.source_id}) from {before} to "
                f"{after}: partition field {f.name!r} ({f.transform}) of the current spec {spec.spec_id} would map "
                "old values to other partitions. Allowed with that transform: widenings that keep every key "
                "(see fieldshift.table.evolution.partition_evolution). Remove or replace the partition field first")
    ident = set(new.identifier_field_ids)
    if ident and set(old.identifier_field_ids) != ident:
        outside = [f.name for f in spec.fields if f.source_id not in ident and f.transform.kind != "void"]
        if outside:
            raise PartitionKeyChangeError(
                f"table {table!r}: identifier fields {[new.path_of(i) for i in sorted(ident)]} would not cover "
                f"partition field(s) {outside}; a table with a key partitions by key columns only")
