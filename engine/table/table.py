"""`Table`: the embedded default store — a SQLite catalog plus immutable Parquet files tagged with schema ids."""

from __future__ import annotations

import datetime as dt
import os
import re
import time
import weakref
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

import pyarrow as pa

from fieldshift.errors import (
    InvalidOptionError,
    NotKeyedError,
    SchemaEvolutionError,
    TableError,
)
from fieldshift.options import OnIncompatible
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.schema.schema_update import SchemaUpdate
from fieldshift.table.catalog.catalog import Catalog
from fieldshift.table.catalog.sqlite import POLICY_PROPERTY, PUBLISH_PROPERTY, Snapshot, SqliteCatalog
from fieldshift.table.catalog.stream_marks import StreamMark
from fieldshift.table.catalog.uri import open_catalog
from fieldshift.table.commits import Attempt, with_retries
from fieldshift.table.create import (
    CATALOG_FILE,
    TABLE_MARKER,
    create_own_catalog,
    default_table_name,
    mark_table_directory,
    open_by_name,
    own_table_name,
    read_table_marker,
    refuse_nested,
    remove_abandoned_catalogs,
    shared_table_name,
)
from fieldshift.table.create import resolve_policy as _resolve_policy
from fieldshift.table.evolution.on_write import prepare_append
from fieldshift.table.evolution.readability import changed_fields
from fieldshift.table.evolution.value_check import check_values
from fieldshift.table.files.data_files import TMP_SUFFIX
from fieldshift.table.files.object_store import create_on_object_store, open_on_object_store
from fieldshift.table.files.storage import TableStorage, location_key, open_storage
from fieldshift.table.files.write_layout import write_layout
from fieldshift.table.handle import TableIO
from fieldshift.table.keyed.keys import KeySpec, check_key_change, key_properties
from fieldshift.table.maintenance import CompactResult, ExpireResult, age_margin, compact, expire_snapshots
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.partitions.partitioning import PartitionSpec, build_spec
from fieldshift.table.partitions.spec_update import UpdateSpec
from fieldshift.table.publish.iceberg_publish import (
    PublishResult,
    catch_up,
    check_format,
    check_new_table,
    publish_iceberg,
)
from fieldshift.table.publish.iceberg_register import REGISTER_NAME_PROPERTY, REGISTER_URI_PROPERTY, catalog_name
from fieldshift.table.publish.iceberg_vacuum import published_data_paths, vacuum_published
from fieldshift.table.scan.table_scan import Scan
from fieldshift.table.scan.time_travel import snapshot_at
from fieldshift.table.updates import SetPolicy, SetSchema, SetSpec
from fieldshift.table.write.merge_builder import MergeBuilder, MergeResult
from fieldshift.table.write.merge_commit import fill_partial, run_merge
from fieldshift.table.write.quarantine import quarantine_groups, quarantine_table
from fieldshift.table.write.row_ops import UpdateResult, delete_where, update_where
from fieldshift.table.write.write_commit import DeleteResult, WriteOperation, WriteRequest, delete_rows, write_rows

__all__ = ["CATALOG_FILE", "AppendResult", "CompactResult", "DeleteResult", "ExpireResult", "MergeBuilder",
           "MergeResult", "Table", "UpdateResult"]

MAX_FILE_ROWS = 1_048_576


@dataclass(frozen=True)
class AppendResult:
    """What one append did."""

    rows_written: int
    rows_quarantined: int
    schema_id: int
    schema_evolved: bool
    snapshot_id: int
    changes: tuple[str, ...] = ()
    rows_inserted: int | None = None
    """Rows of new keys (an append: every row written). None where the path cannot know it cheaply: an upsert
    whose buckets merge on read (after Spark's writes, or its own last retry), an overwrite."""
    rows_updated: int | None = None
    """Live rows a new version replaced (an upsert; 0 for an append); None as ``rows_inserted``."""
    rows_deleted: int | None = 0
    """Rows removed (0: appends and upserts remove none; None: an overwrite's are not counted)."""


@dataclass(frozen=True)
class _CreateOptions:
    """``Table.create``'s keyword arguments, handed to the creation itself as one value."""

    identifier_fields: Sequence[str]
    properties: dict[str, str]
    catalog: str | None
    name: str | None
    policy: CastPolicy | str | None
    precombine: str | None
    buckets: int | None
    partition_by: Sequence[Any] | PartitionSpec
    storage_options: dict[str, Any] | None
    filesystem: Any


