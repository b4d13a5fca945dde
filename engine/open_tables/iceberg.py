"""An Iceberg table (format versions 1 to 3) as a read source, read-only.

PyIceberg (the optional ``iceberg`` extra) finds the table — a ``metadata.json`` file, a table directory
resolved through ``metadata/version-hint.text`` as its ``StaticTable`` does, or any catalog it knows —
parses the metadata and reads the manifest lists. The manifests are read here (``iceberg_manifests``:
PyIceberg 0.12's own reader drops the v3 deletion-vector fields) and planned here (``iceberg_deletes``:
its ``plan_files`` refuses equality deletes), so every data file reaches the one scan pipeline with its
deletes, its partition values and its statistics decoded in the type it was written with.

What is read: every snapshot and its schema (time travel reads with that snapshot's schema), the
snapshot log for reads as of a time, partition specs and values, column bounds and counts, Parquet data
files with or without field ids (then through ``schema.name-mapping.default``), Parquet position deletes,
deletion vectors in Puffin files, equality deletes, v3 initial defaults. What is refused, by name:
format versions above 3, encrypted files and manifests, ORC and Avro data files, types fieldshift has no
counterpart for (variant, geometry, geography).
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from fieldshift.errors import (
    CatalogConnectionError,
    CatalogFormatError,
    InvalidNameError,
    InvalidTypeError,
    SnapshotNotFoundError,
    UnsupportedFormatFeatureError,
)
from fieldshift.extras import require
from fieldshift.gc_pause import paused_gc
from fieldshift.open_tables.iceberg_deletes import DeleteIndex
from fieldshift.open_tables.iceberg_manifests import CONTENT_DATA, ManifestRow, read_manifest
from fieldshift.open_tables.iceberg_values import decode_bound, partition_python_value
from fieldshift.open_tables.source import (
    ColumnStats,
    DataFileEntry,
    PartitionRange,
    PartitionValue,
    SnapshotContent,
    SourcePartitionField,
    SourcePartitionSpec,
    SourceSnapshot,
)
from fieldshift.schema.model import Schema
from fieldshift.schema.name_mapping import NameMapping
from fieldshift.schema.policy import CastPolicy

__all__ = ["FORMAT_VERSIONS", "ICEBERG_POLICY", "IcebergFiles", "IcebergSource", "is_iceberg_location"]

FORMAT_VERSIONS = (1, 2, 3)
NAME_MAPPING_PROPERTY = "schema.name-mapping.default"
# Iceberg's promotions (int->long, float->double, decimal precision, date->timestamp, unknown->any)
ICEBERG_POLICY = CastPolicy.iceberg()
_WRITER = "an Iceberg writer (PyIceberg, Spark, Trino, Flink, DuckDB's iceberg extension)"


def is_iceberg_location(text: str) -> bool:
    """A path that can only mean an Iceberg table: a metadata JSON file, or a directory with
    ``metadata/version-hint.text`` (or the ``metadata`` directory itself)."""
    if text.endswith(".metadata.json"):
        return True
    if "://" in text:
        return False
    p = Path(text)
    return (p / "metadata" / "version-hint.text").is_file() or (p.name == "metadata"
                                                                and (p / "version-hint.text").is_file())


class IcebergSource:
    """One Iceberg table. ``source`` is a metadata JSON path or a table directory (``catalog`` None), or
    ``name`` (``namespace.table``) in the catalog that ``catalog`` (PyIceberg catalog properties, e.g.
    ``{"type": "sql", "uri": "sqlite:///cat.db", "warehouse": "file:///wh"}``) describes; ``properties``
    go to PyIceberg's FileIO (object-store credentials)."""

    format = "iceberg"
    writer = _WRITER
    policy = ICEBERG_POLICY
    prunes_groups = True  # content(keep=...) skips manifests by their partition summaries
    partition_transforms = "iceberg"  # year/month/day/hour since 1970, Iceberg's bucket hash and truncation

    def __init__(self, source: str | Path | None = None, name: str | None = None, *,
                 catalog: Mapping[str, Any] | None = None, properties: Mapping[str, str] | None = None) -> None:
        require("pyiceberg", "iceberg", "Reading an Iceberg table")
        props = {str(k): str(v) for k, v in (properties or {}).items()}
        if catalog is not None:
            table, raw = _from_catalog(dict(catalog), name, props), None
            self.name = name or ""
        else:
            if source is None:
                raise InvalidNameError("give an Iceberg table's metadata.json path or directory, or catalog={...} "
                                       "with name='namespace.table'")
            table, raw = _from_location(str(source), props)
            self.name = name or _table_name(str(source))
        self._table = table
        self.metadata = table.metadata
        self.where = str(table.metadata_location)
        self.io = table.io
        self.file_opener = IcebergFiles(dict(self.io.properties))
        version = int(self.metadata.format_version)
        if version not in FORMAT_VERSIONS:
            raise UnsupportedFormatFeatureError(f"Iceberg table {self.where} has format version {version}; fieldshift "
                                                f"reads versions {', '.join(map(str, FORMAT_VERSIONS))}")
        self.format_version = version
        self.current_schema_id = int(self.metadata.current_schema_id)
        self._schema_json: dict[int, Any] = {int(s.schema_id): s for s in self.metadata.schemas}
        self._schema_json.update(_raw_schemas(self.io, self.where, set(self._schema_json), raw))
        self._schemas: dict[int, Schema] = {}
        self._snapshots: tuple[SourceSnapshot, ...] | None = None
        self._rows: dict[str, list[ManifestRow]] = {}
        self._contents: dict[int, SnapshotContent] = {}
        self._specs = {int(s.spec_id): s for s in self.metadata.partition_specs}
        text = self.metadata.properties.get(NAME_MAPPING_PROPERTY)
        self.name_mapping = NameMapping.from_json(text) if text else None

    # -- schemas and specs --------------------------------------------------------------------------
    def schemas(self) -> Mapping[int, Schema]:
        """Every schema the table has had, by id (one with a type fieldshift cannot read raises)."""
        return {sid: self.schema(sid) for sid in sorted(self._schema_json)}

    def schema(self, schema_id: int) -> Schema:
        """Schema ``schema_id`` in fieldshift's terms (ids, types, docs, initial defaults)."""
        if schema_id not in self._schemas:
            model = self._schema_json.get(schema_id)
            if model is None:
                raise CatalogFormatError(f"Iceberg table {self.where} has no schema {schema_id} (it has "
                                         f"{sorted(self._schema_json)}); the metadata is inconsistent")
            text = model if isinstance(model, dict) else model.model_dump_json(by_alias=True)
            try:
                self._schemas[schema_id] = Schema.from_json(text)
            except InvalidTypeError as e:
                raise UnsupportedFormatFeatureError(f"Iceberg table {self.where}, schema {schema_id}: {e}; "
                                                    "fieldshift has no counterpart for this type") from None
        return self._schemas[schema_id]

    def specs(self) -> tuple[SourcePartitionSpec, ...]:
        """Every partition spec by id order (data files keep the spec they were written with)."""
        return tuple(SourcePartitionSpec(sid, tuple(
            SourcePartitionField(int(f.source_id), int(f.field_id), f.name, str(f.transform)) for f in spec.fields))
            for sid, spec in sorted(self._specs.items()))

    def _unpartitioned(self, spec_id: int) -> bool:
        spec = self._specs.get(spec_id)
        return spec is None or all(str(f.transform) == "void" for f in spec.fields)

    # -- snapshots ----------------------------------------------------------------------------------
    def _schema_id_of(self, snapshot: Any) -> int:
        return int(snapshot.schema_id) if snapshot.schema_id is not None else self.current_schema_id

    def snapshots(self) -> tuple[SourceSnapshot, ...]:
        """The table's history: the snapshot log (which snapshot was current when), oldest first, so a read
        as of a time takes the snapshot that was current then (the spec's point-in-time rule); a table
        without a log lists the current snapshot's ancestors."""
        if self._snapshots is None:
            by_id = {int(s.snapshot_id): s for s in self.metadata.snapshots}
            entries = [(int(e.snapshot_id), int(e.timestamp_ms)) for e in self.metadata.snapshot_log
                       if int(e.snapshot_id) in by_id]
            current = self.metadata.current_snapshot_id
            if not entries:
                chain = []
                sid = current
                while sid is not None and sid in by_id and len(chain) <= len(by_id):
                    chain.append(by_id[sid])
                    sid = by_id[sid].parent_snapshot_id
                entries = [(int(s.snapshot_id), int(s.timestamp_ms)) for s in reversed(chain)]
            elif current is not None and current in by_id and entries[-1][0] != current:
                entries.append((int(current), int(by_id[current].timestamp_ms)))
            self._snapshots = tuple(
                SourceSnapshot(sid, _utc_ms(ms), self._schema_id_of(by_id[sid]), _operation(by_id[sid]))
                for sid, ms in entries)
        return self._snapshots

    # -- content ------------------------------------------------------------------------------------
    def _snapshot(self, snapshot_id: int) -> Any:
        snap = self.metadata.snapshot_by_id(snapshot_id)
        if snap is None:
            known = [s.snapshot_id for s in self.snapshots()]
            raise SnapshotNotFoundError(f"Iceberg table {self.name} has no snapshot {snapshot_id} (never, or "
                                        f"expired); its history is {known}")
        return snap

    def schema_id_at(self, snapshot_id: int) -> int:
        """The schema a read of ``snapshot_id`` uses (the snapshot's own; the current one for v1 snapshots
        that recorded none)."""
        return self._schema_id_of(self._snapshot(snapshot_id))

    def content(self, snapshot_id: int, keep: Callable[[tuple[PartitionRange, ...]], bool] | None = None
                ) -> SnapshotContent:
        """The live data files of ``snapshot_id`` with the deletes the spec's scoping rules apply to each;
        ``keep``: a test on a manifest's partition ranges, False skipping the manifest unread (the scan's
        filter projected through the manifest's spec)."""
        if keep is None and snapshot_id in self._contents:
            return self._contents[snapshot_id]
        snap = self._snapshot(snapshot_id)
        with paused_gc():  # tens of thousands of cycle-free entries: collections would walk them all, often
            out = self._build(snap, snapshot_id, keep)
        if keep is None:
            self._contents[snapshot_id] = out
        return out

    def _build(self, snap: Any, snapshot_id: int, keep: Callable[[tuple[PartitionRange, ...]], bool] | None
               ) -> SnapshotContent:
        when = _utc_ms(int(snap.timestamp_ms))
        schema_id = self._schema_id_of(snap)
        schema = self.schema(schema_id)
        rows: list[ManifestRow] = []
        try:
            manifests = snap.manifests(self.io)
        except FileNotFoundError:
            raise CatalogFormatError(f"Iceberg table {self.name}: the manifest list {snap.manifest_list} of snapshot "
                                     f"{snapshot_id} is missing; the metadata references it. Restore it from a "
                                     "backup, or read another snapshot.") from None
        for manifest in manifests:
            if keep is not None and not keep(self._ranges(manifest, schema)):
                continue
            if getattr(manifest, "key_metadata", None):
                raise UnsupportedFormatFeatureError(f"Iceberg manifest {manifest.manifest_path} is encrypted; "
                                                    "fieldshift does not read encrypted tables")
            rows.extend(self._manifest_rows(manifest))
        for row in rows:
            if row.key_metadata:
                kind = "data file" if row.content == CONTENT_DATA else "delete file"
                raise UnsupportedFormatFeatureError(f"Iceberg {kind} {row.path} is encrypted (it has key_metadata); "
                                                    "fieldshift does not read encrypted files")
        index = DeleteIndex(rows, self._unpartitioned, _local_path)
        types = _primitive_types(schema)
        files = []
        for row in rows:
            if row.content != CONTENT_DATA:
                continue
            files.append(DataFileEntry(
                _local_path(row.path), int(row.record_count), file_format=row.file_format,
                name_mapping=self.name_mapping, partition=self._partition(row, schema),
                stats=_LazyStats(row, types), delete_files=() if index.empty else index.position_deletes(row),
                sequence_number=row.sequence_number, first_row_id=row.first_row_id, file_size=row.file_size,
                equality_deletes=() if index.empty else index.equality_deletes(row)))
        snapshot = SourceSnapshot(int(snap.snapshot_id), when, schema_id, _operation(snap))
        return SnapshotContent(snapshot, schema, tuple(files))

    def _ranges(self, manifest: Any, schema: Schema) -> tuple[PartitionRange, ...]:
        """A manifest's partition field summaries as ranges of ``PartitionValue`` values (bounds of a field
        whose source column the schema lacks, or that do not decode, stay unknown)."""
        spec = self._specs.get(int(manifest.partition_spec_id))
        summaries = manifest.partitions or []
        if spec is None or len(summaries) != len(spec.fields):
            return ()
        out = []
        for f, s in zip(spec.fields, summaries, strict=True):
            sid, transform = int(f.source_id), str(f.transform)
            source = schema.field(sid).type if schema.has_field(sid) else None
            result = _result_type(transform, source if isinstance(source, pa.DataType) else None)
            lower = upper = None
            if result is not None and s.lower_bound is not None and s.upper_bound is not None:
                lo, hi = decode_bound(bytes(s.lower_bound), result), decode_bound(bytes(s.upper_bound), result)
                if lo is not None and hi is not None:
                    lower = partition_python_value(lo[0], transform, source)
                    upper = partition_python_value(hi[0], transform, source)
            out.append(PartitionRange(sid, transform, lower, upper, s.contains_null))
        return tuple(out)

    def _manifest_rows(self, manifest: Any) -> list[ManifestRow]:
        path = manifest.manifest_path
        if path not in self._rows:
            try:
                self._rows[path] = read_manifest(manifest, self.io.new_input)
            except FileNotFoundError:
                raise CatalogFormatError(f"Iceberg manifest {path} is missing; the table's metadata references it. "
                                         "Restore it from a backup.") from None
        return self._rows[path]

    def _partition(self, row: ManifestRow, schema: Schema) -> tuple[PartitionValue, ...]:
        spec = self._specs.get(row.spec_id)
        if spec is None or not spec.fields:
            return ()
        out = []
        for f, raw in zip(spec.fields, row.partition, strict=False):
            sid = int(f.source_id)
            source = schema.field(sid).type if schema.has_field(sid) else None
            transform = str(f.transform)
            out.append(PartitionValue(sid, transform, partition_python_value(
                raw, transform, source if isinstance(source, pa.DataType) else None)))
        return tuple(out)

    def open_file(self, path: str) -> Any:
        """A data or delete file through the table's FileIO, which holds the store's options (``properties``:
        endpoint and credentials); a local path needs none."""
        if "://" not in path or path.startswith("file://"):
            return pafs.LocalFileSystem().open_input_file(path.removeprefix("file://"))
        return self.io.new_input(path).open(seekable=True)

    def close(self) -> None:
        """Nothing to release: PyIceberg's FileIO opens a file per read."""


