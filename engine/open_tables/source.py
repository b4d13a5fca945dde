"""The read-source interface: what a scan needs from a table format, whichever format wrote the table.

A scan of a fieldshift table and a scan of a DuckLake or Iceberg table do the same work — bind the
filter, prune files by their statistics, plan each file's schema against the read schema by field id,
read and evolve, drop deleted rows, filter rows — and differ only in where the facts come from. These
frozen values are those facts, with nothing format-specific left in them: a format's source
(``ReadSource``) turns its own metadata into them once per snapshot, and the one scan pipeline
(``fieldshift.table.scan.open_scan``) consumes nothing else. The fieldshift catalog implements it too
(``fieldshift.table.scan.catalog_source``), and so does a fake format of the tests (``tests/table/fake_source.py``),
so its shape follows what every format has to say, not what one of them stores.

Values are in the file's own terms wherever the file could differ from the table (statistics in the
file's type, positions in the file's row order), because only the plan made for that file knows how its
values read in the table's current type.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import pyarrow as pa

from fieldshift.schema.model import Schema
from fieldshift.schema.name_mapping import NameMapping
from fieldshift.schema.policy import CastPolicy

__all__ = [
    "ColumnStats",
    "DataFileEntry",
    "DeleteFile",
    "EqualityDeletes",
    "InlinedRows",
    "MergeMode",
    "PartitionRange",
    "PartitionValue",
    "ReadSource",
    "ReaderRows",
    "SnapshotContent",
    "SnapshotId",
    "SourcePartitionField",
    "SourcePartitionSpec",
    "SourceSnapshot",
]

SnapshotId = int | str
"""A snapshot's id as its format writes it: DuckLake and Iceberg number snapshots, Hudi names them by the
instant (``20240418173551906``), which is text that only compares as text."""


@dataclass(frozen=True, slots=True)
class SourceSnapshot:
    """One version of the table: what ``history()`` lists and what time travel picks from.

    ``timestamp`` is timezone-aware UTC, so ``as_of`` compares instants whatever zone the format wrote;
    ``schema_id`` is the table schema readers use at this snapshot (a key of ``ReadSource.schemas()``).
    ``snapshot_id`` is an int or a string (``SnapshotId``); one source's ids are all of one kind.
    """

    snapshot_id: SnapshotId
    timestamp: dt.datetime
    schema_id: int
    operation: str | None = None  # the format's own words for the change (DuckLake's changes_made)


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """A data file's statistics for one field id, in the file's own type: ``lower``/``upper`` are Python
    values of ``type``, the type the column had when the file was written (None when unknown).

    Bounds are inclusive and may be loose (a lower bound below every value is fine); ``contains_nan``
    says whether NaN values were left out of a float column's bounds. A scan uses them only through the
    plan's casts, so a promoted column's old bounds still prune exactly.
    """

    value_count: int | None = None
    null_count: int | None = None
    lower: Any = None
    upper: Any = None
    contains_nan: bool | None = None
    type: pa.DataType | None = None


@dataclass(frozen=True, slots=True)
class PartitionValue:
    """The value every row of a file has under one partition term: ``transform`` (fieldshift's transform
    names: identity, year, month, day, hour, bucket[N], truncate[W]) of field ``source_id``, typed as the
    transform's result (a year transform's value is an int, an identity one the column's own value)."""

    source_id: int
    transform: str
    value: Any


@dataclass(frozen=True, slots=True)
class PartitionRange:
    """What a group of files (an Iceberg manifest) records about one partition field: every file's value
    is null or lies in [``lower``, ``upper``] (None: unknown), in ``PartitionValue``'s terms; ``contains_null``
    says whether some file's value is null (None: unknown). A scan skips a group whose ranges rule its
    filter out before reading the group's file list."""

    source_id: int
    transform: str
    lower: Any = None
    upper: Any = None
    contains_null: bool | None = None


@dataclass(frozen=True, slots=True)
class DeleteFile:
    """Row positions of one data file deleted by a file the format wrote (positions are 0-based rows of
    the data file, in its own order).

    ``format`` is ``parquet`` (Iceberg-style ``file_path``, ``pos`` columns), ``puffin`` (deletion
    vectors, Iceberg v3) or ``deletion-vector`` (one vector at ``offset`` of a file of vectors: a size, a
    64-bit RoaringBitmap, a CRC-32, as Delta stores them; ``length`` is the size the metadata records).
    ``up_to_snapshot``: some writers keep one delete file per data file and record in it which snapshot
    deleted each row (DuckLake's partial delete files); then only the rows deleted at or before this
    snapshot count. None: every row of the file counts. ``offset``/``length`` locate one deletion vector
    inside a container that holds vectors of many data files (Iceberg's Puffin files, Delta's vector
    files); ``data_file_path`` keeps only the rows that name this data file (a Parquet file deleting from
    many)."""

    path: str
    format: Literal["parquet", "puffin", "deletion-vector"]
    record_count: int | None = None
    up_to_snapshot: int | None = None
    data_file_path: str | None = None  # the data file as the delete file names it (Parquet ``file_path``)
    offset: int | None = None  # where the blob starts inside ``path`` (a file may hold many vectors)
    length: int | None = None  # the blob's size in bytes; None with offset None: the whole file


