"""On-write evolution (Onehouse, Hudi): fit incoming data to the table, widening the table if needed.

A wider incoming type widens the table column to the supertype; a narrower one is cast up; new
nullable columns are appended (names starting with ``_`` are refused); columns the input lacks get
their write default or null. An incompatible column either fails the append or, in quarantine
mode, sends every row that holds a value in it to quarantine with the reason (Onehouse's Example 2:
a record whose ``col1`` is a String where the table has an Int is quarantined, whatever the text);
rows whose values fail a checked cast (e.g. into an identifier column) are quarantined too, and the
whole batch when no cast exists at all. Nothing here writes: it only decides.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.errors import (
    CastValueError,
    IncompatibleTypeError,
    NullInRequiredFieldError,
    RequiredFieldWithoutDefaultError,
    SchemaEvolutionError,
    SchemaMismatchError,
)
from fieldshift.kernels.layout import rebuild_as, take_rows
from fieldshift.kernels.valid_nulls import has_required_descendant, valid_hidden_nulls
from fieldshift.options import OnIncompatible, check_option
from fieldshift.planner import REASON_COLUMN, EvolutionPlan, cached_plan
from fieldshift.schema.defaults import default_scalar
from fieldshift.schema.field import Field
from fieldshift.schema.file_schema import file_schema_of
from fieldshift.schema.model import Schema, join_path
from fieldshift.schema.nullability import with_nullability
from fieldshift.schema.policy import CastPolicy
from fieldshift.schema.types import ListType, MapType, StructType, check_arrow_depth, logical_type
from fieldshift.schema.widening import decoded_type, supertype

__all__ = ["PreparedAppend", "WritePlan", "plan_write", "prepare_append"]

SOURCE_SCHEMA_COLUMN = "_fieldshift_source_schema"
QUARANTINED_AT_COLUMN = "_fieldshift_quarantined_at"


@dataclass(frozen=True)
class PreparedAppend:
    schema: Schema
    evolved: bool
    data: pa.Table
    quarantined: pa.Table | None
    changes: tuple[str, ...]


@dataclass(frozen=True)
class WritePlan:
    """How every batch of one input schema is written into a table: decided once, picklable.

    ``plan`` is None when the input cannot be cast at all; then every row is quarantined (or, in
    fail mode, planning already raised).
    """

    schema: Schema
    evolved: bool
    changes: tuple[str, ...]
    fail: bool
    plan: EvolutionPlan | None
    quarantine_reason: str = ""
    incompatible: tuple[tuple[tuple[str, ...], str], ...] = ()  # (input path, why): rows with a value go

    def split(self, data: pa.Table) -> tuple[pa.Table, pa.Table | None]:
        """(rows to write in the table schema, quarantined input rows with reasons) for ``data``."""
        if self.plan is None:
            return self.schema.to_arrow().empty_table(), _quarantine_rows(data, None, self.quarantine_reason)
        source, data = data, _plain_lists(data)  # as planned (quarantined rows keep the source's types)
        if self.fail:
            try:
                return _writable(self.plan.apply(data)), None
            except CastValueError as e:
                raise CastValueError(e.path, e.row, e.value, e.source, e.target,
                                     "Nothing was written. Cast the input, or append with "
                                     "on_incompatible='quarantine' to set those rows aside.") from None
            except NullInRequiredFieldError as e:  # the plan checks every required field, nested too
                raise NullInRequiredFieldError(
                    e.path, e.nulls, e.row, "nothing was written. Fill them, or append with "
                    "on_incompatible='quarantine' to set those rows aside") from None
        out, report = self.plan.apply_collect(data)
        bad = np.zeros(data.num_rows, dtype=bool)
        reasons: dict[int, list[str]] = {int(r): list(w) for r, w in report.reasons.items()}
        for rows in report.rows.values():  # failed casts and nulls in required fields at any depth
            bad[rows] = True
        for parts, why in self.incompatible:
            present = _holds_value(data, parts)
            for r in np.flatnonzero(present & ~bad):
                reasons.setdefault(int(r), []).append(why)
            bad |= present
        if not bad.any():
            return _writable(out), None
        rows = np.flatnonzero(bad)
        why = pa.array(["; ".join(reasons.get(int(r), ["cast failed"])) for r in rows], pa.string())
        return _writable(take_rows(out, np.flatnonzero(~bad))), _quarantine_rows(take_rows(source, rows), why, "")


class _Reconciler:
    def __init__(self, table_schema: Schema, evolve: bool, fail: bool, policy: CastPolicy) -> None:
        self.update = table_schema.update(policy=CastPolicy.explicit())
        self.evolve = evolve
        self.fail = fail
        self.policy = policy
        self.incompatible: list[tuple[tuple[str, ...], str]] = []

    def level(self, incoming: list[pa.Field], table_fields: tuple[Field, ...], prefix: tuple[str, ...]) -> None:
        by_name = {f.name: f for f in table_fields}
        for inc in incoming:
            path = (*prefix, inc.name)
            match = by_name.get(inc.name)
            if match is None:
                self.add(inc, path)
            else:
                self.reconcile(inc.type, match, path)

    def add(self, inc: pa.Field, path: tuple[str, ...]) -> None:
        shown = join_path(path)
        if inc.name.startswith("_"):
            raise SchemaEvolutionError(
                f"incoming column {shown!r} is not in the table, and names starting with '_' cannot be "
                "added by on-write evolution; add it with table.update_schema() or rename it"
            )
        if not self.evolve:
            raise SchemaEvolutionError(
                f"incoming column {shown!r} is not in the table; pass evolve=True to add it, or drop it "
                "from the input"
            )
        try:
            self.update.add_column(path, storable_type(inc.type), nullable=True)  # parts: the name as it is
        except TypeError as e:  # a type Parquet cannot store (duration, interval, ...)
            raise SchemaEvolutionError(f"incoming column {shown!r} cannot be added: {e}") from None

    def reconcile(self, inc: pa.DataType, table_field: Field, path: tuple[str, ...], map_key: bool = False) -> None:
        t = table_field.type
        inc = decoded_type(inc)
        if isinstance(t, StructType) and pa.types.is_struct(inc):
            self.level([inc.field(i) for i in range(inc.num_fields)], t.fields, path)
            return
        if isinstance(t, ListType) and hasattr(inc, "value_type") and not pa.types.is_map(inc) \
                and not pa.types.is_dictionary(inc) and pa.types.is_nested(inc):
            self.reconcile(inc.value_type, t.element, (*path, "element"))
            return
        if isinstance(t, MapType) and pa.types.is_map(inc):
            self.reconcile(inc.key_type, t.key, (*path, "key"), map_key=True)
            self.reconcile(inc.item_type, t.value, (*path, "value"))
            return
        shown = join_path(path)
        try:
            wider = supertype(inc, t, self.policy, path=shown, map_key=map_key)
        except IncompatibleTypeError as e:
            if self.fail:
                raise
            self.incompatible.append((path, f"{shown}: {e}"))
            return
        if isinstance(t, pa.DataType) and logical_type(wider) != logical_type(t):
            if table_field.id in self.update.apply().identifier_field_ids:
                return  # identifier types never change: values are cast down, checked per row
            if not self.evolve:
                raise SchemaEvolutionError(
                    f"incoming column {shown!r} is {inc}, wider than the table's {t}; pass evolve=True to "
                    "widen the table"
                )
            self.update.update_column(path, wider)


def plan_write(incoming: pa.Schema, table_schema: Schema, *, evolve: bool, on_incompatible: OnIncompatible,
               policy: CastPolicy | None = None) -> WritePlan:
    """Decide the table schema after writing data of ``incoming`` schema, and how to cast it."""
    check_option("on_incompatible", on_incompatible, OnIncompatible)
    incoming = pa.schema([f.with_type(_plain_list_type(f.type)) for f in incoming], metadata=incoming.metadata)
    if len(set(incoming.names)) != len(incoming.names):
        raise SchemaEvolutionError(f"the input has duplicate column names: {incoming.names}")
    check_arrow_depth(incoming)  # refused before any recursive walk, and before anything is written
    fail = on_incompatible == "fail"
    rec = _Reconciler(table_schema, evolve, fail, policy or CastPolicy.onehouse())
    rec.level(list(incoming), table_schema.fields, ())
    changes = tuple(rec.update.changes)
    schema = rec.update.apply() if changes else table_schema
    _check_required_supplied(incoming, schema)
    # Incoming nullability says nothing about the values: every incoming field is read as nullable,
    # so the plan checks each required table field (struct children, list elements, map values too)
    # for nulls per batch, and WritePlan.split sets those rows aside or refuses them.
    file_schema = with_nullability(file_schema_of(incoming, schema, match="name"), _always)
    write_defaults = {f.id: default_scalar(f, "write").as_py() if f.write_default is not None else None
                      for f in schema.all_fields()}
    try:
        plan = cached_plan(file_schema, schema, CastPolicy.explicit("raise"), write_defaults)
    except SchemaMismatchError as e:
        if fail:
            raise
        return WritePlan(table_schema, False, (), fail, None, str(e))
    return WritePlan(schema, bool(changes), changes, fail, plan, incompatible=tuple(rec.incompatible))


def prepare_append(incoming: pa.Table, table_schema: Schema, *, evolve: bool, on_incompatible: OnIncompatible,
                   policy: CastPolicy | None = None) -> PreparedAppend:
    """Decide the table schema after this append and split the input into rows to write and to quarantine."""
    wp = plan_write(incoming.schema, table_schema, evolve=evolve, on_incompatible=on_incompatible,
                    policy=policy)
    data, quarantined = wp.split(incoming)
    return PreparedAppend(wp.schema, wp.evolved, data, quarantined, wp.changes)



def _holds_value(data: pa.Table, parts: tuple[str, ...]) -> np.ndarray:
    """Per top-level row: whether the input holds a non-null value at ``parts`` (struct children,
    list elements and map keys/values included; a value under a null parent does not count)."""
    array = data.column(parts[0]).combine_chunks()
    rows = np.arange(len(array))
    for part in parts[1:]:
        if pa.types.is_dictionary(array.type):
            array = array.dictionary_decode()
        if pa.types.is_struct(array.type):
            array = array.flatten()[array.type.get_field_index(part)]  # flatten applies the parent's nulls
        else:  # list element, map key or value: one row per element, mapped back to its row
            parents = pc.list_parent_indices(array).to_numpy()
            flat = pc.list_flatten(array)
            if pa.types.is_map(array.type):
                flat = flat.field("key" if part == "key" else "value")
            rows, array = rows[parents], flat
    present = np.zeros(data.num_rows, dtype=bool)
    valid = array.is_valid().to_numpy(zero_copy_only=False)
    present[rows[valid]] = True
    return present


def storable_type(t: pa.DataType) -> pa.DataType:
    """The type a table column takes for input of type ``t``: encodings decoded, list views (an in-memory
    layout) and fixed-size lists (Parquet and Avro lists have no fixed size: a later batch of longer lists
    must fit) as lists, at every depth."""
    return _plain_list_type(t, decode=True)


def _plain_list_type(t: pa.DataType, decode: bool = False) -> pa.DataType:
    """``t`` with list views and fixed-size lists as lists at every depth (``decode``: and encodings as their
    value types): the input is planned (matched to the table by name) and written in these layouts."""
    t = decoded_type(t) if decode else t
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_plain_list_type(f.type, decode)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_plain_list_type(t.key_type, decode)),
                       t.item_field.with_type(_plain_list_type(t.item_type, decode)))
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t) or pa.types.is_list(t) \
            or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        element = t.value_field.with_type(_plain_list_type(t.value_type, decode))
        return pa.large_list(element) if pa.types.is_large_list(t) or pa.types.is_large_list_view(t) \
            else pa.list_(element)
    return t


def _plain_lists(data: pa.Table) -> pa.Table:
    """``data`` in the layouts of :func:`_plain_list_type` (the same values)."""
    for i, f in enumerate(data.schema):
        want = _plain_list_type(f.type)
        if not want.equals(f.type, check_metadata=True) or str(want) != str(f.type):
            column = data.column(i)
            data = data.set_column(i, f.with_type(want),
                                   pa.chunked_array([rebuild_as(c, want) for c in column.chunks], want))
    return data


def _writable(data: pa.Table) -> pa.Table:
    """``data`` with placeholders under null structs where children are required (Parquet refuses nulls
    there even when hidden); the plan has already refused or set aside every visible null."""
    for i, f in enumerate(data.schema):
        if has_required_descendant(f.type):
            column = data.column(i)
            chunks = [valid_hidden_nulls(c) for c in column.chunks]
            if any(a is not b for a, b in zip(chunks, column.chunks, strict=True)):
                data = data.set_column(i, f, pa.chunked_array(chunks, f.type))
    return data


def _always(f: Field) -> bool:
    return True


def _check_required_supplied(incoming: pa.Schema | pa.StructType, schema: Schema | StructType,
                             prefix: tuple[str, ...] = ()) -> None:
    """Every required field the input lacks (at any depth of the structs it has) needs a write default."""
    given = {f.name: f.type for f in incoming}
    for f in schema.fields:
        path = (*prefix, f.name)
        if f.name not in given:
            if f.required and f.write_default is None:
                raise RequiredFieldWithoutDefaultError(
                    f"required column {join_path(path)!r} is missing from the input and has no write default; "
                    "supply it, or set one with table.update_schema().set_write_default(...)"
                )
        elif isinstance(f.type, StructType) and pa.types.is_struct(given[f.name]):
            _check_required_supplied(given[f.name], f.type, path)


def _quarantine_rows(rows: pa.Table, reasons: pa.ChunkedArray | None, reason: str) -> pa.Table:
    n = rows.num_rows
    if reasons is None:
        reasons = pa.array([reason] * n, pa.string())
    source = rows.schema.to_string(show_field_metadata=False, show_schema_metadata=False)
    now = dt.datetime.now(dt.UTC)
    return (rows.append_column(REASON_COLUMN, reasons)
            .append_column(SOURCE_SCHEMA_COLUMN, pa.array([source] * n, pa.string()))
            .append_column(QUARANTINED_AT_COLUMN, pa.array([now] * n, pa.timestamp("us", tz="UTC"))))
