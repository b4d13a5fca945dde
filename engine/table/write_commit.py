"""The one write path: rows fitted to a schema -> key checks -> files -> one catalog commit.

``Table.append``/``upsert``/``overwrite``, stream appends (``stream_commit.append_once``), captures and
the Spark streaming sink's commit all end here, so primary keys (an upsert keeps the latest row per
key, an insert-only append refuses known keys), partition specs, the evolution checks and the
exactly-once mark (a micro-batch id or captured files, recorded in the snapshot's own transaction)
apply to every writer alike. The caller prepares rows (on-write evolution) and retries on
``CommitConflictError``; files written here are removed when the commit does not land.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa

from fieldshift.errors import (
    CommitConflictError,
    CommitOutcomeUnknownError,
    DuplicateKeyError,
    NotKeyedError,
    SnapshotExpiredError,
)
from fieldshift.schema import Schema
from fieldshift.table.catalog import DataFile, Snapshot
from fieldshift.table.deletion_vectors import VectorCommit
from fieldshift.table.files import check_present, remove_files, write_side_file
from fieldshift.table.key_lookup import live_keys, plan_vectors
from fieldshift.table.keyed_write import check_unique, new_keys_only
from fieldshift.table.keys import KeySpec, dedupe_latest, forget_key_hash, key_spec
from fieldshift.table.partition_evolution import check_schema_change
from fieldshift.table.partition_write import MAX_FILE_ROWS, write_partitioned
from fieldshift.table.stream_marks import StreamMark, check_unrecorded
from fieldshift.table.value_check import check_values

if TYPE_CHECKING:
    from fieldshift.table.table import Table

__all__ = ["WriteOperation", "Written", "check_evolution", "check_new_keys", "commit_files", "keyed_rows",
           "resolve_written", "write_rows"]

WriteOperation = Literal["append", "upsert", "overwrite"]


@dataclass(frozen=True)
class Written:
    """What one commit of rows did."""

    snapshot: Snapshot
    rows: int
    quarantined: int


def keyed_rows(table: Table, keys: KeySpec | None, data: pa.Table, operation: WriteOperation,
               snapshot_id: int) -> pa.Table:
    """One row per key: an upsert keeps the latest, an insert-only append refuses repeats and keys the
    table holds at ``snapshot_id`` (an overwrite only repeats); unkeyed tables pass through."""
    if keys is None:
        if operation == "upsert":
            raise NotKeyedError(f"upsert needs a keyed table, and table {table.name!r} has no primary key; create it "
                                "with Table.create(..., identifier_fields=[...]) (fieldshift create --key)")
        return data
    if operation == "upsert":
        return dedupe_latest(data, keys)
    check_unique(data, keys, operation)
    if operation == "append" and data.num_rows:
        new_keys_only(data, live_keys(table, snapshot_id, data), keys)
    return data


def check_new_keys(table: Table, snapshot_id: int, files: Sequence[DataFile]) -> VectorCommit | None:
    """An insert-only append of already written files (Spark tasks): keys unique and new to the table,
    checked against the files of the buckets they hit only; the files then resolve those buckets
    (``deletion_vectors``: the commit's ``vectors``)."""
    keys = table.keys
    if keys is None:
        return None
    names = list(keys.key_names)
    parts = [table.storage.read_table(f.path, columns=names) for f in files]
    incoming = pa.concat_tables(parts) if parts else pa.table({n: [] for n in names})
    check_unique(incoming, keys)
    new_keys_only(incoming, live_keys(table, snapshot_id, incoming), keys)
    return plan_vectors(table, snapshot_id, incoming, "append").commit(files)



def resolve_written(table: Table, snapshot_id: int, schema: Schema, files: Sequence[DataFile],
                    operation: Literal["upsert", "delete"]) -> VectorCommit | None:
    """Deletion vectors for upsert or delete files already written (Spark tasks) in ``schema``: the live
    rows they supersede at ``snapshot_id``, looked up as ``Table.upsert``/``delete`` look theirs up.

    None (the files merge on read, as before vectors) where files written whole cannot be resolved: two
    tasks wrote one key, or an upsert row loses to a live row of a higher precombine value (an upsert
    leaves such rows out; these are already in the files). A conflicting commit drops the vectors."""
    keys = table.keys
    if keys is None or not files:
        return None
    names = [*keys.key_names, *([keys.precombine_name] if operation == "upsert" and keys.precombine_name else [])]
    try:
        rows = pa.concat_tables([table.storage.read_table(f.path, columns=names) for f in files])
        rows = rows.cast(schema.select(names).to_arrow())  # Parquet gives some types back otherwise
        check_unique(rows, keys, operation)
        plan = plan_vectors(table, snapshot_id, rows, operation)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, DuplicateKeyError, SnapshotExpiredError):
        return None  # (an expired snapshot: another writer committed meanwhile, the commit replays)
    if plan.rows.num_rows != rows.num_rows:
        return None
    return plan.commit(files, on_conflict="skip")


