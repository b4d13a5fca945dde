"""A plain-Python model of a fieldshift table, written from the README's semantics alone.

The model knows four column kinds (int, long, double, string), the policies' rules for them, on-write
evolution (Onehouse semantics), schema changes by field id, time travel and Iceberg's filter
semantics. It never calls fieldshift: `test_table_model.py` drives a real table and this model side
by side and compares every read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

__all__ = ["ARROW", "Col", "ModelError", "ModelTable", "allowed", "canon_rows", "holds", "supertype"]

ARROW = {"int": pa.int32(), "long": pa.int64(), "double": pa.float64(), "string": pa.string()}
NUMERIC = ("int", "long", "double")

# (from kind, to kind) -> the policies that read or widen it (README's policy table, these four kinds).
_RULES: dict[tuple[str, str], frozenset[str]] = {
    ("int", "long"): frozenset({"lossless", "iceberg", "hudi", "onehouse", "onehouse_ws"}),
    ("int", "double"): frozenset({"lossless", "hudi", "onehouse", "onehouse_ws"}),
    ("long", "double"): frozenset({"hudi", "onehouse", "onehouse_ws"}),
    ("int", "string"): frozenset({"hudi", "onehouse", "onehouse_ws"}),
    ("long", "string"): frozenset({"hudi", "onehouse", "onehouse_ws"}),
    ("double", "string"): frozenset({"hudi", "onehouse", "onehouse_ws"}),
}
WIDEN_TO_STRING = frozenset({"hudi", "onehouse_ws"})


class ModelError(Exception):
    """The model expects the real table to refuse the operation (and change nothing)."""


def allowed(policy: str, a: str, b: str) -> bool:
    return a == b or policy in _RULES.get((a, b), frozenset())


def supertype(policy: str, incoming: str, table: str) -> str:
    """The table column's kind after writing ``incoming`` values into it (Onehouse on-write rules)."""
    if allowed(policy, incoming, table):
        return table
    if allowed(policy, table, incoming):
        if incoming == "string" and table in NUMERIC and policy not in WIDEN_TO_STRING:
            raise ModelError(f"{incoming} into {table}: widening to string is off")
        return incoming
    for meet in ("int", "long", "double"):
        if allowed(policy, incoming, meet) and allowed(policy, table, meet):
            return meet
    raise ModelError(f"{incoming} into {table}: no common type under {policy}")


def convert(value: Any, a: str, b: str) -> Any:
    """A value of kind ``a`` read as kind ``b`` (only conversions the rules allow reach here)."""
    if value is None or a == b:
        return value
    if b == "double":
        return float(value)
    if b == "string":
        return str(value)
    return value  # int -> long


@dataclass(frozen=True)
class Col:
    id: int
    name: str
    kind: str
    default: Any = None  # initial and write default


@dataclass(frozen=True)
class Snap:
    schema_id: int
    rows: tuple[tuple[int, dict[int, Any]], ...]  # (schema id the file was written with, values by id)


