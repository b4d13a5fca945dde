"""What a stream commit records beside its snapshot, in the same catalog transaction: exactly once; and what
the streams read back of it (committed micro-batches, captured files).

A streaming sink's micro-batch is identified by (stream id, batch id) and a landing-directory capture's
input by its source file; both are recorded with the snapshot that holds their rows, inside
``Catalog.commit``'s transaction, so a replayed batch or a re-read file commits nothing, however
the writer was killed. The SQL tables are ``fs_stream_commit`` and ``fs_captured_file`` (``sql.DDL``).
"""

from __future__ import annotations

from dataclasses import dataclass

from fieldshift.errors import AlreadyCommittedError, InvalidOptionError
from fieldshift.table.catalog.dialect import Connection

__all__ = ["CapturedFile", "StreamMark", "batch_snapshot", "captured_sources", "check_unrecorded", "record",
           "stream_batches"]


@dataclass(frozen=True, slots=True)
class CapturedFile:
    """A source file a capture read: its absolute path, size and modification time when read, rows."""

    source: str
    size: int
    mtime_ns: int
    rows: int


@dataclass(frozen=True, slots=True)
class StreamMark:
    """Recorded with a commit: a micro-batch ``(stream_id, batch_id)`` and/or the source files captured."""

    stream_id: str | None = None
    batch_id: int | None = None
    captured: tuple[CapturedFile, ...] = ()

    def __post_init__(self) -> None:
        """A micro-batch mark is a non-empty stream id with an int batch id (the catalog's 64-bit integer):
        anything else would be recorded loosely or not at all, and a replay would commit again."""
        if self.stream_id is None and self.batch_id is None:
            return
        if not isinstance(self.stream_id, str) or not self.stream_id:
            raise InvalidOptionError(f"a StreamMark needs a non-empty str stream_id with its batch_id, got "
                                     f"stream_id={self.stream_id!r}; nothing was written")
        if isinstance(self.batch_id, bool) or not isinstance(self.batch_id, int) \
                or not -(2**63) <= self.batch_id < 2**63:
            raise InvalidOptionError(f"a StreamMark's batch_id must be an int of 64 bits, got {self.batch_id!r} "
                                     f"(stream {self.stream_id!r}); nothing was written")


def check_unrecorded(conn: Connection, table_id: int, mark: StreamMark) -> None:
    """Raise :class:`AlreadyCommittedError` if the batch or any of the files was committed before."""
    if mark.stream_id is not None:
        row = conn.execute("SELECT snapshot_id FROM fs_stream_commit WHERE table_id = ? AND stream_id = ? "
                           "AND batch_id = ?", (table_id, mark.stream_id, mark.batch_id)).fetchone()
        if row is not None:
            raise AlreadyCommittedError(
                f"batch {mark.batch_id} of stream {mark.stream_id!r} was committed as snapshot {row[0]}; "
                "this replay commits nothing", int(row[0]))
    for f in mark.captured:
        row = conn.execute("SELECT snapshot_id FROM fs_captured_file WHERE table_id = ? AND source = ?",
                           (table_id, f.source)).fetchone()
        if row is not None:
            raise AlreadyCommittedError(
                f"source file {f.source} was captured in snapshot {row[0]}; this commit records nothing",
                int(row[0]))


def record(conn: Connection, table_id: int, mark: StreamMark, snapshot_id: int) -> None:
    """Record the batch and the files as committed by ``snapshot_id`` (inside the commit's transaction)."""
    if mark.stream_id is not None:
        conn.execute("INSERT INTO fs_stream_commit VALUES (?, ?, ?, ?)",
                     (table_id, mark.stream_id, mark.batch_id, snapshot_id))
    conn.executemany("INSERT INTO fs_captured_file VALUES (?, ?, ?, ?, ?, ?)",
                     [(table_id, f.source, f.size, f.mtime_ns, f.rows, snapshot_id) for f in mark.captured])


def stream_batches(conn: Connection, table_id: int, stream_id: str) -> dict[int, int]:
    """batch id -> snapshot id of every committed micro-batch of ``stream_id``."""
    return {int(b): int(s) for b, s in conn.execute(
        "SELECT batch_id, snapshot_id FROM fs_stream_commit WHERE table_id = ? AND stream_id = ?",
        (table_id, stream_id))}


def batch_snapshot(conn: Connection, table_id: int, stream_id: str, batch_id: int) -> int | None:
    """The snapshot that committed batch ``batch_id`` of ``stream_id``, or None."""
    row = conn.execute("SELECT snapshot_id FROM fs_stream_commit WHERE table_id = ? AND stream_id = ? "
                       "AND batch_id = ?", (table_id, stream_id, batch_id)).fetchone()
    return None if row is None else int(row[0])


def captured_sources(conn: Connection, table_id: int) -> dict[str, int]:
    """source path -> snapshot id of every file a capture committed to the table."""
    return {s: int(n) for s, n in conn.execute(
        "SELECT source, snapshot_id FROM fs_captured_file WHERE table_id = ?", (table_id,))}
