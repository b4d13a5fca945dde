"""The one write path: rows fitted to a schema -> key checks -> files -> one catalog commit.

``Table.append``/``upsert``/``overwrite``, stream appends (``stream_commit.append_once``), captures and
the Spark streaming sink's commit all end here, so primary keys (an upsert keeps the latest row per
key, an insert-only append refuses known keys), partition specs, the evolution checks and the
exactly-once mark (a micro-batch id or captured files, recorded in the snapshot's own transaction)
apply to every writer alike. Functions take the table's handle (``TableIO``) and the metadata one
attempt loaded (``TableMetadata``), never a ``Table``. The caller prepares rows (on-write evolution) and
retries on ``CommitConflictError`` through ``commits.with_retries``; files written here are removed when
the commit does not land. Deletes of keyed tables (``delete_rows``) commit the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

import pyarrow as pa

from fieldshift.errors import DuplicateKeyError, NotKeyedError, SnapshotExpiredError
from fieldshift.kernels.threads import get_threads
from fieldshift.schema.model import Schema
from fieldshift.table.catalog.deletion_vectors import VectorCommit
from fieldshift.table.catalog.stream_marks import StreamMark, check_unrecorded
from fieldshift.table.commits import expired_is_conflict
from fieldshift.table.evolution.partition_evolution import check_schema_change
from fieldshift.table.evolution.value_check import check_values
from fieldshift.table.files.data_files import remove_files, removed_unless_committed, write_side_file
from fieldshift.table.handle import TableIO
from fieldshift.table.keyed.key_lookup import KeyedPlan, append_lookup, plan_vectors
from fieldshift.table.keyed.keyed_write import check_unique, key_rows, new_keys_only
from fieldshift.table.keyed.keys import KeySpec, bucket_of, bucket_order, dedupe_latest, remembering_keys
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.partitions.partition_write import write_partitioned
from fieldshift.table.records import DataFile, Snapshot
from fieldshift.table.scan.table_scan import Scan
from fieldshift.table.updates import (
    AddFiles,
    DeletionVectors,
    FilesPresent,
    NoConcurrentCommit,
    QuarantineFiles,
    RecordStreamMark,
    ReplaceAll,
    SetSchema,
    TableRequirement,
    TableUpdate,
)

__all__ = ["OVERLAP_KEY_CHECKS", "DeleteResult", "FilesCommit", "WriteOperation", "WriteRequest", "Written",
           "check_evolution", "check_new_keys", "commit_files", "delete_rows", "file_updates", "keyed_rows",
           "resolve_written", "write_rows"]

WriteOperation = Literal["append", "upsert", "overwrite"]


@dataclass(frozen=True)
class Written:
    """What one commit of rows did."""

    snapshot: Snapshot
    rows: int
    quarantined: int
    replaced: int | None = None
    """Live rows the written rows replaced (an upsert's updates; 0 for an append; None: not known cheaply,
    e.g. buckets that merge on read or a last retry without lookups)."""


@dataclass(frozen=True)
class DeleteResult:
    """What one delete did: the rows it removed (``rows_deleted``; None where a keyed delete by keys could not
    know cheaply: keys in buckets whose rows merge on read) and, on a keyed table, how many keys its delete
    files hold (``keys_deleted``, kept for its users; an unkeyed table: 0). Nothing matched: both 0 and nothing
    committed (the head's id). ``rows_inserted`` and ``rows_updated`` are always 0: the counts every row change
    (delete, update, merge, upsert) reports under the same names."""

    keys_deleted: int
    snapshot_id: int
    rows_deleted: int | None = None
    rows_inserted: int = 0
    rows_updated: int = 0


@dataclass(frozen=True)
class WriteRequest:
    """Rows fitted to ``schema`` (planned on the metadata's head schema; ``evolved``: a new version), the
    rows set aside, and what the commit records with them."""

    schema: Schema
    evolved: bool
    data: pa.Table
    quarantined: Sequence[pa.Table] = ()
    operation: WriteOperation = "append"
    mark: StreamMark | None = None
    summary: Mapping[str, Any] = field(default_factory=dict)
    exclusive: bool = False
    """Any concurrent commit conflicts (a keyed update: its rows were chosen by a filter on the base)."""


@dataclass(frozen=True)
class FilesCommit:
    """Written files to commit in ``schema`` (``evolved``: it is new), with their quarantine files, the
    stream mark and deletion vectors recorded with them."""

    schema: Schema
    evolved: bool
    files: Sequence[DataFile]
    quarantine: Sequence[tuple[str, int]] = ()
    operation: str = "append"
    """The snapshot's operation: a ``WriteOperation``, or ``delete`` (Spark's keyed deletes)."""
    mark: StreamMark | None = None
    summary: Mapping[str, Any] = field(default_factory=dict)
    vectors: VectorCommit | None = None
    exclusive: bool = False


def keyed_rows(io: TableIO, metadata: TableMetadata, keys: KeySpec | None, data: pa.Table,
               operation: WriteOperation) -> pa.Table:
    """One row per key: an upsert keeps the latest, an insert-only append refuses repeats and keys the
    table holds at ``metadata``'s snapshot (an overwrite only repeats); unkeyed tables pass through."""
    return _keyed(io, metadata, keys, data, operation, resolve=False)[0]


def _keyed(io: TableIO, metadata: TableMetadata, keys: KeySpec | None, data: pa.Table, operation: WriteOperation,
           *, resolve: bool) -> tuple[pa.Table, KeyedPlan | None]:
    """``keyed_rows``, and (``resolve``) the deletion vectors of the rows they supersede: an insert-only
    append looks its keys up once for both (``append_lookup``)."""
    if keys is None:
        if operation == "upsert":
            raise NotKeyedError(f"upsert needs a keyed table, and table {metadata.name!r} has no primary key; create "
                                "it with Table.create(..., identifier_fields=[...]) (fieldshift create --key)")
        return data, None
    if operation == "upsert":
        data = dedupe_latest(data, keys)
        return data, plan_vectors(io, metadata, data, "upsert") if resolve else None
    check_unique(data, keys, operation)
    if operation == "overwrite":
        return data, plan_vectors(io, metadata, data, "append", replace_all=True) if resolve else None
    if not data.num_rows:
        return data, KeyedPlan(data) if resolve else None
    live, plan = append_lookup(io, metadata, data)
    new_keys_only(data, live, keys)
    return data, plan if resolve else None


def check_new_keys(io: TableIO, metadata: TableMetadata, files: Sequence[DataFile]) -> VectorCommit | None:
    """An insert-only append of already written files (Spark tasks): keys unique and new to the table at
    ``metadata``'s snapshot, checked against the files of the buckets they hit only; the files then resolve
    those buckets (``deletion_vectors``: the commit's vectors)."""
    keys = metadata.keys
    if keys is None:
        return None
    names = list(keys.key_names)
    parts = [io.storage.read_table(f.path, columns=names) for f in files]
    incoming = pa.concat_tables(parts) if parts else pa.table({n: [] for n in names})
    check_unique(incoming, keys)
    live, plan = append_lookup(io, metadata, incoming)
    new_keys_only(incoming, live, keys)
    return plan.commit(files)


def resolve_written(io: TableIO, metadata: TableMetadata, schema: Schema, files: Sequence[DataFile],
                    operation: Literal["upsert", "delete"]) -> VectorCommit | None:
    """Deletion vectors for upsert or delete files already written (Spark tasks) in ``schema``: the live
    rows they supersede at ``metadata``'s snapshot, looked up as ``Table.upsert``/``delete`` look theirs up.

    None (the files merge on read, as before vectors) where files written whole cannot be resolved: two
    tasks wrote one key, or an upsert row loses to a live row of a higher precombine value (an upsert
    leaves such rows out; these are already in the files). A conflicting commit drops the vectors."""
    keys = metadata.keys
    if keys is None or not files:
        return None
    names = [*keys.key_names, *([keys.precombine_name] if operation == "upsert" and keys.precombine_name else [])]
    try:
        rows = pa.concat_tables([io.storage.read_table(f.path, columns=names) for f in files])
        rows = rows.cast(schema.select(names).to_arrow())  # Parquet gives some types back otherwise
        check_unique(rows, keys, operation)
        plan = plan_vectors(io, metadata, rows, operation)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, DuplicateKeyError, SnapshotExpiredError):
        return None  # (an expired snapshot: another writer committed meanwhile, the commit replays)
    if plan.rows.num_rows != rows.num_rows:
        return None
    return plan.commit(files, on_conflict="skip")


