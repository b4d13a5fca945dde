"""A Delta Lake table as a read source: its transaction log turned into the facts a scan needs
(``source.py``), read-only.

What is read: every version the log can rebuild (commits and checkpoints, ``delta_log``), each one a
snapshot whose id is the version and whose time is the commit's ``inCommitTimestamp`` where the table
records one, else the commit file's modification time (made strictly increasing, as Delta does); one
schema per change of the schema (``delta_schema``: column mapping ``name`` and ``id``, type widening);
the live files with their partition values (strings in the log, typed by the schema) and statistics
(``delta_values``), and deletion vectors inline or in files (``delta_dv``). Change-data files and
tombstones are not part of a snapshot and are not read. What is refused, by name: reader features
fieldshift does not implement (variant types, catalog-managed tables, any unknown one), a
reader version above 3, a data file format other than Parquet, types fieldshift lacks.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fieldshift.errors import CatalogFormatError, SnapshotNotFoundError, UnsupportedFormatFeatureError
from fieldshift.gc_pause import paused_gc
from fieldshift.open_tables.delta_dv import dv_file_path, inline_positions
from fieldshift.open_tables.delta_log import DeltaLog, LogState
from fieldshift.open_tables.delta_schema import DeltaSchema, DeltaSchemaBuilder, parse_schema_string
from fieldshift.open_tables.delta_values import FileStats, parse_partition_value, record_count
from fieldshift.open_tables.source import (
    ColumnStats,
    DataFileEntry,
    DeleteFile,
    PartitionValue,
    SnapshotContent,
    SourceSnapshot,
)
from fieldshift.open_tables.store_files import StoreFiles
from fieldshift.schema.model import Schema
from fieldshift.schema.name_mapping import NameMapping
from fieldshift.schema.policy import CastPolicy

__all__ = ["DELTA_POLICY", "READER_FEATURES", "DeltaSource", "is_delta_table"]

# The reader features whose requirements fieldshift meets (vacuumProtocolCheck asks nothing of readers).
READER_FEATURES = frozenset({"columnMapping", "deletionVectors", "timestampNtz", "typeWidening",
                             "typeWidening-preview", "v2Checkpoint", "vacuumProtocolCheck"})
# Delta's type widening (integers, float -> double, integers -> double, decimals, integers -> decimal,
# date -> timestamp_ntz) and the Parquet encodings its writers use for the same types: other timestamp
# units, and Spark's INT96 timestamps, UTC instants without a zone in Arrow (read as UTC).
DELTA_POLICY = CastPolicy("delta", frozenset({
    "int_widening", "int_to_float_exact", "float_widening", "decimal_widening", "int_to_decimal",
    "date_to_timestamp", "timestamp_unit_widening", "timestamp_zone_change", "null_to_any"}))
_KEPT_VERSIONS = 8
_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
_Raw = tuple[int, dt.datetime, dict[str, Any], Mapping[str, Any], Mapping[str, Any]]  # version, time, commitInfo, ...


def is_delta_table(source: str | Path) -> bool:
    """A local directory with a ``_delta_log`` directory in it."""
    text = str(source)
    return "://" not in text and Path(text, "_delta_log").is_dir()


@dataclass(frozen=True)
class _Version:
    version: int
    timestamp: dt.datetime
    schema_id: int
    operation: str | None
    protocol: Mapping[str, Any]
    metadata: Mapping[str, Any]


@dataclass(frozen=True, eq=False)
class _History:
    latest: int
    versions: dict[int, _Version]
    schemas: dict[int, DeltaSchema]
    mapping: NameMapping


class DeltaSource:
    """The Delta table whose directory (local path or URI) is ``source``; ``name`` labels it in messages
    (the directory's name by default); ``storage_options`` open its log and files on an object store
    (``store_files``: delta-rs' key names; default: the environment's credentials)."""

    format = "delta"
    writer = "a Delta Lake writer (deltalake's write_deltalake, or Spark with Delta Lake)"
    policy = DELTA_POLICY

    def __init__(self, source: str | Path, name: str | None = None, *,
                 storage_options: Mapping[str, str] | None = None) -> None:
        text = str(source)
        self.root = text.rstrip("/") if "://" in text else os.path.abspath(text)
        self.name = name or self.root.rstrip("/").rsplit("/", 1)[-1]
        self.file_opener = StoreFiles(storage_options, f"Delta table {self.name}")
        filesystem, inner = self.file_opener.filesystem(self.root)
        self.log = DeltaLog(self.root, filesystem, inner)
        self._fs = filesystem
        self._history: _History | None = None
        self._contents: dict[int, SnapshotContent] = {}
        h = self._load()
        self._check_protocol(h.versions[h.latest].protocol, h.latest)

    # -- the read-source interface --------------------------------------------------------------
    def snapshots(self) -> tuple[SourceSnapshot, ...]:
        h = self._load()
        return tuple(SourceSnapshot(v.version, v.timestamp, v.schema_id, v.operation)
                     for v in sorted(h.versions.values(), key=lambda v: v.version))

    def schemas(self) -> Mapping[int, Schema]:
        return {sid: s.schema for sid, s in self._load().schemas.items()}

    def content(self, snapshot_id: int) -> SnapshotContent:
        """The live files of a version (a version never changes, so the last few are kept)."""
        h = self._load()
        if snapshot_id in self._contents:
            return self._contents[snapshot_id]
        info = h.versions.get(snapshot_id)
        if info is None:
            first = min(h.versions)
            gone = (f" (the log entries that rebuild versions before {first} were cleaned up)"
                    if isinstance(snapshot_id, int) and 0 <= snapshot_id < first else "")
            raise SnapshotNotFoundError(f"Delta table {self.name} has no version {snapshot_id}: it has versions "
                                        f"{first} to {h.latest}{gone}")
        self._check_protocol(info.protocol, snapshot_id)
        fmt = (info.metadata.get("format") or {}).get("provider", "parquet")
        if str(fmt).lower() != "parquet":
            raise UnsupportedFormatFeatureError(f"Delta table {self.name} stores its data as {fmt}; fieldshift reads "
                                                "Parquet data files")
        state = self.log.replay(snapshot_id)
        ds = h.schemas[info.schema_id]
        mapping = None if ds.mode == "id" else h.mapping
        partition_columns = list(info.metadata.get("partitionColumns") or [])
        for col in partition_columns:
            if col not in ds.top:
                raise CatalogFormatError(f"Delta table {self.name}, version {snapshot_id}: partition column {col!r} "
                                         "is not in the schema")
        with paused_gc():  # many small frozen entries, cycle-free
            files = tuple(self._entry(add, ds, partition_columns, mapping, snapshot_id) for add in state.files.values())
        snapshot = SourceSnapshot(info.version, info.timestamp, info.schema_id, info.operation)
        content = SnapshotContent(snapshot, ds.schema, files)
        if len(self._contents) >= _KEPT_VERSIONS:
            self._contents.pop(next(iter(self._contents)))
        self._contents[snapshot_id] = content
        return content

    # -- one file -------------------------------------------------------------------------------
    def _entry(self, add: Mapping[str, Any], ds: DeltaSchema, partition_columns: list[str],
               mapping: NameMapping | None, version: int) -> DataFileEntry:
        path = self._path(str(add["path"]))
        where = f"Delta table {self.name}, version {version}, file {add['path']}"
        count = record_count(add)
        if count is None:
            count = self.file_opener.footer_rows(path)
        known: dict[int, ColumnStats] = {}
        values = _as_dict(add.get("partitionValues"))
        partition = []
        for col in partition_columns:
            leaf = ds.top[col]
            text = values[leaf.path[0]] if leaf.path[0] in values else values.get(col)  # physical name first
            value = parse_partition_value(text, leaf.type, f"{where}, partition column {col}")
            partition.append(PartitionValue(leaf.field_id, "identity", value))
            n = max(int(count), 1)
            known[leaf.field_id] = ColumnStats(n, n if value is None else 0, value, value, type=leaf.type)
        dv = add.get("deletionVector")
        deletes: tuple[DeleteFile, ...] = ()
        positions: np.ndarray | None = None
        if dv:
            if dv.get("storageType") == "i":
                positions = inline_positions(dv, f"{where}, inline deletion vector")
            else:
                deletes = (DeleteFile(self._dv_path(dv, where), "deletion-vector", record_count=dv.get("cardinality"),
                                      offset=dv.get("offset"), length=dv.get("sizeInBytes")),)
        stats = FileStats(add, ds.leaf_by_id, known)
        return DataFileEntry(path, int(count), partition=tuple(partition), stats=stats, delete_files=deletes,
                             positions=positions, name_mapping=mapping, file_size=add.get("size"),
                             first_row_id=add.get("baseRowId"),
                             ids_in_file=ds.mode == "id")

    def _path(self, text: str) -> str:
        """A log path (URI-encoded, relative to the table or absolute) as a path the scan opens."""
        if _SCHEME.match(text):
            parsed = urllib.parse.urlparse(text)
            return urllib.parse.unquote(parsed.path) if parsed.scheme == "file" else text
        relative = urllib.parse.unquote(text)
        if "://" in self.root:
            return f"{self.root}/{urllib.parse.quote(relative)}"
        return os.path.join(self.root, relative)

    def _dv_path(self, dv: Mapping[str, Any], where: str) -> str:
        raw = dv_file_path(dv, "", where)
        return self._path(raw.lstrip("/") if dv.get("storageType") == "u" else raw)

    def open_file(self, path: str) -> Any:
        """A data or deletion-vector file, with the ``storage_options`` given."""
        return self.file_opener.open(path)

    # -- protocol -------------------------------------------------------------------------------
    def _check_protocol(self, protocol: Mapping[str, Any], version: int) -> None:
        reader = int(protocol.get("minReaderVersion", 1))
        where = f"Delta table {self.name} (version {version})"
        if reader > 3:
            raise UnsupportedFormatFeatureError(f"{where} needs reader version {reader}; fieldshift reads Delta reader "
                                                "versions 1 to 3")
        if reader == 3:
            unknown = sorted(set(protocol.get("readerFeatures") or []) - READER_FEATURES)
            if unknown:
                raise UnsupportedFormatFeatureError(
                    f"{where} uses reader feature(s) {', '.join(unknown)}, which fieldshift does not read; it reads "
                    f"{', '.join(sorted(READER_FEATURES))}")

    # -- history --------------------------------------------------------------------------------
    def _load(self) -> _History:
        """Every version's time, operation, protocol, metadata and schema id (the log listed again, each
        commit parsed once)."""
        self.log.refresh()
        latest = self.log.latest
        if self._history is not None and self._history.latest == latest:
            return self._history
        start = self.log.earliest()
        base = self.log.replay(start) if start > 0 else LogState(-1)  # a checkpoint start: its state
        protocol, metadata = base.protocol, base.metadata
        raw: list[_Raw] = []
        previous: dt.datetime | None = None
        for v in range(start, latest + 1):
            info: dict[str, Any] = {}
            if v in self.log.commits:
                for action in self.log.commit_actions(v):
                    if "commitInfo" in action:
                        info = action["commitInfo"] or {}
                    elif "metaData" in action:
                        metadata = action["metaData"]
                    elif "protocol" in action:
                        protocol = action["protocol"]
                mtime = self.log.commits[v][1]
            else:
                mtime = self.log.checkpoints[v][0].mtime
            if protocol is None or metadata is None:
                raise CatalogFormatError(f"Delta table {self.name}: version {v} has no "
                                         f"{'protocol' if protocol is None else 'metaData'} action")
            stamp = _commit_time(info, mtime)
            if previous is not None and stamp <= previous:
                stamp = previous + dt.timedelta(milliseconds=1)  # Delta's monotonic commit times
            previous = stamp
            raw.append((v, stamp, info, protocol, metadata))
        return self._build(latest, raw)

    def _build(self, latest: int, raw: list[_Raw]) -> _History:
        keys: list[tuple[str, str]] = []
        ids: list[int] = []
        for v, _stamp, _info, protocol, metadata in raw:
            key = (str(metadata.get("schemaString")), _mode(protocol, metadata))
            if not keys or keys[-1] != key:
                keys.append(key)
                ids.append(v)
        parsed = [parse_schema_string(text, f"Delta table {self.name}, schema {sid}") for (text, _), sid
                  in zip(keys, ids, strict=True)]
        max_id = max((int((m.get("configuration") or {}).get("delta.columnMapping.maxColumnId", 0) or 0)
                      for *_, m in raw), default=0)
        builder = DeltaSchemaBuilder([(p, mode) for p, (_, mode) in zip(parsed, keys, strict=True)], max_id)
        schemas = {sid: builder.build(p, mode, sid, f"Delta table {self.name}, schema {sid}")
                   for p, (_, mode), sid in zip(parsed, keys, ids, strict=True)}
        versions: dict[int, _Version] = {}
        current = -1
        for v, stamp, info, protocol, metadata in raw:
            if current + 1 < len(ids) and ids[current + 1] == v:
                current += 1
            versions[v] = _Version(v, stamp, ids[current], info.get("operation"), protocol, metadata)
        self._history = _History(latest, versions, schemas, builder.name_mapping())
        return self._history


def _mode(protocol: Mapping[str, Any], metadata: Mapping[str, Any]) -> str:
    """The column-mapping mode readers honour: the table property, when the protocol supports the feature."""
    reader = int(protocol.get("minReaderVersion", 1))
    supported = reader == 2 or (reader == 3 and "columnMapping" in (protocol.get("readerFeatures") or []))
    mode = str((metadata.get("configuration") or {}).get("delta.columnMapping.mode", "none")).lower()
    return mode if supported and mode in ("name", "id") else "none"


def _commit_time(info: Mapping[str, Any], mtime: dt.datetime | None) -> dt.datetime:
    ict = info.get("inCommitTimestamp")
    if isinstance(ict, int) and not isinstance(ict, bool):
        return dt.datetime.fromtimestamp(ict / 1000, dt.UTC)
    if mtime is None:
        stamp = info.get("timestamp")
        return dt.datetime.fromtimestamp(int(stamp) / 1000, dt.UTC) if stamp else dt.datetime.fromtimestamp(0, dt.UTC)
    return mtime if mtime.tzinfo is not None else mtime.replace(tzinfo=dt.UTC)


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, list):
        return dict(value)
    return {}
