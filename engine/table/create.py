"""Creating a table atomically, and finding it again wherever its directory is.

A table with its own catalog is built in a temporary SQLite file beside the final one and linked
into place in one step, so a crash at any point leaves either no ``fieldshift.db`` (the location
reads as "no table" and ``create`` simply runs again) or a whole table. Data paths in the catalog
are relative to the table directory, and the recorded location is only a hint, so a moved or copied
table directory opens and reads.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import uuid
from pathlib import Path

from fieldshift.errors import TableError, TableExistsError
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.table.catalog.catalog import Catalog
from fieldshift.table.catalog.sql import redact_uri
from fieldshift.table.catalog.sqlite import DEFAULT_POLICY, POLICY_PROPERTY, SqliteCatalog
from fieldshift.table.catalog.uri import open_catalog
from fieldshift.table.partitions.partitioning import PartitionSpec

__all__ = [
    "CATALOG_FILE",
    "TABLE_MARKER",
    "create_own_catalog",
    "default_table_name",
    "mark_table_directory",
    "open_by_name",
    "own_table_name",
    "read_table_marker",
    "refuse_nested",
    "remove_abandoned_catalogs",
    "resolve_policy",
    "shared_table_name",
]

CATALOG_FILE = "fieldshift.db"
TABLE_MARKER = ".fieldshift-table"  # in a shared-catalog table's directory
_TMP_PREFIX = f".{CATALOG_FILE}."
_TMP_SUFFIX = ".creating"


def resolve_policy(policy: CastPolicy | str | None, properties: dict[str, str]) -> CastPolicy:
    """The policy a new table gets: ``policy=``, else a ``fieldshift.schema.policy`` property, else onehouse."""
    given = properties.get(POLICY_PROPERTY)
    chosen = CastPolicy.from_name(policy) if isinstance(policy, str) else policy
    from_props = CastPolicy.from_name(given) if given is not None else None
    if chosen is not None and from_props is not None and chosen != from_props:
        raise TableError(f"policy={chosen.option_name!r} and property {POLICY_PROPERTY}={given!r} disagree; "
                         "give one of them")
    return chosen or from_props or DEFAULT_POLICY


def default_table_name(location: Path | str) -> str:
    """The name a table of a shared catalog gets when ``name=`` is not given: the last component of its
    location (``/lake/events`` and ``s3://bucket/lake/events`` are both ``events``), so a later
    ``--table events`` finds it."""
    text = str(location).rstrip("/")
    return text.rsplit("/", 1)[-1] or text


def shared_table_name(catalog: Catalog, location: Path | str, name: str | None) -> str:
    """The name of the table of ``catalog`` at ``location``: ``name`` when given, else the table recorded
    at that location (whatever it was named: older fieldshift named tables by their full location)."""
    if name:
        return name
    where = str(location).rstrip("/")
    for _, recorded_name, recorded in catalog.tables():
        if recorded.rstrip("/") == where:
            return recorded_name
    raise TableError(f"no table of catalog {catalog.path} lives at {where}; pass its name "
                     "(name=, on the command line --table NAME), or create it with Table.create()")


def open_by_name(catalog: str | None, name: str | None) -> tuple[Catalog, int, str, dict[str, str]]:
    """(catalog, table id, recorded location, properties) of the table ``name`` of a shared catalog."""
    if not catalog or not name:
        raise TableError("Table.open() needs the table's location, or catalog= and name= (a table of a shared "
                         "catalog opens by its name)")
    cat = open_catalog(catalog)
    if not cat.exists():
        raise TableError(f"no fieldshift catalog at {cat.path}; create the table with Table.create()")
    cat.check_version()
    table_id, location, properties = cat.table_id(name)
    return cat, table_id, location, properties


def mark_table_directory(location: Path, catalog: str, name: str) -> None:
    """Leave a marker in a shared-catalog table's directory (an own catalog's file is its marker), so no
    other table is created in, around or inside it. A password in the catalog URI is left out (it comes
    from the environment, e.g. PGPASSWORD, when the table is opened by its directory)."""
    (location / TABLE_MARKER).write_text(json.dumps({"catalog": redact_uri(catalog), "name": name}))


def read_table_marker(location: Path, name: str | None) -> tuple[str, str]:
    """(catalog, table name) from a shared-catalog table's marker (``name`` wins when given)."""
    try:
        marker = json.loads((location / TABLE_MARKER).read_text())
        return marker["catalog"], name or marker["name"]
    except (ValueError, KeyError, TypeError) as e:
        raise TableError(f"{location / TABLE_MARKER} is damaged ({e}); open the table with catalog= and "
                         "name=") from None


