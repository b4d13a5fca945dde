"""``PostgresCatalog``: the catalog tables in a PostgreSQL server (any number of tables; data stays at each
location).

The catalog's logic is ``catalog.Catalog``'s, the same for every database; this names it over the
PostgreSQL dialect (``postgres_dialect``: pooled connections, an advisory lock per commit, commits
settled when the connection drops). ``uri.open_catalog`` imports it only for a
PostgreSQL URI (psycopg would cost every other command its import).
"""

from __future__ import annotations

from fieldshift.table.catalog.catalog import Catalog
from fieldshift.table.catalog.postgres_dialect import COMMIT_ATTEMPTS, PostgresDialect, close_pools, display_uri
from fieldshift.table.catalog.sql import redact_uri

__all__ = ["COMMIT_ATTEMPTS", "PostgresCatalog", "close_pools", "display_uri", "redact_uri"]


class PostgresCatalog(Catalog):
    """The catalog tables in a PostgreSQL database (``uri``: ``postgresql://user@host:port/database``)."""

    def __init__(self, uri: str) -> None:
        super().__init__(PostgresDialect(uri))
        self.uri = uri