class IcebergFiles:
    """Opens a table's files through a FileIO built from its properties (endpoint, credentials): what a scan
    shipped to a Spark executor keeps of the source, so executors read with the ``properties=`` the driver
    was given rather than the environment's. Pickles as the properties alone."""

    def __init__(self, properties: dict[str, str]) -> None:
        self.properties = properties
        self._io: Any = None

    def __call__(self, path: str) -> Any:
        if "://" not in path or path.startswith("file://"):
            return pafs.LocalFileSystem().open_input_file(path.removeprefix("file://"))
        if self._io is None:
            from pyiceberg.io import load_file_io

            self._io = load_file_io(self.properties, location=path)
        return self._io.new_input(path).open(seekable=True)

    def __getstate__(self) -> dict[str, Any]:
        return {"properties": self.properties, "_io": None}


class _LazyStats(Mapping[int, ColumnStats]):
    """A data file's statistics by field id, decoded from Iceberg's binary bounds only when asked for
    (a scan asks for the filter's columns; planning a 10,000-file table must not decode all of them)."""

    __slots__ = ("_done", "_row", "_types")

    def __init__(self, row: ManifestRow, types: Mapping[int, pa.DataType]) -> None:
        self._row, self._types = row, types
        self._done: dict[int, ColumnStats] = {}

    def _ids(self) -> set[int]:
        r = self._row
        return {int(k) for part in (r.value_counts, r.null_counts, r.lower_bounds, r.upper_bounds) if part
                for k in part}

    def __getitem__(self, field_id: int) -> ColumnStats:
        if field_id in self._done:
            return self._done[field_id]
        r = self._row
        if not any(part and field_id in part for part in (r.value_counts, r.null_counts, r.lower_bounds,
                                                           r.upper_bounds)):
            raise KeyError(field_id)
        values = (r.value_counts or {}).get(field_id)
        nulls = (r.null_counts or {}).get(field_id)
        nans = (r.nan_counts or {}).get(field_id)
        lower = upper = file_type = None
        current = self._types.get(field_id)
        lo, hi = (r.lower_bounds or {}).get(field_id), (r.upper_bounds or {}).get(field_id)
        if current is not None and lo is not None and hi is not None:
            a, b = decode_bound(bytes(lo), current), decode_bound(bytes(hi), current)
            if a is not None and b is not None and a[1] == b[1]:
                (lower, file_type), (upper, _) = a, b
        out = ColumnStats(None if values is None else int(values), None if nulls is None else int(nulls), lower,
                          upper, None if nans is None else nans > 0, file_type if file_type is not None else current)
        self._done[field_id] = out
        return out

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self._ids()))

    def __len__(self) -> int:
        return len(self._ids())


