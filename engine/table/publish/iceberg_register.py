"""Registering a published table in a PyIceberg SQL catalog, and moving its pointer forward (compare-and-
swap on the catalog row's metadata location) at every catch-up."""

from __future__ import annotations

import re
from typing import Any

from fieldshift.errors import InvalidOptionError

__all__ = ["REGISTER_NAME_PROPERTY", "REGISTER_URI_PROPERTY", "catalog_name", "move_pointer"]

REGISTER_URI_PROPERTY = "fieldshift.publish.catalog-uri"
REGISTER_NAME_PROPERTY = "fieldshift.publish.catalog-name"
_VERSION = re.compile(r"/v(\d+)\.metadata\.json$")
CATALOG_NAME = "default"  # PyIceberg's default catalog name: load_catalog("default", uri=...) sees the table


def catalog_name(identifier: str) -> tuple[str, str]:
    """``NAMESPACE.NAME`` split at its last dot; anything else is refused."""
    if not isinstance(identifier, str) or identifier.count(".") < 1 or "" in identifier.split("."):
        raise InvalidOptionError(f"register needs NAMESPACE.NAME (e.g. lake.events), not {identifier!r}")
    namespace, _, name = identifier.rpartition(".")
    return namespace, name


def _version(location: str | None) -> int:
    found = _VERSION.search(location or "")
    return int(found.group(1)) if found else 0


def _catalog(uri: str) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(CATALOG_NAME, uri=uri)


def move_pointer(uri: str, identifier: str, metadata_location: str) -> None:
    """Register ``identifier`` at ``metadata_location``, or move its pointer there when that is a newer
    version than the one it names (compare-and-swap: a concurrent mover of a newer one wins)."""
    from pyiceberg.catalog.sql import IcebergTables
    from pyiceberg.exceptions import NamespaceAlreadyExistsError, NoSuchTableError
    from sqlalchemy import update
    from sqlalchemy.orm import Session

    namespace, name = catalog_name(identifier)
    catalog = _catalog(uri)
    try:
        catalog.create_namespace(namespace)
    except NamespaceAlreadyExistsError:
        pass
    for _ in range(8):
        try:
            current = catalog.load_table((namespace, name)).metadata_location
        except NoSuchTableError:
            try:
                catalog.register_table((namespace, name), metadata_location)
                return
            except Exception:  # a concurrent registration: compare with it on the next turn
                continue
        if _version(current) >= _version(metadata_location):
            return
        with Session(catalog.engine) as session:
            moved = session.execute(update(IcebergTables).where(
                IcebergTables.catalog_name == CATALOG_NAME, IcebergTables.table_namespace == namespace,
                IcebergTables.table_name == name, IcebergTables.metadata_location == current,
            ).values(metadata_location=metadata_location, previous_metadata_location=current))
            session.commit()
            if moved.rowcount == 1:
                return
