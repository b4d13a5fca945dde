"""Tables whose location is on an object store: created in and opened from a catalog elsewhere.

An object store holds no SQLite catalog safely (no locks, no rename), so such a table needs a catalog
URI: a SQLite file on a local disk or a PostgreSQL database. The table's location keeps a small marker
object naming that catalog, so a second table is not created there and the table opens by its location.
"""

from __future__ import annotations

import json
from typing import Any

from fieldshift.errors import StorageLocationError, TableError
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.table.catalog.catalog import Catalog
from fieldshift.table.catalog.sql import redact_uri
from fieldshift.table.catalog.uri import open_catalog
from fieldshift.table.create import CATALOG_FILE, TABLE_MARKER, default_table_name, shared_table_name
from fieldshift.table.files.storage import TableStorage
from fieldshift.table.partitions.partitioning import PartitionSpec

__all__ = ["create_on_object_store", "open_on_object_store"]


def _need_catalog(storage: TableStorage, what: str) -> StorageLocationError:
    return StorageLocationError(
        f"cannot {what} a table at {storage.display()} without a catalog: an object store cannot hold the "
        "table's SQLite catalog safely. Pass catalog= (a SQLite file on a local disk, e.g. "
        "catalog='/var/lib/fieldshift/catalog.db', or a PostgreSQL URI 'postgresql://user@host/db'); on the "
        "command line --catalog or FIELDSHIFT_CATALOG")


def create_on_object_store(storage: TableStorage, catalog: str | None, name: str | None, schema: Schema,
                           properties: dict[str, str], policy: CastPolicy,
                           spec: PartitionSpec) -> tuple[Catalog, int, str]:
    """Record a new table at ``storage`` in ``catalog`` and leave its marker; (catalog, table id, name)."""
    if not catalog:
        raise _need_catalog(storage, "create")
    for marker in (TABLE_MARKER, CATALOG_FILE):
        if storage.exists(marker):
            raise TableError(f"cannot create a table at {storage.display()}: another table lives there "
                             f"({marker} exists); pick another location")
    cat = open_catalog(catalog)
    cat.initialize()
    name = name or default_table_name(storage.location)
    table_id = cat.create_table(name, str(storage.location), schema, properties, policy, spec)
    storage.put(TABLE_MARKER, json.dumps({"catalog": redact_uri(catalog), "name": name}).encode())
    return cat, table_id, name


def open_on_object_store(storage: TableStorage, catalog: str | None,
                         name: str | None) -> tuple[Catalog, int, str, dict[str, Any]]:
    """(catalog, table id, name, properties) of the table at ``storage``; without ``catalog`` the one its
    marker names."""
    if not catalog:
        try:
            marker = json.loads(storage.read_bytes(TABLE_MARKER))
            catalog, name = marker["catalog"], name or marker["name"]
        except FileNotFoundError:
            raise _need_catalog(storage, "open") from None
        except (ValueError, KeyError, TypeError) as e:
            raise TableError(f"{storage.display(TABLE_MARKER)} is damaged ({e}); open the table with catalog= "
                             "and name=") from None
    cat = open_catalog(catalog)
    if not cat.exists():
        raise TableError(f"no fieldshift catalog at {redact_uri(catalog)}; create the table with Table.create()")
    cat.check_version()
    name = shared_table_name(cat, storage.location, name)
    table_id, _, properties = cat.table_id(name)
    return cat, table_id, name, properties