def _result_type(transform: str, source: pa.DataType | None) -> pa.DataType | None:
    """The type a transform's values are stored in (identity and truncate: the source's; the time
    transforms and bucket: int; a day is stored as a date, which has the same 4 bytes)."""
    kind = transform.split("[", 1)[0]
    if kind in ("identity", "truncate"):
        return source
    if kind in ("year", "month", "day", "hour", "bucket"):
        return pa.int32()
    return None


def _primitive_types(schema: Schema) -> dict[int, pa.DataType]:
    """Field id -> Arrow type of every primitive field outside lists and maps (the ones filters bind)."""
    out: dict[int, pa.DataType] = {}

    def walk(fields: Any) -> None:
        for f in fields:
            if isinstance(f.type, pa.DataType):
                out[f.id] = f.type
            elif hasattr(f.type, "fields"):
                walk(f.type.fields)

    walk(schema.fields)
    return out


# -- loading ----------------------------------------------------------------------------------------
def _from_location(text: str, properties: dict[str, str]) -> tuple[Any, Any]:
    """A PyIceberg StaticTable for a metadata JSON path or a table directory (or its metadata directory),
    and the metadata's JSON, read once: the format version is checked before PyIceberg parses it (it
    fails on versions it does not know with a validation error that does not say so)."""
    from pyiceberg.catalog.noop import NoopCatalog
    from pyiceberg.io import load_file_io
    from pyiceberg.table import StaticTable
    from pyiceberg.table.metadata import TableMetadataUtil

    location = text
    if not text.endswith(".metadata.json") and "://" not in text:
        p = Path(text)
        if p.name == "metadata" and (p / "version-hint.text").is_file():
            p = p.parent
        if not (p / "metadata" / "version-hint.text").is_file():
            found = sorted((p / "metadata").glob("*.metadata.json"), key=_natural) if (p / "metadata").is_dir() else []
            hint = f"; its metadata files include {found[-1].name}: pass that file's path" if found else ""
            raise InvalidNameError(f"{text} is neither an Iceberg metadata JSON file nor a table directory with "
                                   f"metadata/version-hint.text, so its current metadata is unknown{hint}")
        location = _hinted(p)
    elif not text.endswith(".metadata.json"):  # an object-store table directory: PyIceberg reads its hint
        try:
            location = StaticTable._metadata_location_from_version_hint(text, properties)
        except (OSError, ValueError) as e:
            raise InvalidNameError(f"no Iceberg table at {text}: {_first_line(e)}") from None
    try:
        raw = _read_json(load_file_io(properties, location), location)
    except FileNotFoundError as e:
        raise InvalidNameError(f"no Iceberg table at {text}: {_first_line(e)}") from None
    except (OSError, ValueError) as e:
        raise CatalogFormatError(f"Iceberg metadata at {location} cannot be read: {_first_line(e)}") from None
    version = raw.get("format-version") if isinstance(raw, dict) else None
    if isinstance(version, int) and version not in FORMAT_VERSIONS:
        raise UnsupportedFormatFeatureError(f"Iceberg table {text} has format version {version}; fieldshift reads "
                                            f"versions {', '.join(map(str, FORMAT_VERSIONS))}")
    try:
        metadata = TableMetadataUtil.parse_obj(raw)
    except (ValueError, TypeError, KeyError) as e:
        raise CatalogFormatError(f"Iceberg metadata {location} cannot be read: {_first_line(e)}") from None
    table = StaticTable(identifier=("static-table", location), metadata_location=location, metadata=metadata,
                        io=load_file_io({**properties, **metadata.properties}, location=location),
                        catalog=NoopCatalog("static-table"))
    return table, raw