def _as_table(data: Any) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    if hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data).read_all()
    if isinstance(data, list):  # every key of every record (from_pylist would take the first record's)
        keys = list(dict.fromkeys(k for record in data for k in record))
        return pa.Table.from_pydict({k: [record.get(k) for record in data] for k in keys})
    if isinstance(data, dict):
        return pa.Table.from_pydict(data)
    raise TypeError(f"append() takes Arrow data (Table, RecordBatch, reader, or __arrow_c_stream__), "
                    f"a list of dicts or a dict of lists; got {type(data).__name__}")


# The names write_data_file / write_side_file give (and their temporary names): vacuum deletes nothing else.
_OWN_FILE = re.compile(rf"\.?[0-9a-f]{{32}}\.parquet(?:{re.escape(TMP_SUFFIX)})?")


RESERVED_PREFIX = "_fieldshift_"  # quarantine listings add columns of these names


def _refuse_reserved(schema: Schema) -> None:
    taken = [n for n in schema.names if n.startswith(RESERVED_PREFIX)]
    if taken:
        raise SchemaEvolutionError(f"column name(s) {taken} start with {RESERVED_PREFIX!r}, which fieldshift "
                                   "reserves for the columns it adds (quarantine reasons, sources); rename them")


def _publish_hook(catalog: Catalog, table_id: int, name: str, storage: TableStorage) -> Callable[[], None]:
    """The catch-up of the published metadata after each commit, holding the catalog weakly: a hook holding it
    (or the table) made a cycle, so a dropped Table kept its catalog's connections open until a full collection."""
    ref = weakref.ref(catalog)

    def hook() -> None:
        held = ref()
        if held is not None:  # it runs from the catalog's own commit, so the catalog is there
            catch_up(held, table_id, name, storage)
    return hook


