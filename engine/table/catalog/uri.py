"""Which catalog a URI or path names: SQLite (a file) or PostgreSQL (a server).

Kept apart from both named catalogs so neither imports the other's module to be chosen, and the
PostgreSQL one (psycopg costs every other command its import) only when a PostgreSQL URI comes.
"""

from __future__ import annotations

from pathlib import Path

from fieldshift.errors import TableError
from fieldshift.table.catalog.catalog import Catalog
from fieldshift.table.catalog.sqlite import SqliteCatalog

__all__ = ["open_catalog"]


def open_catalog(uri_or_path: str | Path) -> Catalog:
    """``sqlite:///abs/path.db``, ``sqlite://rel/path.db``, a plain path, or a ``postgresql://`` URI."""
    text = str(uri_or_path)
    if text.startswith(("postgresql://", "postgres://")):
        from fieldshift.table.catalog.postgres import PostgresCatalog  # psycopg only when a server catalog is used

        return PostgresCatalog(text)
    if text.startswith("sqlite://"):
        text = text[len("sqlite://"):]
    elif "://" in text:
        raise TableError(f"unsupported catalog URI {uri_or_path!r}; use sqlite:///path.db, a plain path "
                         "or postgresql://user@host:port/database")
    return SqliteCatalog(text)
