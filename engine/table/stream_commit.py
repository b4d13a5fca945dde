"""Appends that record what they came from (a micro-batch id, source files) in their own commit.

The table's ordinary append keeps no record of its input, so a writer that crashes after committing
cannot tell on restart whether to write again. These appends pass a :class:`StreamMark` to the
catalog commit, which refuses (``AlreadyCommittedError``) a mark recorded before, inside the same
transaction as the snapshot: a batch or a file lands exactly once, whoever retries it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from fieldshift.errors import AlreadyCommittedError, CommitConflictError, CommitOutcomeUnknownError, TableError
from fieldshift.options import OnIncompatible
from fieldshift.policy import CastPolicy
from fieldshift.schema import Schema
from fieldshift.table.catalog import DataFile, Snapshot
from fieldshift.table.files import remove_files, write_side_file
from fieldshift.table.on_write import prepare_append
from fieldshift.table.partition_evolution import check_schema_change
from fieldshift.table.partition_write import write_partitioned
from fieldshift.table.stream_marks import StreamMark
from fieldshift.table.table import MAX_FILE_ROWS, AppendResult, Table
from fieldshift.table.value_check import check_values

__all__ = ["COMMIT_RETRIES", "append_once", "commit_marked", "refuse_keyed"]

COMMIT_RETRIES = 8


def refuse_keyed(table: Table, what: str) -> None:
    """Keyed tables need insert-only checks or upsert commits, which streams and captures do not make yet."""
    if table.keys is not None:
        raise TableError(f"{what} cannot write table {table.name!r}: it has a primary key, and streams append "
                         "without the key's insert-only check; append or upsert with Table.append/Table.upsert")


def commit_marked(table: Table, base: Snapshot, schema: Schema, evolved: bool, data: pa.Table,
                  quarantined: Sequence[pa.Table], mark: StreamMark, summary: dict[str, Any]) -> Snapshot:
    """Write ``data`` (in ``schema``) and the quarantined rows, then commit them with ``mark`` on ``base``.

    Raises ``CommitConflictError`` (retry on the new head) or ``AlreadyCommittedError`` (nothing to do);
    either way the files written here are removed first.
    """
    refuse_keyed(table, "a stream or capture")
    spec = table.spec  # files are split by the table's current partition spec
    if evolved:
        schemas = table.schemas_by_id()
        check_schema_change(spec, schemas[base.schema_id], schema, table=table.name)
        check_values(table.storage, lambda: table.catalog.all_data_files(table.table_id), schemas,
                     schema, table.policy, table=table.name, change=f"schema {schema.schema_id} (evolved by a stream)")
    written: list[str] = []
    try:
        files: list[DataFile] = write_partitioned(table.storage, schema, spec, data, written, MAX_FILE_ROWS)
        quarantine = []
        for q in quarantined:
            if q.num_rows:
                path = write_side_file(table.storage, "quarantine", q)
                written.append(path)
                quarantine.append((path, q.num_rows))
        return table.catalog.commit(
            table.table_id, base.snapshot_id, operation="append", schema=schema if evolved else None,
            write_schema_id=schema.schema_id, add_files=files, quarantine=quarantine, stream=mark,
            summary={"rows": data.num_rows, "quarantined": sum(n for _, n in quarantine), **summary})
    except CommitOutcomeUnknownError:
        raise  # the commit may have landed: its files stay (a retry finds the mark recorded, or vacuum)
    except BaseException:
        remove_files(table.storage, written)
        raise


def append_once(table: Table, data: pa.Table, mark: StreamMark, *, on_incompatible: OnIncompatible = "fail",
                policy: CastPolicy | None = None) -> AppendResult | None:
    """Append ``data`` evolving the table on write, recording ``mark``; None if ``mark`` was committed before
    (a replayed micro-batch or an already captured file: nothing is written)."""
    for attempt in range(COMMIT_RETRIES):
        head = table.current_snapshot
        base = table.schemas_by_id()[head.schema_id]
        prepared = prepare_append(data, base, evolve=True, on_incompatible=on_incompatible,
                                  policy=policy or table.policy)
        quarantined = [prepared.quarantined] if prepared.quarantined is not None else []
        try:
            snap = commit_marked(table, head, prepared.schema, prepared.evolved, prepared.data, quarantined, mark,
                                 {"changes": list(prepared.changes), "stream": mark.stream_id,
                                  "batch": mark.batch_id})
        except AlreadyCommittedError:
            return None
        except CommitConflictError:
            if attempt == COMMIT_RETRIES - 1:
                raise
            time.sleep(0.01 * (attempt + 1))
            continue
        return AppendResult(prepared.data.num_rows, sum(q.num_rows for q in quarantined), prepared.schema.schema_id,
                            prepared.evolved, snap.snapshot_id, prepared.changes)
    raise AssertionError("unreachable")
