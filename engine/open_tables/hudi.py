"""A Hudi table as a read source: its timeline and file slices (through hudi-rs, the ``hudi`` package)
turned into the facts a scan needs (``source.py``), read-only.

What is read: the completed commits, delta commits and replace commits of the active timeline (each
instant is a snapshot, its id the instant's text), the schema each commit recorded (``hudi_schema``: Avro
schemas by name, or Hudi's internal schema with ids when schema-on-read evolution wrote one), and the file
slices live at an instant. A slice that is only a Parquet base file is read and evolved by fieldshift,
its columns mapped by name through the schema of the commit that wrote it (the instant in its name). A
merge-on-read slice with log files is merged by hudi-rs' own file-group reader (Hudi's log merging lives
there) and its Arrow result is evolved by fieldshift, mapped by the names of the schema read. Partition
paths of simple and complex key generators give the partition columns' values, so a filter on them skips
other partitions.

Refused by name: bootstrapped tables (their rows live in the source table's files), base files other
than Parquet (ORC, HFile, Lance), the table versions and options hudi-rs refuses (versions other than 6,
8 and 9; ``drop.partition.columns``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow as pa

from fieldshift.errors import (
    CatalogFormatError,
    InvalidNameError,
    MissingDependencyError,
    SnapshotNotFoundError,
    UnsupportedFormatFeatureError,
)
from fieldshift.open_tables.hudi_schema import AvroIds, internal_schema
from fieldshift.open_tables.source import (
    ColumnStats,
    DataFileEntry,
    ReaderRows,
    SnapshotContent,
    SnapshotId,
    SourceSnapshot,
)
from fieldshift.open_tables.store_files import StoreFiles
from fieldshift.schema.model import Schema
from fieldshift.schema.name_mapping import NameMapping
from fieldshift.schema.policy import CastPolicy

__all__ = ["HUDI_POLICY", "HudiSource", "is_hudi_location"]

# Hudi's type changes (its schema-on-read table and on-write string <-> bytes), plus how Spark stores some
# Avro types in Parquet (a byte column as INT_8, timestamps in another unit): casts Hudi's readers make.
HUDI_POLICY = CastPolicy("hudi", CastPolicy.hudi().rules | {"timestamp_unit_widening", "fixed_to_binary"})
_DATA_ACTIONS = ("commit", "deltacommit", "replacecommit")
_NULL_PARTITIONS = ("__HIVE_DEFAULT_PARTITION__", "default", "")


def is_hudi_location(text: str) -> bool:
    """A local directory that holds a Hudi table (``.hoodie/``)."""
    return "://" not in text and (Path(text) / ".hoodie").is_dir()


def _hudi() -> Any:
    try:
        import hudi
    except ImportError:
        raise MissingDependencyError("reading Hudi tables needs the hudi package (hudi-rs' Python bindings): "
                                     "pip install 'fieldshift[hudi]'") from None
    return hudi


def _refusal(e: Exception, where: str) -> Exception:
    """hudi-rs' error as fieldshift's: what it does not support is a feature refused, anything else a table
    it cannot read."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if any(w in text.lower() for w in ("unsupported", "only support", "not supported")):
        return UnsupportedFormatFeatureError(f"Hudi table {where}: {text}")
    return CatalogFormatError(f"Hudi table {where} cannot be read by hudi-rs: {text}")