def _is_table_directory(path: Path) -> bool:
    return (path / CATALOG_FILE).is_file() or (path / TABLE_MARKER).is_file()


def refuse_nested(location: Path, *, shared: bool) -> None:
    """A table may not live in, inside or around another table's directory (vacuum and files would mix)."""
    if shared and (location / TABLE_MARKER).is_file():  # (an own catalog there: the caller says so)
        raise TableError(f"cannot create a table at {location}: another table lives there, and two tables "
                         "may not share a directory or nest one inside the other; pick another location")
    if not shared and (location / TABLE_MARKER).is_file():
        raise TableError(f"cannot create a table at {location}: a table of a shared catalog lives there "
                         f"({(location / TABLE_MARKER).read_text()}); pick another location")
    for parent in location.parents:
        if _is_table_directory(parent):
            raise TableError(f"cannot create a table at {location}: it is inside the table at {parent}, and "
                             "two tables may not share a directory or nest one inside the other; pick a "
                             "location outside every table directory")
    for folder in ("data", "quarantine"):  # a table's own folders: no other table may live below them
        inner = next((p.parent for p in (location / folder).rglob("*")
                      if p.name in (CATALOG_FILE, TABLE_MARKER)), None) if (location / folder).is_dir() else None
        if inner is not None:
            raise TableError(f"cannot create a table at {location}: the table at {inner} lives inside its "
                             f"{folder}/ folder; pick another location")


def create_own_catalog(location: Path, name: str, schema: Schema, properties: dict[str, str],
                       policy: CastPolicy, spec: PartitionSpec | None = None) -> tuple[SqliteCatalog, int]:
    """Build the table's catalog under a temporary name, then link it into place (never overwriting)."""
    final = location / CATALOG_FILE
    if final.exists() and not _is_empty_catalog(final):
        raise TableExistsError(f"a table already exists at {location}; open it with Table.open()", location)
    location.mkdir(parents=True, exist_ok=True)
    if final.exists():  # an interrupted create of an older fieldshift: catalog tables but no table row
        cat = SqliteCatalog(final)
        cat.initialize()
        return cat, cat.create_table(name, str(location), schema, properties, policy, spec)
    tmp = location / f"{_TMP_PREFIX}{uuid.uuid4().hex}{_TMP_SUFFIX}"
    # held while building: a later create removes only temporary catalogs nobody holds (killed creates)
    lock = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        building = SqliteCatalog(tmp)
        building.initialize()
        table_id = building.create_table(name, str(location), schema, properties, policy, spec)
        building.close()  # its read connection: the file is linked into place and removed under this name
        os.fsync(lock)
        try:
            os.link(tmp, final)
        except FileExistsError:
            raise TableExistsError(f"a table already exists at {location} (created concurrently); "
                                   "open it with Table.open()", location) from None
        _fsync(location)
    finally:
        _remove_catalog_file(tmp)
        os.close(lock)
    remove_abandoned_catalogs(location)
    return SqliteCatalog(final), table_id


def own_table_name(catalog: Catalog, location: Path) -> str:
    """The table of a table directory's own catalog (it was recorded under its first path)."""
    tables = catalog.tables()
    for _, name, _ in tables:
        if name == str(location):
            return name
    if len(tables) == 1:
        return tables[0][1]  # the directory was moved or copied
    if not tables:
        raise TableError(f"no fieldshift table at {location}: {CATALOG_FILE} holds no table (a create was "
                         "interrupted); run Table.create() again")
    raise TableError(f"the catalog at {location} holds several tables {[t[1] for t in tables]}; pass name=")


def _is_empty_catalog(path: Path) -> bool:
    """A catalog file holding no table (an older create killed midway), which create may reuse."""
    return SqliteCatalog(path).holds_no_table()  # not a catalog at all: False, "exists" is the safe answer


def remove_abandoned_catalogs(location: Path) -> list[str]:
    """Delete the temporary catalogs creates killed midway left in ``location``; returns their names."""
    return [stale.name for stale in sorted(location.glob(f"{_TMP_PREFIX}*{_TMP_SUFFIX}"))
            if _remove_if_abandoned(stale)]


def _remove_catalog_file(path: Path) -> None:
    for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()


def _remove_if_abandoned(path: Path) -> bool:
    """Delete a temporary catalog whose create was killed (no process holds its lock any more)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False  # a create in progress
    finally:
        os.close(fd)
    _remove_catalog_file(path)
    return True


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