def check_evolution(io: TableIO, metadata: TableMetadata, schema: Schema, what: str) -> None:
    """Before an evolved schema is committed on ``metadata``'s head: the partition transforms still apply to
    their sources, and every data file reads under the table's policy (``what``: who evolved it)."""
    check_schema_change(metadata.spec, metadata.current_schema, schema, table=metadata.name)
    check_values(io.storage, lambda: io.catalog.all_data_files(io.table_id), dict(metadata.schemas), schema,
                 metadata.policy, table=metadata.name, change=f"schema {schema.schema_id} (evolved by {what})")


def file_updates(io: TableIO, metadata: TableMetadata,
                 commit: FilesCommit) -> tuple[list[TableRequirement], list[TableUpdate]]:
    """The requirements and updates of committing written files: an insert-only append to a keyed table
    conflicts with any concurrent commit (its keys were checked against the base), an overwrite replaces
    every file, the files must still exist when the commit lands."""
    paths = (*(f.path for f in commit.files), *(p for p, _ in commit.quarantine))
    requirements: list[TableRequirement] = [FilesPresent(io.storage, paths)]
    if commit.exclusive or (metadata.keys_in(commit.schema) is not None and commit.operation == "append"):
        requirements.append(NoConcurrentCommit())
    updates: list[TableUpdate] = [AddFiles(tuple(commit.files), commit.schema.schema_id)]
    if commit.evolved:
        updates.append(SetSchema(commit.schema))
    if commit.quarantine:
        updates.append(QuarantineFiles(tuple(commit.quarantine)))
    if commit.operation == "overwrite":
        updates.append(ReplaceAll())
    if commit.mark is not None:
        updates.append(RecordStreamMark(commit.mark))
    if commit.vectors is not None:
        updates.append(DeletionVectors(commit.vectors))
    return requirements, updates


