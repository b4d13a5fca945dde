"""Scans: read only the needed field ids of the live files, prune by exact stats, evolve with cached plans."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from fieldshift.errors import InvalidOptionError, SchemaEvolutionError
from fieldshift.extras import require
from fieldshift.planner import EvolutionPlan, cached_plan
from fieldshift.policy import CastPolicy
from fieldshift.schema import Schema
from fieldshift.table.deletion_vectors import DeletionVector
from fieldshift.table.expr_visitors import filter_columns
from fieldshift.table.expressions import AlwaysTrue
from fieldshift.table.file_cache import SnapshotFiles, snapshot_files
from fieldshift.table.files import iter_file_batches, name_data_file
from fieldshift.table.filters import Predicate, bind_filter, parse_filter, row_filter
from fieldshift.table.handle import TableIO
from fieldshift.table.merge import merged_arrow, merged_batches, merged_count
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.partition_prune import PartitionPruner
from fieldshift.table.prune_vector import prune_by_integer_stats
from fieldshift.table.records import DataFile
from fieldshift.table.stats import StatsTest, leaf_node, stats_test

if TYPE_CHECKING:
    import duckdb
    import pandas as pd
    import polars as pl


__all__ = ["Predicate", "Scan", "parse_filter"]

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
    """

    def __init__(self, io: TableIO, metadata: TableMetadata, columns: Sequence[str] | None = None,
                 filter: Any = None, schema_id: int | None = None, policy: CastPolicy | None = None, *,
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
        self._row_filter = row_filter(self.bound)
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
        self.policy = policy if policy is not None else metadata.policy  # the table's own rules by default
        self.batch_size = batch_size
        self._schemas = schemas
        self._plans: dict[int, tuple[list[str], EvolutionPlan]] = {}
        self._partitions: PartitionPruner | None = None
        self._stats_tests: dict[int, StatsTest] = {}

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
        return snapshot_files(self.io.catalog, self.io.table_id, self._snapshot, keyed=self.keys is not None)

    def files(self) -> list[DataFile]:
        """The live files at the snapshot that the filter's stats cannot rule out.

        Every live file's schema is planned first, so a scan that cannot read some file fails
        whatever the filter prunes: the answer never depends on the file layout."""
        live = self.live_files()
        for schema_id in sorted({f.schema_id for f in live}):
            self._plan_for(schema_id)
        if not self.filtered or not self.prune:
            return live
        specs = self._specs()
        if any(s.fields for s in specs):  # before any statistics are loaded
            live = [f for f in live if self.partition_pruner().may_match(f)]
        if self.vector_prune:  # integer bounds of many files compared at once; survivors checked below
            live = prune_by_integer_stats(self, live)
        stats = self.io.catalog.file_stats([f.file_id for f in live if f.file_id is not None])
        return [f for f in (replace(f, stats=stats.get(f.file_id, {})) for f in live) if self._may_match(f)]

    def deletion_vectors(self) -> dict[int, DeletionVector]:
        """file id -> deletion vector of every resolved file of a keyed table at the snapshot (loaded once)."""
        if self._vectors is None:
            if self.keys is None or not self.use_vectors:
                self._vectors = {}
            else:  # read with the snapshot's file list (one statement), kept with it
                vectors = self.snapshot_files().vectors
                assert vectors is not None  # a keyed scan's file list carries them
                self._vectors = vectors
        return self._vectors

    def _specs(self) -> list[Any]:
        return self.metadata.specs

    def partition_pruner(self) -> PartitionPruner:
        """The filter projected through every partition spec the table had (each prunes its own files)."""
        if self._partitions is None:
            self._partitions = PartitionPruner(self.bound, self._specs(), self._schemas)
        return self._partitions

    def _may_match(self, f: DataFile) -> bool:
        """Stats rule a file out only through the plan's own casts (stats.may_match)."""
        if not self.prune:
            return True
        if f.schema_id not in self._stats_tests:
            self._stats_tests[f.schema_id] = stats_test(self.bound, self._leaf_info(f.schema_id))
        return self._stats_tests[f.schema_id](f.stats)

    def _leaf_info(self, schema_id: int) -> Any:
        """For the stats test of one schema version's files: each leaf's plan node and file type."""
        file_schema = self._schemas[schema_id]
        nodes = self._plan_for(schema_id)[1].nodes  # planned already by files()

        def info(p: Any) -> tuple[Any, Any] | None:
            if self.keys is not None and p.field_id not in self.keys.key_ids:
                return None  # only key values are shared by every version of a row: others could resurrect one
            if not file_schema.has_field(p.field_id):
                return None  # a constant in these files: cannot prune on it
            return leaf_node(nodes, self.read_schema.fields, p.path), file_schema.field(p.field_id).type
        return info

    def _file_batches(self, f: DataFile) -> Iterator[pa.RecordBatch]:
        for batch in self.evolved_batches(f):
            yield self.finish(batch)

    def evolved_batches(self, f: DataFile, keep: Any = None) -> Iterator[pa.RecordBatch]:
        """A data file's batches in the read schema, before the row filter (``keep``: a boolean mask of
        the file's rows, e.g. its deletion vector's, applied before evolution)."""
        names, plan = self._plan_for(f.schema_id)
        path = self.io.storage.display(f.path)
        expected = self._schemas[f.schema_id].select(names).to_arrow()
        offset = 0
        for batch in iter_file_batches(self.io.storage, f.path, expected, self.batch_size):
            if keep is not None:
                offset, batch = offset + batch.num_rows, batch.filter(pa.array(keep[offset:offset + batch.num_rows]))
            try:
                out = plan.apply(batch)
            except SchemaEvolutionError as e:
                name_data_file(e, path, f.schema_id)
                raise
            yield out

    def check(self) -> None:
        """Plan every schema version of the files to read now, so a plan-time refusal comes before
        any row is produced (a CLI streaming CSV must not print a header and then fail)."""
        for schema_id in sorted({f.schema_id for f in self.files()}):
            self._plan_for(schema_id)

    def plan_of(self, schema_id: int) -> EvolutionPlan:
        """The plan for files of one schema version (made once; every such file shares it)."""
        return self._plan_for(schema_id)[1]

    def _plan_for(self, schema_id: int) -> tuple[list[str], EvolutionPlan]:
        """The file columns to read and the plan, once per schema version (files share them)."""
        if schema_id not in self._plans:
            file_schema = self._schemas[schema_id]
            wanted = {x.id for x in self.read_schema.all_fields()}
            names = [x.name for x in file_schema.fields if x.id in wanted]
            self._plans[schema_id] = (names, cached_plan(file_schema.select(names), self.read_schema, self.policy))
        return self._plans[schema_id]

    def finish(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Apply the row filter to an evolved batch and keep only the requested columns (the last step of
        every read path, the merge included).
        """
        if self._row_filter is not None:
            batch = batch.filter(self._row_filter)
        return batch.select(self.output_schema.names)

    # -- results --------------------------------------------------------------------------------
    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """Stream evolved batches file by file (memory stays bounded by one batch per file; a keyed
        table's by one merge group)."""
        batches = merged_batches(self) if self.keys is not None else self._plain_batches()
        return batches if self.limit is None else _first_rows(self, batches, self.limit)

    def _plain_batches(self) -> Iterator[pa.RecordBatch]:
        for f in self.files():
            for batch in self._file_batches(f):
                if batch.num_rows:
                    yield batch

    def to_reader(self) -> pa.RecordBatchReader:
        """The result as a streaming ``pyarrow.RecordBatchReader`` (``to_batches`` behind the Arrow stream
        interface, for DuckDB, polars or Arrow Flight consumers).
        """
        return pa.RecordBatchReader.from_batches(self.output_schema, self.to_batches())

    def to_arrow(self) -> pa.Table:
        """The whole result as one Table; files are read in parallel."""
        if self.limit is not None and (self.keys is not None or self._row_filter is not None):
            return pa.Table.from_batches(list(self.to_batches()), schema=self.output_schema)
        if self.keys is not None:
            return merged_arrow(self, os.cpu_count() or 1)
        files = self.files()
        if self.limit is not None:  # no row filter: a file yields all its rows, so its first files suffice
            files = _holding(files, self.limit)

        def read(f: DataFile) -> list[pa.RecordBatch]:
            return [b for b in self._file_batches(f) if b.num_rows]

        workers = max(1, min(os.cpu_count() or 1, len(files)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(read, files))
        result = pa.Table.from_batches([b for part in parts for b in part], schema=self.output_schema)
        return result if self.limit is None else result.slice(0, self.limit)

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
        """Row count; answered from the catalog alone when there is no filter."""
        if self.keys is not None:  # merged on the key (and filter) columns only
            narrow = Scan(self.io, self.metadata, list(self.keys.key_names), self.filter,
                          self.full_schema.schema_id, self.policy, batch_size=self.batch_size)
            narrow.prune, narrow.use_vectors = self.prune, self.use_vectors
            rows = merged_count(narrow)
        elif not self.filtered:
            rows = sum(f.record_count for f in self.live_files())
        elif self.limit is not None:
            return sum(b.num_rows for b in self.to_batches())  # a limit stops the reading
        else:
            rows = self._filtered_count()
        return rows if self.limit is None else min(rows, self.limit)

    def _filtered_count(self) -> int:
        """Rows the filter keeps: files whose partition values prove every row matches (the strict
        projection) are counted from the catalog, the others read."""
        files = self.files()
        whole = [f for f in files if self.prune and self.partition_pruner().all_match(f)] \
            if any(s.fields for s in self._specs()) else []
        counted = {id(f) for f in whole}
        return sum(f.record_count for f in whole) + sum(
            b.num_rows for f in files if id(f) not in counted for b in self._file_batches(f))


def _first_rows(scan: Scan, batches: Iterator[pa.RecordBatch], limit: int) -> Iterator[pa.RecordBatch]:
    """The first ``limit`` rows of ``batches``; no file or merge group is opened after the batch that
    completes them (every live file is still planned, as ``Scan.files`` does)."""
    try:
        if limit == 0:
            scan.files()  # a scan that cannot read some file fails whatever its limit
            return
        left = limit
        for batch in batches:
            if batch.num_rows >= left:
                yield batch.slice(0, left)
                return
            left -= batch.num_rows
            yield batch
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()  # the file being read now


def _holding(files: list[DataFile], rows: int) -> list[DataFile]:
    """The shortest prefix of ``files`` holding at least ``rows`` rows (by their recorded row counts)."""
    total = 0
    for i, f in enumerate(files):
        if total >= rows:
            return files[:i]
        total += f.record_count
    return files
