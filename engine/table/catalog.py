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
from pathlib import Path
from typing import Any

from fieldshift.errors import CatalogFormatError, CommitConflictError, HistoryUnreadableError, TableError
from fieldshift.gc_pause import paused_gc
from fieldshift.policy import CastPolicy
from fieldshift.schema import Schema
from fieldshift.table.catalog_reads import live_files, load_file_stats, snapshot_row
from fieldshift.table.catalog_sql import (
    DEFAULT_POLICY,
    FORMAT_VERSION,
    POLICY_PROPERTY,
    PUBLISH_PROPERTY,
    end_files,
    expire_rows,
    load_value,
    locations_overlap,
    parse_json,
    policy_of,
    upgrade,
)
from fieldshift.table.catalog_writes import insert_files, insert_schema, insert_snapshot, now
from fieldshift.table.deletion_vectors import VectorCommit, commit_vectors
from fieldshift.table.metadata import MetadataCache, TableMetadata
from fieldshift.table.metadata_cache import parsed_schema
from fieldshift.table.partition_evolution import check_schema_change
from fieldshift.table.partitioning import PartitionSpec
from fieldshift.table.precombine_order import check_precombine_change
from fieldshift.table.publish.iceberg_types import check_publishable_change
from fieldshift.table.publish.iceberg_values import check_partitions
from fieldshift.table.readability import changed_fields, check_readable, checked_fields
from fieldshift.table.records import DataFile, Snapshot
from fieldshift.table.spec_catalog import decode_partition, insert_spec, load_specs, parse_specs
from fieldshift.table.stream_marks import StreamMark, check_unrecorded, record

