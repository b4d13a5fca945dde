"""Running a merge (``merge_builder``) on a table, and partial-column upserts: read the target, decide, commit once.

Keyed tables: ``on`` is the key. The live rows of the source's keys are read from the buckets they hit
(``key_lookup.candidates`` and the merge on read), or every row when a by-source clause needs them; new
versions of updated rows and inserted rows are written like an upsert's (their deletion vectors record
the rows they supersede), deleted keys as delete files with vectors of the rows they remove — in one
commit. An update may not lower a row's precombine value (:class:`PrecombineLoweredError`): the old
version would win the merge on read.

Unkeyed tables: ``on`` is any columns. The ``on`` columns of every live file are read with each row's
file and position (``find_rows``); matched target rows go away by position (``remove_rows``: today the
files holding them are rewritten without them, copy-on-write) and their new versions are appended, in
the same commit.

Concurrency: the decision depends on every row read, so a merge conflicts with a concurrent commit that
added or ended a file or recorded a deletion vector (``NoRowsChanged``; a schema, policy or spec change
does not conflict) and ``with_retries`` runs it again on the new head (else ``CommitConflictError``);
files written for a lost attempt are removed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.errors import CommitConflictError, CommitOutcomeUnknownError, InvalidOptionError, PrecombineLoweredError
from fieldshift.schema.model import Schema
from fieldshift.table.catalog.changed_rows import rows_changed_since
from fieldshift.table.catalog.deletion_vectors import VectorCommit
from fieldshift.table.commits import Attempt, expired_is_conflict, with_retries
from fieldshift.table.evolution.on_write import prepare_append
from fieldshift.table.files.data_files import iter_file_batches, remove_files, write_data_file
from fieldshift.table.handle import TableIO
from fieldshift.table.keyed.key_lookup import KeyedPlan, candidates, plan_vectors
from fieldshift.table.keyed.keyed_write import check_unique
from fieldshift.table.keyed.keys import KeySpec, dedupe_latest, forget_key_hash
from fieldshift.table.keyed.merge import group_files, read_group
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.partitions.partition_write import MAX_FILE_ROWS, write_partitioned
from fieldshift.table.records import DataFile
from fieldshift.table.scan.table_scan import Scan
from fieldshift.table.updates import (
    AddFiles,
    CommitState,
    DeletionVectors,
    FilesPresent,
    RemoveFiles,
    SetSchema,
    TableRequirement,
    TableUpdate,
)
from fieldshift.table.write.merge_builder import MergeOutcome, MergeResult, MergeSpec, match_rows, plan_merge
from fieldshift.table.write.write_commit import check_evolution

__all__ = ["FoundRows", "MergePart", "NoRowsChanged", "commit_parts", "fill_partial", "find_rows", "keyed_live_rows",
           "merge_part", "merge_vectors", "remove_rows", "run_merge"]


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
    try:
        return keys.cast(schema.select(names).to_arrow())
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
    if not commits:
        return None
    vectors: dict[int, np.ndarray] = {}
    for c in commits:
        for fid, positions in c.vectors.items():
            vectors[fid] = np.union1d(vectors[fid], positions) if fid in vectors else positions
    return VectorCommit(frozenset().union(*(c.buckets for c in commits)), vectors,
                        frozenset().union(*(c.resolved for c in commits)))


def _keyed_merge(io: TableIO, metadata: TableMetadata, spec: MergeSpec, fitted: _Fitted, *,
                 resolve: bool) -> MergeResult:
    keys = metadata.keys
    assert keys is not None
    _check_on(spec, keys, metadata.name)
    schema = fitted.schema
    with expired_is_conflict("the snapshot this merge read was expired meanwhile"):
        by_source = bool(spec.of("delete_by_source"))
        target = keyed_live_rows(io, metadata, None if by_source else _source_keys(fitted.view, keys, schema))
        target = _conform(target, schema, metadata)
        outcome = plan_merge(spec, fitted.view, fitted.rows, target, schema.to_arrow(), frozen=keys.key_names)
        _check_precombine(keys, outcome, target)
        rows = outcome.rows
        check_unique(rows, keys, "merge")
        gone = target.take(pa.array(outcome.deleted_index)).select(list(keys.key_names))
        if not rows.num_rows and not gone.num_rows:
            return MergeResult(0, 0, 0, None)
        plan_u = plan_vectors(io, metadata, rows, "upsert") if resolve and rows.num_rows else None
        plan_d = plan_vectors(io, metadata, gone, "delete") if resolve and gone.num_rows else None
    if fitted.evolved:
        check_evolution(io, metadata, schema, "a merge")
    result = (outcome.inserted.num_rows, outcome.updated.num_rows, gone.num_rows)
    written: list[str] = []
    try:
        files = write_partitioned(io.storage, schema, metadata.spec, rows, written, MAX_FILE_ROWS, keys=keys) \
            if rows.num_rows else []
        deletes = write_partitioned(io.storage, schema, metadata.spec, gone, written, keys=keys, content="deletes") \
            if gone.num_rows else []
        forget_key_hash()
        vectors = merge_vectors((plan_u, files), (plan_d, deletes))
        snap = _commit(io, metadata, schema, fitted.evolved, [*files, *deletes], (), vectors, result)
    except CommitOutcomeUnknownError:
        raise
    except BaseException:
        remove_files(io.storage, written)
        raise
    return MergeResult(*result, snap, fitted.evolved)


@dataclass(frozen=True)
class NoRowsChanged:
    """The merge's conflict rule: it decided on every live row it could match at its base, so a concurrent
    commit that added or ended a file, or recorded a deletion vector, may have added a matching row or
    changed one it read (Iceberg's serializable validation, at file grain): conflict, and the merge runs
    again on the new head. Commits that change no rows (schema, policy, spec, properties) let it commit."""

    CHECK_ORDER: ClassVar[int] = 2

    def check(self, state: CommitState) -> None:
        if not state.moved:
            return
        base = state.base_snapshot_id
        if rows_changed_since(state.conn, state.table_id, base):
            raise CommitConflictError(f"another writer changed the table's rows after snapshot {base}, which this "
                                      "merge read to match its source; reload the table and retry")


def _commit(io: TableIO, metadata: TableMetadata, schema: Schema, evolved: bool, files: Sequence[DataFile],
            removed: Sequence[int], vectors: VectorCommit | None, counts: tuple[int, int, int],
            rewritten: Sequence[DataFile] = ()) -> int:
    """Commit a merge's files (and ``rewritten``: files replacing ``removed`` ones, in their own schemas)."""
    paths = tuple(f.path for f in (*files, *rewritten))
    requirements: list[TableRequirement] = [FilesPresent(io.storage, paths), NoRowsChanged()]
    updates: list[TableUpdate] = [AddFiles(tuple(files), schema.schema_id)]
    if rewritten:
        updates.append(AddFiles(tuple(rewritten)))
    if evolved:
        updates.append(SetSchema(schema))
    if removed:
        updates.append(RemoveFiles(tuple(removed)))
    if vectors is not None:
        updates.append(DeletionVectors(vectors))
    summary = {"rows": sum(f.record_count for f in files if f.content == "data"), "rows_inserted": counts[0],
               "rows_updated": counts[1], "rows_deleted": counts[2]}
    snap = io.catalog.commit(io.table_id, metadata.head.snapshot_id, requirements, updates, operation="merge",
                             summary=summary)
    return snap.snapshot_id


# -- unkeyed ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FoundRows:
    """Live target rows (some columns) with the file id and row position each came from."""

    rows: pa.Table
    file_ids: np.ndarray
    positions: np.ndarray
    by_file: dict[int, tuple[pa.Table, np.ndarray]] = field(default_factory=dict)
    """Each file's part (rows, positions): a later step reuses whole rows instead of reading them again."""


def _pool_size(n: int) -> int:
    return max(1, min(os.cpu_count() or 1, n))


def find_rows(scan: Scan, files: Sequence[DataFile]) -> FoundRows:
    """The live rows of ``files`` in ``scan``'s read schema, with their file ids and positions (a file's
    deletion vector applied), files read in parallel. The position-finding step of unkeyed merges
    (rowdel34's delete-by-filter has its own; they are to become one)."""
    vectors = scan.deletion_vectors()
    expected = scan.read_schema.to_arrow()

    def read(f: DataFile) -> tuple[pa.Table, np.ndarray]:
        v = vectors.get(f.file_id) if f.file_id is not None else None
        keep = v.keep_mask(f.record_count) if v is not None else None
        pos = np.arange(f.record_count, dtype=np.int64) if keep is None else np.flatnonzero(keep)
        return pa.Table.from_batches(list(scan.evolved_batches(f, keep)), schema=expected), pos

    with ThreadPoolExecutor(max_workers=_pool_size(len(files))) as pool:
        parts = list(pool.map(read, files))
    by_file = {int(f.file_id): part for f, part in zip(files, parts, strict=True) if f.file_id is not None}
    return FoundRows(pa.concat_tables([expected.empty_table(), *(t for t, _ in parts)]),
                     np.concatenate([np.zeros(0, np.int64), *(np.full(len(p), f.file_id, dtype=np.int64)
                                                              for f, (_, p) in zip(files, parts, strict=True))]),
                     np.concatenate([np.zeros(0, np.int64), *(p for _, p in parts)]), by_file)


def remove_rows(io: TableIO, metadata: TableMetadata, doomed: dict[int, np.ndarray], written: list[str],
                read: dict[int, tuple[pa.Table, np.ndarray]] | None = None) -> tuple[list[int], list[DataFile]]:
    """Make the rows at ``doomed`` (file id -> positions) go away in the commit being built: today every
    file holding one is rewritten without them (copy-on-write) in its own schema, spec and partition, so
    every other row reads exactly as before, time travel by schema id included. Returns the file ids to
    end and the files that replace them. ``read``: files' live rows already read in the head schema (reused
    for files of that schema). (rowdel34's deletion vectors of positions are to take this over.)"""
    if not doomed:
        return [], []
    scan = Scan(io, metadata)
    vectors = scan.deletion_vectors()
    schemas = dict(metadata.schemas)
    head_id = metadata.current_schema.schema_id
    files = [f for f in scan.live_files() if f.file_id in doomed]

    def rewrite(f: DataFile) -> DataFile | None:
        schema = schemas[f.schema_id]
        expected = schema.to_arrow()
        cached = (read or {}).get(f.file_id) if f.schema_id == head_id else None
        if cached is not None:
            rows, positions = cached
            rows = rows.filter(pa.array(~np.isin(positions, doomed[f.file_id])))
        else:
            v = vectors.get(f.file_id)
            keep = v.keep_mask(f.record_count) if v is not None else None
            keep = np.ones(f.record_count, dtype=bool) if keep is None else keep.copy()
            keep[doomed[f.file_id]] = False
            if not keep.any():
                return None
            rows = pa.Table.from_batches(list(iter_file_batches(io.storage, f.path, expected, 1 << 20)),
                                         schema=expected).filter(pa.array(keep))
        if not rows.num_rows:
            return None
        directory = f.path.rsplit("/", 1)[0] if "/" in f.path else "data"
        done = write_data_file(io.storage, schema, rows.cast(expected), spec_id=f.spec_id, partition=f.partition,
                               directory=directory)
        written.append(done.path)
        return done

    with ThreadPoolExecutor(max_workers=_pool_size(len(files))) as pool:
        out = [d for d in pool.map(rewrite, files) if d is not None]
    return [f.file_id for f in files if f.file_id is not None], out


def _unkeyed_merge(io: TableIO, metadata: TableMetadata, spec: MergeSpec, fitted: _Fitted) -> MergeResult:
    schema = fitted.schema
    with expired_is_conflict("the snapshot this merge read was expired meanwhile"):
        by_source = bool(spec.of("delete_by_source"))
        head_names = metadata.current_schema.names
        missing = [n for n in spec.on if n not in head_names]
        if missing:
            raise InvalidOptionError(f"merge on {list(spec.on)}: table {metadata.name!r} has no column(s) {missing} "
                                     f"(columns: {head_names})")
        narrow = Scan(io, metadata, None if by_source or _reads_target(spec) else list(spec.on))
        files = [f for f in narrow.live_files() if f.content == "data"]
        found = find_rows(narrow, files)
        target = found.rows
        read: dict[int, tuple[pa.Table, np.ndarray]] = {}
        if narrow.read_schema.names != head_names:  # only the on columns: enough to match and delete
            decided, target, found, read = _narrow_plan(io, metadata, spec, fitted, found)
        else:
            read = found.by_file
            target = _conform(target, schema, metadata)
            decided = plan_merge(spec, fitted.view, fitted.rows, target, schema.to_arrow())
    rows = decided.rows
    gone = decided.replaced_index
    if not rows.num_rows and not len(gone):
        return MergeResult(0, 0, 0, None)
    if fitted.evolved:
        check_evolution(io, metadata, schema, "a merge")
    doomed: dict[int, np.ndarray] = {}
    gf, gp = found.file_ids[gone], found.positions[gone]
    for fid in np.unique(gf):
        doomed[int(fid)] = gp[gf == fid]
    counts = (decided.inserted.num_rows, decided.updated.num_rows, len(decided.deleted_index))
    written: list[str] = []
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:  # the new rows are written while files are rewritten
            new_files = pool.submit(write_partitioned, io.storage, schema, metadata.spec, rows, written,
                                    MAX_FILE_ROWS) if rows.num_rows else None
            removed, rewritten = remove_rows(io, metadata, doomed, written, read)
            files_out = new_files.result() if new_files is not None else []
        snap = _commit(io, metadata, schema, fitted.evolved, files_out, removed, None, counts, rewritten)
    except CommitOutcomeUnknownError:
        raise
    except BaseException:
        remove_files(io.storage, written)
        raise
    return MergeResult(*counts, snap, fitted.evolved)


def _reads_target(spec: MergeSpec) -> bool:
    """Whether a condition or value may read ``target`` columns besides ``on`` (then every column is read)."""
    for clause in spec.clauses:
        if clause.kind == "delete_by_source":
            return True
        if clause.condition is not None or (clause.kind == "update" and clause.values != "*"):
            return True
    return False


def _narrow_plan(io: TableIO, metadata: TableMetadata, spec: MergeSpec, fitted: _Fitted,
                 found: FoundRows) -> tuple[MergeOutcome, pa.Table, FoundRows, dict[int, tuple[pa.Table, np.ndarray]]]:
    """The common case (clauses without conditions, updates by ``"*"``): match on the ``on`` columns alone,
    then read whole rows only of the matched target rows (their unset columns are kept)."""
    _, t_idx = match_rows(fitted.view, found.rows, spec.on)
    t_idx = np.unique(t_idx)
    matched_files = np.unique(found.file_ids[t_idx])
    full = Scan(io, metadata)
    files = [f for f in full.live_files() if f.file_id in set(matched_files.tolist())]
    whole = find_rows(full, files)
    # the matched rows, found again among their files' whole rows (same order as file then position)
    pick = np.zeros(len(t_idx), dtype=np.int64)
    offset = 0
    for f in files:  # per file, its positions ascend: each matched row's place among the file's whole rows
        positions = whole.by_file[int(f.file_id)][1] if f.file_id is not None else np.zeros(0, np.int64)
        mine = np.flatnonzero(found.file_ids[t_idx] == f.file_id)
        pick[mine] = offset + np.searchsorted(positions, found.positions[t_idx[mine]])
        offset += len(positions)
    target = _conform(whole.rows.take(pa.array(pick)), fitted.schema, metadata)
    sub = FoundRows(target, whole.file_ids[pick], whole.positions[pick])
    outcome = plan_merge(spec, fitted.view, fitted.rows, target, fitted.schema.to_arrow())
    return outcome, target, sub, whole.by_file


# -- partial upserts --------------------------------------------------------------------------------
def fill_partial(io: TableIO, metadata: TableMetadata, data: pa.Table, carried: Sequence[str],
                 schema: Schema) -> pa.Table:
    """An upsert's rows (in ``schema``) with the columns the input did not carry taken from the live row of
    their key (null for a new key): a partial-column upsert. A carried null stays null."""
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
    take = pa.array(index, mask=index < 0)
    columns = {n: data.column(n) for n in schema.names}
    for n in others:
        columns[n] = live.column(n).take(take)
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
            keys = metadata.keys
            _check_on(spec, keys, metadata.name)
            target = _conform(keyed_live_rows(io, metadata, _source_keys(fitted.view, keys, schema)), schema, metadata)
            outcome = plan_merge(spec, fitted.view, fitted.rows, target, schema.to_arrow(), frozen=keys.key_names)
            _check_precombine(keys, outcome, target)
            rows = outcome.rows
            check_unique(rows, keys, "merge")
            gone = target.take(pa.array(outcome.deleted_index)).select(list(keys.key_names))
            files = write_partitioned(io.storage, schema, metadata.spec, rows, written, MAX_FILE_ROWS, keys=keys) \
                if rows.num_rows else []
            files += write_partitioned(io.storage, schema, metadata.spec, gone, written, keys=keys,
                                       content="deletes") if gone.num_rows else []
            forget_key_hash()
            return MergePart(tuple(files), {}, (outcome.inserted.num_rows, outcome.updated.num_rows, gone.num_rows))
        narrow = Scan(io, metadata, None if _reads_target(spec) else list(spec.on))
        found = find_rows(narrow, [f for f in narrow.live_files() if f.content == "data"])
        if narrow.read_schema.names != metadata.current_schema.names:
            decided, _, found, _ = _narrow_plan(io, metadata, spec, fitted, found)
        else:
            decided = plan_merge(spec, fitted.view, fitted.rows, _conform(found.rows, schema, metadata),
                                 schema.to_arrow())
        gone = decided.replaced_index
        doomed = {int(fid): found.positions[gone][found.file_ids[gone] == fid]
                  for fid in np.unique(found.file_ids[gone])}
        rows = decided.rows
        files = write_partitioned(io.storage, schema, metadata.spec, rows, written, MAX_FILE_ROWS) \
            if rows.num_rows else []
        return MergePart(tuple(files), doomed, (decided.inserted.num_rows, decided.updated.num_rows,
                                                len(decided.deleted_index)))
    except BaseException:
        remove_files(io.storage, written)
        raise


def commit_parts(io: TableIO, metadata: TableMetadata, spec: MergeSpec, parts: Sequence[MergePart]) -> MergeResult:
    """Commit the workers' parts once, on the snapshot they read (``spec``'s source: any rows of the source's
    schema; it decides the schema). A keyed table's files commit unresolved (they merge on read); an unkeyed
    table's removed rows go as ``remove_rows`` removes them. A concurrent commit fails the merge
    (``CommitConflictError``: run it again); every written file is removed then."""
    fitted = _fit(spec, metadata)
    files = [f for p in parts for f in p.files]
    counts = tuple(sum(p.counts[i] for p in parts) for i in range(3))
    written = [f.path for f in files]
    try:
        if not any(counts):
            remove_files(io.storage, written)
            return MergeResult(0, 0, 0, None)
        if fitted.evolved:
            check_evolution(io, metadata, fitted.schema, "a merge")
        doomed: dict[int, np.ndarray] = {}
        for p in parts:
            for fid, positions in p.doomed.items():
                doomed[fid] = np.union1d(doomed[fid], positions) if fid in doomed else positions
        removed, rewritten = remove_rows(io, metadata, doomed, written)
        snap = _commit(io, metadata, fitted.schema, fitted.evolved, files, removed, None,
                       (int(counts[0]), int(counts[1]), int(counts[2])), rewritten)
    except CommitOutcomeUnknownError:
        raise
    except BaseException:
        remove_files(io.storage, written)
        raise
    return MergeResult(int(counts[0]), int(counts[1]), int(counts[2]), snap, fitted.evolved)