@dataclass(frozen=True, slots=True)
class EqualityDeletes:
    """Rows deleted by value: a row of a data file with a sequence number below ``sequence_number`` whose
    ``field_ids`` values equal a row of this file is deleted (Iceberg's equality deletes; a keyed table's
    newer version of a key works the same way). No DuckLake table has them.

    Values compare in the read schema's types (a delete written before a promotion matches the promoted
    rows), and a null matches a null (``col IS NULL``). A field id the read schema no longer has is still
    compared: the scan reads it from the schema that last had it, as the Iceberg spec requires."""

    path: str
    field_ids: tuple[int, ...]
    sequence_number: int
    record_count: int | None = None
    file_format: str = "parquet"


@dataclass(frozen=True, slots=True, eq=False)
class DataFileEntry:
    """One live data file of a snapshot, with everything a scan needs before opening it.

    How its columns find their fields, first match wins: ``name_mapping`` (a file written without field
    ids), else ``schema_id`` (the schema it was written with, when the format records one and the file
    does not carry ids), else the field ids in the file itself (DuckLake and Iceberg files carry them).

    ``positions`` are deleted rows the format keeps in its metadata rather than in a file (DuckLake's
    inlined deletes), already resolved for this snapshot. ``snapshot_column``/``up_to_snapshot``: a file
    that merged the rows of several snapshots records each row's snapshot in that column; only rows of
    snapshots up to ``up_to_snapshot`` are live (DuckLake's ``ducklake_merge_adjacent_files``).
    ``sequence_number`` orders the file against equality deletes; ``first_row_id`` is the format's row id
    of the file's first row (row lineage). ``equality_deletes`` are the ones the format's scoping rules
    apply to this file (Iceberg: same partition or a global delete, newer sequence number), on top of the
    snapshot-wide ones. ``ids_in_file`` False: field ids the file may carry are not the table's (a Delta
    table without column mapping, or in ``name`` mode, resolves columns by name), so its columns find
    their fields through ``name_mapping`` only. An identity ``partition`` value fills its column when the
    file lacks it (Delta and Hive-style files keep partition columns only in metadata).
    """

    path: str
    record_count: int
    file_format: str = "parquet"
    schema_id: int | None = None
    name_mapping: NameMapping | None = None
    partition: tuple[PartitionValue, ...] = ()
    stats: Mapping[int, ColumnStats] = field(default_factory=dict)
    delete_files: tuple[DeleteFile, ...] = ()
    positions: np.ndarray | None = None
    sequence_number: int | None = None
    first_row_id: int | None = None
    file_size: int | None = None
    file_id: int | None = None
    snapshot_column: str | None = None
    up_to_snapshot: int | None = None
    equality_deletes: tuple[EqualityDeletes, ...] = ()
    ids_in_file: bool = True
    merge_group: Any = None  # files whose rows may be versions of each other's share it (Paimon: partition, bucket)


@dataclass(frozen=True, slots=True, eq=False)
class InlinedRows:
    """Rows a format keeps in its catalog instead of in a data file (DuckLake inlines small inserts),
    already narrowed to the snapshot: a table whose columns are those of schema ``schema_id`` by name
    (each column's field id is that schema's field of the same top-level name), evolved like a file."""

    schema_id: int
    rows: pa.Table
    label: str  # where they live, for messages (DuckLake: the inlined data table's name)


@dataclass(frozen=True, slots=True, eq=False)
class ReaderRows:
    """Rows only the format's own reader can produce (Hudi merges a file slice's log files into its base
    file), read lazily through ``read`` and then evolved like a file: each column finds its field by name
    through ``name_mapping``. ``stats`` (in the read types, e.g. a partition column's one value) let a scan
    skip them; ``record_count`` None: unknown until read. ``label`` names them in messages."""

    label: str
    read: Callable[[], Iterator[pa.RecordBatch]]
    name_mapping: NameMapping | None = None
    stats: Mapping[int, ColumnStats] = field(default_factory=dict)
    record_count: int | None = None