__all__ = ["DEFAULT_POLICY", "FORMAT_VERSION", "POLICY_PROPERTY", "DataFile", "Snapshot", "SqliteCatalog",
           "open_catalog"]

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
            key, fresh = (type(self).__name__, str(self.path), table_id), (row[3], row[6], row[2])
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

    def commit(
        self,
        table_id: int,
        base_snapshot_id: int,
        *,
        operation: str,
        schema: Schema | None = None,
        write_schema_id: int | None = None,
        add_files: Sequence[DataFile] = (),
        quarantine: Sequence[tuple[str, int]] = (),
        replace_all: bool = False,
        summary: dict[str, Any] | None = None,
        compatible: Any = None,
        policy: CastPolicy | None = None,
        remove_files: Sequence[int] = (),
        exclusive: bool = False,
        spec: PartitionSpec | None = None,
        stream: StreamMark | None = None,
        vectors: VectorCommit | None = None,
        present: Callable[[], None] | None = None,
    ) -> Snapshot:
        """Commit atomically on top of ``base_snapshot_id``.

        If another writer committed first: a schema change (``schema``), a policy change or an
        overwrite conflicts; an append is replayed on the new head when its files still read as the
        head's schema under the table's policy (``compatible(head_schema)`` may check more).
        Inside the same transaction, a new schema or ``policy`` is checked against every data file
        any snapshot references (:func:`check_readable`), so concurrent writers cannot get past it.
        ``remove_files`` (file ids) end in this snapshot; one another commit already ended conflicts
        (a concurrent compaction). ``exclusive`` conflicts on any concurrent commit (an insert-only
        append to a keyed table checked its keys against ``base_snapshot_id``).
        ``stream`` (a micro-batch id, captured source files) is recorded in the same transaction; one
        recorded before raises :class:`AlreadyCommittedError` and nothing is committed.
        ``vectors``: deletion vectors and resolved files of a keyed table (``deletion_vectors``).
        ``present`` checks, under the commit lock, that the new files still exist (a concurrent vacuum).
        """
        with self._transaction() as conn:
            if present is not None:
                present()
            if stream is not None:
                check_unrecorded(conn, table_id, stream)
            head_id, head_schema_id = conn.execute(
                "SELECT snapshot_id, schema_id FROM fs_snapshot WHERE table_id = ? "
                "ORDER BY snapshot_id DESC LIMIT 1", (table_id,)).fetchone()
            name, props = conn.execute("SELECT name, properties FROM fs_table WHERE table_id = ?",
                                       (table_id,)).fetchone()
            props = parse_json(props, f"the properties of table {name!r}")
            table_policy = policy or policy_of(name, props)
            if head_id != base_snapshot_id:
                if schema is not None or replace_all or policy is not None or exclusive or spec is not None:
                    raise CommitConflictError(
                        f"another writer committed snapshot {head_id} after snapshot {base_snapshot_id}, "
                        f"on which this {operation} was based; reload the table and retry"
                    )
                if write_schema_id is not None and write_schema_id != head_schema_id:
                    self._check_replay(conn, table_id, name, write_schema_id, head_schema_id, table_policy,
                                       compatible)
            new_id = head_id + 1
            schema_id = schema.schema_id if schema is not None else head_schema_id
            if schema is not None:  # a dropped or retyped partition source or precombine column is refused
                head_schema = self._schemas(conn, table_id)[head_schema_id]
                check_schema_change(load_specs(conn, table_id)[-1][0], head_schema, schema, table=name)
                check_precombine_change(props, head_schema, schema, table=name)
            if props.get(PUBLISH_PROPERTY):  # what Iceberg readers could not read is refused before it commits
                if schema is not None:
                    check_publishable_change(schema, self._live_schemas(conn, table_id, add_files), name)
                specs = {s.spec_id: s for s, _ in load_specs(conn, table_id)} if add_files else {}
                if any(s.fields for s in specs.values()):
                    schemas = {**self._schemas(conn, table_id), **({schema.schema_id: schema} if schema else {})}
                    check_partitions(add_files, specs, schemas, name)
            if schema is not None or policy is not None:  # plans every schema pair (cycle-free objects)
                with paused_gc():
                    self._check_history(conn, table_id, name, schema, head_schema_id, add_files, table_policy,
                                        operation, policy_changed=policy is not None)
            if policy is not None:
                props[POLICY_PROPERTY] = policy.option_name
                conn.execute("UPDATE fs_table SET properties = ? WHERE table_id = ?", (json.dumps(props), table_id))
            end_files(conn, table_id, remove_files, new_id)
            if replace_all:
                conn.execute("UPDATE fs_data_file SET end_snapshot = ? WHERE table_id = ? AND "
                             "end_snapshot IS NULL", (new_id, table_id))
            insert_snapshot(conn, table_id, new_id, head_id, schema_id, operation, summary or {})
            if schema is not None:
                insert_schema(conn, table_id, schema, new_id)
            if spec is not None:
                insert_spec(conn, table_id, spec, new_id)
            insert_files(conn, table_id, new_id, add_files)
            conn.executemany(
                "INSERT INTO fs_quarantine_file (table_id, path, snapshot_id, record_count) VALUES (?, ?, ?, ?)",
                [(table_id, path, new_id, n) for path, n in quarantine])
            if stream is not None:
                record(conn, table_id, stream, new_id)
            if vectors is not None:
                commit_vectors(conn, table_id, base_snapshot_id, new_id, vectors)
        if props.get(PUBLISH_PROPERTY) and self._after_commit and table_id in self._after_commit:
            self._after_commit[table_id]()  # publishing follows the commit (a catch-up that never raises)
        return Snapshot(new_id, head_id, schema_id, now(), operation, summary or {})

    def _live_schemas(self, conn: sqlite3.Connection, table_id: int, add_files: Sequence[DataFile]) -> list[Schema]:
        """The schemas of the data files live at the head, and of those being added."""
        ids = {int(r[0]) for r in conn.execute("SELECT DISTINCT schema_id FROM fs_data_file WHERE table_id = ? "
                                                "AND end_snapshot IS NULL AND content = 'data'", (table_id,))}
        ids |= {f.schema_id for f in add_files if f.content == "data"}
        schemas = self._schemas(conn, table_id)
        return [schemas[i] for i in sorted(ids) if i in schemas]

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

    def _check_replay(self, conn: sqlite3.Connection, table_id: int, name: str, write_schema_id: int,
                      head_schema_id: int, policy: CastPolicy, compatible: Any) -> None:
        """Files written for an older head must read as the new head's schema, or the writer retries.

        The concurrent schema change checked the values of the files committed before it, not of these:
        when reading them into the new head takes a cast that checks values (binary -> string needs
        UTF-8), the writer retries too, and its rows are then cast (and checked) on their way in."""
        schemas = self._schemas(conn, table_id)
        try:
            check_readable({(write_schema_id, head_schema_id): 1}, schemas, policy, table=name, change="rows")
            if compatible is not None:
                compatible(schemas[head_schema_id])
        except HistoryUnreadableError as e:
            raise CommitConflictError(f"the schema changed concurrently and the new rows no longer fit: {e}") \
                from None
        checked = checked_fields(schemas[write_schema_id], schemas[head_schema_id], policy)
        if checked:
            names = ", ".join(repr(schemas[head_schema_id].field(i).name) for i in checked)
            raise CommitConflictError(f"the schema changed concurrently and the new rows' columns {names} would "
                                      "meet a cast that checks values; retry on the new schema")

    def _check_history(self, conn: sqlite3.Connection, table_id: int, name: str, schema: Schema | None,
                       head_schema_id: int, add_files: Sequence[DataFile], policy: CastPolicy,
                       operation: str, *, policy_changed: bool = False) -> None:
        """Every file of every snapshot reads as the new head schema (and, for a policy change, as each
        snapshot's own schema) under ``policy``.

        A schema change under an unchanged policy plans the files already committed only for the fields
        it changed: every one of them was proved to read as the previous head schema."""
        schemas = self._schemas(conn, table_id)
        target = head_schema_id
        if schema is not None:
            schemas[schema.schema_id] = schema
            target = schema.schema_id
        pairs: dict[tuple[int, int], int] = {}
        for sid, count in conn.execute("SELECT schema_id, COUNT(*) FROM fs_data_file WHERE table_id = ? "
                                       "GROUP BY schema_id", (table_id,)):
            pairs[(int(sid), target)] = int(count)
        for f in add_files:
            pairs[(f.schema_id, target)] = pairs.get((f.schema_id, target), 0) + 1
        if schema is None:  # a policy change: time travel into each snapshot's schema must keep working
            for fsid, ssid, count in conn.execute(
                    "SELECT f.schema_id, s.schema_id, COUNT(DISTINCT f.file_id) FROM fs_data_file f "
                    "JOIN fs_snapshot s ON s.table_id = f.table_id AND s.snapshot_id >= f.begin_snapshot "
                    "AND (f.end_snapshot IS NULL OR s.snapshot_id < f.end_snapshot) WHERE f.table_id = ? "
                    "GROUP BY f.schema_id, s.schema_id", (table_id,)):
                pairs[(int(fsid), int(ssid))] = int(count)
        only = None
        if schema is not None and not policy_changed and head_schema_id in schemas:
            changed = changed_fields(schemas[head_schema_id], schema)
            added = {f.schema_id for f in add_files}  # new files were never checked: planned whole
            only = {pair: changed for pair in pairs if pair[0] not in added}
        if schema is None:
            change = f"policy {policy.option_name!r}"
        else:
            change = f"schema {schema.schema_id}" + ("" if operation == "schema" else f" (evolved by an {operation})")
        check_readable(pairs, schemas, policy, table=name, change=change, new_policy=schema is None, only=only)


def open_catalog(uri_or_path: str | Path) -> SqliteCatalog:
    """``sqlite:///abs/path.db``, ``sqlite://rel/path.db``, a plain path, or a ``postgresql://`` URI."""
    text = str(uri_or_path)
    if text.startswith(("postgresql://", "postgres://")):
        from fieldshift.table.catalog_pg import PostgresCatalog

        return PostgresCatalog(text)
    if text.startswith("sqlite://"):
        text = text[len("sqlite://"):]
    elif "://" in text:
        raise TableError(f"unsupported catalog URI {uri_or_path!r}; use sqlite:///path.db, a plain path "
                         "or postgresql://user@host:port/database")
    return SqliteCatalog(text)
