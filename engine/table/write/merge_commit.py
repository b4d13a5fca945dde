"""Running a merge (``merge_builder``) on a table, and partial-column upserts: read the target, decide, commit once.

Keyed tables: ``on`` is the key. The live rows of the source's keys are read from the buckets they hit
(``key_lookup.candidates`` and the merge on read), or every row when a by-source clause needs them; new
versions of updated rows and inserted rows are written like an upsert's (their deletion vectors record
the rows they supersede), deleted keys as delete files with vectors of the rows they remove — in one
commit. An update may not lower a row's precombine value (:class:`PrecombineLoweredError`): the old
version would win the merge on read.

Unkeyed tables: ``on`` is any columns. The ``on`` columns of every live file are read with each row's
file and position (``row_changes.find_rows``, the finder of delete and update too); matched target rows go
away by position as a delete's do (``plan_removal``: deletion vectors, or a rewrite of a file that would
keep fewer than ``REWRITE_FRACTION`` of its rows) and their new versions are appended, in the same commit
(``commit_row_changes``).

Concurrency: delete's, update's and merge's one rule (``row_changes.row_change_rule``). A merge reads every
live row it could match (no filter), so it conflicts with a concurrent commit that ended or changed a
file it read or added a data file (on a keyed table: any file); a schema, policy or spec change does not
conflict. ``with_retries`` runs it again on the new head (else ``CommitConflictError``); files written for
a lost attempt are removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.errors import FieldshiftError, InvalidOptionError, PrecombineLoweredError
from fieldshift.schema.defaults import default_scalar
from fieldshift.schema.model import Schema
from fieldshift.table.catalog.deletion_vectors import VectorCommit
from fieldshift.table.commits import Attempt, expired_is_conflict, with_retries
from fieldshift.table.evolution.on_write import prepare_append
from fieldshift.table.files.data_files import remove_files, removed_unless_committed
from fieldshift.table.handle import TableIO
from fieldshift.table.keyed.key_lookup import KeyedPlan, candidates, plan_vectors
from fieldshift.table.keyed.keyed_write import check_unique
from fieldshift.table.keyed.keys import KeySpec, dedupe_latest, remembering_keys
from fieldshift.table.keyed.merge import group_files, read_group
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.partitions.partition_write import MAX_FILE_ROWS, write_partitioned
from fieldshift.table.records import DataFile
from fieldshift.table.scan.table_scan import Scan
from fieldshift.table.updates import (
    AddFiles,
    DeletionVectors,
    FilesPresent,
    SetSchema,
    TableRequirement,
    TableUpdate,
)
from fieldshift.table.write.merge_builder import (
    MergeOutcome,
    MergeResult,
    MergeSpec,
    by_source_mask,
    match_rows,
    plan_merge,
)
from fieldshift.table.write.row_changes import (
    POSITION_COLUMN,
    MatchedRows,
    check_unit_live,
    commit_row_changes,
    find_rows,
    plan_removal,
    row_change_rule,
)
from fieldshift.table.write.set_values import check_key_kinds
from fieldshift.table.write.write_commit import check_evolution, resolve_written

__all__ = ["BY_SOURCE_FILE", "MergePart", "by_source_candidates", "by_source_part", "check_on", "commit_parts",
           "fill_partial", "keyed_live_rows", "merge_part", "merge_vectors", "run_merge", "target_units",
           "without_by_source"]


@dataclass(frozen=True)
class _Fitted:
    """The source as conditions see it, as whole rows of the output schema (None: no ``"*"`` clause), and
    that schema (``evolved``: new)."""

    view: pa.Table
    rows: pa.Table | None
    schema: Schema
    evolved: bool


def _fit(spec: MergeSpec, metadata: TableMetadata) -> _Fitted:
    schema = metadata.current_schema
    if not spec.of("insert") and spec.source.num_rows:  # a null on value matches nothing: only an insert uses it
        valid = None
        for name in spec.on:
            v = pc.is_valid(spec.source.column(name))
            valid = v if valid is None else pc.and_(valid, v)
        if valid is not None and not pc.all(valid).as_py():
            spec = replace(spec, source=spec.source.filter(valid))
    if not spec.whole_rows:
        return _Fitted(spec.source, None, schema, False)
    written = spec.source if spec.evolve else spec.source.select([n for n in spec.source.column_names
                                                                   if n in schema.names])
    prepared = prepare_append(written, schema, evolve=spec.evolve, on_incompatible="fail",
                              policy=spec.policy or metadata.policy)
    names = [n for n in prepared.data.column_names if n in spec.source.column_names]
    extra = [n for n in spec.source.column_names if n not in names]  # not written (evolve=False): conditions see them
    view = prepared.data.select(names)
    for n in extra:
        view = view.append_column(n, spec.source.column(n))
    return _Fitted(view, prepared.data, prepared.schema, prepared.evolved)


def _write_defaults(schema: Schema) -> dict[str, pa.Scalar]:
    """Top-level columns' write defaults (what an insert naming only some columns gives the others)."""
    return {f.name: default_scalar(f, "write") for f in schema.fields if f.write_default is not None}


