"""The SQLite catalog: snapshots, schema versions, columns with begin/end snapshots, data files.

Modelled on DuckLake's catalog tables so another SQL database can hold it later: plain SQL, ``?``
parameters, no SQLite-only types. Every commit is one ``BEGIN IMMEDIATE`` transaction, so writers
in separate processes serialise on the database lock and a commit either happens whole or not at all.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from fieldshift.errors import CatalogFormatError, TableError
from fieldshift.gc_pause import paused_gc
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.table.catalog.metadata_cache import parsed_schema
from fieldshift.table.catalog.reads import live_files, load_file_stats, snapshot_row
from fieldshift.table.catalog.specs import decode_partition, insert_spec, load_specs, parse_specs
from fieldshift.table.catalog.sql import (
    DEFAULT_POLICY,
    FORMAT_VERSION,
    POLICY_PROPERTY,
    PUBLISH_PROPERTY,
    expire_rows,
    load_value,
    locations_overlap,
    parse_json,
    policy_of,
    upgrade,
)
from fieldshift.table.catalog.writes import insert_schema, insert_snapshot, now
from fieldshift.table.metadata import MetadataCache, TableMetadata
from fieldshift.table.partitions.partitioning import PartitionSpec
from fieldshift.table.records import DataFile, Snapshot
from fieldshift.table.updates import TableRequirement, TableUpdate, begin_commit

__all__ = ["DEFAULT_POLICY", "FORMAT_VERSION", "POLICY_PROPERTY", "DataFile", "Snapshot", "SqliteCatalog"]

_METADATA = MetadataCache()


class SqliteCatalog:
    """One SQLite database holding one or many tables."""

    _after_commit: dict[int, Callable[[], None]] | None = None  # per table: run after each commit (publishing)

    _format_errors: tuple[type[Exception], ...] = (sqlite3.DatabaseError,)  # a database holding no catalog

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def exists(self) -> bool:
        """Whether there is a catalog to open (a server-backed catalog is asked when first used)."""
        return self.path.exists()

    @property
    def directory(self) -> Path | None:
        """The local directory holding the catalog file; None for a catalog in a database server."""
        return self.path.parent

    # -- connections ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def one_connection(self) -> Iterator[None]:
        """Serve the block's catalog calls from one connection: a stream's micro-batch makes a dozen, and each
        open and close of a WAL database creates and checkpoints files. Autocommit: every read stays fresh."""
        if type(self)._connect is not SqliteCatalog._connect or self.__dict__.get("_held") is not None:
            yield  # a server catalog pools its connections; an outer block already holds one
            return
        with self._connect() as conn:
            self._held: sqlite3.Connection | None = conn
            try:
                yield
            finally:
                self._held = None

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        held = self.__dict__.get("_held")
        if held is not None:
            yield held
            return
        # timeout= is SQLite's busy timeout (sqlite3_busy_timeout): no PRAGMA statement per connection
        conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        try:
            yield conn
        finally:
            conn.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the commit lock for the block: no commit lands meanwhile (vacuum deletes under it)."""
        with self._transaction():
            yield

    def initialize(self) -> None:
        """Create the catalog tables (idempotent, in one transaction) and check the format version."""
        self._prepare()
        with self._transaction() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS fs_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            conn.execute("INSERT OR IGNORE INTO fs_metadata VALUES ('format_version', ?)", (str(FORMAT_VERSION),))
            upgrade(conn)
        self.check_version()

    def _prepare(self) -> None:
        """Make the catalog file's directory and switch it to WAL (readers never wait for a writer)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode = WAL")

    def check_version(self) -> None:
        """Refuse a newer catalog format; upgrade an older one in place (one transaction)."""
        version = self._version()
        if version > FORMAT_VERSION:
            raise CatalogFormatError(
                f"catalog {self.path} has format version {version}, but this fieldshift reads up to "
                f"version {FORMAT_VERSION}; upgrade fieldshift to open it"
            )
        if version < FORMAT_VERSION:
            with self._transaction() as conn:
                upgrade(conn)

    def _version(self) -> int:
        try:
            with self._connect() as conn:
                row = conn.execute("SELECT value FROM fs_metadata WHERE key = 'format_version'").fetchone()
        except self._format_errors as e:
            raise CatalogFormatError(f"{self.path} is not a fieldshift catalog ({e})") from None
        if row is None:
            raise CatalogFormatError(f"{self.path} is not a fieldshift catalog (no format_version)")
        try:
            return int(row[0])
        except ValueError:
            raise CatalogFormatError(f"{self.path} records an unreadable format version {row[0]!r}") from None

    # -- tables ---------------------------------------------------------------------------------
    def create_table(self, name: str, location: str, schema: Schema, properties: dict[str, str],
                     policy: CastPolicy | None = None, spec: PartitionSpec | None = None) -> int:
        """Add a table; its location may neither be nor nest with another table's of this catalog."""
        props = {**properties, POLICY_PROPERTY: (policy or DEFAULT_POLICY).option_name}
        with self._transaction() as conn:
            if conn.execute("SELECT 1 FROM fs_table WHERE name = ?", (name,)).fetchone():
                raise TableError(f"a table named {name!r} already exists in catalog {self.path}; "
                                 "open it with Table.open() or pick another name")
            for other, other_location in conn.execute("SELECT name, location FROM fs_table"):
                if locations_overlap(location, other_location):
                    raise TableError(
                        f"cannot create table {name!r} at {location}: table {other!r} of catalog {self.path} "
                        f"lives at {other_location}, and two tables may not share a directory or nest one "
                        "inside the other (vacuum and data files would mix). Pick a separate location."
                    )
            cur = conn.execute(
                "INSERT INTO fs_table (name, location, properties, created_at) VALUES (?, ?, ?, ?)",
                (name, location, json.dumps(props), now()),
            )
            table_id = int(cur.lastrowid)
            insert_snapshot(conn, table_id, 0, None, schema.schema_id, "create", {})
            insert_schema(conn, table_id, schema, 0)
            if spec is not None:
                insert_spec(conn, table_id, spec, 0)
        return table_id

    def table_id(self, name: str) -> tuple[int, str, dict[str, str]]:
        """The id, recorded location and properties of the table ``name``.

        Raises:
            TableError: the catalog has no table of that name.
        """
        with self._connect() as conn:
            row = conn.execute("SELECT table_id, location, properties FROM fs_table WHERE name = ?",
                               (name,)).fetchone()
        if row is None:
            raise TableError(f"no table named {name!r} in catalog {self.path}")
        return int(row[0]), row[1], parse_json(row[2], f"the properties of table {name!r}")

    def tables(self) -> list[tuple[int, str, str]]:
        """(table id, name, recorded location) of every table in the catalog."""
        with self._connect() as conn:
            return [(int(r[0]), r[1], r[2]) for r in
                    conn.execute("SELECT table_id, name, location FROM fs_table ORDER BY table_id")]

    def policy(self, table_id: int) -> CastPolicy:
        """The table's evolution policy (catalogs from before policies were recorded: onehouse)."""
        with self._connect() as conn:
            row = conn.execute("SELECT name, properties FROM fs_table WHERE table_id = ?", (table_id,)).fetchone()
        return policy_of(row[0], parse_json(row[1], f"the properties of table {row[0]!r}"))

    # -- reads ----------------------------------------------------------------------------------
    def load_metadata(self, table_id: int) -> TableMetadata:
        """The table at its head in one statement when its schemas and specs did not change since the last load
        in this process (the head row, properties and a fingerprint of both are the freshness check), else two
        (schemas and specs together). A commit that only adds files leaves the schemas and specs as they were."""
        with self._connect() as conn:
            row = conn.execute(
                "SELECT t.name, t.location, t.properties, s.snapshot_id, s.parent_snapshot_id, s.schema_id, "
                "s.committed_at, s.operation, s.summary, t.created_at, "
                "(SELECT MAX(c.schema_id) FROM fs_schema c WHERE c.table_id = t.table_id), "
                "(SELECT MAX(p.begin_snapshot) FROM fs_partition_spec p WHERE p.table_id = t.table_id) "
                "FROM fs_table t JOIN fs_snapshot s ON s.table_id = t.table_id "
                "WHERE t.table_id = ? ORDER BY s.snapshot_id DESC LIMIT 1", (table_id,)).fetchone()
            if row is None:
                raise TableError(f"catalog {self.path} has no table {table_id} (or it has no snapshot); it may have "
                                 "been dropped: open the table again")
            key, fresh = self._metadata_key(table_id), (row[3], row[6], row[2])
            # schemas are only ever added, with higher ids; a spec added or made current again begins at the new head
            layout = tuple(row[9:12])
            cached = _METADATA.get(key, fresh)
            if cached is not None:
                return cached
            known = _METADATA.get_layout(key, layout)
            if known is None:
                rows = conn.execute(
                    "SELECT 0, schema_id, schema_json, 0 FROM fs_schema WHERE table_id = ? UNION ALL "
                    "SELECT 1, spec_id, spec_json, begin_snapshot FROM fs_partition_spec WHERE table_id = ? "
                    "ORDER BY 1, 4, 2", (table_id, table_id)).fetchall()
                schemas = {int(r[1]): self._parse_schema(conn, table_id, int(r[1]), r[2]) for r in rows if r[0] == 0}
                specs = tuple(parse_specs([(r[1], r[3], r[2]) for r in rows if r[0] == 1]))
            else:
                schemas, specs = dict(known.schemas), known.spec_history
        name = row[0]
        properties = parse_json(row[2], f"the properties of table {name!r}")
        head = Snapshot(row[3], row[4], row[5], row[6], row[7], parse_json(row[8], f"the summary of snapshot {row[3]}"))
        metadata = TableMetadata(table_id, name, row[1], properties, policy_of(name, properties), schemas, specs,
                                 head, head)
        _METADATA.put(key, fresh, metadata, layout)
        return metadata

    def _metadata_key(self, table_id: int) -> tuple[str, str, int]:
        """The process-wide metadata cache's key of one table of this catalog."""
        return type(self).__name__, str(self.path), table_id

    def snapshots(self, table_id: int) -> list[Snapshot]:
        """Every kept snapshot of the table, oldest first."""
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT snapshot_id, parent_snapshot_id, schema_id, committed_at, operation, summary "
                "FROM fs_snapshot WHERE table_id = ? ORDER BY snapshot_id", (table_id,)).fetchall()
        return [Snapshot(r[0], r[1], r[2], r[3], r[4], parse_json(r[5], f"the summary of snapshot {r[0]}"))
                for r in rows]

    def head(self, table_id: int) -> Snapshot:
        """The newest snapshot, in one indexed row (a long history costs a commit nothing)."""
        head = self.snapshot(table_id, None)
        if head is None:
            raise CatalogFormatError(f"catalog {self.path}: table {table_id} has no snapshot; restore the catalog "
                                     "from a backup")
        return head

    def snapshot(self, table_id: int, snapshot_id: int | None) -> Snapshot | None:
        """One snapshot (None: the head) without reading the others; None when there is no such snapshot."""
        with self._connect() as conn:
            r = snapshot_row(conn, table_id, snapshot_id)
        return None if r is None else Snapshot(*r[:5], parse_json(r[5], f"the summary of snapshot {r[0]}"))

    def schemas(self, table_id: int) -> dict[int, Schema]:
        """Every schema version of the table by id.

        Raises:
            CatalogFormatError: a stored schema cannot be parsed (names the table and schema id).
        """
        with self._connect() as conn:
            return self._schemas(conn, table_id)

    def _schemas(self, conn: sqlite3.Connection, table_id: int) -> dict[int, Schema]:
        rows = conn.execute("SELECT schema_id, schema_json FROM fs_schema WHERE table_id = ? "
                            "ORDER BY schema_id", (table_id,)).fetchall()
        return {int(r[0]): self._parse_schema(conn, table_id, int(r[0]), r[1]) for r in rows}

    def _parse_schema(self, conn: sqlite3.Connection, table_id: int, schema_id: int, text: str) -> Schema:
        """A stored schema, or a CatalogFormatError naming the table and schema id."""
        try:
            return parsed_schema(text)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
            row = conn.execute("SELECT name FROM fs_table WHERE table_id = ?", (table_id,)).fetchone()
            raise CatalogFormatError(
                f"catalog {self.path}: schema {schema_id} of table {row[0] if row else table_id!r} is corrupt "
                f"({type(e).__name__}: {e}); restore the catalog from a backup"
            ) from None

    def specs(self, table_id: int) -> list[tuple[PartitionSpec, int]]:
        """(partition spec, snapshot that committed it) of every spec the table had, oldest first."""
        with self._connect() as conn:
            return load_specs(conn, table_id)

    def data_files(self, table_id: int, snapshot_id: int, with_stats: bool = True) -> list[DataFile]:
        """The data (and delete) files live at ``snapshot_id``, by file id; ``with_stats`` loads their column
        statistics too.
        """
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT file_id, path, schema_id, record_count, file_size, content, "
                "COALESCE(sequence, begin_snapshot), bucket, spec_id, partition_values FROM fs_data_file "
                "WHERE table_id = ? AND begin_snapshot <= ? AND (end_snapshot IS NULL OR end_snapshot > ?) "
                "ORDER BY file_id", (table_id, snapshot_id, snapshot_id)).fetchall()
            stats: dict[int, dict[int, tuple[int, int, Any, Any]]] = {}
            if with_stats and rows:
                for fid, cid, vc, nc, lo, hi in conn.execute(
                    "SELECT s.file_id, column_id, value_count, null_count, min_value, max_value "
                    "FROM fs_file_column_stats s JOIN fs_data_file f ON f.file_id = s.file_id "
                    "WHERE f.table_id = ?", (table_id,)):
                    stats.setdefault(fid, {})[cid] = (vc, nc, load_value(lo), load_value(hi))
        with paused_gc():  # 100,000 files are 100,000 objects, none in a cycle (gc_pause)
            return [DataFile(r[1], r[2], r[3], r[4], stats.get(r[0], {}), r[0], r[5], r[6], r[7], r[8],
                             decode_partition(r[9])) for r in rows]

    def live_files(self, table_id: int, snapshot_id: int, with_vectors: bool = False
                   ) -> tuple[list[DataFile], dict[int, tuple[int, str]]]:
        """The files live at ``snapshot_id`` without statistics, and (``with_vectors``: a keyed table) file id ->
        (cardinality, encoded positions) of each file's deletion vector at the snapshot, in one statement."""
        with self._connect() as conn:
            return live_files(conn, table_id, snapshot_id, with_vectors)

    def file_stats(self, file_ids: Sequence[int]) -> dict[int, dict[int, tuple[int, int, Any, Any]]]:
        """Statistics of some files only (a scan loads them after partition pruning)."""
        with self._connect() as conn:
            return load_file_stats(conn, file_ids)

    def all_data_files(self, table_id: int) -> list[tuple[str, int]]:
        """(path, schema id) of every data file any snapshot references (delete files hold only key
        columns, whose types never change, so value checks skip them)."""
        with self._connect() as conn:
            rows = conn.execute("SELECT path, schema_id FROM fs_data_file WHERE table_id = ? AND content = 'data' "
                                "ORDER BY file_id", (table_id,)).fetchall()
        return [(r[0], int(r[1])) for r in rows]

    def all_paths(self, table_id: int) -> set[str]:
        """Every data and quarantine file any snapshot references (vacuum keeps these)."""
        with self._connect() as conn:
            data = conn.execute("SELECT path FROM fs_data_file WHERE table_id = ?", (table_id,)).fetchall()
            quar = conn.execute("SELECT path FROM fs_quarantine_file WHERE table_id = ?",
                                (table_id,)).fetchall()
        return {r[0] for r in data + quar}

    def quarantine_files(self, table_id: int) -> list[tuple[str, int]]:
        """(path, snapshot id that set the rows aside) of every quarantine file, oldest first."""
        with self._connect() as conn:
            rows = conn.execute("SELECT path, snapshot_id FROM fs_quarantine_file WHERE table_id = ? "
                                "ORDER BY file_id", (table_id,)).fetchall()
        return [(r[0], int(r[1])) for r in rows]

    def run_read(self, fn: Any) -> Any:
        """``fn(connection)`` on a connection of this catalog (read helpers kept in their own modules)."""
        with self._connect() as conn:
            return fn(conn)

    # -- commits --------------------------------------------------------------------------------
    def on_commit(self, table_id: int, hook: Callable[[], None]) -> None:
        """Run ``hook`` after every commit of ``table_id`` through this catalog while the table publishes
        (``PUBLISH_PROPERTY``): the catch-up of its published metadata, which never raises."""
        if self._after_commit is None:
            self._after_commit = {}
        self._after_commit[table_id] = hook

    def set_property(self, table_id: int, key: str, value: str | None) -> dict[str, str]:
        """Set (None: remove) one table property outside any snapshot; returns the properties."""
        with self._transaction() as conn:
            name, text = conn.execute("SELECT name, properties FROM fs_table WHERE table_id = ?",
                                      (table_id,)).fetchone()
            props = parse_json(text, f"the properties of table {name!r}")
            if value is None:
                props.pop(key, None)
            else:
                props[key] = value
            conn.execute("UPDATE fs_table SET properties = ? WHERE table_id = ?", (json.dumps(props), table_id))
        return props

    def commit(self, table_id: int, base_snapshot_id: int, requirements: Sequence[TableRequirement] = (),
               updates: Sequence[TableUpdate] = (), *, operation: str,
               summary: dict[str, Any] | None = None) -> Snapshot:
        """Commit ``updates`` atomically on top of ``base_snapshot_id`` when ``requirements`` hold.

        One transaction: the head is read once, every requirement and update checks itself against what
        committed since the base (its conflict rule, see ``updates``), then the snapshot row and each
        update's rows are written. Raises :class:`CommitConflictError` (reload and retry),
        :class:`AlreadyCommittedError` (a stream mark recorded before) or the error of a failed check;
        nothing is committed then.
        """
        steps = sorted([*requirements, *updates], key=lambda s: s.CHECK_ORDER)
        with self._transaction() as conn:
            state = begin_commit(conn, table_id, base_snapshot_id, operation, updates,
                                 lambda: self._schemas(conn, table_id))
            for step in steps:
                step.check(state)
            snapshot = insert_snapshot(conn, table_id, state.new_id, state.head_id, state.schema_id, operation,
                                       summary or {})
            for update in sorted(updates, key=lambda u: u.APPLY_ORDER):
                update.apply(state)
        if not state.changes_metadata:  # the metadata this commit was based on, with its new head
            key = self._metadata_key(table_id)
            before = _METADATA.get(key, state.head_fresh)
            if before is not None:  # schemas and specs unchanged: the layout it was loaded at still holds
                _METADATA.put(key, (snapshot.snapshot_id, snapshot.committed_at, state.head_fresh[2]),
                              replace(before, head=snapshot, snapshot=snapshot), _METADATA.layout(key))
        if state.publishing and self._after_commit and table_id in self._after_commit:
            self._after_commit[table_id]()  # publishing follows the commit (a catch-up that never raises)
        return snapshot

    def expire(self, table_id: int, snapshot_ids: Sequence[int]) -> list[str]:
        """Remove snapshot rows and the rows of files no remaining snapshot references (one transaction);
        returns those files' paths. The head is never removed."""
        with self._transaction() as conn:
            paths = expire_rows(conn, table_id, snapshot_ids)
            props = json.loads(conn.execute("SELECT properties FROM fs_table WHERE table_id = ?",
                                            (table_id,)).fetchone()[0] or "{}")
        if props.get(PUBLISH_PROPERTY) and self._after_commit and table_id in self._after_commit:
            self._after_commit[table_id]()  # the published snapshots expire too
        return paths
