"""What the catalog needs from a SQL database: the ``Dialect`` interface SQLite and PostgreSQL implement.

The catalog's logic (``catalog.Catalog``) and its record modules (``tables``, ``schemas``, ``snapshots``,
``files``, ``specs``, ``deletion_vectors``, ``stream_marks``, ``quarantine``) run the same statements on
either database: plain SQL with ``?`` placeholders. What differs lives behind this interface and nowhere
else: how a connection is opened (a file, a pool), how a commit serialises (``BEGIN IMMEDIATE``, an
advisory lock), the placeholder style, how an identity column is declared and its new value read back
(``lastrowid``, ``RETURNING``), which columns and tables exist, and whether a dropped connection retries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeVar

__all__ = ["Connection", "Cursor", "Dialect"]

T = TypeVar("T")


class Cursor(Protocol):
    """The part of a DB-API cursor the record modules use."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """One catalog connection as the record modules see it: statements with ``?`` placeholders."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor: ...

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...

    def insert_id(self, sql: str, params: Sequence[Any], id_column: str) -> int:
        """Run an INSERT into a table with an identity column; the new row's ``id_column``."""
        ...

    def column_names(self, table: str) -> set[str]:
        """The columns ``table`` has (an upgrade adds the missing ones)."""
        ...

    def table_names(self) -> set[str]:
        """The tables of the catalog's database (or schema)."""
        ...


class Dialect(Protocol):
    """One kind of database holding the catalog tables."""

    kind: str
    """A short name (``sqlite``, ``postgresql``): with ``where``, the process-wide caches' key."""
    where: str
    """How messages name the catalog: a path, or a URI without its password."""
    directory: Path | None
    """The local directory holding the catalog file; None for a server."""
    integer: str
    """The DDL type of a 64-bit integer column."""
    identity: str
    """The DDL of an integer primary key the database numbers (``INTEGER PRIMARY KEY``, an identity)."""
    format_errors: tuple[type[Exception], ...]
    """What the driver raises when the database holds no catalog tables."""

    def exists(self) -> bool:
        """Whether there is a catalog to open (a server is asked when first used)."""
        ...

    def prepare(self) -> None:
        """Make what the database needs before its first transaction (a directory, WAL mode)."""
        ...

    def connect(self) -> AbstractContextManager[Connection]:
        """A connection for the block (autocommit: every read sees the latest commit)."""
        ...

    def transaction(self) -> AbstractContextManager[Connection]:
        """A connection inside one transaction that holds the catalog's commit lock; committed at the end of
        the block, rolled back when it raises."""
        ...

    def one_connection(self) -> AbstractContextManager[None]:
        """Serve the block's calls from one connection, when the database gains by it (a file does)."""
        ...

    def close(self) -> None:
        """Release the connections this catalog object holds (a later call opens again)."""
        ...

    def retrying(self, commit: Callable[[], T]) -> T:
        """Run ``commit``, again when the connection dropped before the database committed it."""
        ...
