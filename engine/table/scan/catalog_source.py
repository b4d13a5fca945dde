"""The fieldshift catalog as a read source: a table's records turned into the read-source interface's facts.

``open_tables/source.py`` says what a scan needs from any table format; this is the first implementation of
it, over a ``TableIO`` and the ``TableMetadata`` a scan was made with, so a fieldshift table reads through
the same pipeline as a DuckLake or Iceberg one (``table/scan/open_scan.OpenScan``). What the catalog records maps
one to one: schemas by id; each live data file with the schema id it was written with, its partition values
under its spec's transforms (Iceberg's values: ``partition_transforms = "iceberg"``) and its statistics in
that schema's types; a keyed table's deletion vectors as deleted positions and its delete files as equality
deletes on the key (scoped to the file's merge group, newer sequence numbers only); and the merge by key
with the precombine column ordering versions.
"""

from __future__ import annotations

import datetime as dt
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa

from fieldshift.gc_pause import paused_gc
from fieldshift.open_tables.source import (
    NO_MERGE,
    ColumnStats,
    DataFileEntry,
    EqualityDeletes,
    MergeMode,
    PartitionValue,
    SnapshotContent,
    SourcePartitionField,
    SourcePartitionSpec,
    SourceSnapshot,
)
from fieldshift.schema.model import Schema
from fieldshift.table.files.file_cache import SnapshotFiles, snapshot_files
from fieldshift.table.handle import TableIO
from fieldshift.table.keyed.keys import KeySpec
from fieldshift.table.keyed.merge import group_files
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.partitions.partitioning import PartitionSpec
from fieldshift.table.records import DataFile, Snapshot
from fieldshift.table.scan.catalog_entries import CatalogEntries, Parts
from fieldshift.table.scan.prune_vector import load_bounds

__all__ = ["CatalogSource"]


class _Readers:
    """The catalog handles scanning one cached snapshot, held weakly: its column bounds load through any live
    one. The snapshot's entries outlive a scan (``file_cache``) and must not keep a handle, and with it the
    handle's held catalog connections, alive."""

    def __init__(self) -> None:
        self._handles: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lock = threading.Lock()

    def add(self, catalog: Any) -> None:
        with self._lock:
            self._handles.add(catalog)

    def any(self) -> Any:
        with self._lock:
            for catalog in self._handles:  # the scan asking holds its own handle alive, so there is one
                return catalog
        raise RuntimeError("no live catalog handle scans this snapshot")


