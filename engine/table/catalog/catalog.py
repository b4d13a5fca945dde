"""The catalog: snapshots, schema versions, columns with begin/end snapshots, data files, in SQL tables.

Modelled on DuckLake's catalog tables: plain SQL, ``?`` parameters, no database-only types. One class holds
the logic for every database; a :class:`~fieldshift.table.catalog.dialect.Dialect` (SQLite, PostgreSQL)
says how to connect and lock, and the record modules (``tables``, ``schemas``, ``snapshots``, ``files``,
``specs``, ``deletion_vectors``, ``stream_marks``, ``quarantine``) own the statements. Every commit is one
transaction holding the catalog's commit lock, so a commit either happens whole or not at all.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from fieldshift.errors import CatalogFormatError, TableError
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.table.catalog import files, quarantine, schemas, snapshots, tables
from fieldshift.table.catalog.dialect import Connection, Dialect
from fieldshift.table.catalog.metadata_cache import parsed_schema
from fieldshift.table.catalog.specs import insert_spec, load_specs, parse_specs
from fieldshift.table.catalog.sql import (
    DEFAULT_POLICY,
    FORMAT_VERSION,
    POLICY_PROPERTY,
    PUBLISH_PROPERTY,
    create_metadata,
    format_version,
    locations_overlap,
    parse_json,
    policy_of,
    upgrade,
)
from fieldshift.table.metadata import MetadataCache, TableMetadata
from fieldshift.table.partitions.partitioning import PartitionSpec
from fieldshift.table.records import DataFile, Snapshot
from fieldshift.table.updates import TableRequirement, TableUpdate, begin_commit

__all__ = ["METADATA", "Catalog"]

METADATA = MetadataCache()
"""The process's loaded metadata of every table of every catalog (``load_metadata``'s cache)."""

P = ParamSpec("P")
T = TypeVar("T")


class Catalog:
    """One catalog database holding one or many tables, in the SQL of its ``dialect``."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self._after_commit: dict[int, Callable[[], None]] | None = None  # per table: run after each commit

    @property
    def path(self) -> Any:
        """What messages name the catalog by: its file, or its URI without the password."""
        return self.dialect.where

    @property
    def directory(self) -> Path | None:
        """The local directory holding the catalog file; None for a catalog in a database server."""
        return self.dialect.directory

    def exists(self) -> bool:
        """Whether there is a catalog to open (a server-backed catalog is asked when first used)."""
        return self.dialect.exists()

    # -- connections ----------------------------------------------------------------------------
    def one_connection(self) -> contextlib.AbstractContextManager[None]:
        """Serve the block's catalog calls from one connection where the database gains by it (a stream's
        micro-batch makes a dozen; a server's pool reuses its connections anyway)."""
        return self.dialect.one_connection()

    def close(self) -> None:
        """Close the connections this catalog object holds (SQLite: every thread's read connection; they are
        closed too when the catalog is collected). Safe from any thread: a connection in the middle of a read
        on another thread is closed by that thread when the read ends (as a connection pool's dispose leaves
        checked-out connections to their return). A later call opens again."""
        self.dialect.close()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the commit lock for the block: no commit lands meanwhile (vacuum deletes under it)."""
        with self.dialect.transaction():
            yield

    def read(self, question: Callable[Concatenate[Connection, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """The answer of one record function (``stream_marks.stream_batches``, ``files.column_bounds``, ...)
        on a connection of this catalog."""
        with self.dialect.connect() as conn:
            return question(conn, *args, **kwargs)

    def initialize(self) -> None:
        """Create the catalog tables (idempotent, in one transaction) and check the format version."""
        self.dialect.prepare()
        with self.dialect.transaction() as conn:
            create_metadata(conn)
            upgrade(conn, self.dialect)
        self.check_version()

    def check_version(self) -> None:
        """Refuse a newer catalog format; upgrade an older one in place (one transaction)."""
        version = self._version()
        if version > FORMAT_VERSION:
            raise CatalogFormatError(
                f"catalog {self.path} has format version {version}, but this fieldshift reads up to "
                f"version {FORMAT_VERSION}; upgrade fieldshift to open it"
            )
        if version < FORMAT_VERSION:
            with self.dialect.transaction() as conn:
                upgrade(conn, self.dialect)

    def _version(self) -> int:
        try:
            text = self.read(format_version)
        except self.dialect.format_errors as e:
            raise CatalogFormatError(f"{self.path} is not a fieldshift catalog ({e})") from None
        if text is None:
            raise CatalogFormatError(f"{self.path} is not a fieldshift catalog (no format_version)")
        try:
            return int(text)
        except ValueError:
            raise CatalogFormatError(f"{self.path} records an unreadable format version {text!r}") from None

    def holds_no_table(self) -> bool:
        """Whether the catalog holds no table (an older create killed midway); False when the database is
        no catalog at all (leave it alone: "exists" is the safe answer)."""
        try:
            return self.read(tables.holds_no_table)
        except self.dialect.format_errors:
            return False

    # -- tables ---------------------------------------------------------------------------------
    def create_table(self, name: str, location: str, schema: Schema, properties: dict[str, str],
                     policy: CastPolicy | None = None, spec: PartitionSpec | None = None) -> int:
        """Add a table; its location may neither be nor nest with another table's of this catalog."""
        props = {**properties, POLICY_PROPERTY: (policy or DEFAULT_POLICY).option_name}
        with self.dialect.transaction() as conn:
            if tables.table_by_name(conn, name) is not None:
                raise TableError(f"a table named {name!r} already exists in catalog {self.path}; "
                                 "open it with Table.open() or pick another name")
            for other, other_location in tables.locations(conn):
                if locations_overlap(location, other_location):
                    raise TableError(
                        f"cannot create table {name!r} at {location}: table {other!r} of catalog {self.path} "
                        f"lives at {other_location}, and two tables may not share a directory or nest one "
                        "inside the other (vacuum and data files would mix). Pick a separate location."
                    )
            table_id = tables.insert_table(conn, name, location, props, snapshots.now())
            snapshots.insert_snapshot(conn, table_id, 0, None, schema.schema_id, "create", {})
            schemas.insert_schema(conn, table_id, schema, 0)
            if spec is not None:
                insert_spec(conn, table_id, spec, 0)
        return table_id

    def table_id(self, name: str) -> tuple[int, str, dict[str, str]]:
        """The id, recorded location and properties of the table ``name``.

        Raises:
            TableError: the catalog has no table of that name.
        """
        row = self.read(tables.table_by_name, name)
        if row is None:
            raise TableError(f"no table named {name!r} in catalog {self.path}")
        return row[0], row[1], parse_json(row[2], f"the properties of table {name!r}")

    def tables(self) -> list[tuple[int, str, str]]:
        """(table id, name, recorded location) of every table in the catalog."""
        return self.read(tables.table_names)

    def policy(self, table_id: int) -> CastPolicy:
        """The table's evolution policy (catalogs from before policies were recorded: onehouse)."""
        row = self.read(tables.table_by_id, table_id)
        if row is None:
            raise TableError(f"catalog {self.path} has no table {table_id}; it may have been dropped")
        return policy_of(row[0], parse_json(row[1], f"the properties of table {row[0]!r}"))

    def properties(self, table_id: int) -> dict[str, Any]:
        """The table's properties as committed."""
        return self.read(tables.table_properties, table_id)

    # -- reads ----------------------------------------------------------------------------------
    def load_metadata(self, table_id: int) -> TableMetadata:
        """The table at its head in one statement when its schemas and specs did not change since the last load
        in this process (the head row, properties and a fingerprint of both are the freshness check), else two
        (schemas and specs together). A commit that only adds files leaves the schemas and specs as they were."""
        with self.dialect.connect() as conn:
            row = tables.metadata_row(conn, table_id)
            if row is None:
                raise TableError(f"catalog {self.path} has no table {table_id} (or it has no snapshot); it may have "
                                 "been dropped: open the table again")
            key, fresh = self._metadata_key(table_id), (row[3], row[6], row[2])
            # schemas are only ever added, with higher ids; a spec added or made current again begins at the new head
            layout = tuple(row[9:12])
            cached = METADATA.get(key, fresh)
            if cached is not None:
                return cached
            known = METADATA.get_layout(key, layout)
            if known is None:
                schema_rows, spec_rows = schemas.layout_rows(conn, table_id)
                loaded = {sid: self._parse_schema(conn, table_id, sid, text) for sid, text in schema_rows}
                specs = tuple(parse_specs(spec_rows))
            else:
                loaded, specs = dict(known.schemas), known.spec_history
        name = row[0]
        properties = parse_json(row[2], f"the properties of table {name!r}")
        head = Snapshot(row[3], row[4], row[5], row[6], row[7], parse_json(row[8], f"the summary of snapshot {row[3]}"))
        metadata = TableMetadata(table_id, name, row[1], properties, policy_of(name, properties), loaded, specs,
                                 head, head)
        METADATA.put(key, fresh, metadata, layout)
        return metadata

    def _metadata_key(self, table_id: int) -> tuple[str, str, int]:
        """The process-wide metadata cache's key of one table of this catalog."""
        return self.dialect.kind, self.dialect.where, table_id

    def snapshots(self, table_id: int) -> list[Snapshot]:
        """Every kept snapshot of the table, oldest first."""
        return [Snapshot(r[0], r[1], r[2], r[3], r[4], parse_json(r[5], f"the summary of snapshot {r[0]}"))
                for r in self.read(snapshots.snapshot_rows, table_id)]

    def head(self, table_id: int) -> Snapshot:
        """The newest snapshot, in one indexed row (a long history costs a commit nothing)."""
        head = self.snapshot(table_id, None)
        if head is None:
            raise CatalogFormatError(f"catalog {self.path}: table {table_id} has no snapshot; restore the catalog "
                                     "from a backup")
        return head

    def snapshot(self, table_id: int, snapshot_id: int | None) -> Snapshot | None:
        """One snapshot (None: the head) without reading the others; None when there is no such snapshot."""
        r = self.read(snapshots.snapshot_row, table_id, snapshot_id)
        return None if r is None else Snapshot(*r[:5], parse_json(r[5], f"the summary of snapshot {r[0]}"))

    def schemas(self, table_id: int) -> dict[int, Schema]:
        """Every schema version of the table by id.

        Raises:
            CatalogFormatError: a stored schema cannot be parsed (names the table and schema id).
        """
        with self.dialect.connect() as conn:
            return self._schemas(conn, table_id)

    def _schemas(self, conn: Connection, table_id: int) -> dict[int, Schema]:
        return {sid: self._parse_schema(conn, table_id, sid, text) for sid, text in schemas.schema_rows(conn, table_id)}

    def _parse_schema(self, conn: Connection, table_id: int, schema_id: int, text: str) -> Schema:
        """A stored schema, or a CatalogFormatError naming the table and schema id."""
        try:
            return parsed_schema(text)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
            name = tables.table_name(conn, table_id)
            raise CatalogFormatError(
                f"catalog {self.path}: schema {schema_id} of table {name if name is not None else table_id!r} is "
                f"corrupt ({type(e).__name__}: {e}); restore the catalog from a backup"
            ) from None

    def specs(self, table_id: int) -> list[tuple[PartitionSpec, int]]:
        """(partition spec, snapshot that committed it) of every spec the table had, oldest first."""
        return self.read(load_specs, table_id)

    def data_files(self, table_id: int, snapshot_id: int, with_stats: bool = True) -> list[DataFile]:
        """The data (and delete) files live at ``snapshot_id``, by file id; ``with_stats`` loads their column
        statistics too."""
        return self.read(files.data_files, table_id, snapshot_id, with_stats)

    def live_files(self, table_id: int, snapshot_id: int, with_vectors: bool = False
                   ) -> tuple[list[DataFile], dict[int, tuple[int, str]]]:
        """The files live at ``snapshot_id`` without statistics, and (``with_vectors``: a keyed table) file id ->
        (cardinality, encoded positions) of each file's deletion vector at the snapshot, in one statement."""
        return self.read(files.live_files, table_id, snapshot_id, with_vectors)

    def file_stats(self, file_ids: Sequence[int]) -> dict[int, dict[int, tuple[int, int, Any, Any]]]:
        """Statistics of some files only (a scan loads them after partition pruning)."""
        return self.read(files.file_stats, file_ids)

    def all_data_files(self, table_id: int) -> list[tuple[str, int]]:
        """(path, schema id) of every data file any snapshot references (delete files hold only key
        columns, whose types never change, so value checks skip them)."""
        return self.read(files.all_data_files, table_id)

    def all_paths(self, table_id: int) -> set[str]:
        """Every data and quarantine file any snapshot references (vacuum keeps these)."""
        with self.dialect.connect() as conn:
            return files.data_paths(conn, table_id) | quarantine.quarantine_paths(conn, table_id)

    def quarantine_files(self, table_id: int) -> list[tuple[str, int]]:
        """(path, snapshot id that set the rows aside) of every quarantine file, oldest first."""
        return self.read(quarantine.quarantine_files, table_id)

    # -- commits --------------------------------------------------------------------------------
    def on_commit(self, table_id: int, hook: Callable[[], None]) -> None:
        """Run ``hook`` after every commit of ``table_id`` through this catalog while the table publishes
        (``PUBLISH_PROPERTY``): the catch-up of its published metadata, which never raises."""
        if self._after_commit is None:
            self._after_commit = {}
        self._after_commit[table_id] = hook

    def set_property(self, table_id: int, key: str, value: str | None) -> dict[str, str]:
        """Set (None: remove) one table property outside any snapshot; returns the properties."""
        with self.dialect.transaction() as conn:
            name, text = tables.table_by_id(conn, table_id)  # type: ignore[misc]
            props = parse_json(text, f"the properties of table {name!r}")
            if value is None:
                props.pop(key, None)
            else:
                props[key] = value
            tables.set_properties(conn, table_id, props)
        return props

    def commit(self, table_id: int, base_snapshot_id: int, requirements: Sequence[TableRequirement] = (),
               updates: Sequence[TableUpdate] = (), *, operation: str,
               summary: dict[str, Any] | None = None) -> Snapshot:
        """Commit ``updates`` atomically on top of ``base_snapshot_id`` when ``requirements`` hold.

        One transaction: the head is read once, every requirement and update checks itself against what
        committed since the base (its conflict rule, see ``updates``), then the snapshot row and each
        update's rows are written. Raises :class:`CommitConflictError` (reload and retry),
        :class:`AlreadyCommittedError` (a stream mark recorded before) or the error of a failed check;
        nothing is committed then. A server's connection that drops before it committed runs it again.
        """
        return self.dialect.retrying(
            lambda: self._commit(table_id, base_snapshot_id, requirements, updates, operation, summary))

    def _commit(self, table_id: int, base_snapshot_id: int, requirements: Sequence[TableRequirement],
                updates: Sequence[TableUpdate], operation: str, summary: dict[str, Any] | None) -> Snapshot:
        steps = sorted([*requirements, *updates], key=lambda s: s.CHECK_ORDER)
        with self.dialect.transaction() as conn:
            state = begin_commit(conn, table_id, base_snapshot_id, operation, updates,
                                 lambda: self._schemas(conn, table_id))
            for step in steps:
                step.check(state)
            snapshot = snapshots.insert_snapshot(conn, table_id, state.new_id, state.head_id, state.schema_id,
                                                 operation, summary or {})
            for update in sorted(updates, key=lambda u: u.APPLY_ORDER):
                update.apply(state)
        if not state.changes_metadata:  # the metadata this commit was based on, with its new head
            key = self._metadata_key(table_id)
            before = METADATA.get(key, state.head_fresh)
            if before is not None:  # schemas and specs unchanged: the layout it was loaded at still holds
                METADATA.put(key, (snapshot.snapshot_id, snapshot.committed_at, state.head_fresh[2]),
                             replace(before, head=snapshot, snapshot=snapshot), METADATA.layout(key))
        if state.publishing and self._after_commit and table_id in self._after_commit:
            self._after_commit[table_id]()  # publishing follows the commit (a catch-up that never raises)
        return snapshot

    def expire(self, table_id: int, snapshot_ids: Sequence[int]) -> list[str]:
        """Remove snapshot rows and the rows of files no remaining snapshot references (one transaction);
        returns those files' paths. The head is never removed."""
        with self.dialect.transaction() as conn:
            paths = snapshots.expire_rows(conn, table_id, snapshot_ids)
            props = tables.table_properties(conn, table_id)
        if props.get(PUBLISH_PROPERTY) and self._after_commit and table_id in self._after_commit:
            self._after_commit[table_id]()  # the published snapshots expire too
        return paths