def check_evolution(table: Table, base: Schema, schema: Schema, what: str) -> None:
    """Before an evolved schema is committed: the partition transforms still apply to their sources, and
    every data file reads under the table's policy (``what``: who evolved it, for the message)."""
    check_schema_change(table.spec, base, schema, table=table.name)
    check_values(table.storage, lambda: table.catalog.all_data_files(table.table_id), table.schemas_by_id(),
                 schema, table.policy, table=table.name, change=f"schema {schema.schema_id} (evolved by {what})")


def commit_files(table: Table, head: Snapshot, schema: Schema, evolved: bool, files: Sequence[DataFile],
                 quarantine: Sequence[tuple[str, int]], *, operation: WriteOperation, mark: StreamMark | None = None,
                 summary: dict[str, Any] | None = None, vectors: VectorCommit | None = None) -> Snapshot:
    """Commit written files on ``head``: an insert-only append to a keyed table conflicts with any
    concurrent commit (its keys were checked against ``head``), an overwrite replaces every file."""
    return table.catalog.commit(
        table.table_id, head.snapshot_id, operation=operation,
        exclusive=key_spec(table.properties, schema) is not None and operation == "append",
        schema=schema if evolved else None, write_schema_id=schema.schema_id, add_files=files,
        quarantine=quarantine, replace_all=operation == "overwrite", stream=mark, vectors=vectors,
        summary={"rows": sum(f.record_count for f in files if f.content == "data"),
                 "quarantined": sum(n for _, n in quarantine), **(summary or {})},
        present=lambda: check_present(table.storage, [f.path for f in files] + [p for p, _ in quarantine]))


def write_rows(table: Table, head: Snapshot, base: Schema, schema: Schema, evolved: bool, data: pa.Table,
               quarantined: Sequence[pa.Table], *, operation: WriteOperation, mark: StreamMark | None = None,
               summary: dict[str, Any] | None = None, resolve: bool = True) -> Written:
    """Write ``data`` (in ``schema``, planned on ``head`` whose schema is ``base``) and the quarantined
    rows, then commit them in one snapshot. ``CommitConflictError``: retry on the new head;
    ``AlreadyCommittedError``: ``mark`` was recorded before, nothing to do. Either way no file stays.
    ``resolve``: look keys up and record deletion vectors (a writer's last retry commits without them)."""
    if mark is not None:  # a replay is told so before any key check (an insert-only replay is no duplicate)
        table.catalog.run_read(lambda conn: check_unrecorded(conn, table.table_id, mark))
    keys = key_spec(table.properties, schema)  # the key's columns as ``data`` names them
    plan = None
    try:
        data = keyed_rows(table, keys, data, operation, head.snapshot_id)
        if keys is not None and resolve:  # superseded rows go to deletion vectors (``resolve``: else merge on read)
            plan = plan_vectors(table, head.snapshot_id, data, "upsert" if operation == "upsert" else "append",
                                replace_all=operation == "overwrite")
            data = plan.rows
    except SnapshotExpiredError as e:  # another writer committed and expired ``head`` meanwhile
        raise CommitConflictError(f"the snapshot this {operation} looked its keys up in was expired meanwhile: "
                                  f"{e}; retry on the new head") from None
    if evolved:  # before writing anything
        check_evolution(table, base, schema, f"an {operation}")
    written: list[str] = []
    try:
        files = write_partitioned(table.storage, schema, table.spec, data, written, MAX_FILE_ROWS, keys=keys)
        forget_key_hash()  # the last use of this write's key hash: let go of the key columns it holds
        quarantine = []
        for q in quarantined:
            if q.num_rows:
                path = write_side_file(table.storage, "quarantine", q)
                written.append(path)
                quarantine.append((path, q.num_rows))
        snap = commit_files(table, head, schema, evolved, files, quarantine, operation=operation, mark=mark,
                            summary=summary, vectors=plan.commit(files) if plan is not None else None)
    except CommitOutcomeUnknownError:
        raise  # the commit may have landed: its files stay (a retry finds the mark recorded, or vacuum)
    except BaseException:
        remove_files(table.storage, written)
        raise
    return Written(snap, data.num_rows, sum(n for _, n in quarantine))
