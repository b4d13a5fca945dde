"""``merge``: MERGE INTO as a builder of clauses (delta-rs' shape), and what the clauses decide, in Arrow.

``table.merge(source, on=[...])`` returns a :class:`MergeBuilder`; ``when_matched_update``,
``when_matched_delete``, ``when_not_matched_insert`` and ``when_not_matched_by_source_delete`` add clauses
and ``execute()`` runs them in one commit (``merge_commit``), returning a :class:`MergeResult`.

Semantics (SQL's MERGE): a source row *matches* a target row when every ``on`` column is equal; a null in
an ``on`` column never matches. Clauses of one kind are tried in the order given and the first whose
condition holds acts on a row; a row no clause takes is left alone. One target row matched by several
source rows is a :class:`MergeMatchError` when a matched clause exists (the answer would depend on order).

Conditions and values see two struct columns, ``source`` and ``target`` (``"source.v > 2"``,
``"target.status = 'open'"``; in an ``insert`` every ``target`` value is null, in a by-source ``delete``
every ``source`` value). A condition is fieldshift filter text, an expression or tuples over those paths,
or a ``pyarrow.compute.Expression`` (``pc.field("source", "v") > pc.field("target", "v")``: compares two
columns). A value in ``set``/``values`` is ``"source.<col>"`` / ``"target.<col>"`` (a column), a
``pyarrow.compute.Expression``, or any other Python value (a literal; a ``pa.scalar`` for a string that
would read as a column). ``"*"`` is every source column by name: such clauses write whole source rows,
so the source evolves the table as ``append`` would (new columns, wider types; with ``evolve=False`` its
columns the table lacks are not written, as delta-rs' ``*_all`` without schema merging); an update by
``"*"`` keeps the target's values of columns the source lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.errors import (
    CastValueError,
    IdentifierFieldChangeError,
    InvalidOptionError,
    MergeMatchError,
    NullInRequiredFieldError,
)
from fieldshift.schema.model import Schema
from fieldshift.table.expressions.filters import bind_filter, parse_filter, row_filter
from fieldshift.table.write.set_values import check_key_kinds, fit_column, fit_literal

__all__ = ["ClauseKind", "MergeBuilder", "MergeClause", "MergeOutcome", "MergeResult", "MergeSpec", "by_source_mask",
           "match_rows", "plan_merge", "struct_of"]

ClauseKind = Literal["update", "delete", "insert", "delete_by_source"]
ALL = "*"
_SIDES = ("source", "target")


@dataclass(frozen=True)
class MergeClause:
    """One WHEN clause: its kind, its condition (None: always) and, for update/insert, its values."""

    kind: ClauseKind
    condition: Any = None
    values: Mapping[str, Any] | Literal["*"] | None = None

    @property
    def whole_rows(self) -> bool:
        return self.values == ALL


@dataclass(frozen=True)
class MergeSpec:
    """Everything ``execute`` hands to the commit: the source, the ``on`` columns, the clauses in order."""

    source: pa.Table
    on: tuple[str, ...]
    clauses: tuple[MergeClause, ...]
    evolve: bool = True
    policy: Any = None

    def of(self, *kinds: ClauseKind) -> list[MergeClause]:
        return [c for c in self.clauses if c.kind in kinds]

    @property
    def whole_rows(self) -> bool:
        """Whether a clause writes whole source rows (``"*"``): then the source evolves the table."""
        return any(c.whole_rows for c in self.clauses)


@dataclass(frozen=True)
class MergeResult:
    """What one merge did: rows inserted, updated (a new version replaced the target row) and deleted;
    ``snapshot_id`` None when nothing changed (no snapshot)."""

    rows_inserted: int
    rows_updated: int
    rows_deleted: int
    snapshot_id: int | None
    schema_evolved: bool = False


@dataclass
class MergeOutcome:
    """What the clauses decided, as target row indices and new rows (in the output schema)."""

    updated_index: np.ndarray
    updated: pa.Table
    deleted_index: np.ndarray
    inserted: pa.Table

    @property
    def replaced_index(self) -> np.ndarray:
        """Every target row that goes away (deleted, or replaced by its new version)."""
        return np.union1d(self.updated_index, self.deleted_index)

    @property
    def rows(self) -> pa.Table:
        """The rows to write: updated then inserted."""
        return pa.concat_tables([self.updated, self.inserted])


class MergeBuilder:
    """Clauses of one merge, run by ``execute()`` (each ``when_*`` returns the builder, to chain)."""

    def __init__(self, run: Callable[[MergeSpec], MergeResult], source: pa.Table, on: str | Sequence[str], *,
                 evolve: bool = True, policy: Any = None) -> None:
        names = (on,) if isinstance(on, str) else tuple(on)
        if not names or not all(isinstance(n, str) for n in names):
            raise InvalidOptionError(f"merge(on=...) takes a column name or a list of them; got {on!r}")
        missing = [n for n in names if n not in source.column_names]
        if missing:
            raise InvalidOptionError(f"merge(on={list(names)}): the source has no column(s) {missing}; its columns "
                                     f"are {source.column_names}")
        self._run = run
        self._source = source
        self._on = names
        self._evolve = evolve
        self._policy = policy
        self._clauses: list[MergeClause] = []

    def _add(self, clause: MergeClause) -> MergeBuilder:
        if clause.values is not None and clause.values != ALL and not isinstance(clause.values, Mapping):
            raise InvalidOptionError(f"merge clause {clause.kind}: values are '*' or a dict of column -> value; "
                                     f"got {clause.values!r}")
        self._clauses.append(clause)
        return self

    def when_matched_update(self, set: Mapping[str, Any] | Literal["*"] = ALL, condition: Any = None) -> MergeBuilder:
        """Replace matched target rows' columns by ``set`` (``"*"``: every source column)."""
        return self._add(MergeClause("update", condition, set))

    def when_matched_delete(self, condition: Any = None) -> MergeBuilder:
        """Delete matched target rows (where ``condition`` holds)."""
        return self._add(MergeClause("delete", condition))

    def when_not_matched_insert(self, values: Mapping[str, Any] | Literal["*"] = ALL,
                                condition: Any = None) -> MergeBuilder:
        """Insert source rows that match no target row (``"*"``: the source row; a dict: those columns, the
        others their write default, else null)."""
        return self._add(MergeClause("insert", condition, values))

    def when_not_matched_by_source_delete(self, condition: Any = None) -> MergeBuilder:
        """Delete target rows no source row matches (where ``condition`` holds on ``target``)."""
        return self._add(MergeClause("delete_by_source", condition))

    def execute(self) -> MergeResult:
        """Run the clauses in one commit (retried on conflicts); no clause is an error."""
        if not self._clauses:
            raise InvalidOptionError("merge needs at least one when_* clause before execute()")
        return self._run(MergeSpec(self._source, self._on, tuple(self._clauses), self._evolve, self._policy))


