"""Stream appends and upserts that record what they came from (a micro-batch id) in their own commit.

The table's ordinary write keeps no record of its input, so a writer that crashes after committing
cannot tell on restart whether to write again. These writes pass a :class:`StreamMark` through the
one write path (``write_commit.write_rows``) to the catalog commit, which refuses
(``AlreadyCommittedError``) a mark recorded before, inside the same transaction as the snapshot: a
batch lands exactly once, whoever retries it, on keyed tables too.
"""

from __future__ import annotations

from typing import Any, Literal

from fieldshift.errors import AlreadyCommittedError
from fieldshift.options import OnIncompatible, check_option
from fieldshift.schema.policy import CastPolicy
from fieldshift.table.catalog.stream_marks import StreamMark
from fieldshift.table.table import AppendResult, Table

__all__ = ["StreamOperation", "append_once"]

StreamOperation = Literal["append", "upsert"]
"""What a stream's batch does: append (insert-only on a keyed table) or upsert (keyed tables)."""


def append_once(table: Table, data: Any, mark: StreamMark, *, on_incompatible: OnIncompatible = "fail",
                policy: CastPolicy | None = None, operation: StreamOperation = "append") -> AppendResult | None:
    """Append (or upsert) ``data`` evolving the table on write, recording ``mark``; None if ``mark`` was
    committed before (a replayed micro-batch: nothing is written)."""
    check_option("operation", operation, StreamOperation)
    write = table.upsert if operation == "upsert" else table.append
    try:
        return write(data, on_incompatible=on_incompatible, policy=policy, mark=mark)
    except AlreadyCommittedError:
        return None