def commit_files(io: TableIO, metadata: TableMetadata, commit: FilesCommit) -> Snapshot:
    """Commit written files on ``metadata``'s snapshot, the base they were planned on (see ``file_updates``)."""
    requirements, updates = file_updates(io, metadata, commit)
    summary = {"rows": sum(f.record_count for f in commit.files if f.content == "data"),
               "quarantined": sum(n for _, n in commit.quarantine), **commit.summary}
    return io.catalog.commit(io.table_id, metadata.snapshot.snapshot_id, requirements, updates,
                             operation=commit.operation, summary=summary)


OVERLAP_KEY_CHECKS = True
"""An insert-only append of at least ``_OVERLAP_ROWS`` rows to an unpartitioned keyed table writes its bucket
files while this thread checks its keys (uniqueness, the live-key lookup); a refused append removes them.
False: the keys are checked before anything is written (the path without it, for tests)."""
_OVERLAP_ROWS = 65_536


def _overlapped(metadata: TableMetadata, request: WriteRequest, resolve: bool) -> bool:
    """Whether the key checks run while the files are written: an insert-only append (its rows are written
    as given) of many rows, not evolving the schema (checked before anything is written), unpartitioned (the
    bucket split then hashes the very rows the checks hash), with a core to spare."""
    return (OVERLAP_KEY_CHECKS and request.operation == "append" and resolve and not request.evolved
            and not metadata.spec.fields and request.data.num_rows >= _OVERLAP_ROWS and get_threads() > 1)