class CatalogSource:
    """A fieldshift table as a ``ReadSource`` (read-only; writes go through ``Table``)."""

    format = "fieldshift"
    writer = "fieldshift"
    partition_transforms = "iceberg"  # transforms.py computes Iceberg's values bit for bit
    exact_schemas = True  # a data file holds exactly the columns of the schema id it was written with
    merges_by_precombine = True  # versions of a key merge as table/merge.merge_rows ranks them
    whole_files = True  # parquet_file(path, whole=True) reads a file in one request

    def __init__(self, io: TableIO, metadata: TableMetadata, *, use_vectors: bool = True) -> None:
        """``use_vectors`` False: a keyed table's deletion vectors are ignored, so every group merges by key and
        its delete files (the read such a table had before vectors; tests compare the two)."""
        self.io, self.metadata, self.use_vectors = io, metadata, use_vectors
        self.name = metadata.name
        self.policy = metadata.policy
        self.current_schema_id = metadata.head.schema_id

    def open_file(self, path: str) -> Any:
        """A data or delete file of the table, opened through its storage (an object store with its options)."""
        storage = self.io.storage
        return storage.fs.open_input_file(storage.full(self._relative(path)))

    def parquet_file(self, path: str, whole: bool = False, **options: Any) -> Any:
        """A Parquet reader of a data file of the table (``TableStorage.parquet_file``: a local file by its path;
        ``whole``: read in one request and decoded from memory, as the scan reads small files; ``options``: the
        reader's, e.g. ``read_dictionary``)."""
        return self.io.storage.parquet_file(self._relative(path), whole=whole, **options)

    def _relative(self, path: str) -> str:
        base = self.io.storage.display()
        return path[len(base) + 1:] if path.startswith(base + "/") else path

    def snapshots(self) -> tuple[SourceSnapshot, ...]:
        """Every kept snapshot, oldest first."""
        return tuple(_source_snapshot(s) for s in self.io.catalog.snapshots(self.io.table_id))

    def schemas(self) -> Mapping[int, Schema]:
        return self.metadata.schemas

    def specs(self) -> tuple[SourcePartitionSpec, ...]:
        return tuple(_source_spec(s) for s in self.metadata.specs)

    def content(self, snapshot_id: int | str) -> SnapshotContent:
        """The files live at ``snapshot_id`` with their partition values and deletes; their statistics are left
        out (``with_stats`` loads them for the files partition pruning keeps). The entries are built once per
        snapshot and process, kept with the snapshot's file list (``file_cache``)."""
        if not isinstance(snapshot_id, int):
            raise TypeError(f"a fieldshift snapshot id is an int, not {snapshot_id!r}")
        metadata = self.metadata if snapshot_id == self.metadata.snapshot.snapshot_id else \
            self.io.metadata(snapshot_id)
        keys = metadata.keys_in(metadata.schema)
        listed = snapshot_files(self.io.catalog, self.io.table_id, metadata.snapshot, keyed=True)  # any table's vectors
        key = ("catalog_source", self.use_vectors, self.io.storage.display())
        readers = listed.derive(("catalog_source.readers",), _Readers)
        readers.add(self.io.catalog)
        files, resolved = listed.derive(key, lambda: self._entries(listed, metadata, keys, readers))
        merge = NO_MERGE if keys is None else MergeMode(
            "key", keys.key_ids, (keys.precombine_id,) if keys.precombine_id is not None else ())
        return SnapshotContent(_source_snapshot(metadata.snapshot), metadata.schema, files, merge=merge,
                               resolved_groups=resolved)

    def _entries(self, listed: SnapshotFiles, metadata: TableMetadata, keys: KeySpec | None, readers: _Readers
                 ) -> tuple[CatalogEntries, frozenset[int]]:
        """The data files as entries (each built when a scan first needs it), and the merge groups their
        deletion vectors resolved (or one data file alone): those read without a merge."""
        specs = {s.spec_id: s for s in metadata.specs}
        # an unkeyed table's vectors are its only record of deleted rows: always applied
        vectors = (listed.vectors or {}) if self.use_vectors or keys is None else {}
        storage = self.io.storage
        if keys is None:
            data = [f for f in listed.files if f.content == "data"]
            numbers: list[int | None] = [None] * len(data)
            deletes: dict[int | None, list[EqualityDeletes]] = {}
            done: set[int] = set()
        else:
            data, numbers, deletes, done = [], [], {}, set()
            for number, group in enumerate(group_files(list(listed.files))):
                if all(f.file_id in vectors for f in group) or (len(group) == 1 and group[0].content == "data"):
                    done.add(number)
                else:
                    deletes[number] = [EqualityDeletes(storage.display(d.path), keys.key_ids, d.sequence or 0,
                                                       d.record_count) for d in group if d.content == "deletes"]
                for f in group:
                    if f.content == "data":
                        data.append(f)
                        numbers.append(number)

        base = storage.display()
        prefix = base + "/" if not base.endswith("/") else base

        def shown(rel: str) -> str:  # storage.display, without a Path per file for a plain relative path
            return prefix + rel if not rel.startswith("/") and ".." not in rel and "\\" not in rel \
                else storage.display(rel)

        def partition(i: int) -> tuple[PartitionValue, ...]:
            f = data[i]
            return _partition(f, specs.get(f.spec_id), metadata.schemas[f.schema_id])

        layouts: dict[tuple[int, int], tuple[tuple[tuple[int, str], ...], tuple[int, ...]] | None] = {}

        def parts(i: int) -> Parts | None:  # partition pruning's view, without PartitionValue objects
            f = data[i]
            key = (f.spec_id, f.schema_id)
            if key not in layouts:
                layouts[key] = _layout(specs.get(f.spec_id), metadata.schemas[f.schema_id])
            found = layouts[key]
            if found is None or len(f.partition) < len(found[1]):
                return None  # identity timestamps or times: converted as _partition converts them
            n = len(f.partition)
            if len(found[1]) == n and (not n or found[1][-1] == n - 1):  # positions 0..n-1: the catalog's tuple
                return found[0], f.partition
            return found[0], tuple(f.partition[j] for j in found[1])

        def make(i: int, values: tuple[PartitionValue, ...]) -> DataFileEntry:
            f, number = data[i], numbers[i]
            v = vectors.get(f.file_id) if f.file_id is not None else None
            seq = f.sequence or 0
            return DataFileEntry(
                shown(f.path), f.record_count, schema_id=f.schema_id, partition=values,
                positions=None if v is None or not v.cardinality else v.positions.astype(np.int64),
                sequence_number=seq, file_size=f.file_size, file_id=f.file_id,
                equality_deletes=tuple(d for d in deletes.get(number, ()) if d.sequence_number > seq),
                merge_group=number)

        # every listed file is a data file, in the listed order (a keyed table's come merge group by group)
        whole = keys is None and len(data) == len(listed.files)
        at = np.arange(len(data)) if whole else listed.positions(data) if data else np.zeros(0, np.int64)
        assert at is not None  # the data files are the snapshot's own
        table_id, snapshot_id = self.io.table_id, metadata.snapshot.snapshot_id
        equality = tuple(d for group in deletes.values() for d in group)
        return CatalogEntries(data, make, partition, at, lambda field_id: listed.column(
            field_id, lambda: load_bounds(readers.any(), table_id, snapshot_id, listed, field_id)),
            equality, listed.ids if whole else None, parts), frozenset(done)

    def with_stats(self, entries: Sequence[DataFileEntry]) -> list[DataFileEntry]:
        """``entries`` (of this table's ``content``) with their statistics, typed by the schema each file was
        written with: one catalog query for the files a scan still needs after partition pruning."""
        stats = self.io.catalog.file_stats([f.file_id for f in entries if f.file_id is not None])
        schemas = self.metadata.schemas  # every schema the table ever had (kept forever)
        with paused_gc():
            return [f if f.file_id is None or f.schema_id is None else
                    replace(f, stats=_stats(stats.get(f.file_id, {}), schemas[f.schema_id])) for f in entries]


