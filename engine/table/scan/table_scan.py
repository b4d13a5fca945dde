"""``Table.scan``: the one scan pipeline (``open_scan.OpenScan``) over the catalog as a read source, with the
catalog's own view of it (``DataFile`` records, deletion vectors) for the key lookup, compaction and Spark."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from fieldshift.errors import InvalidOptionError, SchemaEvolutionError
from fieldshift.extras import require
from fieldshift.planner import EvolutionPlan
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.table.catalog.deletion_vectors import DeletionVector
from fieldshift.table.expressions.filters import Predicate, bind_filter, parse_filter
from fieldshift.table.expressions.tree import AlwaysTrue
from fieldshift.table.expressions.visitors import filter_columns
from fieldshift.table.files.data_files import iter_file_batches, name_data_file
from fieldshift.table.files.file_cache import SnapshotFiles, snapshot_files
from fieldshift.table.handle import TableIO
from fieldshift.table.keyed.merge import group_files
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.records import DataFile
from fieldshift.table.scan.catalog_source import CatalogSource
from fieldshift.table.scan.live_rows import live_parts
from fieldshift.table.scan.open_scan import OpenScan

if TYPE_CHECKING:
    import duckdb
    import pandas as pd
    import polars as pl


__all__ = ["PartitionView", "Predicate", "Scan", "parse_filter"]

BATCH_SIZE = 65_536


def _check_arguments(columns: Any, schema_id: Any, limit: Any = None) -> None:
    """Say what kind of argument is wanted before a string is iterated or an id looked up as text."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        raise TypeError(f"limit must be an int (the most rows to return) or None, not {limit!r} "
                        f"({type(limit).__name__})")
    if limit is not None and limit < 0:
        raise InvalidOptionError(f"limit must be 0 or more (the most rows to return), not {limit}")
    if columns is not None and (isinstance(columns, (str, bytes)) or not all(isinstance(c, str) for c in columns)):
        raise TypeError(f"columns must be a list of top-level column names, e.g. ['id'], not {columns!r}")
    if schema_id is not None and (isinstance(schema_id, bool) or not isinstance(schema_id, int)):
        raise TypeError(f"schema_id must be an int, not {schema_id!r} ({type(schema_id).__name__})")


def _policy(policy: Any) -> CastPolicy:
    """A scan's ``policy``: a ``CastPolicy``, or a policy's name as ``Table.set_policy`` takes it."""
    if isinstance(policy, str):
        return CastPolicy.from_name(policy)
    if not isinstance(policy, CastPolicy):
        raise TypeError(f"policy must be a CastPolicy (e.g. CastPolicy.iceberg()) or a policy's name, e.g. 'iceberg', "
                        f"not {policy!r} ({type(policy).__name__})")
    return policy


class PartitionView:
    """The filter projected through a data file's partition values (the pipeline's inclusive and strict
    projections), asked with the catalog's ``DataFile``."""

    def __init__(self, pipeline: OpenScan) -> None:
        self._pipeline = pipeline

    def _entry(self, f: DataFile) -> Any:
        entry_of = getattr(self._pipeline.content.files, "entry_of", None)
        return entry_of(f.file_id) if entry_of is not None and f.file_id is not None else None

    def may_match(self, f: DataFile) -> bool:
        """False only when no row of ``f`` can satisfy the filter, by its partition values."""
        entry = self._entry(f)
        return entry is None or self._pipeline.partition_may_match(entry)

    def all_match(self, f: DataFile) -> bool:
        """True only when every row of ``f`` satisfies the filter, by its partition values."""
        entry = self._entry(f)
        return entry is not None and self._pipeline.partition_all_match(entry)