def write_rows(io: TableIO, metadata: TableMetadata, request: WriteRequest, *, resolve: bool = True) -> Written:
    """Write ``request``'s rows and quarantined rows, then commit them in one snapshot on ``metadata``'s head.
    ``CommitConflictError``: retry on the new head; ``AlreadyCommittedError``: the mark was recorded before,
    nothing to do. Either way no file stays. ``resolve``: look keys up and record deletion vectors (a
    writer's last retry commits without them)."""
    schema, operation, mark = request.schema, request.operation, request.mark
    if mark is not None:  # a replay is told so before any key check (an insert-only replay is no duplicate)
        io.catalog.read(check_unrecorded, io.table_id, mark)
    keys = metadata.keys_in(schema)  # the key's columns as the rows name them
    data = request.data
    layout = metadata.layout
    written: list[str] = []

    def checked() -> tuple[pa.Table, KeyedPlan | None]:
        with expired_is_conflict(f"the snapshot this {operation} looked its keys up in was expired meanwhile"):
            # superseded rows go to deletion vectors (``resolve``: else they merge on read)
            return _keyed(io, metadata, keys, request.data, operation, resolve=resolve)

    def write(rows: pa.Table) -> list[DataFile]:
        return write_partitioned(io.storage, schema, metadata.spec, rows, written, layout.file_rows, keys=keys,
                                 layout=layout)

    with removed_unless_committed(io.storage, written):
        with remembering_keys():  # the key hash and bucket order serve this write's steps, then are let go
            if keys is not None and _overlapped(metadata, request, resolve):
                bucket_order(data, keys)  # the key hash and bucket order both threads use, computed once
                with ThreadPoolExecutor(1, thread_name_prefix="fieldshift-write") as pool:  # exit waits for the files
                    pending = pool.submit(write, data)
                    data, plan = checked()  # a refused append raises here: its files are removed once written
                files = pending.result()
            else:
                data, plan = checked()
                if plan is not None:
                    data = plan.rows
                if request.evolved:  # before writing anything
                    check_evolution(io, metadata, schema, f"an {operation}")
                files = write(data)
        quarantine = []
        for q in request.quarantined:
            if q.num_rows:
                path = write_side_file(io.storage, "quarantine", q)
                written.append(path)
                quarantine.append((path, q.num_rows))
        snap = commit_files(io, metadata, FilesCommit(
            schema, request.evolved, files, quarantine, operation, mark, request.summary,
            plan.commit(files) if plan is not None else None, request.exclusive))
    replaced = 0 if operation == "append" else plan.replaced if plan is not None and operation == "upsert" else None
    return Written(snap, data.num_rows, sum(n for _, n in quarantine), replaced)


@remembering_keys()  # the delete plan's bucket order serves the delete files' bucket split
def delete_rows(io: TableIO, metadata: TableMetadata, keys: Any, filter: Any, *, resolve: bool = True) -> DeleteResult:
    """Delete files of ``keys`` (or of the keys of the merged rows ``filter`` matches at the head of
    ``metadata``), committed on that head with the deletion vectors of the rows they remove (``resolve``:
    a writer's last retry commits without them). A filtered delete conflicts with any concurrent commit."""
    spec = metadata.keys
    assert spec is not None
    schema = metadata.current_schema
    with expired_is_conflict("the snapshot this delete read was expired meanwhile"):
        if filter is not None:
            rows = Scan(io, metadata, list(spec.key_names), filter).to_arrow()
        else:
            rows = key_rows(keys, schema, spec)
        if not rows.num_rows:
            return DeleteResult(0, metadata.head.snapshot_id, 0)
        plan = plan_vectors(io, metadata, rows, "delete") if resolve else None
    removed: int | None = rows.num_rows if filter is not None else None  # a filter matched live rows only
    if removed is None and plan is not None and len(plan.resolved_buckets) == len(set(_buckets(rows, spec))):
        had = Scan(io, metadata, list(spec.key_names)).deletion_vectors()
        removed = sum(len(p) - (had[fid].cardinality if fid in had else 0) for fid, p in plan.vectors.items())
    written: list[str] = []
    try:
        files = write_partitioned(io.storage, schema, metadata.spec, rows, written, keys=spec, content="deletes")
        updates: list[TableUpdate] = [AddFiles(tuple(files), schema.schema_id)]
        if plan is not None:
            updates.append(DeletionVectors(plan.commit(files)))
        requirements: list[TableRequirement] = [FilesPresent(io.storage, tuple(f.path for f in files))]
        if filter is not None:
            requirements.append(NoConcurrentCommit())
        snap = io.catalog.commit(io.table_id, metadata.head.snapshot_id, requirements, updates,
                                 operation="delete", summary={"keys": rows.num_rows})
    except BaseException:
        remove_files(io.storage, written)
        raise
    return DeleteResult(rows.num_rows, snap.snapshot_id, removed)


def _buckets(rows: pa.Table, spec: KeySpec) -> list[int]:
    return [int(b) for b in bucket_of(rows, spec)]