def _natural(path: Path) -> list[Any]:
    """Sort key that puts v10.metadata.json after v9 (and 00010-... after 00009-...)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.name)]


def _hinted(table_dir: Path) -> str:
    """The metadata file ``metadata/version-hint.text`` names (a version number N means vN.metadata.json),
    resolved as PyIceberg's StaticTable resolves it."""
    hint = (table_dir / "metadata" / "version-hint.text").read_text(encoding="utf-8").strip()
    if hint.endswith(".metadata.json"):
        name = hint
    elif hint.isnumeric():
        name = f"v{hint}.metadata.json"
    else:
        name = f"{hint}.metadata.json"
    return str(table_dir / "metadata" / name)


def _read_json(io: Any, location: str) -> Any:
    """A metadata JSON file (gzip-compressed ones too)."""
    with io.new_input(location).open() as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


def _raw_schemas(io: Any, location: str, ids: set[int], raw: Any) -> dict[int, dict[str, Any]]:
    """The metadata file's own schema JSON by id: fieldshift parses Iceberg schema JSON itself, and PyIceberg
    0.12 writes some initial defaults back wrongly (a uuid's as bytes). Empty when the file cannot be
    re-read or its ids differ from PyIceberg's (then PyIceberg's parse is used)."""
    try:
        if raw is None:
            raw = _read_json(io, location)
        found = raw.get("schemas") or ([raw["schema"]] if "schema" in raw else [])
        out = {int(s.get("schema-id", 0)): s for s in found}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    return out if set(out) == ids else {}