@dataclass(frozen=True, slots=True)
class MergeMode:
    """How rows of different files combine: ``none`` (every live row is a row of the table) or ``key``
    (rows with equal ``key_ids`` values are versions of one row). DuckLake, Iceberg, Delta and Hudi tables are
    ``none`` (Hudi's merge-on-read slices come merged, as ``ReaderRows``); fieldshift's keyed tables and
    Paimon's primary-key tables are ``key``.

    Versions order by ``order_ids`` (descending when ``descending_order``), then by ``sequence_column`` (a
    column of each file numbering its rows' versions, higher is newer), then by the file's
    ``sequence_number`` and the row's position. They compare only within one ``DataFileEntry.merge_group``.
    ``fields``: ``latest`` keeps the newest version whole; ``latest_non_null`` takes each field's newest
    non-null value (a partial update). ``kind_column`` holds values of which ``retract_kinds`` mark a
    version that retracts its key; ``on_retract`` says what such a version does: ``delete`` (the key is gone
    when the newest version retracts it), ``ignore`` (retractions are skipped), ``reset`` (a version of the
    last kind in ``retract_kinds``, a delete, forgets the versions before it; the other kinds are skipped)
    or ``error`` (the format's readers refuse them). ``unique_per_file``: a file holds at most one version
    of a key (a sorted run), so a merge group of one file needs no sort.
    """

    kind: Literal["none", "key"] = "none"
    key_ids: tuple[int, ...] = ()
    order_ids: tuple[int, ...] = ()
    fields: Literal["latest", "latest_non_null"] = "latest"
    sequence_column: str | None = None
    kind_column: str | None = None
    retract_kinds: tuple[int, ...] = ()
    on_retract: Literal["delete", "ignore", "reset", "error"] = "delete"
    descending_order: bool = False
    unique_per_file: bool = False


NO_MERGE = MergeMode()


@dataclass(frozen=True, slots=True, eq=False)
class SnapshotContent:
    """Everything live in one snapshot: the files to read (with their deletes), inlined rows, rows of the
    format's own reader, equality deletes, and how rows merge. ``schema`` is the table schema at the
    snapshot (the default read schema). ``resolved_groups``: merge groups (``DataFileEntry.merge_group``)
    whose live rows hold each key once already (their deleted positions removed every older version: the
    fieldshift catalog's deletion vectors), so they read and count without a merge."""

    snapshot: SourceSnapshot
    schema: Schema
    files: tuple[DataFileEntry, ...]
    inlined: tuple[InlinedRows, ...] = ()
    reader_rows: tuple[ReaderRows, ...] = ()
    equality_deletes: tuple[EqualityDeletes, ...] = ()
    merge: MergeMode = NO_MERGE
    resolved_groups: frozenset[Any] = frozenset()


@dataclass(frozen=True, slots=True)
class SourcePartitionField:
    """One field of a partition spec: ``transform`` (the format's text: identity, day, bucket[16], ...;
    one fieldshift does not know stays as written and never prunes) of field ``source_id``."""

    source_id: int
    field_id: int
    name: str
    transform: str


@dataclass(frozen=True, slots=True)
class SourcePartitionSpec:
    """A partition spec a table has had; its files record values under these fields, in this order."""

    spec_id: int
    fields: tuple[SourcePartitionField, ...] = ()


@runtime_checkable
class ReadSource(Protocol):
    """A table of some format, read-only, as the scan pipeline sees it.

    ``format`` names the format (``ducklake``); ``writer`` names the tool that writes it (the message of a
    refused write says to use it); ``policy`` is the type changes the format's own readers apply to old
    files (DuckLake: its promotions, plus what its writer stores in another Parquet type, e.g. a 128-bit
    integer as DOUBLE). Snapshots are the ones in which this table changed, oldest first.

    Optional members a source may add: ``specs()`` (its partition specs, ``SourcePartitionSpec`` values,
    oldest first), ``current_schema_id`` (the schema of a table that has no snapshot yet), ``close()``,
    ``open_file(path)`` (a readable file for an entry's path, when the source holds the store's options),
    ``parquet_file(path)`` (a ``pyarrow.parquet.ParquetFile`` of an ``exact_schemas`` source's data file),
    ``merges_by_precombine = True`` (a merge by key with at most one order field ranks versions as a fieldshift
    keyed table does, ``table/keyed/merge.merge_rows``: highest (order value, sequence number, position), NaN highest),
    ``partition_transforms = "iceberg"`` (its partition values of year/month/day/hour/bucket/truncate are
    Iceberg's, so filters project through them; otherwise only identity values prune),
    ``exact_schemas = True`` (each entry's ``schema_id`` describes its file's columns exactly, names, ids and
    types: the scan plans once per schema id without reading footers, plans every live file's schema before
    pruning, and refuses a file whose columns differ, as replaced), ``with_stats(entries)`` (the entries with
    their statistics, for a source whose ``content`` leaves them out
    so a scan loads them only for the files partition pruning kept: the fieldshift catalog's 100,000 files),
    and group pruning: ``prunes_groups = True`` with ``schema_id_at(snapshot_id)``, ``schema(schema_id)``
    and ``content(snapshot_id, keep=...)``, where ``keep(ranges)`` (a tuple of ``PartitionRange``) returning
    False lets the source skip a group of files without reading its list (Iceberg's manifests).
    """

    format: str
    name: str
    writer: str
    policy: CastPolicy

    def snapshots(self) -> tuple[SourceSnapshot, ...]: ...

    def schemas(self) -> Mapping[int, Schema]: ...

    def content(self, snapshot_id: SnapshotId) -> SnapshotContent: ...
