"""``SqliteCatalog``: the catalog in one SQLite file (a table directory's own, or one shared by many tables).

The catalog's logic is ``catalog.Catalog``'s, the same for every database; this names it over the SQLite
dialect (``sqlite_dialect``), the name users and the tests know.
"""

from __future__ import annotations

from pathlib import Path

from fieldshift.table.catalog.catalog import Catalog
from fieldshift.table.catalog.sql import DEFAULT_POLICY, FORMAT_VERSION, POLICY_PROPERTY, PUBLISH_PROPERTY
from fieldshift.table.catalog.sqlite_dialect import SqliteDialect
from fieldshift.table.records import DataFile, Snapshot

__all__ = ["DEFAULT_POLICY", "FORMAT_VERSION", "POLICY_PROPERTY", "PUBLISH_PROPERTY", "DataFile", "Snapshot",
           "SqliteCatalog"]


class SqliteCatalog(Catalog):
    """One SQLite database holding one or many tables."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(SqliteDialect(Path(path)))

    @property
    def path(self) -> Path:
        """The catalog file."""
        return self.dialect.path  # type: ignore[attr-defined, no-any-return]