def _conform(rows: pa.Table, schema: Schema, metadata: TableMetadata) -> pa.Table:
    """Target rows read in the head schema, as rows of ``schema`` (the merge evolved it: new columns null)."""
    if rows.schema.equals(schema.to_arrow()):
        return rows
    return prepare_append(rows, schema, evolve=False, on_incompatible="fail", policy=metadata.policy).data


def run_merge(io: TableIO, spec: MergeSpec) -> MergeResult:
    """Run a merge in the retry loop: each attempt reads the head, decides and commits once."""

    def attempt(now: Attempt) -> MergeResult:
        metadata = io.metadata()
        fitted = _fit(spec, metadata)
        if metadata.keys is not None:
            return _keyed_merge(io, metadata, spec, fitted, resolve=not now.last)
        return _unkeyed_merge(io, metadata, spec, fitted)

    return with_retries(attempt)


# -- keyed ------------------------------------------------------------------------------------------
def keyed_live_rows(io: TableIO, metadata: TableMetadata, keys: pa.Table | None) -> pa.Table:
    """The live (merged) rows, every column in the head schema, of the buckets ``keys`` hit and files whose
    key bounds may hold one (a superset of the rows of those keys); every live row when ``keys`` is None."""
    spec = metadata.keys
    assert spec is not None
    scan = Scan(io, metadata)
    if keys is None:
        return scan.to_arrow()
    names = list(spec.key_names)
    keys = keys.select(names).cast(metadata.current_schema.select(names).to_arrow())
    looked = candidates(scan, keys)
    files = [f for b in looked for f in b.files]
    parts = [read_group(scan, g) for g in group_files(files)]
    rows = pa.concat_tables([scan.read_schema.to_arrow().empty_table(), *parts])
    return rows.select(metadata.current_schema.names)


def _source_keys(view: pa.Table, spec: KeySpec, schema: Schema) -> pa.Table:
    """The source's key columns in the key types, rows with a null key left out (they never match)."""
    names = list(spec.key_names)
    keys = view.select(names)
    valid = None
    for n in names:
        v = pc.is_valid(keys.column(n))
        valid = v if valid is None else pc.and_(valid, v)
    if valid is not None and keys.num_rows and not pc.all(valid).as_py():
        keys = keys.filter(valid)
    want = schema.select(names).to_arrow()
    for n in names:
        clash = check_key_kinds(keys.schema.field(n).type, want.field(n).type)
        if clash is not None:
            raise InvalidOptionError(f"merge on {n!r}: {clash}; cast the source column")
    try:
        return keys.cast(want)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise InvalidOptionError(f"merge on {names}: the source's key values do not fit the table's key types "
                                 f"({e}); cast the source columns") from None