class Scan:
    """A lazy read of a table at a snapshot, into a chosen schema version, with a filter and a limit.

    Made by `fieldshift.Table.scan` (its page lists the arguments and the filter grammar). Nothing is read
    until a result method runs: ``to_arrow`` (files read in parallel), ``to_batches`` / ``to_reader``
    (streamed, memory bounded by a batch per file or a merge group of a keyed table), ``to_pandas``,
    ``to_polars``, ``to_duckdb``, ``count``. ``files`` is the plan: the live files the filter cannot rule
    out. Each schema version of the files is planned once and shared by every file of that version.
    A keyed table's rows are merged on read: the newest version of each key, deletes applied.

    A scan reads the snapshot it was made for, so it can be run again with the same answer; the results
    of a ``limit`` are the first rows of the unlimited scan's order.

    The reading itself is the one scan pipeline over a read source (``table/scan/open_scan.OpenScan`` over
    ``table/scan/catalog_source.CatalogSource``), the one every other table format reads through; this class keeps
    the catalog's own view of it (``DataFile`` records, deletion vectors) for writers and Spark.
    """

    def __init__(self, io: TableIO, metadata: TableMetadata, columns: Sequence[str] | None = None,
                 filter: Any = None, schema_id: int | None = None, policy: CastPolicy | str | None = None, *,
                 batch_size: int = BATCH_SIZE, limit: int | None = None) -> None:
        _check_arguments(columns, schema_id, limit)
        self.io = io
        self.metadata = metadata  # the table as of the snapshot to read
        self.limit = limit
        snap = metadata.snapshot
        self.snapshot_id = snap.snapshot_id
        self._snapshot = snap
        schemas = dict(metadata.schemas)
        target_id = schema_id if schema_id is not None else snap.schema_id
        if target_id not in schemas:
            raise SchemaEvolutionError(f"no schema {target_id}; schema ids are {sorted(schemas)}")
        self.full_schema = schemas[target_id]
        self.filter = parse_filter(filter)  # the expression tree, as given
        self.bound = bind_filter(self.filter, self.full_schema)  # validated before reading; no NOT
        self.filtered = not isinstance(self.bound, AlwaysTrue)
        self.prune = True  # False reads every live file (tests compare the two)
        self.use_vectors = True  # False: a keyed table merges every group on read, ignoring deletion vectors
        self._vectors: dict[int, DeletionVector] | None = None
        self.vector_prune = True  # False: every file's statistics checked one by one (tests compare the two)
        self.columns = list(columns) if columns is not None else self.full_schema.names
        self.keys = metadata.keys_in(self.full_schema)  # a keyed table merges on read
        extra = self.keys.merge_columns if self.keys is not None else ()
        wanted = list(dict.fromkeys([*self.columns, *filter_columns(self.bound), *extra]))
        self.read_schema = self.full_schema.select(wanted)
        self.output_schema = self.full_schema.select(self.columns).to_arrow()
        self.policy = _policy(policy) if policy is not None else metadata.policy  # the table's own rules by default
        self.batch_size = batch_size
        self._schemas = schemas
        self._pipelines: dict[bool, OpenScan] = {}

    def pipeline(self) -> OpenScan:
        """The scan pipeline over the catalog as a read source, with this scan's switches (made once per
        ``use_vectors`` value: the source's entries differ)."""
        found = self._pipelines.get(self.use_vectors)
        if found is None:
            source = CatalogSource(self.io, self.metadata, use_vectors=self.use_vectors)
            found = self._pipelines[self.use_vectors] = OpenScan(
                source, source.content(self.snapshot_id), self.columns, self.filter, self.batch_size,
                schema=self.full_schema, policy=self.policy, bound=self.bound)  # bound once, here
        found.prune, found.vector_prune, found.limit = self.prune, self.vector_prune, self.limit
        return found

    # -- planning -------------------------------------------------------------------------------
    @property
    def schemas(self) -> dict[int, Schema]:
        """The table's schemas by id (read from the catalog once, when the scan was made)."""
        return self._schemas

    def live_files(self, with_stats: bool = False) -> list[DataFile]:
        """Every data file live at the snapshot (neither planned nor pruned)."""
        if not with_stats:  # read once per snapshot (file_cache): a snapshot's files never change
            return list(self.snapshot_files().files)
        return self.io.catalog.data_files(self.io.table_id, self.snapshot_id, with_stats=with_stats)

    def snapshot_files(self) -> SnapshotFiles:
        """The snapshot's files and the column bounds loaded for them, shared by every scan of it."""
        return snapshot_files(self.io.catalog, self.io.table_id, self._snapshot, keyed=True)  # any table's vectors

    def files(self) -> list[DataFile]:
        """The live files at the snapshot that the filter's partition values and statistics cannot rule out
        (a keyed table's: with the delete files of the merge groups kept).

        Every live file's schema is planned first, so a scan that cannot read some file fails
        whatever the filter prunes: the answer never depends on the file layout."""
        pipeline = self.pipeline()
        if not self.filtered or not self.prune:
            pipeline.plan_all()
            return self.live_files()
        listed = self.snapshot_files()
        kept = pipeline.files()
        at = listed.positions(kept) if kept else np.zeros(0, np.int64)
        assert at is not None  # the entries are the snapshot's own files
        data = [listed.files[i] for i in at]
        if self.keys is None:
            return data
        groups = group_files(list(listed.files))  # a kept data file's merge group brings its delete files
        number = {f.file_id: i for i, g in enumerate(groups) for f in g}
        wanted = {number[f.file_id] for f in data}
        deletes = [f for i in sorted(wanted) for f in groups[i] if f.content == "deletes"]
        return sorted(data + deletes, key=lambda f: f.file_id or 0)

    def partition_pruner(self) -> PartitionView:
        """The pipeline's partition tests on the catalog's ``DataFile``s: may a file's rows pass, do all pass."""
        return PartitionView(self.pipeline())

    def deletion_vectors(self) -> dict[int, DeletionVector]:
        """file id -> deletion vector of every file that has one at the snapshot (loaded once): a keyed table's
        resolved files, an unkeyed table's files that lost rows to a delete or update (``row_changes``)."""
        if self._vectors is None:
            if not self.use_vectors and self.keys is not None:
                self._vectors = {}
            else:  # read with the snapshot's file list (one statement), kept with it
                vectors = self.snapshot_files().vectors
                assert vectors is not None  # a keyed scan's file list carries them
                self._vectors = vectors
        return self._vectors

    def evolved_batches(self, f: DataFile, keep: Any = None) -> Iterator[pa.RecordBatch]:
        """A data file's batches in the read schema, before the row filter (``keep``: a boolean mask of
        the file's rows, e.g. its deletion vector's, applied before evolution)."""
        pipeline = self.pipeline()
        expected, plan = pipeline.schema_plan(f.schema_id)
        path = self.io.storage.display(f.path)
        offset = 0
        for whole in iter_file_batches(self.io.storage, f.path, expected, self.batch_size):
            parts = [whole]
            if keep is not None:  # zero-copy slices where the removed rows are clustered (live_rows)
                removed = np.flatnonzero(~keep[offset:offset + whole.num_rows])
                offset += whole.num_rows
                parts = live_parts(whole, removed, pipeline.fast_deletes)
            for batch in parts:
                try:
                    out = plan.apply(batch)
                except SchemaEvolutionError as e:
                    name_data_file(e, path, f.schema_id)
                    raise
                yield out

    def check(self) -> None:
        """Plan every schema version of the files to read now, so a plan-time refusal comes before
        any row is produced (a CLI streaming CSV must not print a header and then fail)."""
        self.files()

    def plan_of(self, schema_id: int) -> EvolutionPlan:
        """The plan for files of one schema version (made once; every such file shares it)."""
        return self.pipeline().plan_of(schema_id)

    def finish(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Apply the row filter to an evolved batch and keep only the requested columns (the last step of
        every read path, the merge included).
        """
        return self.pipeline().finish(batch)

    # -- results --------------------------------------------------------------------------------
    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """Stream evolved batches file by file (memory stays bounded by one batch per file; a keyed
        table's by one merge group)."""
        return self.pipeline().to_batches()

    def to_reader(self) -> pa.RecordBatchReader:
        """The result as a streaming ``pyarrow.RecordBatchReader`` (``to_batches`` behind the Arrow stream
        interface, for DuckDB, polars or Arrow Flight consumers).
        """
        return pa.RecordBatchReader.from_batches(self.output_schema, self.to_batches())

    def to_arrow(self) -> pa.Table:
        """The whole result as one Table; files are read in parallel."""
        return self.pipeline().to_arrow()

    def to_pandas(self, **kwargs: Any) -> pd.DataFrame:
        """The result as a pandas DataFrame; ``kwargs`` go to ``pyarrow.Table.to_pandas``.

        Raises:
            MissingDependencyError: pandas is not installed (the ``pandas`` extra).
        """
        require("pandas", "pandas", "Scan.to_pandas()")
        return self.to_arrow().to_pandas(**kwargs)

    def to_polars(self) -> pl.DataFrame:
        """The result as a polars DataFrame (sharing the Arrow buffers where polars can).

        Raises:
            MissingDependencyError: polars is not installed (the ``polars`` extra).
        """
        polars = require("polars", "polars", "Scan.to_polars()")
        return polars.from_arrow(self.to_arrow())

    def to_duckdb(self, table_name: str, connection: duckdb.DuckDBPyConnection | None = None
                  ) -> duckdb.DuckDBPyConnection:
        """Register the result as the DuckDB view ``table_name`` and return the connection.

        Args:
            table_name: the name to query the result by (``SELECT ... FROM table_name``).
            connection: the DuckDB connection to register it on; ``None`` opens a new in-memory one.

        Raises:
            MissingDependencyError: duckdb is not installed (the ``duckdb`` extra).
        """
        ddb = require("duckdb", "duckdb", "Scan.to_duckdb()")
        con = connection if connection is not None else ddb.connect(database=":memory:")
        con.register(table_name, self.to_arrow())
        return con

    def count(self) -> int:
        """Row count; answered from the catalog alone when there is no filter (a keyed table: for the groups
        its deletion vectors resolved), else files whose partition values prove every row passes are counted
        from the catalog and the others read."""
        if self.keys is not None:  # merged on the key (and filter) columns only
            narrow = Scan(self.io, self.metadata, list(self.keys.key_names), self.filter,
                          self.full_schema.schema_id, self.policy, batch_size=self.batch_size)
            narrow.prune, narrow.use_vectors, narrow.vector_prune = self.prune, self.use_vectors, self.vector_prune
            rows = narrow.pipeline().count()
        elif not self.filtered:  # less the rows deletes and updates removed (their deletion vectors)
            rows = sum(f.record_count for f in self.live_files()) - \
                sum(v.cardinality for v in self.deletion_vectors().values())
        else:
            return self.pipeline().count()  # its limit stops the reading
        return rows if self.limit is None else min(rows, self.limit)
