"""A plain-Python model of a fieldshift table, written from the README's semantics alone.

The model knows four primitive kinds (int, long, double, string) and structs of them, the policies'
rules for those kinds, on-write evolution (Onehouse semantics, nested too), schema changes by field
id, time travel and filter trees (``filter_model``: SQL's three-valued logic). It never calls
fieldshift: `test_table_model.py` drives a real table and this model side by side and compares every read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

from tests.table.filter_model import keeps, spec_leaves

__all__ = ["ARROW", "Col", "ModelError", "ModelTable", "allowed", "arrow_type", "canon_rows", "holds",
           "supertype"]

ARROW = {"int": pa.int32(), "long": pa.int64(), "double": pa.float64(), "string": pa.string()}
NUMERIC = ("int", "long", "double")
Path = tuple[str, ...]

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
    if "struct" in (incoming, table):
        if incoming == table:
            return table
        raise ModelError("a struct and a primitive never share a type")
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
    """A primitive of kind ``a`` read as kind ``b`` (only conversions the rules allow reach here)."""
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
    kind: str  # a primitive kind, or "struct"
    default: Any = None  # initial and write default (primitives only)
    children: tuple[Col, ...] = ()


def arrow_type(c: Col) -> pa.DataType:
    if c.kind == "struct":
        return pa.struct([pa.field(x.name, arrow_type(x)) for x in c.children])
    return ARROW[c.kind]


def leaves(cols: tuple[Col, ...], prefix: Path = ()) -> list[tuple[Path, Col]]:
    """Every field with its path, structs included (parents before children)."""
    out = []
    for c in cols:
        out.append(((*prefix, c.name), c))
        out.extend(leaves(c.children, (*prefix, c.name)))
    return out


def by_id(cols: tuple[Col, ...]) -> dict[int, Col]:
    return {c.id: c for _, c in leaves(cols)}


def edit(cols: tuple[Col, ...], path: Path, fn: Any) -> tuple[Col, ...]:
    """``cols`` with the list of siblings holding ``path[-1]`` replaced by ``fn(siblings)``."""
    if len(path) == 1:
        return tuple(fn(cols))
    return tuple(replace(c, children=edit(c.children, path[1:], fn)) if c.name == path[0] else c for c in cols)


def find(cols: tuple[Col, ...], path: Path) -> Col | None:
    for c in cols:
        if c.name == path[0]:
            return c if len(path) == 1 else find(c.children, path[1:])
    return None


def read_value(value: Any, file_col: Col | None, col: Col) -> Any:
    """A stored value (written as ``file_col``) read as ``col``; a column the file lacks reads its default."""
    if file_col is None:
        return col.default
    if col.kind != "struct":
        return convert(value, file_col.kind, col.kind)
    if value is None:
        return None
    written = {c.id: c for c in file_col.children}
    return {c.name: read_value(value.get(c.id), written.get(c.id), c) for c in col.children}


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
    spec: dict[str, tuple[int, str]] = field(default_factory=dict)  # partition field name -> (source id, transform)

    @classmethod
    def create(cls, policy: str, cols: list[tuple[str, Any]]) -> ModelTable:
        """``cols``: (name, kind) or (name, [(child, kind), ...]) for a struct."""
        model = cls(policy, {}, {}, 1)
        schema = tuple(model._new_col(n, k) for n, k in cols)
        model.schemas[0], model.snapshots[0] = schema, Snap(0, ())
        return model

    def _new_col(self, name: str, kind: Any, default: Any = None) -> Col:
        fid, self.next_id = self.next_id, self.next_id + 1
        if isinstance(kind, list):
            return Col(fid, name, "struct", None, tuple(self._new_col(n, k) for n, k in kind))
        return Col(fid, name, kind, default)

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

    def col(self, path: Path) -> Col:
        found = find(self.schema, path)
        assert found is not None, path
        return found

    def _commit(self, schema: tuple[Col, ...], new_rows: list[dict[int, Any]] | None = None,
                replace_all: bool = False) -> None:
        """One snapshot: maybe a new schema version (checked against every file), maybe new rows."""
        sid = self.schema_id
        if schema != self.schema:
            self._check_partition_sources(schema)
            self._check_readable(self.file_schema_ids, schema, None)
            sid = max(self.schemas) + 1
            self.schemas[sid] = schema
        elif new_rows is None:
            return  # a schema change that changes nothing commits nothing
        rows = tuple((sid, r) for r in new_rows or ())
        base = () if replace_all else self.snapshots[self.head].rows
        self.snapshots[self.head + 1] = Snap(sid, base + rows)
        if rows:
            self.file_schema_ids.add(sid)

    def _check_readable(self, schema_ids: set[int], schema: tuple[Col, ...], top: set[str] | None) -> None:
        """Files written with ``schema_ids`` must read as ``schema`` (its ``top`` columns) under the policy."""
        for sid in schema_ids:
            old = by_id(self.schemas[sid])
            for path, c in leaves(schema):
                if top is not None and path[0] not in top:
                    continue
                if c.id in old and old[c.id].kind != c.kind and (
                        "struct" in (old[c.id].kind, c.kind) or not allowed(self.policy, old[c.id].kind, c.kind)):
                    raise ModelError(f"files of schema {sid} cannot read {path} as {c.kind}")

    # -- writes ---------------------------------------------------------------------------------
    def append(self, columns: list[tuple[str, Any, list[Any]]], quarantine: bool, overwrite: bool = False) -> int:
        """Append (or overwrite with) rows given as (name, incoming kind, values); returns rows written.

        A struct's incoming kind is a list of (child, kind) and its values dicts by child name.
        """
        next_id = self.next_id
        bad: list[Path] = []
        schema = self._reconcile(self.schema, [(n, k) for n, k, _ in columns], (), quarantine, bad)
        written: list[dict[int, Any]] = []
        bad_rows = 0
        incoming = {n: (k, v) for n, k, v in columns}
        for r in range(len(columns[0][2])):
            if any(_value_at(incoming, p, r) is not None for p in bad):
                bad_rows += 1
                continue
            row = {c.id: _write_value(c, *_incoming(incoming, c.name, r), bad, (c.name,)) for c in schema}
            written.append(row)
        try:
            self._commit(schema, written, replace_all=overwrite)
        except ModelError:
            self.next_id = next_id
            raise
        self.quarantined += bad_rows
        return len(written)

    def _reconcile(self, cols: tuple[Col, ...], incoming: list[tuple[str, Any]], prefix: Path, quarantine: bool,
                   bad: list[Path]) -> tuple[Col, ...]:
        out = list(cols)
        names = {c.name: i for i, c in enumerate(out)}
        for name, kind in incoming:
            path = (*prefix, name)
            if name not in names:
                if name.startswith("_"):
                    raise ModelError(f"on-write evolution cannot add {name!r}")
                out.append(self._new_col(name, kind))
                names[name] = len(out) - 1
                continue
            current = out[names[name]]
            if isinstance(kind, list) and current.kind == "struct":
                out[names[name]] = replace(current, children=self._reconcile(current.children, kind, path,
                                                                               quarantine, bad))
                continue
            try:
                wider = supertype(self.policy, "struct" if isinstance(kind, list) else kind, current.kind)
            except ModelError:
                if not quarantine:
                    raise
                bad.append(path)
                continue
            if wider != current.kind:
                out[names[name]] = replace(current, kind=wider, default=convert(current.default, current.kind, wider))
        return tuple(out)

    # -- merge (README: MERGE INTO) ---------------------------------------------------------------
    def merge(self, on: str, source: list[dict[str, Any]], update: bool, delete: str | None, insert: bool,
              by_source: tuple[str, ...] | None) -> tuple[int, int, int]:
        """MERGE INTO by top-level primitive column ``on`` with whole source rows (``"*"``; the source carries
        some current columns in their kinds). ``delete``: a matched delete first (``""``: always, else only
        where that target column is null), then ``update``; ``insert`` unmatched source rows;
        ``by_source``: delete unmatched target rows (``()``: all, ``(col,)``: where col is not null).
        Returns (inserted, updated, deleted); a target row matched twice refuses the merge."""
        schema, snap = self.schema, self.snapshots[self.head]
        self._check_readable({sid for sid, _ in snap.rows}, schema, None)
        current = []
        for sid, values in snap.rows:
            written = {c.id: c for c in self.schemas[sid]}
            current.append({c.name: read_value(values.get(c.id), written.get(c.id), c) for c in schema})
        matches = [[i for i, s in enumerate(source) if s[on] is not None and s[on] == row[on]] for row in current]
        if (update or delete is not None) and any(len(m) > 1 for m in matches):
            raise ModelError("a target row matched by two source rows")
        kept, new_rows, counts = [], [], [0, 0, 0]
        matched_sources = {i for m in matches for i in m}
        for (sid, values), row, m in zip(snap.rows, current, matches, strict=True):
            if m and delete is not None and (delete == "" or row[delete] is None):
                counts[2] += 1
            elif m and update:
                counts[1] += 1
                new_rows.append({c.id: _stored(source[m[0]][c.name] if c.name in source[m[0]] else row[c.name], c)
                                 for c in schema})
            elif not m and by_source is not None and (not by_source or row[by_source[0]] is not None):
                counts[2] += 1
            else:
                kept.append((sid, values))
        for i, s in enumerate(source):
            if insert and i not in matched_sources:
                counts[0] += 1
                new_rows.append({c.id: _stored(s[c.name], c) if c.name in s else
                                 (c.default if c.kind != "struct" else None) for c in schema})
        if any(counts):
            sid = self.schema_id
            self.snapshots[self.head + 1] = Snap(sid, (*kept, *((sid, r) for r in new_rows)))
            if new_rows:
                self.file_schema_ids.add(sid)
        return counts[0], counts[1], counts[2]

    # -- partitions (README: partitioned tables) ------------------------------------------------
    def _check_partition_sources(self, schema: tuple[Col, ...]) -> None:
        """A source column of the current spec may not be dropped, and only int -> long keeps its keys."""
        old, new = by_id(self.schema), by_id(schema)
        for name, (source, _) in self.spec.items():
            if source not in new:
                raise ModelError(f"partition field {name} uses the dropped column")
            before, after = old[source].kind, new[source].kind
            if before != after and (before, after) != ("int", "long"):
                raise ModelError(f"partition field {name}: {before} -> {after} changes its keys")

    def change_spec(self, remove: str | None, add: tuple[str, Path, str] | None) -> None:
        """Remove a field by name and/or add ``(name, source path, transform)``; a commit of its own."""
        spec = dict(self.spec)
        if remove is not None:
            spec.pop(remove)
        if add is not None:
            name, path, transform = add
            c = self.col(path)
            if c.kind == "struct" or (c.kind == "double" and transform != "identity"):
                raise ModelError(f"{transform} is not defined for {c.kind}")
            if (c.id, transform) in spec.values():
                raise ModelError("the spec has that field already")
            spec[name] = (c.id, transform)
        if spec != self.spec:
            self.spec = spec
            self.snapshots[self.head + 1] = Snap(self.schema_id, self.snapshots[self.head].rows)

    # -- schema changes -------------------------------------------------------------------------
    def add_column(self, path: Path, kind: str, default: Any) -> None:
        parent = find(self.schema, path[:-1]) if len(path) > 1 else None
        siblings = parent.children if parent is not None else self.schema
        if len(path) > 1 and (parent is None or parent.kind != "struct"):
            raise ModelError(f"{path[:-1]} is not a struct")
        if any(c.name == path[-1] for c in siblings):
            raise ModelError(f"{path} exists")
        col = self._new_col(path[-1], kind, default)
        try:
            self._commit(edit(self.schema, path, lambda cs: (*cs, col)))
        except ModelError:
            self.next_id -= 1
            raise

    def rename(self, path: Path, new: str) -> None:
        siblings = find(self.schema, path[:-1]).children if len(path) > 1 else self.schema
        if any(c.name == new for c in siblings if c.name != path[-1]):
            raise ModelError(f"{new!r} is taken")
        self._commit(edit(self.schema, path, lambda cs: [replace(c, name=new) if c.name == path[-1] else c
                                                          for c in cs]))

    def drop(self, path: Path) -> None:
        if len(path) > 1 and len(find(self.schema, path[:-1]).children) == 1:
            raise ModelError("Parquet cannot store an empty struct: drop the struct instead")
        self._commit(edit(self.schema, path, lambda cs: [c for c in cs if c.name != path[-1]]))

    def retype(self, path: Path, kind: str, builder_policy: str) -> None:
        c = self.col(path)
        if c.kind == "struct" or not allowed(builder_policy, c.kind, kind):
            raise ModelError(f"{builder_policy} does not allow {c.kind} -> {kind}")
        self._commit(edit(self.schema, path, lambda cs: [
            replace(x, kind=kind, default=convert(x.default, x.kind, kind)) if x.name == path[-1] else x for x in cs]))

    # -- row changes ----------------------------------------------------------------------------
    def _matches(self, spec: tuple, top: set[str] | None) -> list[bool]:
        """Which rows of the head the filter ``spec`` keeps, read in the current schema (``top``: the columns
        read; an unreadable one raises ``ModelError`` as a scan would)."""
        snap = self.snapshots[self.head]
        self._check_readable({s for s, _ in snap.rows}, self.schema, top)
        out = []
        for sid, values in snap.rows:
            written = {c.id: c for c in self.schemas[sid]}
            row = {c.name: read_value(values.get(c.id), written.get(c.id), c) for c in self.schema}
            out.append(keeps(spec, lambda path, row=row: _path_value(row, path)))
        return out

    def delete_where(self, spec: tuple) -> int:
        """Remove the head's rows ``spec`` matches (no commit when none does); the number removed."""
        hits = self._matches(spec, {leaf[1][0] for leaf in spec_leaves(spec)})
        if not any(hits):
            return 0
        snap = self.snapshots[self.head]
        kept = tuple(r for r, hit in zip(snap.rows, hits, strict=True) if not hit)
        self.snapshots[self.head + 1] = Snap(snap.schema_id, kept)
        return sum(hits)

    def update_where(self, spec: tuple, name: str, value: Any) -> int:
        """Set top-level primitive column ``name`` to ``value`` in the rows ``spec`` matches: the old rows go,
        their new versions (in the current schema) are appended; the number updated."""
        hits = self._matches(spec, None)
        if not any(hits):
            return 0
        snap, schema = self.snapshots[self.head], self.schema
        kept, new = [], []
        for (sid, values), hit in zip(snap.rows, hits, strict=True):
            if not hit:
                kept.append((sid, values))
                continue
            written = {c.id: c for c in self.schemas[sid]}
            row = {c.id: _stored(read_value(values.get(c.id), written.get(c.id), c), c) for c in schema}
            row[next(c.id for c in schema if c.name == name)] = value
            new.append((self.schema_id, row))
        self.snapshots[self.head + 1] = Snap(snap.schema_id, (*kept, *new))
        self.file_schema_ids.add(self.schema_id)
        return len(new)

    # -- reads ----------------------------------------------------------------------------------
    def read(self, snapshot_id: int, schema_id: int | None, columns: list[str] | None,
             spec: tuple | None) -> list[dict[str, Any]]:
        """The rows a scan returns; ``spec`` is a filter tree (``filter_model``) or None."""
        snap = self.snapshots[snapshot_id]
        schema = self.schemas[snap.schema_id if schema_id is None else schema_id]
        names = columns if columns is not None else [c.name for c in schema]
        used = {leaf[1][0] for leaf in spec_leaves(spec)} if spec is not None else set()
        self._check_readable({s for s, _ in snap.rows}, schema, set(names) | used)
        out = []
        for sid, values in snap.rows:
            written = {c.id: c for c in self.schemas[sid]}
            row = {c.name: read_value(values.get(c.id), written.get(c.id), c) for c in schema}
            if spec is None or keeps(spec, lambda path, row=row: _path_value(row, path)):
                out.append({n: row[n] for n in names})
        return out