def _check_on(spec: MergeSpec, keys: KeySpec, name: str) -> None:
    if sorted(spec.on) != sorted(keys.key_names):
        raise InvalidOptionError(f"merge into keyed table {name!r} matches by its key {list(keys.key_names)}: pass "
                                 f"on={list(keys.key_names)} (got {list(spec.on)})")


def _check_precombine(keys: KeySpec, outcome: MergeOutcome, target: pa.Table) -> None:
    """An update may not lower a row's precombine value (the old version would keep winning on read)."""
    name = keys.precombine_name
    if name is None or not len(outcome.updated_index):
        return
    old = target.column(name).take(pa.array(outcome.updated_index))
    new = outcome.updated.column(name)
    lower = pc.or_kleene(pc.less(new, old), pc.and_kleene(pc.is_null(new), pc.is_valid(old)))
    lower = pc.fill_null(lower, False)
    if pc.any(lower).as_py():
        at = int(np.argmax(lower.to_numpy(zero_copy_only=False)))
        key = {n: target.column(n)[int(outcome.updated_index[at])].as_py() for n in keys.key_names}
        raise PrecombineLoweredError(
            f"merge would update row {key} with precombine {name!r} {new[at].as_py()!r}, lower than its current "
            f"{old[at].as_py()!r}: the current version would keep winning; set {name!r} to at least its current "
            "value; nothing was written")


def merge_vectors(*plans: tuple[KeyedPlan | None, Sequence[DataFile]]) -> VectorCommit | None:
    """One commit's vectors from several plans (an upsert's and a delete's): buckets and resolved files joined,
    each file's positions united."""
    commits = [p.commit(files) for p, files in plans if p is not None]
    return _joined(commits) if commits else None


def _joined(commits: Sequence[VectorCommit], on_conflict: Literal["raise", "skip"] = "raise") -> VectorCommit:
    """One commit of several commits' buckets, resolved files and vectors (each file's positions united)."""
    vectors: dict[int, np.ndarray] = {}
    for c in commits:
        for fid, positions in c.vectors.items():
            vectors[fid] = np.union1d(vectors[fid], positions) if fid in vectors else positions
    return VectorCommit(frozenset().union(*(c.buckets for c in commits)), vectors,
                        frozenset().union(*(c.resolved for c in commits)), on_conflict=on_conflict)


@remembering_keys()  # one key hash for the uniqueness check, the lookups and the bucket split
def _keyed_merge(io: TableIO, metadata: TableMetadata, spec: MergeSpec, fitted: _Fitted, *,
                 resolve: bool) -> MergeResult:
    keys = metadata.keys
    assert keys is not None
    schema = fitted.schema
    with expired_is_conflict("the snapshot this merge read was expired meanwhile"):
        outcome, gone = _keyed_plan(io, metadata, spec, fitted, keys,
                                    every_live_row=bool(spec.of("delete_by_source")))
        rows = outcome.rows
        if not rows.num_rows and not gone.num_rows:
            return MergeResult(0, 0, 0, None)
        plan_u = plan_vectors(io, metadata, rows, "upsert") if resolve and rows.num_rows else None
        plan_d = plan_vectors(io, metadata, gone, "delete") if resolve and gone.num_rows else None
    if fitted.evolved:
        check_evolution(io, metadata, schema, "a merge")
    result = (outcome.inserted.num_rows, outcome.updated.num_rows, gone.num_rows)
    written: list[str] = []
    with removed_unless_committed(io.storage, written):
        files, deletes = _write_keyed(io, metadata, schema, rows, gone, written)
        vectors = merge_vectors((plan_u, files), (plan_d, deletes))
        snap = _commit(io, metadata, schema, fitted.evolved, [*files, *deletes], vectors, result)
    return MergeResult(*result, snap, fitted.evolved)