class HudiSource:
    """One Hudi table (copy-on-write or merge-on-read) at ``base_path`` (a directory or URI holding
    ``.hoodie/``); ``name`` labels it (default: ``hoodie.table.name``); ``storage_options`` go to hudi-rs."""

    format = "hudi"
    writer = "Apache Hudi (its Spark, Flink or Java writers)"
    policy = HUDI_POLICY

    def __init__(self, base_path: str | Path, name: str | None = None, *,
                 storage_options: Mapping[str, str] | None = None) -> None:
        hudi = _hudi()
        text = str(base_path)
        if "://" not in text:
            if not (Path(text) / ".hoodie").is_dir():
                raise InvalidNameError(f"no Hudi table at {text}: it has no .hoodie directory")
            text = os.path.abspath(text)
        self.base = text.rstrip("/")
        self.file_opener = StoreFiles(storage_options, f"Hudi table {self.base}", strict=False)
        builder = hudi.HudiTableBuilder.from_base_uri(self.base)
        if storage_options:
            builder = builder.with_storage_options(dict(storage_options))
        try:
            self.table = builder.build()
        except Exception as e:  # hudi-rs raises its own HudiCoreError
            raise _refusal(e, self.base) from None
        self._hudi = hudi
        self.props: dict[str, str] = dict(self.table.hudi_options())
        self.name = name or self.props.get("hoodie.table.name") or Path(self.base).name
        self._refuse_unread()
        self.meta_fields = self.props.get("hoodie.populate.meta.fields", "true").lower() != "false"
        self._instants = self._load_timeline()
        self._load_schemas()
        self._mappings: dict[int, NameMapping] = {}
        self._instant_schema: dict[str, int] = {}
        self._record_counts: dict[str, int] = {}
        for meta in self._metadata.values():
            for stats in (meta.get("partitionToWriteStats") or {}).values():
                for st in stats or []:
                    if st.get("path") and st.get("numWrites") is not None:
                        self._record_counts[st["path"]] = int(st["numWrites"])

    # -- what fieldshift does not read ----------------------------------------------------------
    def _refuse_unread(self) -> None:
        if self.props.get("hoodie.bootstrap.base.path"):
            raise UnsupportedFormatFeatureError(
                f"Hudi table {self.name} is bootstrapped from {self.props['hoodie.bootstrap.base.path']} (its rows "
                "live in that table's files); fieldshift does not read bootstrapped tables")
        base_format = self.props.get("hoodie.table.base.file.format", "PARQUET").upper()
        if base_format != "PARQUET":
            raise UnsupportedFormatFeatureError(f"Hudi table {self.name} keeps its base files as {base_format}; "
                                                "fieldshift reads Parquet base files")

    # -- the timeline ---------------------------------------------------------------------------
    def _load_timeline(self) -> list[tuple[Any, dict[str, Any]]]:
        timeline = self.table.get_timeline()
        found: dict[str, Any] = {}
        try:
            for getter in (timeline.get_completed_commits, timeline.get_completed_deltacommits,
                           timeline.get_completed_replacecommits):
                for instant in getter():
                    found.setdefault(instant.timestamp, instant)
        except Exception as e:
            raise _refusal(e, self.name) from None
        out = []
        self._metadata: dict[str, dict[str, Any]] = {}
        for ts in sorted(found, key=lambda t: (len(t), t)):
            instant = found[ts]
            if ts.startswith("0000000000000"):  # Hudi's bootstrap instants
                raise UnsupportedFormatFeatureError(f"Hudi table {self.name} was bootstrapped (instant {ts}); "
                                                    "fieldshift does not read bootstrapped tables")
            try:
                meta = json.loads(timeline.get_instant_metadata_in_json(instant) or "{}")
            except Exception as e:
                raise _refusal(e, f"{self.name}, instant {ts}") from None
            self._metadata[ts] = meta if isinstance(meta, dict) else {}
            out.append((instant, self._metadata[ts]))
        return out

    def _load_schemas(self) -> None:
        """Each snapshot's schema id and every version, from the commits' schemas (internal or Avro)."""
        self._schemas: dict[int, Schema] = {}
        self._schema_of: dict[str, int] = {}
        internal = self._internal_versions()
        if internal:
            self.mode = "internal"
            self._versions = sorted(internal)  # (version id, schema id)
            for i, version in enumerate(self._versions):
                self._schemas[i] = internal_schema(internal[version], i,
                                                   f"Hudi table {self.name}, internal schema {version}")
            for instant, _ in self._instants:
                self._schema_of[instant.timestamp] = self._version_at(instant.timestamp)
            return
        self.mode = "avro"
        ids, by_text, latest = AvroIds(), {}, None
        create = self.props.get("hoodie.table.create.schema")
        for instant, meta in self._instants:
            text = (meta.get("extraMetadata") or {}).get("schema") or latest or create
            if not text:
                try:
                    text = self.table.get_schema_in_avro_str()
                except Exception as e:
                    raise _refusal(e, self.name) from None
            if text not in by_text:
                sid = by_text[text] = len(by_text)
                self._schemas[sid] = ids.schema(text, sid, meta_fields=self.meta_fields,
                                                 where=f"Hudi table {self.name}, commit {instant.timestamp}")
            self._schema_of[instant.timestamp] = by_text[text]
            latest = text

    def _internal_versions(self) -> dict[int, dict[str, Any]]:
        """Internal schema versions by version id: each commit's ``latestSchema`` and the history file."""
        versions: dict[int, dict[str, Any]] = {}
        for instant, meta in self._instants:
            text = (meta.get("extraMetadata") or {}).get("latestSchema")
            if text:
                obj = self._json(text, f"the internal schema of commit {instant.timestamp}")
                versions[int(obj.get("version-id", instant.timestamp))] = obj
        history = self._history_file()
        if history is not None:
            for obj in history.get("schemas") or []:
                if isinstance(obj, dict) and "version-id" in obj:
                    versions.setdefault(int(obj["version-id"]), obj)
        return versions

    def _history_file(self) -> dict[str, Any] | None:
        """The newest ``.hoodie/.schema/<instant>.schemacommit`` of a completed commit (local tables)."""
        if "://" in self.base:
            return None
        folder = Path(self.base) / ".hoodie" / ".schema"
        done = {i.timestamp for i, _ in self._instants}
        files = sorted((p for p in folder.glob("*.schemacommit") if p.name.split(".")[0] in done),
                       key=lambda p: (len(p.name), p.name)) if folder.is_dir() else []
        if not files:
            return None
        return self._json(files[-1].read_text(), f"the schema history {files[-1]}")

    def _json(self, text: str, what: str) -> dict[str, Any]:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise CatalogFormatError(f"Hudi table {self.name}: {what} is not valid JSON ({e})") from None
        if not isinstance(obj, dict):
            raise CatalogFormatError(f"Hudi table {self.name}: {what} is not a JSON object")
        return obj

    def _version_at(self, instant: str) -> int:
        """The schema id of the newest internal schema version at or before ``instant`` (Hudi's
        ``searchSchema``); the oldest one for an instant before them all."""
        when, found = int(instant), 0
        for i, version in enumerate(self._versions):
            if version <= when:
                found = i
        return found

    def _check_not_archived(self, instant: str) -> None:
        """A file whose commit left the active timeline (archived) and predates every internal schema version
        fieldshift sees (the commits' own and ``.hoodie/.schema``'s) was written with a schema it cannot know:
        its columns' ids are unknown, and reading it by a later version's names would lose renamed columns."""
        active = {i.timestamp for i, _ in self._instants}
        if instant not in active and self._versions and int(instant) < self._versions[0]:
            raise UnsupportedFormatFeatureError(
                f"Hudi table {self.name}: a base file was written at instant {instant}, which is archived (not in the "
                f"active timeline), and its internal schema is in none of the versions fieldshift reads (the oldest "
                f"is {self._versions[0]}; the .hoodie/.schema history holds none older). fieldshift does not read "
                "the archived timeline; restore .hoodie/.schema, or rewrite the file group (compaction or clustering)")

    def schema_at_instant(self, instant: str) -> Schema:
        """The schema a file written at ``instant`` was written with (the newest version at or before it)."""
        if instant not in self._instant_schema:
            if self.mode == "internal":
                self._check_not_archived(instant)
                found = self._version_at(instant)
            else:
                key = (len(instant), instant)
                earlier = [s.schema_id for s in self.snapshots()
                           if (len(str(s.snapshot_id)), str(s.snapshot_id)) <= key]
                found = earlier[-1] if earlier else self.snapshots()[0].schema_id
            self._instant_schema[instant] = found
        return self._schemas[self._instant_schema[instant]]

    def _mapping(self, schema: Schema) -> NameMapping:
        """The names of ``schema`` to its ids (one mapping per schema version)."""
        if schema.schema_id not in self._mappings:
            self._mappings[schema.schema_id] = NameMapping.from_schema(schema)
        return self._mappings[schema.schema_id]

    # -- the read-source interface ------------------------------------------------------------
    def snapshots(self) -> tuple[SourceSnapshot, ...]:
        """The completed commits, delta commits and replace commits of the active timeline, oldest first."""
        if not hasattr(self, "_snapshots"):
            self._snapshots = tuple(
                SourceSnapshot(instant.timestamp, dt.datetime.fromtimestamp(instant.epoch_mills / 1000, dt.UTC),
                               self._schema_of[instant.timestamp],
                               f"{instant.action} ({meta['operationType']})" if meta.get("operationType")
                               else instant.action)
                for instant, meta in self._instants)
        return self._snapshots

    def schemas(self) -> Mapping[int, Schema]:
        return dict(self._schemas)

    def content(self, snapshot_id: SnapshotId) -> SnapshotContent:
        snap = next((s for s in self.snapshots() if s.snapshot_id == str(snapshot_id)), None)
        if snap is None:
            known = [s.snapshot_id for s in self.snapshots()]
            archived = bool(known) and (len(str(snapshot_id)), str(snapshot_id)) < (len(known[0]), str(known[0]))
            raise SnapshotNotFoundError(
                f"Hudi table {self.name} has no completed instant {snapshot_id!r} in its active timeline; its "
                f"instants are {known}" + (". An instant older than the first may have been archived: fieldshift "
                                           "reads the active timeline only, so it cannot read the table as of then"
                                           if archived else ""))
        schema = self._schemas[snap.schema_id]
        options = self._hudi.HudiReadOptions().with_as_of_timestamp(str(snap.snapshot_id))
        try:
            slices = self.table.get_file_slices(options)
        except Exception as e:
            raise _refusal(e, f"{self.name} at {snap.snapshot_id}") from None
        files, merged = [], []
        read_mapping = self._mapping(schema)
        for s in slices:
            partition = self._partition_stats(s.partition_path, schema, max(int(s.num_records), 1))
            if s.has_log_files() or not s.base_file_name:
                merged.append(ReaderRows(
                    f"{self._path(s.base_file_relative_path()) if s.base_file_name else s.file_id} with log files "
                    f"{', '.join(s.log_file_names)}", self._slice_reader(s, options), read_mapping, partition))
                continue
            rel = s.base_file_relative_path()
            path = self._path(rel)
            count = self._record_counts.get(rel)
            if count is None:
                count = self.file_opener.footer_rows(path)
            mapping = self._mapping(self.schema_at_instant(_file_instant(s.base_file_name)))
            stats = {k: ColumnStats(count, 0, v.lower, v.upper, None, v.type) for k, v in partition.items()}
            files.append(DataFileEntry(path, count, name_mapping=mapping, stats=stats, file_size=s.base_file_size))
        return SnapshotContent(snap, schema, tuple(files), reader_rows=tuple(merged))

    # -- files and slices -----------------------------------------------------------------------
    def _path(self, rel: str) -> str:
        return f"{self.base}/{rel.lstrip('/')}"

    def open_file(self, path: str) -> Any:
        """A base file, with the ``storage_options`` given (the ones hudi-rs also takes)."""
        return self.file_opener.open(path)

    def _slice_reader(self, s: Any, options: Any) -> Callable[[], Iterator[pa.RecordBatch]]:
        """Hudi's own merge of a file slice (base file + log files), as of the snapshot read."""
        def read() -> Iterator[pa.RecordBatch]:
            try:
                reader = self.table.create_file_group_reader_with_options(options)
                batches = list(reader.read_file_slice_stream(s, options))
            except Exception as e:
                raise _refusal(e, f"{self.name}, file group {s.file_id}") from None
            yield from batches
        return read

    def _partition_stats(self, partition_path: str, schema: Schema, rows: int) -> dict[int, ColumnStats]:
        """The partition columns' values a partition path states (simple and complex key generators), as
        statistics in the columns' types: a filter on them skips other partitions."""
        fields = [f.split(":")[0].strip() for f in self.props.get("hoodie.table.partition.fields", "").split(",")
                  if f.strip()]
        keygen = (self.props.get("hoodie.table.keygenerator.class") or
                  self.props.get("hoodie.table.keygenerator.type") or "").lower()
        if not fields or not partition_path or not any(k in keygen for k in ("simple", "complex")):
            return {}
        parts = partition_path.strip("/").split("/")
        if len(parts) != len(fields):
            return {}
        hive = self.props.get("hoodie.datasource.write.hive_style_partitioning", "false").lower() == "true"
        encoded = self.props.get("hoodie.datasource.write.partitionpath.urlencode", "false").lower() == "true"
        by_name = {f.name: f for f in schema.fields}
        out = {}
        for name, part in zip(fields, parts, strict=True):
            if hive:
                key, sep, part = part.partition("=")
                if not sep or key != name:
                    return {}
            value_text = unquote(part) if encoded else part
            field = by_name.get(name)
            if field is None or value_text in _NULL_PARTITIONS or not isinstance(field.type, pa.DataType):
                continue
            value = _typed(value_text, field.type)
            if value is not None:
                out[field.id] = ColumnStats(rows, 0, value, value, None, field.type)
        return out


def _typed(text: str, t: pa.DataType) -> Any:
    """A partition path's text as a value of the column's type (None: a type paths do not state exactly)."""
    try:
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return text
        if pa.types.is_integer(t):
            return int(text)
        if pa.types.is_date32(t):
            return dt.date.fromisoformat(text)
    except ValueError:
        return None
    return None


def _file_instant(name: str) -> str:
    """The instant that wrote a base file: ``<file id>_<write token>_<instant>.parquet``."""
    return name.rsplit("_", 1)[-1].split(".", 1)[0]
