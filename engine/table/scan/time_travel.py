"""Time travel by time: the one parser of an ``as_of`` value and the one rule for which snapshot it selects.

Shared by ``Table.scan`` (fieldshift's own tables), ``OpenTable.resolve`` (other formats) and the CLI's
``--as-of``, so a time means the same everywhere: naive times are UTC, and a read ``as_of`` a time sees
the latest snapshot committed at or before it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import TypeVar

from fieldshift.errors import InvalidOptionError, SnapshotNotFoundError

__all__ = ["as_of_instant", "snapshot_at"]

S = TypeVar("S")


def as_of_instant(value: dt.datetime | str) -> dt.datetime:
    """``value`` (a datetime, or ISO-8601 text; ``Z`` allowed) as an aware UTC datetime; naive is UTC."""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidOptionError(f"as_of {value!r} is not an ISO-8601 time (e.g. 2024-05-01T12:00:00Z)") from None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        raise TypeError(f"as_of must be a datetime (or ISO-8601 text), not the date {value!r}")
    if not isinstance(value, dt.datetime):
        raise TypeError(f"as_of must be a datetime (or ISO-8601 text), not {value!r}")
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def snapshot_at(snapshots: Sequence[S], as_of: dt.datetime | str, when: Callable[[S], dt.datetime],
                what: str) -> S:
    """The latest of ``snapshots`` (oldest first) whose time ``when(s)`` is at or before ``as_of``.

    ``what`` names the table in the SnapshotNotFoundError raised when there is none (no snapshots, or
    ``as_of`` is before the first).
    """
    instant = as_of_instant(as_of)
    if not snapshots:
        raise SnapshotNotFoundError(f"{what} has no snapshot")
    before = [s for s in snapshots if _utc(when(s)) <= instant]
    if not before:
        first = snapshots[0]
        raise SnapshotNotFoundError(f"{what} has no snapshot at or before {instant.isoformat()}: its first is "
                                    f"{getattr(first, 'snapshot_id', first)} at {_utc(when(first)).isoformat()}")
    return before[-1]


def _utc(value: dt.datetime) -> dt.datetime:
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