def _keyed_plan(io: TableIO, metadata: TableMetadata, spec: MergeSpec, fitted: _Fitted, keys: KeySpec, *,
                every_live_row: bool = False) -> tuple[MergeOutcome, pa.Table]:
    """What ``spec`` does to a keyed table: its outcome against the live rows of the source's keys (every live
    row for a by-source clause), precombine and uniqueness checked, and the keys it deletes."""
    _check_on(spec, keys, metadata.name)
    schema = fitted.schema
    wanted = None if every_live_row else _source_keys(fitted.view, keys, schema)
    target = _conform(keyed_live_rows(io, metadata, wanted), schema, metadata)
    outcome = plan_merge(spec, fitted.view, fitted.rows, target, schema.to_arrow(), frozen=keys.key_names,
                         defaults=_write_defaults(schema))
    _check_precombine(keys, outcome, target)
    check_unique(outcome.rows, keys, "merge")
    return outcome, target.take(pa.array(outcome.deleted_index)).select(list(keys.key_names))


def _write_keyed(io: TableIO, metadata: TableMetadata, schema: Schema, rows: pa.Table, gone: pa.Table,
                 written: list[str]) -> tuple[list[DataFile], list[DataFile]]:
    """A keyed merge's files: the new row versions and the delete files of the keys it removes."""
    keys = metadata.keys
    files = write_partitioned(io.storage, schema, metadata.spec, rows, written, MAX_FILE_ROWS, keys=keys) \
        if rows.num_rows else []
    deletes = write_partitioned(io.storage, schema, metadata.spec, gone, written, keys=keys, content="deletes") \
        if gone.num_rows else []
    return files, deletes


def _commit(io: TableIO, metadata: TableMetadata, schema: Schema, evolved: bool, files: Sequence[DataFile],
            vectors: VectorCommit | None, counts: tuple[int, int, int]) -> int:
    """Commit a keyed merge's files, under the row-change rule over every file live at its base."""
    requirements: list[TableRequirement] = [FilesPresent(io.storage, tuple(f.path for f in files))]
    updates: list[TableUpdate] = [AddFiles(tuple(files), schema.schema_id)]
    if evolved:
        updates.append(SetSchema(schema))
    if vectors is not None:
        updates.append(DeletionVectors(vectors))
    scan = Scan(io, metadata)
    updates.append(row_change_rule(io, scan, scan.live_files(), any_content=True))
    snap = io.catalog.commit(io.table_id, metadata.head.snapshot_id, requirements, updates, operation="merge",
                             summary=_summary(files, counts))
    return snap.snapshot_id


def _summary(files: Sequence[DataFile], counts: tuple[int, int, int]) -> dict[str, int]:
    return {"rows": sum(f.record_count for f in files if f.content == "data"), "rows_inserted": counts[0],
            "rows_updated": counts[1], "rows_deleted": counts[2]}


# -- unkeyed ----------------------------------------------------------------------------------------
def _positions(found: MatchedRows) -> np.ndarray:
    assert found.rows is not None
    return found.rows.column(POSITION_COLUMN).to_numpy()


def _check_on_columns(spec: MergeSpec, metadata: TableMetadata) -> None:
    names = metadata.current_schema.names
    missing = [n for n in spec.on if n not in names]
    if missing:
        raise InvalidOptionError(f"merge on {list(spec.on)}: table {metadata.name!r} has no column(s) {missing} "
                                 f"(columns: {names})")


def _plan_unkeyed(io: TableIO, metadata: TableMetadata, spec: MergeSpec,
                  fitted: _Fitted) -> tuple[MergeOutcome, MatchedRows]:
    """Decide an unkeyed merge at ``metadata``'s snapshot: the outcome, and the target rows it removes (every
    live file read, with the positions of the rows deleted or replaced)."""
    _check_on_columns(spec, metadata)
    narrow = not _reads_target(spec)
    found = find_rows(io, metadata, None, with_rows=True, columns=list(spec.on) if narrow else None)
    assert found.rows is not None and found.file_ids is not None
    if narrow:  # only the on columns: enough to match
        decided, file_ids, positions = _narrow_plan(io, metadata, spec, fitted, found)
    else:
        target = _conform(found.rows.drop_columns([POSITION_COLUMN]), fitted.schema, metadata)
        decided = plan_merge(spec, fitted.view, fitted.rows, target, fitted.schema.to_arrow(),
                             defaults=_write_defaults(fitted.schema))
        file_ids, positions = found.file_ids, _positions(found)
    gone = decided.replaced_index
    gf, gp = file_ids[gone], positions[gone]
    doomed = MatchedRows(_conflict_scan(io, metadata, spec, fitted.view) or found.scan, found.read)
    for fid in np.unique(gf):
        doomed.positions[int(fid)] = np.sort(gp[gf == fid])
    return decided, doomed