class Table:
    """A fieldshift table: schema history forever, each data file tagged with its schema id."""

    def __init__(self, catalog: SqliteCatalog, table_id: int, name: str, location: Path | str,
                 storage: TableStorage | None = None) -> None:
        self.catalog = catalog
        self.table_id = table_id
        self.name = name
        self.storage = storage or open_storage(location)  # every data file goes through it
        self.location = self.storage.location  # a Path, or the URI of an object-store location
        self.io = TableIO(catalog, self.storage, table_id)
        catalog.on_commit(table_id, _publish_hook(catalog, table_id, name, self.storage))

    # -- creating and opening -------------------------------------------------------------------
    @classmethod
    def create(cls, location: str | os.PathLike[str], schema: Schema | pa.Schema, *,
               identifier_fields: Sequence[str] = (), properties: dict[str, str] | None = None,
               catalog: str | None = None, name: str | None = None,
               policy: CastPolicy | str | None = None, precombine: str | None = None,
               buckets: int | None = None, partition_by: Sequence[Any] | PartitionSpec = (),
               storage_options: dict[str, Any] | None = None, filesystem: Any = None,
               publish: str | None = None) -> Table:
        """Create a table at ``location`` (its own SQLite catalog unless ``catalog`` names a shared one).

        ``policy`` (default ``CastPolicy.onehouse()``) is the table's evolution policy: appends,
        scans, the CLI and Spark use it unless told otherwise, and no commit may leave a data file
        unreadable under it. Creating is atomic: a crash leaves no table or a whole one.

        ``identifier_fields`` make the table *keyed* (merge-on-read, see ``upsert``): required top-level
        key columns, ``precombine`` the column ordering versions of a row (the highest wins, the latest
        commit on ties), ``buckets`` the fixed number of hidden key buckets (default 4).
        ``partition_by`` takes Iceberg's Spark SQL terms (``["days(ts)", "bucket(16, id)", "region"]``).
        ``location`` may be a URI ``pyarrow.fs`` knows (``s3://bucket/path``; ``catalog`` is then required),
        opened with ``storage_options`` / ``filesystem`` or the usual environment (see ``storage``).
        In a shared ``catalog`` the table is named ``name``, by default the last component of its location
        (``/lake/events`` is ``events``), and ``Table.open(catalog=..., name=...)`` finds it by that name.
        ``publish="iceberg"`` publishes the table as an Iceberg table after every commit (see ``set_publish``).
        """
        if publish:  # refused before anything is created
            check_new_table(schema if isinstance(schema, Schema) else Schema.from_arrow(schema, assign_ids=True),
                            identifier_fields, str(location))
        table = cls._create(location, schema, _CreateOptions(
            identifier_fields, {**(properties or {}), **check_format(publish)}, catalog, name, policy, precombine,
            buckets, partition_by, storage_options, filesystem))
        if publish:
            table.publish()
        return table

    @classmethod
    def _create(cls, location: str | os.PathLike[str], schema: Schema | pa.Schema, options: _CreateOptions) -> Table:
        identifier_fields, properties, catalog, name = (options.identifier_fields, options.properties, options.catalog,
                                                        options.name)
        policy, precombine, buckets, partition_by = options.policy, options.precombine, options.buckets, \
            options.partition_by
        store = open_storage(location, options.storage_options, options.filesystem)
        if isinstance(schema, pa.Schema):
            schema = Schema.from_arrow(schema, assign_ids=True)
        if identifier_fields:
            schema = Schema(schema.fields, schema_id=schema.schema_id,
                            identifier_field_ids=[schema.find(p).id for p in identifier_fields],
                            highest_field_id=schema.highest_field_id, doc=schema.doc)
        _refuse_reserved(schema)
        props = {**(properties or {}), **key_properties(schema, identifier_fields, precombine, buckets)}
        write_layout(props)  # a bad layout property is refused before anything is created
        spec = partition_by if isinstance(partition_by, PartitionSpec) else build_spec(schema, list(partition_by))
        table_policy = _resolve_policy(policy, props)
        props.pop(POLICY_PROPERTY, None)
        if store.local_path is None:
            cat, table_id, name = create_on_object_store(store, catalog, name, schema, props, table_policy, spec)
            return cls(cat, table_id, name, store.location, store)
        loc = store.local_path
        refuse_nested(loc, shared=bool(catalog))
        if catalog:
            if (loc / CATALOG_FILE).exists():
                raise TableError(f"a table with its own catalog already exists at {loc}; "
                                 "pick another location for a table of a shared catalog")
            cat = open_catalog(catalog)
            cat.initialize()
            name = name or default_table_name(loc)
            loc.mkdir(parents=True, exist_ok=True)
            table_id = cat.create_table(name, str(loc), schema, props, table_policy, spec)
            mark_table_directory(loc, catalog, name)
        else:
            name = name or str(loc)
            cat, table_id = create_own_catalog(loc, name, schema, props, table_policy, spec)
        return cls(cat, table_id, name, loc)

    @classmethod
    def open(cls, location: str | os.PathLike[str] | None = None, *, catalog: str | None = None,
             name: str | None = None, storage_options: dict[str, Any] | None = None,
             filesystem: Any = None) -> Table:
        """Open a table; one with its own catalog opens from wherever its directory now is.

        A table of a shared ``catalog`` opens by ``name`` alone (``Table.open(catalog=uri, name="events")``)
        or by its location (the table recorded there, whatever its name).
        """
        if location is None:  # a shared catalog's table by its name: the catalog records where it lives
            cat, table_id, stored_location, _ = open_by_name(catalog, name)
            stored = open_storage(stored_location, storage_options, filesystem)
            return cls(cat, table_id, name or "", stored.location, stored)
        store = open_storage(location, storage_options, filesystem)
        if store.local_path is None:
            cat, table_id, name, _ = open_on_object_store(store, catalog, name)
            return cls(cat, table_id, name, store.location, store)
        loc = store.local_path
        if catalog is None and not (loc / CATALOG_FILE).exists() and (loc / TABLE_MARKER).is_file():
            catalog, name = read_table_marker(loc, name)  # a shared catalog's table opens by its directory too
        cat = open_catalog(catalog) if catalog else SqliteCatalog(loc / CATALOG_FILE)
        if not cat.exists():
            raise TableError(f"no fieldshift table at {loc} (no {cat.path.name}); create it with Table.create()")
        cat.check_version()
        if catalog:
            name = shared_table_name(cat, loc, name)
            table_id, stored_location, _ = cat.table_id(name)
            stored = open_storage(stored_location, storage_options, filesystem)
            return cls(cat, table_id, name, stored.location, stored)
        name = name or own_table_name(cat, loc)
        table_id = cat.table_id(name)[0]
        return cls(cat, table_id, name, loc)  # the directory, not the recorded hint

    def close(self) -> None:
        """Close the catalog connections this handle holds (a SQLite catalog: each thread's read connection;
        they are closed too when the handle is collected). The handle stays usable: a later call opens again."""
        self.catalog.close()

    def __enter__(self) -> Table:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def metadata(self) -> TableMetadata:
        """The table as of its newest snapshot, read fresh (another process may have committed): schemas,
        specs, policy, properties. One value per operation: everything it decides comes from one moment."""
        return self.io.metadata()

    @property
    def properties(self) -> dict[str, str]:
        """The table's properties as committed (key, precombine, policy and publishing settings among them)."""
        return dict(self.metadata().properties)

    # -- the table's policy ---------------------------------------------------------------------
    @property
    def policy(self) -> CastPolicy:
        """The table's evolution policy, as committed (read fresh: another process may change it)."""
        return self.metadata().policy

    def set_policy(self, policy: CastPolicy | str) -> Snapshot:
        """Change the table's policy in a commit of its own (operation ``policy``, no schema change).

        Refused (:class:`HistoryUnreadableError`) if any data file of any snapshot could no longer
        be read under the new policy, as the current schema or as its snapshot's schema.
        """
        new = CastPolicy.from_name(policy) if isinstance(policy, str) else policy
        metadata = self.metadata()
        if new == metadata.policy:
            return metadata.head  # nothing changes: no snapshot
        self._check_values(metadata, metadata.current_schema, new, f"policy {new.option_name!r}")
        return self.catalog.commit(self.table_id, metadata.head.snapshot_id, [], [SetPolicy(new)],
                                   operation="policy", summary={"policy": new.option_name})

    def _check_values(self, metadata: TableMetadata, read_schema: Schema, policy: CastPolicy, change: str,
                      only: Collection[int] | None = None) -> None:
        """Refuse a commit when a value of a committed file would fail a checked cast into ``read_schema``."""
        check_values(self.storage, lambda: self.catalog.all_data_files(self.table_id), dict(metadata.schemas),
                     read_schema, policy, table=self.name, change=change, only=only)

    # -- schema and history ---------------------------------------------------------------------
    @property
    def schema(self) -> Schema:
        """The current schema (the newest snapshot's), read fresh from the catalog."""
        return self.metadata().current_schema

    def schemas(self) -> list[Schema]:
        """Every schema version the table has had, oldest first (files keep the one they were written with)."""
        return list(self.schemas_by_id().values())

    def schemas_by_id(self) -> dict[int, Schema]:
        """Every schema version by its ``schema_id``."""
        return dict(self.metadata().schemas)

    def history(self) -> list[Snapshot]:
        """Every snapshot still kept (``expire_snapshots`` forgets old ones), oldest first."""
        return self.catalog.snapshots(self.table_id)

    @property
    def current_snapshot(self) -> Snapshot:
        """The newest snapshot: what a scan reads unless given ``snapshot_id``."""
        return self.metadata().head

    # -- partitioning ---------------------------------------------------------------------------
    @property
    def spec(self) -> PartitionSpec:
        """The current partition spec (new files are written with it)."""
        return self.metadata().spec

    def specs(self) -> list[PartitionSpec]:
        """Every partition spec the table has had, in the order they were last made current (the last is
        current; an older spec made current again keeps its id); old files keep theirs."""
        return self.metadata().specs

    def update_spec(self) -> UpdateSpec:
        """A partition spec builder; ``.commit()`` records a new spec in a commit of its own."""
        metadata = self.metadata()

        def commit(spec: PartitionSpec, changes: list[str]) -> None:
            self.catalog.commit(self.table_id, metadata.head.snapshot_id, [], [SetSpec(spec)],
                                operation="partition-spec", summary={"spec_id": spec.spec_id, "changes": changes})

        return UpdateSpec(metadata.current_schema, metadata.spec, metadata.specs, commit)

    def update_schema(self, *, policy: CastPolicy | None = None) -> SchemaUpdate:
        """A schema builder; ``.commit()`` records the new version atomically.

        Type changes are allowed as ``policy`` says (default: the table's policy); the commit is
        refused unless every data file stays readable under the table's policy. A commit that
        changes nothing records nothing and returns the current schema.
        """
        metadata = self.metadata()
        base = metadata.current_schema

        def commit(new: Schema) -> Schema:
            if new.fields == base.fields and new.identifier_field_ids == base.identifier_field_ids:
                return base  # no schema version, no snapshot for a no-op
            check_key_change(metadata.keys, new)
            _refuse_reserved(new)
            self._check_values(metadata, new, metadata.policy, f"schema {new.schema_id}", changed_fields(base, new))
            self.catalog.commit(self.table_id, metadata.head.snapshot_id, [], [SetSchema(new)], operation="schema",
                                summary={"changes": builder.changes})
            return new

        builder = SchemaUpdate(base, policy=policy or metadata.policy, on_apply=commit, table_policy=metadata.policy)
        return builder

    # -- writing --------------------------------------------------------------------------------
    def append(self, data: Any, *, evolve: bool = True, on_incompatible: OnIncompatible = "fail",
               policy: CastPolicy | None = None, mark: StreamMark | None = None) -> AppendResult:
        """Append rows all-or-nothing, evolving the table schema on write (see ``on_write``).

        ``policy`` (default: the table's) decides which widenings evolution may make; a widening is
        committed only if every data file still reads under the table's policy. ``mark`` (a stream's
        micro-batch, captured files) is recorded in the same commit: one recorded before raises
        ``AlreadyCommittedError`` and writes nothing (exactly once, whoever retries).
        """
        return self._write(_as_table(data), evolve, on_incompatible, policy, "append", mark)

    @property
    def keys(self) -> KeySpec | None:
        """The primary key of a keyed table (None: unkeyed, append-only)."""
        return self.metadata().keys

    def upsert(self, data: Any, *, evolve: bool = True, on_incompatible: OnIncompatible = "fail",
               policy: CastPolicy | None = None, mark: StreamMark | None = None,
               partial: bool = False) -> AppendResult:
        """Insert or replace rows by key (a keyed table only), with on-write evolution as ``append``.

        Of rows of one key the highest precombine value wins (the later row or commit on ties); a row that
        loses is not written (``rows_written``), the rows it replaces go to deletion vectors (``key_lookup``).
        ``rows_inserted`` / ``rows_updated`` count new keys and replaced rows (None when some bucket merges on
        read, e.g. after a Spark write, and the count would need reading it). ``mark``: as ``append``'s.

        ``partial=True``: a partial-column upsert (Paimon's ``partial-update``): the columns the data does not
        carry keep the current row's values (a new key: the column's write default, else null); a null in a
        carried column writes null.
        """
        return self._write(_as_table(data), evolve, on_incompatible, policy, "upsert", mark, partial=partial)

    def delete(self, keys: Any = None, *, filter: Any = None) -> DeleteResult:
        """Remove rows by ``filter`` (any table; evaluated in the current schema, on a keyed table on the
        merged rows) or, on a keyed table, by key (``keys``: Arrow data or a dict of the key columns, or plain
        values of a one-column key); a later upsert of a key brings it back. A delete matching nothing
        commits nothing; ``rows_deleted`` says how many rows went.

        On an unkeyed table the rows are recorded as deletion vectors (row positions per file), or a file
        losing more than half its rows is rewritten without them (``write/row_changes.REWRITE_FRACTION``).
        A concurrent commit that removed or changed a file this delete read, or added data files, makes it
        retry on the new head (``CommitConflictError`` after the last attempt)."""

        def attempt(now: Attempt) -> DeleteResult:
            metadata = self.io.metadata()
            if (keys is None) == (filter is None):
                raise TypeError("delete() takes keys or filter=, exactly one of them")
            if metadata.keys is None:
                if keys is not None:
                    self._require_keys("delete by keys (use filter= on a table without a key)")
                return delete_where(self.io, metadata, filter)
            return delete_rows(self.io, metadata, keys, filter, resolve=not now.last)

        return with_retries(attempt)

    def update(self, set: dict[str, Any], where: Any = None) -> UpdateResult:
        """Give the rows ``where`` matches (a filter as ``scan``'s; None: every row) the values of ``set``
        (column -> a literal, or ``fieldshift.col("other")`` for another column of the same row; no
        arithmetic), in one commit: the old rows are removed as ``delete`` removes them and the new versions
        appended. Nothing evolves: a value that does not fit its column is a ``CastValueError`` and nothing
        is written. On a keyed table a key column cannot be set, and a new version keeps its row's precombine
        value unless ``set`` raises it (lower: ``RowChangeError``); it wins over the row it replaces.
        A changed partition source column moves the row to its new partition. Any concurrent commit makes it
        retry on the new head."""

        def attempt(now: Attempt) -> UpdateResult:
            return update_where(self.io, self.io.metadata(), set, where, resolve=not now.last)

        return with_retries(attempt)

    def compact(self) -> CompactResult:
        """Rewrite small files, files of older schemas and (keyed) merge groups with several files or
        deletes into files of the current schema, in one atomic commit (see ``maintenance``)."""
        return compact(self.io)

    def expire_snapshots(self, older_than: dt.timedelta | float = dt.timedelta(days=5),
                         retain_last: int = 1) -> ExpireResult:
        """Forget snapshots committed more than ``older_than`` ago (seconds or a timedelta), keeping the
        newest ``retain_last``; ``vacuum()`` then deletes the files only they referenced."""
        return expire_snapshots(self.io, older_than, retain_last)

    def _require_keys(self, what: str) -> KeySpec:
        spec = self.keys
        if spec is None:
            raise NotKeyedError(f"{what} needs a keyed table, and table {self.name!r} has no primary key; create "
                                "it with Table.create(..., identifier_fields=[...]) (fieldshift create --key)")
        return spec

    def overwrite(self, data: Any, *, evolve: bool = True, on_incompatible: OnIncompatible = "fail",
                  policy: CastPolicy | None = None) -> AppendResult:
        """Replace the table's rows with ``data`` in one snapshot (old snapshots still read the old rows)."""
        return self._write(_as_table(data), evolve, on_incompatible, policy, "overwrite")

    def _write(self, incoming: pa.Table, evolve: bool, on_incompatible: OnIncompatible, policy: CastPolicy | None,
               operation: WriteOperation, mark: StreamMark | None = None, *, partial: bool = False) -> AppendResult:
        """One write through the retry loop: each attempt loads the metadata once and plans on its head."""

        def attempt(now: Attempt) -> AppendResult:
            metadata = self.io.metadata()
            if operation == "upsert" and metadata.keys is None:
                self._require_keys("upsert")
            if partial and operation != "upsert":
                raise InvalidOptionError("partial=True is an upsert's option")
            prepared = prepare_append(incoming, metadata.current_schema, evolve=evolve,
                                      on_incompatible=on_incompatible, policy=policy or metadata.policy)
            stream = {} if mark is None else {"stream": mark.stream_id, "batch": mark.batch_id}
            rows = prepared.data
            if partial:  # the columns the data does not carry keep the live rows' values
                rows = fill_partial(self.io, metadata, rows, [n for n in rows.column_names
                                                              if n in incoming.column_names], prepared.schema)
            # AlreadyCommittedError (``mark`` recorded before) goes to the caller: nothing was written
            done = write_rows(self.io, metadata, WriteRequest(
                prepared.schema, prepared.evolved, rows,
                [q for q in (prepared.quarantined,) if q is not None], operation, mark,
                {"changes": list(prepared.changes), **stream},
                exclusive=partial), resolve=not now.last)  # partial: it read the columns it keeps
            replaced = done.replaced
            inserted = None if replaced is None else done.rows - replaced
            return AppendResult(done.rows, done.quarantined, prepared.schema.schema_id, prepared.evolved,
                                done.snapshot.snapshot_id, prepared.changes, inserted, replaced,
                                None if operation == "overwrite" else 0)

        return with_retries(attempt)

    # -- merge (issue 34: MERGE INTO) -----------------------------------------------------------
    def merge(self, source: Any, on: str | Sequence[str], *, evolve: bool = True,
              policy: CastPolicy | None = None) -> MergeBuilder:
        """MERGE INTO this table from ``source`` (Arrow data, a list of dicts or a dict of lists), matching
        rows equal on every ``on`` column (a keyed table: its key); chain clauses, then ``execute()``::

            table.merge(changes, on="id").when_matched_update(set="*").when_not_matched_insert(values="*") \\
                 .when_not_matched_by_source_delete().execute()

        ``when_matched_update(set=, condition=)``, ``when_matched_delete(condition=)``,
        ``when_not_matched_insert(values=, condition=)``, ``when_not_matched_by_source_delete(condition=)``;
        conditions and values name ``source.<col>`` / ``target.<col>`` (see ``merge_builder``). ``"*"`` is every
        source column: such clauses evolve the table like ``append`` (``evolve``, ``policy``). A null in an
        ``on`` column never matches; a target row matched by several source rows is a ``MergeMatchError``.
        One commit (retried on conflicts); returns a ``MergeResult`` with the rows inserted, updated, deleted.
        """
        return MergeBuilder(lambda spec: run_merge(self.io, spec), _as_table(source), on, evolve=evolve,
                            policy=policy)

    # -- reading --------------------------------------------------------------------------------
    def scan(self, columns: Sequence[str] | None = None, filter: Any = None,
             snapshot_id: int | None = None, schema_id: int | None = None,
             policy: CastPolicy | str | None = None, *, limit: int | None = None,
             as_of: dt.datetime | str | None = None) -> Scan:
        """A lazy read of the table: nothing is read until a ``Scan`` method such as ``to_arrow`` runs.

        Every data file is read by field id and evolved into the chosen schema version, whatever schema it
        was written with; files the filter rules out by partition values or statistics are skipped.

        Args:
            columns: top-level column names to return, in this order (default: every column).
            filter: rows to keep (see *Filters* below); checked against the read schema before anything
                is read.
            snapshot_id: the snapshot to read (time travel; default: the current one).
            as_of: a time (datetime or ISO-8601 text; naive is UTC): read the latest snapshot committed at
                or before it (time travel by time; not with ``snapshot_id``).
            schema_id: the schema version to read into (default: the snapshot's own schema).
            policy: the casts allowed from older files' types, a ``CastPolicy`` or a policy's name (default: the table's
                policy).
            limit: return at most this many rows (after the filter; on a keyed table after the merge and
                deletes); reading stops once they are found. Which rows: the first of the unlimited scan's
                order.

        Returns:
            A `fieldshift.table.Scan`: ``to_arrow``, ``to_batches``, ``to_reader``, ``to_pandas``,
            ``to_polars``, ``to_duckdb``, ``count``, ``files``.

        Raises:
            SnapshotExpiredError: ``snapshot_id`` was expired (another missing one: a fieldshift error).
            SnapshotNotFoundError: ``as_of`` is before the first snapshot still kept.
            InvalidOptionError: both ``snapshot_id`` and ``as_of``, or ``as_of`` text that is not a time.
            InvalidFilterError: a malformed filter, an unknown column or a literal of the wrong kind.
            TypeError: ``columns`` is not a list of names, or an id or ``limit`` is not an int.

        #### Filters

        One expression tree, written three ways with one meaning: filter text
        (``"v > 2 and (name is null or name = 'x')"``, the grammar of the CLI's ``--where``: ``and``,
        ``or``, ``not``, parentheses, ``= != <> < <= > >=``, ``[not] in (...)``, ``is [not] null``,
        ``is [not] nan``, ``[not] starts with 'x'``, ``[not] like 'x%'``; literals are typed like their
        column), expressions (``(fieldshift.col("v") > 2) | fieldshift.col("name").is_null()``, with
        ``&``, ``|``, ``~``), or ``(column, op, value)`` tuples and lists of them (all must hold; a list
        may mix the three). ``column`` is a path through structs: dotted (``"s.x"``), with backticks
        around a name holding dots (`` "`a.b`.c" ``), or a list of names. Tuple operators: ``==`` (or
        ``=``), ``!=``, ``<``, ``<=``, ``>``, ``>=``; ``in``, ``not in`` with a list, tuple or set;
        ``is_null``, ``not_null``, ``is_nan``, ``not_nan`` with no value; ``starts_with``,
        ``not_starts_with`` with a str (bytes for binary).

        A Python literal must fit the column's kind: int, float or Decimal for numbers, str for strings,
        bytes for binary, bool for booleans, date/datetime for dates and timestamps (a naive datetime
        against a zoned column is UTC), time for times. Numbers are compared exactly (``a > 1.5`` on
        a long column is ``a >= 2``; an out-of-range literal is simply true or false). Nulls follow
        SQL's three-valued logic (a comparison with a null is unknown, ``not`` of unknown is unknown, a
        row is kept where the filter is true), except that ``!=``, ``not in`` and ``not_starts_with``
        are true on a null, as Iceberg's; NaN is unequal to and unordered with everything. ``None`` and
        NaN literals are refused (use ``is_null`` / ``is_nan``). Text that does not parse or fit raises
        `fieldshift.FilterSyntaxError` with a caret under the token.
        """
        if as_of is not None:
            if snapshot_id is not None:
                raise InvalidOptionError("give snapshot_id or as_of, not both")
            snapshot_id = self.snapshot_at(as_of).snapshot_id
        return Scan(self.io, self.io.metadata(snapshot_id), columns, filter, schema_id, policy, limit=limit)

    def snapshot_at(self, as_of: dt.datetime | str) -> Snapshot:
        """The latest kept snapshot committed at or before ``as_of`` (a datetime or ISO-8601 text; naive is
        UTC); SnapshotNotFoundError when ``as_of`` is before the first."""
        return snapshot_at(self.history(), as_of, lambda s: dt.datetime.fromisoformat(s.committed_at),
                           f"table {self.name}")

    def to_arrow(self) -> pa.Table:
        """Every row of the current snapshot in the current schema (``scan().to_arrow()``)."""
        return self.scan().to_arrow()

    @overload
    def quarantine(self, *, grouped: Literal[False] = False) -> pa.Table: ...

    @overload
    def quarantine(self, *, grouped: Literal[True]) -> list[pa.Table]: ...

    def quarantine(self, *, grouped: bool = False) -> pa.Table | list[pa.Table]:
        """Every quarantined row, whatever types its batch arrived with.

        By default one table: ``_fieldshift_reason``, ``_fieldshift_row`` (the row's values as a JSON
        object), ``_fieldshift_source_schema``, ``_fieldshift_quarantined_at`` and
        ``_fieldshift_snapshot_id`` (the commit that set it aside). With ``grouped=True``, one table
        per source schema holding the rows in their source types (plus those columns but the JSON),
        ready to be fixed and appended again.
        """
        files = self.catalog.quarantine_files(self.table_id)
        if grouped:
            return quarantine_groups(self.storage, files)
        return quarantine_table(self.storage, files)

    def vacuum(self, older_than: dt.timedelta | float = dt.timedelta(hours=1)) -> list[str]:
        """Delete files no commit references (left by crashed writers); returns their paths.

        Files younger than ``older_than`` are kept: a writer in another process may be about to
        commit them. Only regular files under ``data/`` (partition directories too) and ``quarantine/`` count;
        those of any other table of the catalog recorded at the same directory (older catalogs allowed
        it) are kept; directories, symlinks and other entries are left alone. Temporary catalogs of
        creates killed midway (that no live create holds) go too.
        """
        cutoff = time.time() - age_margin(older_than).total_seconds()
        found = [e for folder in ("data", "quarantine") for e in self.storage.list_files(folder)
                 if e.regular and _OWN_FILE.fullmatch(e.name) and e.mtime <= cutoff]  # fieldshift's files only
        removed = []
        with self.catalog.exclusive():  # no commit lands while files are deleted; one whose file went retries
            keep = self.catalog.all_paths(self.table_id) | published_data_paths(self.storage)
            for other_id, _, other_location in self.catalog.tables():
                if other_id != self.table_id and location_key(other_location) == self.location:
                    keep |= self.catalog.all_paths(other_id)  # a catalog from before locations were unique
            for entry in found:
                if entry.name.endswith(TMP_SUFFIX) or entry.rel not in keep:
                    try:
                        if entry.name.endswith(TMP_SUFFIX):  # kept while a writer holds it
                            if not self.storage.delete_idle(entry.rel):
                                continue
                        else:
                            self.storage.delete(entry.rel, missing_ok=False)
                    except FileNotFoundError:  # a concurrent vacuum (or a writer's clean-up) got there first
                        continue
                    removed.append(entry.rel)
        removed += vacuum_published(self.storage, cutoff)
        if self.catalog.directory == self.location:  # a create killed after linking its catalog in
            removed += remove_abandoned_catalogs(self.location)
        return removed

    # -- publishing -----------------------------------------------------------------------------
    def publish(self, *, register: tuple[str, str] | None = None) -> PublishResult:
        """Write Iceberg metadata (``LOCATION/metadata``: ``vN.metadata.json``, ``version-hint.text``, Avro
        manifests) for every snapshot not yet published, beside the same Parquet files; PyIceberg's
        ``StaticTable.from_metadata`` and DuckDB's ``iceberg_scan`` read it. Fieldshift snapshot ``S`` is
        Iceberg snapshot ``S`` (the empty snapshot 0 is the Iceberg table without snapshots).

        Raises:
            UnpublishableError: a type or history Iceberg cannot express; nothing is written.

        ``register=(catalog_uri, "namespace.name")`` registers the table in that PyIceberg SQL catalog (its
        ``default`` catalog) and every later catch-up moves its pointer forward.
        """
        if register is not None:
            catalog_name(register[1])
            for key, value in zip((REGISTER_URI_PROPERTY, REGISTER_NAME_PROPERTY), register, strict=True):
                self.catalog.set_property(self.table_id, key, value)
        return publish_iceberg(self.catalog, self.table_id, self.name, self.storage)

    def set_publish(self, format: str | None) -> None:
        """Publish after every commit (``"iceberg"``: catches up now, refused with nothing changed when the
        table cannot be published) or stop (None: the published metadata stays as it is)."""
        if format is not None:
            check_format(format)
            self.publish()
        self.catalog.set_property(self.table_id, PUBLISH_PROPERTY, format)

    def __repr__(self) -> str:
        return f"Table({str(self.location)!r}, schema_id={self.schema.schema_id})"
