"""A DuckLake table's schema at any snapshot, from its ``ducklake_column`` rows.

Every ALTER writes a new row for the column with the same ``column_id`` (DuckLake's field id) and closes
the old one (``end_snapshot``); nested fields are rows whose ``parent_column`` is their parent's id. The
schema at a snapshot is the rows live then, put into a tree and ordered by ``column_order``.

Every field reads as nullable: DuckDB enforces NOT NULL when it writes, not when it reads (a file from
before the constraint, or a new column without a default, reads NULL), and it marks the children of a
struct whose type was changed as NOT NULL although they hold nulls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from fieldshift.errors import CatalogFormatError, InvalidDefaultError, UnsupportedFormatFeatureError
from fieldshift.open_tables.ducklake_types import NESTED, decode_text, primitive_type
from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema
from fieldshift.schema.types import FieldType, ListType, MapType, StructType

__all__ = ["ColumnRow", "schema_at", "type_at"]


@dataclass(frozen=True, slots=True)
class ColumnRow:
    """One version of one column (a row of ``ducklake_column``)."""

    column_id: int
    begin_snapshot: int
    end_snapshot: int | None
    column_order: int | None
    name: str
    type_name: str
    initial_default: Any
    default_value: Any
    parent: int | None
    default_kind: str | None

    def live_at(self, snapshot_id: int) -> bool:
        return self.begin_snapshot <= snapshot_id and (self.end_snapshot is None or snapshot_id < self.end_snapshot)


def schema_at(rows: Sequence[ColumnRow], snapshot_id: int, schema_id: int, table: str) -> Schema:
    """The table schema at ``snapshot_id`` (as schema ``schema_id``)."""
    live = [r for r in rows if r.live_at(snapshot_id)]
    children: dict[int | None, list[ColumnRow]] = {}
    for r in live:
        children.setdefault(r.parent, []).append(r)
    for group in children.values():
        group.sort(key=lambda r: (r.column_order if r.column_order is not None else r.column_id, r.column_id))
    fields = [_field(r, children, table, r.name) for r in children.get(None, [])]
    return Schema(fields, schema_id=schema_id)


def type_at(rows: Sequence[ColumnRow], snapshot_id: int, table: str) -> dict[int, pa.DataType]:
    """The primitive Arrow type of each column id live at ``snapshot_id`` (what a file written then holds)."""
    out = {}
    for r in rows:
        if r.live_at(snapshot_id) and r.type_name.lower() not in NESTED:
            try:
                out[r.column_id] = primitive_type(r.type_name, f"{table}.{r.name}")
            except UnsupportedFormatFeatureError:  # no statistics to use; the scan refuses the type itself
                continue
    return out


def _field(row: ColumnRow, children: dict[int | None, list[ColumnRow]], table: str, path: str) -> Field:
    kind = row.type_name.strip().lower()
    kids = children.get(row.column_id, [])
    t: FieldType
    if kind == "struct":
        t = StructType(tuple(_field(k, children, table, f"{path}.{k.name}") for k in kids))
    elif kind == "list":
        if len(kids) != 1:
            raise CatalogFormatError(f"DuckLake table {table}: list column {path!r} has {len(kids)} element rows")
        t = ListType(_field(kids[0], children, table, f"{path}.element"))
    elif kind == "map":
        by_name = {k.name: k for k in kids}
        if set(by_name) != {"key", "value"}:
            raise CatalogFormatError(f"DuckLake table {table}: map column {path!r} has children {sorted(by_name)}, "
                                     "not key and value")
        t = MapType(_field(by_name["key"], children, table, f"{path}.key"),
                    _field(by_name["value"], children, table, f"{path}.value"))
    else:
        t = primitive_type(row.type_name, f"{table}.{path}")
    initial = _default(row.initial_default, t, table, path)
    write = _default(None if row.default_value in (None, "NULL") or row.default_kind not in (None, "literal")
                     else row.default_value, t, table, path)
    try:
        return Field(row.column_id, row.name, t, nullable=True, initial_default=initial, write_default=write)
    except InvalidDefaultError:  # a write default fieldshift cannot type is not needed for reading
        return Field(row.column_id, row.name, t, nullable=True, initial_default=initial)


def _default(text: Any, t: FieldType, table: str, path: str) -> Any:
    if text is None or not isinstance(t, pa.DataType):
        return None  # DuckDB takes no defaults for nested columns
    try:
        return decode_text(text, t)
    except (ValueError, ArithmeticError) as e:
        raise InvalidDefaultError(f"DuckLake table {table}: column {path!r} has default {text!r}, which is not a "
                                  f"value of its type {t} ({e})") from None