_RANGED = (pa.types.is_integer, pa.types.is_string, pa.types.is_large_string, pa.types.is_date)


def _conflict_scan(io: TableIO, metadata: TableMetadata, spec: MergeSpec, view: pa.Table) -> Scan | None:
    """The filter an unkeyed merge's conflict rule prunes added files with: each ``on`` column within the
    source's range of it (a file another commit added that holds no row in that range cannot change what
    matched). None — any added data file conflicts — when a by-source clause reads every target row, or an
    ``on`` column is of a type without an exact range here (floats, timestamps, nested) or wholly null."""
    if spec.of("delete_by_source"):
        return None
    predicates: list[tuple[str, str, object]] = []
    for name in spec.on:
        column = view.column(name)
        if not any(test(column.type) for test in _RANGED) or column.null_count == len(column):
            return None
        bounds = pc.min_max(column)
        predicates += [(name, ">=", bounds["min"].as_py()), (name, "<=", bounds["max"].as_py())]
    try:
        return Scan(io, metadata, list(spec.on), predicates)
    except (FieldshiftError, pa.ArrowException, TypeError, ValueError):  # the range does not bind: no filter
        return None


def _unkeyed_merge(io: TableIO, metadata: TableMetadata, spec: MergeSpec, fitted: _Fitted) -> MergeResult:
    schema = fitted.schema
    with expired_is_conflict("the snapshot this merge read was expired meanwhile"):
        decided, doomed = _plan_unkeyed(io, metadata, spec, fitted)
    rows = decided.rows
    if not rows.num_rows and not doomed.count:
        return MergeResult(0, 0, 0, None)
    if fitted.evolved:
        check_evolution(io, metadata, schema, "a merge")
    counts = (decided.inserted.num_rows, decided.updated.num_rows, len(decided.deleted_index))
    written: list[str] = []
    with removed_unless_committed(io.storage, written):
        with ThreadPoolExecutor(max_workers=1) as pool:  # the new rows are written while files are rewritten
            new_files = pool.submit(write_partitioned, io.storage, schema, metadata.spec, rows, written,
                                    MAX_FILE_ROWS) if rows.num_rows else None
            with expired_is_conflict("the snapshot this merge read was expired meanwhile"):
                removal = plan_removal(io, metadata, doomed, written)
            files_out = new_files.result() if new_files is not None else []
        snap = commit_row_changes(io, metadata, doomed, removal, files_out, operation="merge",
                                  summary=_summary(files_out, counts), schema=schema)
    return MergeResult(*counts, snap.snapshot_id, fitted.evolved)


def _reads_target(spec: MergeSpec) -> bool:
    """Whether a condition or value may read ``target`` columns besides ``on`` (then every column is read)."""
    for clause in spec.clauses:
        if clause.kind == "delete_by_source":
            return True
        if clause.condition is not None or (clause.kind == "update" and clause.values != "*"):
            return True
    return False