def _incoming(incoming: dict[str, tuple[Any, list[Any]]], name: str, r: int) -> tuple[Any, Any, bool]:
    if name not in incoming:
        return None, None, False
    kind, values = incoming[name]
    return kind, values[r], True


def _write_value(c: Col, kind: Any, value: Any, present: bool, bad: list[Path], path: Path) -> Any:
    """The value stored for table column ``c`` from an incoming value (absent: the write default; an explicit
    null in a column of an incompatible type is kept as null: the row holds no value to quarantine)."""
    if not present:
        return c.default if c.kind != "struct" else None
    if path in bad:
        return None
    if c.kind != "struct":
        return convert(value, kind, c.kind)
    if value is None:
        return None
    kinds = dict(kind)
    return {x.id: _write_value(x, kinds.get(x.name), value.get(x.name), x.name in kinds, bad, (*path, x.name))
            for x in c.children}


def _value_at(incoming: dict[str, tuple[Any, list[Any]]], path: Path, r: int) -> Any:
    value = incoming[path[0]][1][r]
    for part in path[1:]:
        value = None if value is None else value.get(part)
    return value


def _stored(value: Any, c: Col) -> Any:
    """A value as read (structs by child name) in the model's stored form (structs by child id)."""
    if c.kind != "struct" or value is None:
        return value
    return {x.id: _stored(value.get(x.name), x) for x in c.children}


def _path_value(row: dict[str, Any], path: Path) -> Any:
    value: Any = row
    for part in path:
        value = None if value is None else value.get(part)
    return value


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
    if isinstance(v, float) and math.isnan(v):  # IEEE: NaN is unequal to and unordered with everything
        return False
    return {"==": v == lit, "<": v < lit, "<=": v <= lit, ">": v > lit, ">=": v >= lit}[op]


def _canon(v: Any) -> Any:
    if isinstance(v, float):
        return ("float", "nan" if math.isnan(v) else v.hex())
    if isinstance(v, dict):
        return ("struct", tuple((k, _canon(x)) for k, x in v.items()))
    return (type(v).__name__, v)


def canon_rows(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Rows as sortable tuples that tell -0.0 from 0.0 and compare NaN with itself."""
    return sorted((tuple((k, _canon(v)) for k, v in r.items()) for r in rows), key=repr)