# -- deciding ---------------------------------------------------------------------------------------
def struct_of(table: pa.Table) -> pa.Array:
    """A table's rows as one struct array."""
    arr = table.to_struct_array()
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def match_rows(source: pa.Table, target: pa.Table, on: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(source row, target row) pairs equal on every ``on`` column; rows with a null in one never match.
    The source's ``on`` columns are cast to the target's types first."""
    names = list(on)
    left = source.select(names)
    right = target.select(names)
    casted = []
    for name in names:
        column, want = left.column(name), right.schema.field(name).type
        if pa.types.is_nested(want) or pa.types.is_nested(column.type):
            raise InvalidOptionError(f"merge on {name!r}: a {want} column cannot be matched on (structs, lists "
                                     "and maps are no keys); merge on top-level columns of simple types")
        clash = check_key_kinds(column.type, want)
        if clash is not None:
            raise InvalidOptionError(f"merge on {name!r}: {clash}; cast the source column")
        if column.type != want:
            try:
                column = column.cast(want)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise InvalidOptionError(f"merge on {name!r}: the source's {column.type} values do not fit the "
                                         f"table's {want} ({e}); cast the source column") from None
        casted.append(column)
    if len(names) == 1 and pa.types.is_integer(right.schema.field(names[0]).type):
        return _match_ints(casted[0], right.column(0))
    keys = [f"k{i}" for i in range(len(names))]  # the join's own names: a column may be called anything
    left = pa.table([*casted, pa.array(np.arange(left.num_rows, dtype=np.int64))], names=[*keys, "s"])
    right = pa.table([*right.columns, pa.array(np.arange(right.num_rows, dtype=np.int64))], names=[*keys, "t"])
    valid = [pc.is_valid(left.column(k)) for k in keys]
    if any(v.null_count or not pc.all(v).as_py() for v in valid):
        mask = valid[0]
        for v in valid[1:]:
            mask = pc.and_(mask, v)
        left = left.filter(mask)
    joined = left.join(right, keys, join_type="inner", use_threads=True)
    return joined.column("s").to_numpy(), joined.column("t").to_numpy()


def _match_ints(source: pa.ChunkedArray, target: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """``match_rows`` for one integer column: the target sorted once, the source found by binary search
    (every target row of an equal value: the target need not be unique)."""
    s_arr = source.combine_chunks()
    s_rows = np.flatnonzero(s_arr.is_valid().to_numpy(zero_copy_only=False)) if s_arr.null_count \
        else np.arange(len(s_arr))
    s = s_arr.drop_null().to_numpy(zero_copy_only=False).astype(np.int64) if s_arr.null_count \
        else s_arr.to_numpy(zero_copy_only=False).astype(np.int64)
    t_arr = target.combine_chunks()
    t_rows = np.flatnonzero(t_arr.is_valid().to_numpy(zero_copy_only=False)) if t_arr.null_count \
        else np.arange(len(t_arr))
    t = t_arr.drop_null().to_numpy(zero_copy_only=False).astype(np.int64) if t_arr.null_count \
        else t_arr.to_numpy(zero_copy_only=False).astype(np.int64)
    if not len(s) or not len(t):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    lo, hi = int(s.min()), int(s.max())
    if hi - lo < 4 * (len(s) + len(t)) + 1024:  # dense values: a table indexed by value, if the source's are unique
        where = np.full(hi - lo + 1, -1, dtype=np.int64)
        where[s - lo] = np.arange(len(s))
        if (where[s - lo] == np.arange(len(s))).all():
            inside = np.flatnonzero((t >= lo) & (t <= hi))
            n = where[t[inside] - lo]
            hit = n >= 0
            return s_rows[n[hit]].astype(np.int64), t_rows[inside[hit]].astype(np.int64)
    order = np.argsort(t, kind="stable")
    ts = t[order]
    lo = np.searchsorted(ts, s, side="left")
    hi = np.searchsorted(ts, s, side="right")
    counts = hi - lo
    si = np.repeat(np.arange(len(s)), counts)
    starts = np.repeat(lo - np.r_[0, np.cumsum(counts)[:-1]], counts)
    ti = order[np.arange(len(si)) + starts] if len(si) else np.zeros(0, dtype=np.int64)
    return s_rows[si].astype(np.int64), t_rows[ti].astype(np.int64)


def _view(source: pa.Array, target: pa.Array) -> pa.Table:
    return pa.table({"source": source, "target": target})


@dataclass
class _Views:
    """Condition and value evaluation over the ``source``/``target`` struct view (a schema per view type)."""

    schemas: dict[pa.Schema, Schema] = field(default_factory=dict)

    def mask(self, view: pa.Table, condition: Any) -> np.ndarray:
        n = view.num_rows
        if condition is None or not n:
            return np.ones(n, dtype=bool)
        expr = condition if isinstance(condition, pc.Expression) else self._expression(view, condition)
        if expr is None:
            return np.ones(n, dtype=bool)
        try:
            kept = view.append_column("__fs_i", pa.array(np.arange(n, dtype=np.int64))).filter(expr)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
            raise _bad_expression("condition", condition, view, e) from None
        out = np.zeros(n, dtype=bool)
        out[kept.column("__fs_i").to_numpy()] = True
        return out

    def _expression(self, view: pa.Table, condition: Any) -> pc.Expression | None:
        schema = self.schemas.get(view.schema)
        if schema is None:  # field ids of either side's columns are dropped: the view numbers its own
            plain = pa.schema([_bare(f) for f in view.schema])
            schema = self.schemas[view.schema] = Schema.from_arrow(plain, assign_ids=True)
        return row_filter(bind_filter(parse_filter(condition), schema))

    def value(self, view: pa.Table, value: Any, column: str, want: pa.DataType) -> pa.Array:
        """A ``set``/``values`` entry as ``want`` values, one per view row."""
        n = view.num_rows
        if isinstance(value, str) and value.split(".", 1)[0] in _SIDES and "." in value:
            side, path = value.split(".", 1)
            arr: Any = view.column(side).combine_chunks()
            whole = arr.type.get_field_index(path) >= 0  # a top-level column whose name holds dots
            for part in [path] if whole else path.split("."):
                if not pa.types.is_struct(arr.type) or arr.type.get_field_index(part) < 0:
                    raise InvalidOptionError(f"merge value {value!r} for column {column!r}: the {side} has no "
                                             f"column {path!r}")
                arr = arr.field(part)
        elif isinstance(value, pc.Expression):
            import pyarrow.dataset as ds

            try:
                arr = ds.dataset(view).to_table(columns={"v": value}).column("v").combine_chunks()
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
                raise _bad_expression(f"value for column {column!r}", value, view, e) from None
        elif isinstance(value, pa.Scalar):  # an explicit Arrow scalar: cast as Arrow casts (a quoted CLI text)
            return _cast(pa.repeat(value, n), column, want)
        else:
            return pa.repeat(fit_literal(value, want, column, "merge"), n)
        return fit_column(arr, want, column, repr(value) if isinstance(value, str) else "the expression")


def _bad_expression(what: str, expr: Any, view: pa.Table, e: Exception) -> InvalidOptionError:
    """A ``pyarrow.compute.Expression`` that does not evaluate on the view, named with what it can see."""
    sides = "; ".join(f"{side}: {[f.name for f in view.schema.field(side).type]}" for side in _SIDES)
    reason = str(e).splitlines()[0]
    return InvalidOptionError(f"merge {what} {expr} does not evaluate ({reason}); it sees struct columns "
                              f"'source' and 'target' ({sides}); nothing was written")


def _bare(f: pa.Field) -> pa.Field:
    """A field without metadata at any depth (the same names and types)."""
    t = f.type
    if pa.types.is_struct(t):
        t = pa.struct([_bare(c) for c in t])
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        item = _bare(t.value_field)
        t = pa.list_(item) if pa.types.is_list(t) else pa.large_list(item)
    elif pa.types.is_map(t):
        t = pa.map_(_bare(t.key_field), _bare(t.item_field))
    return pa.field(f.name, t, f.nullable)


def _cast(arr: pa.Array, column: str, want: pa.DataType) -> pa.Array:
    if arr.type == want:
        return arr
    try:
        return arr.cast(want)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        bad = next((i for i in range(min(len(arr), 100_000)) if not _fits(arr[i], want)), 0)
        raise CastValueError(column, bad, arr[bad].as_py() if len(arr) else None, str(arr.type), str(want),
                             f"The value does not fit column {column!r} ({e}); nothing was written.") from None


def _fits(value: pa.Scalar, want: pa.DataType) -> bool:
    try:
        value.cast(want)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return False
    return True


def _first_clause(views: _Views, view: pa.Table, clauses: Sequence[MergeClause]) -> np.ndarray:
    """Per view row: the index of the first clause whose condition holds (-1: none)."""
    chosen = np.full(view.num_rows, -1, dtype=np.int64)
    for i, clause in enumerate(clauses):
        free = chosen < 0
        if not free.any():
            break
        hold = views.mask(view, clause.condition)
        chosen[free & hold] = i
    return chosen


def _assign(views: _Views, view: pa.Table, base: pa.Table, clause: MergeClause, source_rows: pa.Table,
            out: pa.Schema, frozen: Sequence[str]) -> pa.Table:
    """``base`` (rows in ``out``) with the clause's values assigned (``"*"``: the source's columns)."""
    columns = {name: base.column(name) for name in out.names}
    if clause.whole_rows:
        for name in source_rows.column_names:
            if name in columns:
                columns[name] = source_rows.column(name)
    else:
        assert isinstance(clause.values, Mapping)
        for name, value in clause.values.items():
            if name not in columns:
                raise InvalidOptionError(f"merge clause {clause.kind} sets column {name!r}, which the table does not "
                                         f"have (columns: {out.names}); only '*' adds columns")
            if name in frozen and clause.kind == "update":
                raise IdentifierFieldChangeError(f"merge cannot set key column {name!r} of a keyed table (a key "
                                                 "names its row); delete the row and insert the new one")
            columns[name] = views.value(view, value, name, out.field(name).type)
    return pa.table([columns[n] for n in out.names], schema=out)


def plan_merge(spec: MergeSpec, source: pa.Table, fitted: pa.Table | None, target: pa.Table, out: pa.Schema,
               *, frozen: Sequence[str] = (), defaults: Mapping[str, pa.Scalar] | None = None) -> MergeOutcome:
    """What the clauses do to ``target`` (rows in ``out``, the table's schema after this merge).

    ``source``: the rows conditions see; ``fitted``: the same rows in ``out`` (``"*"`` clauses write them;
    None when no clause does). ``frozen``: columns an update may not set (a keyed table's key). ``defaults``:
    top-level columns' write defaults, which an insert by a dict gives the columns it does not name (SQL's
    INSERT with a column list; an append fills them the same way)."""
    defaults = defaults or {}
    views = _Views()
    s_idx, t_idx = match_rows(source, target, spec.on)
    matched_clauses = spec.of("update", "delete")
    if matched_clauses and len(t_idx):
        counts = np.bincount(t_idx, minlength=target.num_rows)
        if counts.max() > 1:
            row = int(np.argmax(counts > 1))
            key = {n: target.column(n)[row].as_py() for n in spec.on}
            raise MergeMatchError(f"merge on {list(spec.on)}: target row {key} is matched by {int(counts[row])} "
                                  "source rows; SQL's MERGE allows one (deduplicate the source, or narrow `on`); "
                                  "nothing was written")
    s_struct, t_struct = struct_of(source), struct_of(target)
    carried = [n for n in out.names if n in source.column_names]  # an update by '*' keeps the others
    updated_parts, updated_index, deleted_index = [], [], []
    if matched_clauses and len(t_idx):
        view = _view(s_struct.take(pa.array(s_idx)), t_struct.take(pa.array(t_idx)))
        chosen = _first_clause(views, view, matched_clauses)
        for i, clause in enumerate(matched_clauses):
            rows = np.flatnonzero(chosen == i)
            if not len(rows):
                continue
            if clause.kind == "delete":
                deleted_index.append(t_idx[rows])
                continue
            part_view = view.take(pa.array(rows))
            base = target.take(pa.array(t_idx[rows]))
            src = fitted.select(carried).take(pa.array(s_idx[rows])) if clause.whole_rows and fitted is not None \
                else source.take(pa.array(s_idx[rows]))
            updated_parts.append(_assign(views, part_view, base, clause, src, out, frozen))
            updated_index.append(t_idx[rows])
    inserted_parts = []
    inserts = spec.of("insert")
    if inserts:
        free = np.ones(source.num_rows, dtype=bool)
        free[s_idx] = False
        rows = np.flatnonzero(free)
        if len(rows):
            view = _view(s_struct.take(pa.array(rows)), pa.nulls(len(rows), t_struct.type))
            chosen = _first_clause(views, view, inserts)
            for i, clause in enumerate(inserts):
                mine = np.flatnonzero(chosen == i)
                if not len(mine):
                    continue
                if clause.whole_rows and fitted is not None:
                    inserted_parts.append(fitted.take(pa.array(rows[mine])))
                    continue
                base = pa.table([pa.repeat(defaults[f.name], len(mine)).cast(f.type) if f.name in defaults
                                  else pa.nulls(len(mine), f.type) for f in out], schema=out)
                inserted_parts.append(_assign(views, view.take(pa.array(mine)), base, clause,
                                              source.take(pa.array(rows[mine])), out, ()))
    if spec.of("delete_by_source"):
        free = np.ones(target.num_rows, dtype=bool)
        free[t_idx] = False
        rows = np.flatnonzero(free)
        if len(rows):
            deleted_index.append(rows[by_source_mask(spec, s_struct.type, target.take(pa.array(rows)), views)])
    empty = out.empty_table()
    for part in (*updated_parts, *inserted_parts):
        _check_required(part, out)
    return MergeOutcome(
        np.sort(np.concatenate(updated_index)) if updated_index else np.zeros(0, dtype=np.int64),
        _order_by(updated_parts, updated_index, out) if updated_parts else empty,
        np.sort(np.concatenate(deleted_index)) if deleted_index else np.zeros(0, dtype=np.int64),
        pa.concat_tables([empty, *inserted_parts]) if inserted_parts else empty)


def by_source_mask(spec: MergeSpec, source_type: pa.DataType, target: pa.Table, views: _Views | None = None
                   ) -> np.ndarray:
    """Per row of ``target`` (rows no source row matches, in the output schema): whether a by-source clause
    deletes it (the first whose condition holds; its ``source`` side is null). A distributed merge asks
    this of each target file and anti-joins the answer with the source's ``on`` values."""
    clauses = spec.of("delete_by_source")
    if not clauses or not target.num_rows:
        return np.zeros(target.num_rows, dtype=bool)
    view = _view(pa.nulls(target.num_rows, source_type), struct_of(target))
    return _first_clause(views or _Views(), view, clauses) >= 0


def _check_required(rows: pa.Table, out: pa.Schema) -> None:
    """A required (top-level) column may not get a null from a clause: named before anything is written."""
    for f in out:
        if not f.nullable and rows.column(f.name).null_count:
            at = int(np.argmax(rows.column(f.name).is_null().to_numpy(zero_copy_only=False)))
            raise NullInRequiredFieldError(f.name, rows.column(f.name).null_count, at,
                                           "give it a value in the clause's set/values (or '*' from a source "
                                           "column without nulls); nothing was written")


def _order_by(parts: list[pa.Table], index: list[np.ndarray], out: pa.Schema) -> pa.Table:
    """Updated rows in the order of their target rows (so ``updated_index`` lines up with them)."""
    rows = pa.concat_tables([out.empty_table(), *parts])
    order = np.argsort(np.concatenate(index), kind="stable")
    return rows.take(pa.array(order))