def _narrow_plan(io: TableIO, metadata: TableMetadata, spec: MergeSpec, fitted: _Fitted,
                 found: MatchedRows) -> tuple[MergeOutcome, np.ndarray, np.ndarray]:
    """The common case (clauses without conditions, updates by ``"*"``): match on the ``on`` columns alone,
    then read whole rows only of the files holding matched target rows (their unset columns are kept).
    Returns the outcome and, per row of its target, the file id and position it came from."""
    assert found.rows is not None and found.file_ids is not None
    on = found.rows.select(list(spec.on))
    if not on.schema.equals(fitted.schema.select(list(spec.on)).to_arrow()):  # the merge widens an on column
        on = _conform(on, fitted.schema, metadata).select(list(spec.on))
    _, t_idx = match_rows(fitted.view, on, spec.on)
    t_idx = np.unique(t_idx)
    file_ids, positions = found.file_ids[t_idx], _positions(found)[t_idx]
    whole = find_rows(io, metadata, None, with_rows=True, only=set(np.unique(file_ids).tolist()))
    assert whole.rows is not None and whole.file_ids is not None
    # each matched row's place among the whole rows read: by (file id, position)
    have = (whole.file_ids << 32) | _positions(whole)
    order = np.argsort(have, kind="stable")
    pick = order[np.searchsorted(have[order], (file_ids << 32) | positions)]
    target = _conform(whole.rows.take(pa.array(pick)).drop_columns([POSITION_COLUMN]), fitted.schema, metadata)
    outcome = plan_merge(spec, fitted.view, fitted.rows, target, fitted.schema.to_arrow(),
                             defaults=_write_defaults(fitted.schema))
    return outcome, file_ids, positions


# -- partial upserts --------------------------------------------------------------------------------
def fill_partial(io: TableIO, metadata: TableMetadata, data: pa.Table, carried: Sequence[str],
                 schema: Schema) -> pa.Table:
    """An upsert's rows (in ``schema``) with the columns the input did not carry taken from the live row of
    their key (a new key keeps what the write filled in: the column's write default, else null): a
    partial-column upsert. A carried null stays null."""
    keys = metadata.keys
    assert keys is not None
    data = dedupe_latest(data, keys)
    others = [n for n in schema.names if n not in carried]
    if not others or not data.num_rows:
        return data
    live = _conform(keyed_live_rows(io, metadata, data.select(list(keys.key_names))), schema, metadata)
    d_idx, l_idx = match_rows(data, live, keys.key_names)
    index = np.full(data.num_rows, -1, dtype=np.int64)
    index[d_idx] = l_idx
    new_key = index < 0
    take = pa.array(index, mask=new_key)
    columns = {n: data.column(n) for n in schema.names}
    for n in others:  # a new key is an insert: its column gets what the write gave it (the write default, or null)
        kept = live.column(n).take(take)
        columns[n] = pc.if_else(pa.array(new_key), data.column(n), kept) if new_key.any() else kept
    return pa.table([columns[n] for n in schema.names], schema=data.schema)


# -- a merge written by several workers (Spark's executors), committed once ---------------------------
@dataclass(frozen=True)
class MergePart:
    """What one worker's share of the source did, against a pinned snapshot: the files it wrote (new rows,
    and a keyed table's delete files), the target rows it removes (unkeyed: file id -> positions) and its
    counts (inserted, updated, deleted)."""

    files: tuple[DataFile, ...]
    doomed: dict[int, np.ndarray]
    counts: tuple[int, int, int]


@remembering_keys()
def merge_part(io: TableIO, metadata: TableMetadata, spec: MergeSpec) -> MergePart:
    """Run ``spec`` (its source: one worker's rows; every row of an ``on`` value is in one worker's share)
    against ``metadata``'s snapshot and write its files, without committing (``commit_parts`` does).
    By-source clauses need every source row at once: refused here."""
    if spec.of("delete_by_source"):
        raise InvalidOptionError("when_not_matched_by_source_delete needs every source row in one place; run it "
                                 "with Table.merge (a distributed merge does not support it yet)")
    fitted = _fit(spec, metadata)
    schema = fitted.schema
    written: list[str] = []
    try:
        if metadata.keys is not None:
            outcome, gone = _keyed_plan(io, metadata, spec, fitted, metadata.keys)
            files, deletes = _write_keyed(io, metadata, schema, outcome.rows, gone, written)
            return MergePart((*files, *deletes), {},
                             (outcome.inserted.num_rows, outcome.updated.num_rows, gone.num_rows))
        decided, doomed = _plan_unkeyed(io, metadata, spec, fitted)
        rows = decided.rows
        files = write_partitioned(io.storage, schema, metadata.spec, rows, written, MAX_FILE_ROWS) \
            if rows.num_rows else []
        counts = (decided.inserted.num_rows, decided.updated.num_rows, len(decided.deleted_index))
        return MergePart(tuple(files), doomed.positions, counts)
    except BaseException:
        remove_files(io.storage, written)
        raise


