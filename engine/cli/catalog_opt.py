"""The root ``--catalog`` / ``--table`` options: which shared catalog (a SQLite file or a
``postgresql://`` URI) and which table name in it the command's LOCATION belongs to."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CATALOG_HELP", "TABLE_HELP", "CatalogChoice", "choose", "chosen"]

CATALOG_HELP = ("Shared catalog of the table: a SQLite file or postgresql://user@host/db (also FIELDSHIFT_CATALOG). "
                "Default: the table's own catalog, or the one its directory's marker names.")
TABLE_HELP = "The table's name in --catalog (default: its location)."


@dataclass(frozen=True)
class CatalogChoice:
    catalog: str | None = None
    table: str | None = None


_choice = CatalogChoice()


def choose(catalog: str | None, table: str | None) -> None:
    """Record the root options for this invocation (the callback runs before every command)."""
    global _choice
    _choice = CatalogChoice(catalog or None, table or None)


def chosen() -> CatalogChoice:
    return _choice