def _from_catalog(properties: dict[str, Any], name: str | None, io_props: dict[str, str]) -> Any:
    if not name:
        raise InvalidNameError("name the table in the catalog: name='namespace.table'")
    from pyiceberg.catalog import load_catalog
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    catalog_name = str(properties.pop("name", "default"))  # PyIceberg's default; a SQL catalog keys tables by it
    try:
        catalog = load_catalog(catalog_name, **{str(k): str(v) for k, v in {**properties, **io_props}.items()})
    except (ValueError, TypeError, KeyError, ImportError) as e:
        raise CatalogConnectionError(f"PyIceberg cannot load the catalog {properties}: {_first_line(e)}") from None
    try:
        return catalog.load_table(name)
    except (NoSuchTableError, NoSuchNamespaceError):
        namespace = name.rpartition(".")[0]
        try:
            known = [".".join(t) for t in catalog.list_tables(namespace)] if namespace else []
        except Exception:  # listing is only for the message
            known = []
        raise InvalidNameError(f"the Iceberg catalog {catalog_name!r} has no table {name!r}; tables in "
                               f"{namespace or 'it'}: {', '.join(sorted(known)) or 'none'} (a catalog is named "
                               "by catalog={'name': ...}; PyIceberg's SQL catalog keeps each name's tables apart)"
                               ) from None
    except ValueError as e:
        text = _first_line(e)
        if "format version" in text.lower() or "format_version" in text.lower():
            raise UnsupportedFormatFeatureError(f"Iceberg table {name}: {text}; fieldshift reads versions "
                                                f"{', '.join(map(str, FORMAT_VERSIONS))}") from None
        raise CatalogFormatError(f"Iceberg table {name} cannot be read: {text}") from None


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def _table_name(location: str) -> str:
    """A readable name for a table opened by path: its directory's name."""
    p = Path(location.split("://", 1)[-1])
    if p.name.endswith(".metadata.json"):
        p = p.parent
    if p.name == "metadata":
        p = p.parent
    return p.name or location


def _local_path(path: str) -> str:
    """A path as the scan opens it: Hadoop's ``file:/x`` (one slash) is the local ``/x``; URIs stay."""
    if path.startswith("file:") and not path.startswith("file://"):
        return path[len("file:"):]
    return path


def _utc_ms(ms: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms)


def _operation(snapshot: Any) -> str | None:
    summary = getattr(snapshot, "summary", None)
    op = getattr(summary, "operation", None)
    return getattr(op, "value", op)