# -- a by-source clause, distributed: target files checked by workers, anti-joined with the source ------
BY_SOURCE_FILE = "_fieldshift_file"
"""The column of :func:`by_source_candidates` naming an unkeyed target row's file id (with :data:`POSITION_COLUMN`)."""


def check_on(spec: MergeSpec, metadata: TableMetadata) -> None:
    """``spec``'s ``on`` columns fit the table (a keyed table: its key; else columns it has), as ``Table.merge``
    checks them: a distributed merge asks before any task runs."""
    if metadata.keys is not None:
        _check_on(spec, metadata.keys, metadata.name)
    else:
        _check_on_columns(spec, metadata)


def without_by_source(spec: MergeSpec) -> MergeSpec:
    """``spec`` without its by-source clauses: what each worker's share of the source runs (``merge_part``)."""
    return replace(spec, clauses=tuple(c for c in spec.clauses if c.kind != "delete_by_source"))


def target_units(io: TableIO, metadata: TableMetadata) -> list[tuple[DataFile, ...]]:
    """The units a distributed by-source pass splits the target into, as their files (each task reads its own
    without looking it up): each live data file of an unkeyed table, each merge group of a keyed one (its rows
    are only known merged)."""
    files = Scan(io, metadata).live_files()
    if metadata.keys is not None:
        return [tuple(g) for g in group_files(list(files))]
    return [(f,) for f in files if f.content == "data"]


def by_source_candidates(io: TableIO, metadata: TableMetadata, spec: MergeSpec,
                         unit: Sequence[DataFile]) -> pa.Table:
    """The live target rows of one unit (``target_units``) that ``spec``'s by-source clauses delete unless a
    source row matches them: their ``on`` columns in the head schema's types, and on an unkeyed table
    :data:`BY_SOURCE_FILE` and :data:`POSITION_COLUMN` (where the row is). ``spec``'s source only gives its
    schema. The caller removes the rows whose ``on`` values the source holds (an anti-join; a null never
    matches) and deletes the rest (``by_source_part``). A unit file no longer live at ``metadata``'s snapshot
    raises ``CommitConflictError``."""
    fitted = _fit(spec, metadata)
    source_type = pa.struct(list(fitted.view.schema))
    names = list(spec.on)
    _check_on_columns(spec, metadata)
    scan = Scan(io, metadata)
    check_unit_live(scan, unit, "the merge's target")
    if metadata.keys is not None:
        _check_on(spec, metadata.keys, metadata.name)
        rows = read_group(scan, list(unit)).select(metadata.current_schema.names)
        target = _conform(rows, fitted.schema, metadata)
        return rows.select(names).filter(pa.array(by_source_mask(spec, source_type, target)))
    fid = unit[0].file_id
    assert fid is not None
    found = find_rows(io, metadata, None, with_rows=True, only={fid})
    assert found.rows is not None
    target = _conform(found.rows.drop_columns([POSITION_COLUMN]), fitted.schema, metadata)
    keep = pa.array(by_source_mask(spec, source_type, target))
    out = found.rows.select([*names, POSITION_COLUMN]).filter(keep)
    return out.append_column(BY_SOURCE_FILE, pa.array(np.full(out.num_rows, fid, dtype=np.int64)))


