"""The one retry loop of every writer: an attempt reads the table, writes, commits; a conflict runs it again.

Appends, upserts, deletes and overwrites (Python and the CLI), captures, the Spark streaming sink and
compaction all call :func:`with_retries`; each attempt loads the table's metadata afresh and ends in one
``catalog.commit`` of typed updates (``updates``), whose conflict rules say when to retry. A snapshot
that another writer expired while an attempt was reading it is a conflict too
(:func:`expired_is_conflict`). Attempts sleep a little longer after each conflict (10 ms times the
attempt number); ``Attempt.last`` lets the last one take the road that cannot lose a race again (a keyed
write then commits without deletion vectors, and its files merge on read).

How many attempts: the module setting :data:`COMMIT_RETRIES` (8), or the environment variable
``FIELDSHIFT_COMMIT_RETRIES`` when set, which wins and is read each time a writer starts, so it may be
changed between writes. Spark's batch writers commit their executors' files once (a conflict there fails
the job, which Spark may run again); expiry commits in one transaction that cannot conflict.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from fieldshift.errors import CommitConflictError, InvalidOptionError, SnapshotExpiredError

__all__ = ["COMMIT_RETRIES", "RETRIES_ENV", "Attempt", "commit_attempts", "expired_is_conflict", "with_retries"]

COMMIT_RETRIES = 8
"""How many times a writer tries to commit before a :class:`CommitConflictError` reaches its caller."""
RETRIES_ENV = "FIELDSHIFT_COMMIT_RETRIES"
"""The environment variable that overrides :data:`COMMIT_RETRIES` (an int >= 1), read at each write."""

T = TypeVar("T")


def commit_attempts() -> int:
    """The number of attempts a writer makes now: ``FIELDSHIFT_COMMIT_RETRIES`` if set, else ``COMMIT_RETRIES``.

    Raises:
        InvalidOptionError: the variable is set to something other than an int of at least 1.
    """
    raw = os.environ.get(RETRIES_ENV, "").strip()
    if not raw:
        return COMMIT_RETRIES
    try:
        attempts = int(raw)
    except ValueError:
        attempts = 0
    if attempts < 1:
        raise InvalidOptionError(f"{RETRIES_ENV} must be a whole number of commit attempts, at least 1; got "
                                 f"{raw!r}. Unset it for the default ({COMMIT_RETRIES}); nothing was written")
    return attempts


@dataclass(frozen=True, slots=True)
class Attempt:
    """Which attempt this is (from 0) and whether it is the last one."""

    number: int
    last: bool


def with_retries(attempt: Callable[[Attempt], T]) -> T:
    """``attempt(Attempt(n, last))`` until it returns; a :class:`CommitConflictError` runs it again after a
    short sleep, except on the last attempt, where it reaches the caller."""
    attempts = commit_attempts()
    for number in range(attempts):
        last = number == attempts - 1
        try:
            return attempt(Attempt(number, last))
        except CommitConflictError:
            if last:
                raise
            time.sleep(0.01 * (number + 1))
    raise AssertionError("unreachable")


@contextlib.contextmanager
def expired_is_conflict(message: str) -> Iterator[None]:
    """Inside the block, a snapshot expired by another writer (the attempt's base) is a conflict: the next
    attempt reads the new head. ``message`` starts the conflict's text; the expiry's own follows."""
    try:
        yield
    except SnapshotExpiredError as e:
        raise CommitConflictError(f"{message}: {e}") from None
