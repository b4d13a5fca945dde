"""On-write evolution (Onehouse, Hudi): fit incoming data to the table, widening the table if needed.

A wider incoming type widens the table column to the supertype; a narrower one is cast up; new
nullable columns are appended (names starting with ``_`` are refused); columns the input lacks get
their write default or null. An incompatible column either fails the append or, in quarantine
mode, sends the rows whose values cannot be cast (or the whole batch when no cast exists) to
quarantine with the reason. Nothing here writes: it only decides.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.defaults import default_scalar
from fieldshift.errors import (
    IncompatibleTypeError,
    RequiredFieldWithoutDefaultError,
    SchemaEvolutionError,
    SchemaMismatchError,
)
from fieldshift.field import Field
from fieldshift.file_schema import file_schema_of
from fieldshift.plan import REASON_COLUMN
from fieldshift.planner import cached_plan
from fieldshift.policy import CastPolicy
from fieldshift.schema import Schema, join_path
from fieldshift.supertype import supertype
from fieldshift.types import ListType, MapType, StructType, logical_type

__all__ = ["PreparedAppend", "prepare_append"]

SOURCE_SCHEMA_COLUMN = "_fieldshift_source_schema"
QUARANTINED_AT_COLUMN = "_fieldshift_quarantined_at"


@dataclass(frozen=True)
class PreparedAppend:
    schema: Schema
    evolved: bool
    data: pa.Table
    quarantined: pa.Table | None
    changes: tuple[str, ...]


class _Reconciler:
    def __init__(self, table_schema: Schema, evolve: bool, fail: bool, policy: CastPolicy) -> None:
        self.update = table_schema.update(policy=CastPolicy.explicit())
        self.evolve = evolve
        self.fail = fail
        self.policy = policy
        self.incompatible: list[str] = []

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
        arrow_type = inc.type.value_type if pa.types.is_dictionary(inc.type) else inc.type
        self.update.add_column(shown, arrow_type, nullable=True)

    def reconcile(self, inc: pa.DataType, table_field: Field, path: tuple[str, ...]) -> None:
        t = table_field.type
        if pa.types.is_dictionary(inc):
            inc = inc.value_type
        if isinstance(t, StructType) and pa.types.is_struct(inc):
            self.level([inc.field(i) for i in range(inc.num_fields)], t.fields, path)
            return
        if isinstance(t, ListType) and hasattr(inc, "value_type") and not pa.types.is_map(inc) \
                and not pa.types.is_dictionary(inc) and pa.types.is_nested(inc):
            self.reconcile(inc.value_type, t.element, (*path, "element"))
            return
        if isinstance(t, MapType) and pa.types.is_map(inc):
            self.reconcile(inc.key_type, t.key, (*path, "key"))
            self.reconcile(inc.item_type, t.value, (*path, "value"))
            return
        shown = join_path(path)
        try:
            wider = supertype(inc, t, self.policy, path=shown)
        except IncompatibleTypeError:
            if self.fail:
                raise
            self.incompatible.append(shown)
            return
        if isinstance(t, pa.DataType) and logical_type(wider) != logical_type(t):
            if not self.evolve:
                raise SchemaEvolutionError(
                    f"incoming column {shown!r} is {inc}, wider than the table's {t}; pass evolve=True to "
                    "widen the table"
                )
            self.update.update_column(shown, wider)


def prepare_append(incoming: pa.Table, table_schema: Schema, *, evolve: bool, on_incompatible: str,
                   policy: CastPolicy | None = None) -> PreparedAppend:
    """Decide the table schema after this append and split the input into rows to write and to quarantine."""
    if on_incompatible not in ("fail", "quarantine"):
        raise ValueError(f"on_incompatible must be 'fail' or 'quarantine', got {on_incompatible!r}")
    if len(set(incoming.schema.names)) != len(incoming.schema.names):
        raise SchemaEvolutionError(f"the input has duplicate column names: {incoming.schema.names}")
    fail = on_incompatible == "fail"
    rec = _Reconciler(table_schema, evolve, fail, policy or CastPolicy.onehouse())
    rec.level(list(incoming.schema), table_schema.fields, ())
    changes = tuple(rec.update.changes)
    schema = rec.update.apply() if changes else table_schema
    _check_required_supplied(incoming.schema, schema)

    file_schema = file_schema_of(incoming.schema, schema, match="name")
    write_defaults = {f.id: default_scalar(f, "write").as_py() if f.write_default is not None else None
                      for f in schema.all_fields()}
    explicit = CastPolicy.explicit("raise")
    try:
        plan = cached_plan(file_schema, schema, explicit, write_defaults)
    except SchemaMismatchError as e:
        if fail:
            raise
        return PreparedAppend(table_schema, False, schema.to_arrow().empty_table(),
                              _quarantine_rows(incoming, None, str(e)), ())
    if fail:
        data = plan.apply(incoming)
        bad = None
    else:
        data, bad = plan.apply_split(incoming)
        bad = bad if bad.num_rows else None
    data, null_bad = _split_required_nulls(data, incoming, schema, fail)
    if null_bad is not None:
        bad = null_bad if bad is None else pa.concat_tables([bad, null_bad])
    quarantined = _quarantine_rows(bad.drop_columns([REASON_COLUMN]), bad.column(REASON_COLUMN), "") \
        if bad is not None else None
    return PreparedAppend(schema, bool(changes), data, quarantined, changes)


def _check_required_supplied(incoming: pa.Schema, schema: Schema) -> None:
    names = set(incoming.names)
    for f in schema.fields:
        if f.required and f.name not in names and f.write_default is None:
            raise RequiredFieldWithoutDefaultError(
                f"required column {f.name!r} is missing from the input and has no write default; "
                "supply it, or set one with table.update_schema().set_write_default(...)"
            )


def _split_required_nulls(data: pa.Table, incoming: pa.Table, schema: Schema,
                          fail: bool) -> tuple[pa.Table, pa.Table | None]:
    required = [f.name for f in schema.fields if f.required]
    if not required:
        return data, None
    bad_mask = None
    for name in required:
        nulls = pc.is_null(data.column(name))
        bad_mask = nulls if bad_mask is None else pc.or_(bad_mask, nulls)
    if not pc.any(bad_mask).as_py():
        return data, None
    if fail:
        raise SchemaEvolutionError(f"the input has nulls in required column(s) {required}; nothing was written")
    # rows were not reordered by the plan when every row passed; align by position otherwise
    if data.num_rows != incoming.num_rows:
        raise SchemaEvolutionError("nulls in required columns together with cast failures in one append "
                                   "cannot be quarantined row by row; split the input")
    reasons = pa.array([f"null in required column(s) {required}"] * pc.sum(bad_mask).as_py(), pa.string())
    bad = incoming.filter(bad_mask).append_column(REASON_COLUMN, reasons)
    return data.filter(pc.invert(bad_mask)), bad


def _quarantine_rows(rows: pa.Table, reasons: pa.ChunkedArray | None, reason: str) -> pa.Table:
    n = rows.num_rows
    if reasons is None:
        reasons = pa.array([reason] * n, pa.string())
    source = rows.schema.to_string(show_field_metadata=False, show_schema_metadata=False)
    now = dt.datetime.now(dt.timezone.utc)
    return (rows.append_column(REASON_COLUMN, reasons)
            .append_column(SOURCE_SCHEMA_COLUMN, pa.array([source] * n, pa.string()))
            .append_column(QUARANTINED_AT_COLUMN, pa.array([now] * n, pa.timestamp("us", tz="UTC"))))