def by_source_part(io: TableIO, metadata: TableMetadata, spec: MergeSpec, rows: pa.Table) -> MergePart:
    """What deleting ``rows`` (``by_source_candidates`` no source row matched) does: on an unkeyed table their
    positions, on a keyed table a delete file of their keys (written here, committed by ``commit_parts``)."""
    if metadata.keys is None:
        file_ids = rows.column(BY_SOURCE_FILE).to_numpy()
        positions = rows.column(POSITION_COLUMN).to_numpy().astype(np.int64)
        doomed = {int(f): np.sort(positions[file_ids == f]) for f in np.unique(file_ids)}
        return MergePart((), doomed, (0, 0, rows.num_rows))
    keys = metadata.keys
    schema = _fit(spec, metadata).schema
    gone = rows.select(list(keys.key_names)).cast(schema.select(list(keys.key_names)).to_arrow())
    written: list[str] = []
    try:
        files = write_partitioned(io.storage, schema, metadata.spec, gone, written, keys=keys, content="deletes") \
            if gone.num_rows else []
    except BaseException:
        remove_files(io.storage, written)
        raise
    return MergePart(tuple(files), {}, (0, 0, gone.num_rows))


def _resolve_parts(io: TableIO, metadata: TableMetadata, schema: Schema, files: Sequence[DataFile]
                   ) -> VectorCommit | None:
    """The deletion vectors of a keyed merge's files written by workers: the live rows their new versions and
    deleted keys supersede, looked up once at the snapshot the workers read (``resolve_written``, as Spark's
    keyed writes do: the key columns of the written files are read back). None — every file merges on
    read — when either kind cannot be resolved."""
    commits = []
    for content, operation in (("data", "upsert"), ("deletes", "delete")):
        mine = [f for f in files if f.content == content]
        if mine:
            done = resolve_written(io, metadata, schema, mine, operation)  # type: ignore[arg-type]
            if done is None:
                return None
            commits.append(done)
    return _joined(commits, on_conflict="skip") if commits else None


def commit_parts(io: TableIO, metadata: TableMetadata, spec: MergeSpec, parts: Sequence[MergePart]) -> MergeResult:
    """Commit the workers' parts once, on the snapshot they read (``spec``'s source: any rows of the source's
    schema; it decides the schema). A keyed table's files are resolved here (``_resolve_parts``: deletion
    vectors of the rows they supersede, as ``Table.merge`` records them; after a schema change they commit
    unresolved and merge on read); an unkeyed table's removed rows go as a delete's do (``plan_removal``).
    A concurrent commit fails the merge (``CommitConflictError``: run it again); every written file is
    removed then."""
    fitted = _fit(spec, metadata)
    files = [f for p in parts for f in p.files]
    counts = tuple(sum(p.counts[i] for p in parts) for i in range(3))
    written = [f.path for f in files]
    with removed_unless_committed(io.storage, written):
        if not any(counts):
            remove_files(io.storage, written)
            return MergeResult(0, 0, 0, None)
        if fitted.evolved:
            check_evolution(io, metadata, fitted.schema, "a merge")
        triple = (int(counts[0]), int(counts[1]), int(counts[2]))
        if metadata.keys is not None:
            vectors = None if fitted.evolved else _resolve_parts(io, metadata, fitted.schema, files)
            snap = _commit(io, metadata, fitted.schema, fitted.evolved, files, vectors, triple)
        else:
            scan = Scan(io, metadata)
            doomed = MatchedRows(scan, [f for f in scan.live_files() if f.content == "data"])
            for p in parts:
                for fid, positions in p.doomed.items():
                    doomed.positions[fid] = np.union1d(doomed.positions[fid], positions) \
                        if fid in doomed.positions else positions
            removal = plan_removal(io, metadata, doomed, written)
            snap = commit_row_changes(io, metadata, doomed, removal, files, operation="merge",
                                      summary=_summary(files, triple), schema=fitted.schema).snapshot_id
    return MergeResult(int(counts[0]), int(counts[1]), int(counts[2]), snap, fitted.evolved)