def _source_snapshot(s: Snapshot) -> SourceSnapshot:
    at = dt.datetime.fromisoformat(s.committed_at)
    at = at.replace(tzinfo=dt.UTC) if at.tzinfo is None else at.astimezone(dt.UTC)
    return SourceSnapshot(s.snapshot_id, at, s.schema_id, s.operation)


def _source_spec(spec: PartitionSpec) -> SourcePartitionSpec:
    return SourcePartitionSpec(spec.spec_id, tuple(
        SourcePartitionField(f.source_id, f.field_id, f.name, str(f.transform)) for f in spec.fields))


def _partition(f: DataFile, spec: PartitionSpec | None, schema: Schema) -> tuple[PartitionValue, ...]:
    """The file's partition values in the interface's terms: a transform's result as recorded, an identity
    value as the column's own (the catalog records identity timestamps and times as nanoseconds; a value
    a Python datetime cannot hold exactly is left out, so it never prunes)."""
    if spec is None:
        return ()
    out = []
    for field, value in zip(spec.fields, f.partition, strict=False):
        kind = field.transform.kind
        if kind == "void":
            continue
        if kind == "identity" and value is not None and schema.has_field(field.source_id):
            t = schema.field(field.source_id).type
            if isinstance(t, pa.DataType) and (pa.types.is_timestamp(t) or pa.types.is_time(t)):
                if value % 1000:
                    continue
                micros = pa.timestamp("us", t.tz) if pa.types.is_timestamp(t) else pa.time64("us")
                value = pa.scalar(value // 1000, pa.int64()).cast(micros).as_py()
        out.append(PartitionValue(field.source_id, str(field.transform), value))
    return tuple(out)


def _layout(spec: PartitionSpec | None, schema: Schema) -> tuple[tuple[tuple[int, str], ...], tuple[int, ...]] | None:
    """(source id, transform) of each value ``_partition`` gives a file of ``spec`` and ``schema``, and where each
    value sits in the catalog's partition tuple; None when an identity timestamp or time needs converting."""
    if spec is None:
        return (), ()
    layout, positions = [], []
    for j, field in enumerate(spec.fields):
        kind = field.transform.kind
        if kind == "void":
            continue
        if kind == "identity" and schema.has_field(field.source_id):
            t = schema.field(field.source_id).type
            if isinstance(t, pa.DataType) and (pa.types.is_timestamp(t) or pa.types.is_time(t)):
                return None
        layout.append((field.source_id, str(field.transform)))
        positions.append(j)
    return tuple(layout), tuple(positions)


def _stats(stats: Mapping[int, tuple[int, int, Any, Any]], schema: Schema) -> dict[int, ColumnStats]:
    """The catalog's statistics of a file, typed by the schema it was written with. Nanosecond bounds are
    kept as integer ticks (a Python datetime holds microseconds), the upper one rounded up."""
    out = {}
    for fid, (values, nulls, lo, hi) in stats.items():
        if not schema.has_field(fid):
            continue
        t = schema.field(fid).type
        if not isinstance(t, pa.DataType):
            continue
        if lo is not None and hi is not None and getattr(t, "unit", None) == "ns" and \
                (pa.types.is_timestamp(t) or pa.types.is_time(t)):
            try:
                lo, hi = pa.array([lo, hi], t).view(pa.int64()).to_pylist()
                hi = min(hi + 999, 2**63 - 1)
            except (pa.ArrowException, TypeError, ValueError, OverflowError):
                lo = hi = None
        out[fid] = ColumnStats(values, nulls, lo, hi, type=t)
    return out