@dataclass
class ModelTable:
    policy: str
    schemas: dict[int, tuple[Col, ...]]
    snapshots: dict[int, Snap]
    next_id: int
    quarantined: int = 0
    file_schema_ids: set[int] = field(default_factory=set)

    @classmethod
    def create(cls, policy: str, cols: list[tuple[str, str]]) -> ModelTable:
        schema = tuple(Col(i + 1, n, k) for i, (n, k) in enumerate(cols))
        return cls(policy, {0: schema}, {0: Snap(0, ())}, len(cols) + 1)

    # -- state ----------------------------------------------------------------------------------
    @property
    def head(self) -> int:
        return max(self.snapshots)

    @property
    def schema_id(self) -> int:
        return self.snapshots[self.head].schema_id

    @property
    def schema(self) -> tuple[Col, ...]:
        return self.schemas[self.schema_id]

    def col(self, name: str) -> Col:
        return next(c for c in self.schema if c.name == name)

    def _commit(self, schema: tuple[Col, ...], new_rows: list[dict[int, Any]] | None = None,
                replace_all: bool = False) -> None:
        """One snapshot: maybe a new schema version (checked against every file), maybe new rows."""
        sid = self.schema_id
        if schema != self.schema:
            self._check_files_readable(schema)
            sid = max(self.schemas) + 1
            self.schemas[sid] = schema
        elif new_rows is None:
            return  # a schema change that changes nothing commits nothing
        rows = tuple((sid, r) for r in new_rows or ())
        base = () if replace_all else self.snapshots[self.head].rows
        self.snapshots[self.head + 1] = Snap(sid, base + rows)
        if rows:
            self.file_schema_ids.add(sid)

    def _check_files_readable(self, schema: tuple[Col, ...]) -> None:
        """A schema change is refused when a file already written would not read under the policy."""
        for sid in self.file_schema_ids:
            old = {c.id: c.kind for c in self.schemas[sid]}
            for c in schema:
                if c.id in old and not allowed(self.policy, old[c.id], c.kind):
                    raise ModelError(f"files of schema {sid} could not read {c.name} as {c.kind}")

    # -- writes ---------------------------------------------------------------------------------
    def append(self, columns: list[tuple[str, str, list[Any]]], quarantine: bool, overwrite: bool = False) -> int:
        """Append (or overwrite with) rows given as (name, incoming kind, values); returns rows written."""
        n = len(columns[0][2])
        schema = list(self.schema)
        by_name = {c.name: i for i, c in enumerate(schema)}
        next_id = self.next_id
        bad_cols: list[str] = []
        for name, kind, _ in columns:
            if name not in by_name:
                if name.startswith("_"):
                    raise ModelError(f"on-write evolution cannot add {name!r}")
                schema.append(Col(next_id, name, kind))
                by_name[name] = len(schema) - 1
                next_id += 1
                continue
            current = schema[by_name[name]]
            try:
                wider = supertype(self.policy, kind, current.kind)
            except ModelError:
                if not quarantine:
                    raise
                bad_cols.append(name)
                continue
            if wider != current.kind:
                schema[by_name[name]] = replace(current, kind=wider,
                                                default=convert(current.default, current.kind, wider))
        new_schema = tuple(schema)
        incoming = {name: (kind, values) for name, kind, values in columns}
        written: list[dict[int, Any]] = []
        bad_rows = 0
        for r in range(n):
            if any(incoming[b][1][r] is not None for b in bad_cols):
                bad_rows += 1
                continue
            written.append({c.id: convert(incoming[c.name][1][r], incoming[c.name][0], c.kind)
                            if c.name in incoming else c.default for c in new_schema})
        self._commit(new_schema, written, replace_all=overwrite)
        self.next_id = next_id
        self.quarantined += bad_rows
        return len(written)

    # -- schema changes -------------------------------------------------------------------------
    def add_column(self, name: str, kind: str, default: Any) -> None:
        if any(c.name == name for c in self.schema):
            raise ModelError(f"{name!r} exists")
        self._commit((*self.schema, Col(self.next_id, name, kind, default)))
        self.next_id += 1

    def rename(self, name: str, new: str) -> None:
        if any(c.name == new for c in self.schema if c.name != name):
            raise ModelError(f"{new!r} is taken")
        self._commit(tuple(replace(c, name=new) if c.name == name else c for c in self.schema))

    def drop(self, name: str) -> None:
        self._commit(tuple(c for c in self.schema if c.name != name))

    def retype(self, name: str, kind: str, builder_policy: str) -> None:
        c = self.col(name)
        if not allowed(builder_policy, c.kind, kind):
            raise ModelError(f"{builder_policy} does not allow {c.kind} -> {kind}")
        self._commit(tuple(replace(x, kind=kind, default=convert(x.default, x.kind, kind)) if x.name == name else x
                           for x in self.schema))

    # -- reads ----------------------------------------------------------------------------------
    def read(self, snapshot_id: int, schema_id: int | None, columns: list[str] | None,
             predicates: list[tuple[str, str, Any]]) -> list[dict[str, Any]]:
        snap = self.snapshots[snapshot_id]
        schema = self.schemas[snap.schema_id if schema_id is None else schema_id]
        needed = set(columns if columns is not None else [c.name for c in schema]) | {p[0] for p in predicates}
        for sid in {s for s, _ in snap.rows}:
            old = {c.id: c.kind for c in self.schemas[sid]}
            for c in (c for c in schema if c.name in needed):  # only the columns read must be readable
                if c.id in old and not allowed(self.policy, old[c.id], c.kind):
                    raise ModelError(f"files of schema {sid} cannot read {c.name} as {c.kind}")
        out = []
        for sid, values in snap.rows:
            old = {c.id: c.kind for c in self.schemas[sid]}
            row = {c.name: convert(values[c.id], old[c.id], c.kind) if c.id in values else c.default
                   for c in schema}
            if all(holds(row[col], op, lit) for col, op, lit in predicates):
                out.append({n: row[n] for n in (columns if columns is not None else [c.name for c in schema])})
        return out


def holds(v: Any, op: str, lit: Any) -> bool:
    """Iceberg's row semantics (as PyIceberg evaluates them): null is not in any list, != null-safe."""
    if op == "is_null":
        return v is None
    if op == "not_null":
        return v is not None
    if op in ("in", "not in"):
        found = v is not None and any(v == x for x in lit)
        return found if op == "in" else not found
    if op == "!=":
        return v is None or v != lit
    if v is None:
        return False
    return {"==": v == lit, "<": v < lit, "<=": v <= lit, ">": v > lit, ">=": v >= lit}[op]


def _canon(v: Any) -> Any:
    if isinstance(v, float):
        return ("float", "nan" if math.isnan(v) else v.hex())
    return (type(v).__name__, v)


def canon_rows(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Rows as sortable tuples that tell -0.0 from 0.0 and compare NaN with itself."""
    return sorted((tuple((k, _canon(v)) for k, v in r.items()) for r in rows), key=repr)
