"""A Paimon table in a filesystem warehouse as a read source, read-only.

The table directory (``<warehouse>/<db>.db/<table>``) holds everything: ``schema/schema-N`` (JSON: fields
with ids from 0, partition and primary keys, options), ``snapshot/snapshot-N`` (JSON: the schema id, the
time, base and delta manifest lists, the index manifest), ``manifest/`` (Avro manifest lists and
manifests; ``paimon_files``) and the data files under ``<partition dirs>/bucket-N/``. Each manifest entry
adds or deletes one data file and records the schema id the file was written with: its columns (no field
ids in pypaimon's Parquet files) find their fields through that schema by name, and the scan evolves them
to the read schema under the FLIP's rules (``CastPolicy.explicit()``). Java Paimon's files carry the ROW
fields' ids (the schema's own), ids of Paimon's ``SpecialFields`` scheme on array elements and map keys and
values (matched by position, as every list element is) and on ``_KEY_`` and system columns (no field of
the table has those ids at the top level).

A primary-key table's files are sorted runs of versions of rows: each file holds the key, a sequence
number (``_SEQUENCE_NUMBER``) and a row kind (``_VALUE_KIND``: +I, -U, +U, -D) beside the values. Versions
of one key in one partition and bucket merge (``MergeMode``), the newest by ``sequence.field`` (when set)
then sequence number: ``deduplicate`` keeps the newest version, dropping the key when that version
retracts it; ``partial-update`` takes each field's newest non-null value. Deletion vectors (index files)
drop rows by position.

Tags (``tag/tag-<name>``: a snapshot kept under a name, its files kept even after the snapshot itself
expired) read by ``snapshot_id="<name>"`` (Paimon forbids all-digit tag names, so a name never reads as
an id): the read is of the tagged snapshot, whose id the scan reports. Branches read by the table name
Paimon's engines use, ``db.table$branch_<name>``: a branch has its own ``schema/``, ``snapshot/`` and
``tag/`` under ``branch/branch-<name>/`` and shares the table's manifests, index and data files.

Refused by name: the ``first-row`` and ``aggregation`` merge engines, partial
updates with sequence groups or per-field aggregates, postpone-bucket files, files holding only some
columns (data evolution), ORC and Avro data files (by the scan), types without a counterpart.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from fieldshift.errors import InvalidNameError, SnapshotNotFoundError, UnsupportedFormatFeatureError
from fieldshift.open_tables.paimon_binary_row import decode_row
from fieldshift.open_tables.paimon_files import ManifestEntry, PaimonFiles, vector_reader
from fieldshift.open_tables.paimon_types import schema_from_json
from fieldshift.open_tables.source import (
    ColumnStats,
    DataFileEntry,
    MergeMode,
    PartitionValue,
    SnapshotContent,
    SourceSnapshot,
)
from fieldshift.schema.model import Schema
from fieldshift.schema.name_mapping import NameMapping
from fieldshift.schema.policy import CastPolicy

__all__ = ["PAIMON_POLICY", "RETRACT_KINDS", "PaimonSource", "is_paimon_table"]

# The FLIP's rule for type changes: every cast Paimon's explicit conversions allow, failures raise.
PAIMON_POLICY = CastPolicy.explicit()
SEQUENCE_COLUMN = "_SEQUENCE_NUMBER"
KIND_COLUMN = "_VALUE_KIND"
RETRACT_KINDS = (1, 3)  # -U (update before) and -D (delete)
_WRITER = "a Paimon writer (Flink, Spark, pypaimon)"
_NUMBERED = re.compile(r"(schema|snapshot)-(\d+)$")
_BRANCH_SUFFIX = "$branch_"
_MAIN_BRANCH = "main"
_DEFAULT_PARTITION = "__DEFAULT_PARTITION__"


def is_paimon_table(text: str) -> bool:
    """A local directory laid out as a Paimon table (``schema/schema-0`` beside ``snapshot/``)."""
    if "://" in text:
        return False
    p = Path(text)
    return (p / "schema").is_dir() and any(_NUMBERED.match(c.name) for c in (p / "schema").iterdir())


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() == "true"


class PaimonSource:
    """One Paimon table: ``source`` is the warehouse and ``name`` is ``db.table`` (``db.table$branch_b`` for
    branch ``b``), or ``source`` is the table directory itself and ``name`` None."""

    format = "paimon"
    writer = _WRITER
    policy = PAIMON_POLICY

    def __init__(self, source: str | Path, name: str | None = None) -> None:
        root = str(source).rstrip("/")
        branch = _MAIN_BRANCH
        if name and _BRANCH_SUFFIX in str(name):
            base, _, branch = str(name).partition(_BRANCH_SUFFIX)
            if not branch or "$" in branch:
                raise InvalidNameError(f"name a Paimon branch as 'database.table$branch_<name>', not {name!r}")
            name = base
        if name:
            db, dot, table = str(name).rpartition(".")
            if not dot or not db or not table:
                raise InvalidNameError(f"name a Paimon table as 'database.table', not {name!r}")
            root = f"{root}/{db}.db/{table}"
            self.name = str(name)
        else:
            self.name = root.rsplit("/", 1)[-1]
        self.files = PaimonFiles(root)
        self.branch = branch
        # schema/, snapshot/ and tag/ of a branch live under branch/branch-<name>/; the rest is shared
        self._meta: tuple[str, ...] = () if branch == _MAIN_BRANCH else ("branch", f"branch-{branch}")
        if self._meta:
            self.name = f"{self.name}$branch_{branch}"
            if not self.files.listdir(*self._meta, "schema"):
                have = sorted(d[len("branch-"):] for d in self.files.subdirs("branch") if d.startswith("branch-"))
                raise InvalidNameError(f"paimon table {self.name}: no branch {branch!r} (branches: "
                                       f"{', '.join(have) or 'none'})")
        self._schema_json: dict[int, dict[str, Any]] = {}
        for entry in self.files.listdir(*self._meta, "schema"):
            m = _NUMBERED.match(entry)
            if m and m.group(1) == "schema":
                self._schema_json[int(m.group(2))] = self.files.read_json(*self._meta, "schema", entry)
        if not self._schema_json:
            where = f"warehouse {source} has no table {name!r}" if name else f"{source} is not a Paimon table"
            raise InvalidNameError(f"{where}: no schema files in {self.files.path('schema')}")
        self._schemas = {sid: schema_from_json(obj) for sid, obj in sorted(self._schema_json.items())}
        self.current_schema_id = max(self._schemas)
        self._snapshots: tuple[SourceSnapshot, ...] | None = None
        self._snapshot_json: dict[int, dict[str, Any]] = {}
        self._mappings: dict[int, NameMapping] = {}

    def __repr__(self) -> str:
        return f"PaimonSource({self.files.root!r})"

    # -- metadata -------------------------------------------------------------------------------
    def schemas(self) -> Mapping[int, Schema]:
        return self._schemas

    def snapshots(self) -> tuple[SourceSnapshot, ...]:
        """Every snapshot still in ``snapshot/`` (expired ones are deleted by Paimon), oldest first."""
        if self._snapshots is None:
            ids = sorted(int(m.group(2)) for e in self.files.listdir(*self._meta, "snapshot")
                         if (m := _NUMBERED.match(e)) and m.group(1) == "snapshot")
            self._snapshots = tuple(self._snapshot_meta(sid) for sid in ids)
        return self._snapshots

    def _snapshot(self, snapshot_id: int) -> dict[str, Any]:
        if snapshot_id not in self._snapshot_json:
            if self.files.exists(*self._meta, "snapshot", f"snapshot-{snapshot_id}"):
                self._snapshot_json[snapshot_id] = self.files.read_json(*self._meta, "snapshot",
                                                                        f"snapshot-{snapshot_id}")
            else:  # expired, but a tag may keep it
                tagged = next((n for n, sid in self.tags().items() if sid == snapshot_id), None)
                if tagged is None:
                    have = [s.snapshot_id for s in self.snapshots()]
                    raise SnapshotNotFoundError(f"paimon table {self.name} has no snapshot {snapshot_id}; its "
                                                f"snapshots are {', '.join(map(str, have)) or 'none'}")
                self._snapshot_json[snapshot_id] = self.files.read_json(*self._meta, "tag", f"tag-{tagged}")
        return self._snapshot_json[snapshot_id]

    def tags(self) -> dict[str, int]:
        """The table's (or branch's) tags: name -> the id of the snapshot each one keeps."""
        out = {}
        for entry in self.files.listdir(*self._meta, "tag"):
            if entry.startswith("tag-"):
                out[entry[len("tag-"):]] = int(self.files.read_json(*self._meta, "tag", entry)["id"])
        return out

    def resolve_name(self, name: str) -> int:
        """The snapshot id a tag names (``snapshot_id="<tag>"``)."""
        found = self.tags()
        if name not in found:
            raise SnapshotNotFoundError(f"paimon table {self.name} has no tag {name!r}; its tags are "
                                        f"{', '.join(sorted(found)) or 'none'}")
        return found[name]

    def options(self, schema_id: int) -> dict[str, str]:
        """The table options schema ``schema_id`` records (options are changed by new schema versions)."""
        return {str(k): str(v) for k, v in (self._schema_json[schema_id].get("options") or {}).items()}

    def mapping(self, schema_id: int) -> NameMapping:
        """How a file written with schema ``schema_id`` finds its fields: by that schema's names."""
        if schema_id not in self._mappings:
            if schema_id not in self._schemas:
                raise UnsupportedFormatFeatureError(f"paimon table {self.name}: a data file was written with schema "
                                                    f"{schema_id}, which {self.files.path('schema')} does not hold")
            self._mappings[schema_id] = NameMapping.from_schema(self._schemas[schema_id])
        return self._mappings[schema_id]

    # -- one snapshot -----------------------------------------------------------------------------
    def content(self, snapshot_id: int) -> SnapshotContent:
        snap = self._snapshot(snapshot_id)
        schema_id = int(snap["schemaId"])
        schema, raw = self._schemas[schema_id], self._schema_json[schema_id]
        options = self.options(schema_id)
        naming = (_truthy(options.get("partition.legacy-name", "true")),
                  options.get("partition.default-name", _DEFAULT_PARTITION))
        keyed = bool(raw.get("primaryKeys"))
        merge = self._merge_mode(schema, raw, options) if keyed else MergeMode()
        dv_enabled = _truthy(options.get("deletion-vectors.enabled", "false"))
        live = self._live_entries(snap)
        vectors = self._vectors(snap)
        partition_fields = self._partition_fields(schema, raw)
        # key statistics cover the primary key without the partition keys (what key-value files store as _KEY_)
        trimmed_keys = [k for k in raw.get("primaryKeys") or () if k not in (raw.get("partitionKeys") or ())]
        partitions: dict[bytes, tuple[tuple[PartitionValue, ...], str]] = {}
        files = []
        for e in live:
            f = e.file
            name = str(f["_FILE_NAME"])
            self._check_file(e, schema)
            if keyed and dv_enabled and int(f["_LEVEL"]) == 0:
                continue  # with deletion vectors, Paimon's readers see a primary-key file once it is compacted
            if e.partition not in partitions:
                partitions[e.partition] = self._partition(e.partition, partition_fields, naming)
            values, directory = partitions[e.partition]
            path = f.get("_EXTERNAL_PATH") or self.files.path(*filter(None, [
                options.get("data-file.path-directory"), directory, f"bucket-{e.bucket}", name]))
            positions = vectors.get((e.partition, e.bucket, name))
            fmt = name.rsplit(".", 1)[-1].lower() if "." in name else options.get("file.format", "parquet")
            file_schema_id = int(f["_SCHEMA_ID"])
            files.append(DataFileEntry(
                path=str(path), record_count=int(f["_ROW_COUNT"]), file_format=fmt, schema_id=file_schema_id,
                name_mapping=self.mapping(file_schema_id), partition=values,
                stats=self._stats(f, file_schema_id, trimmed_keys), positions=positions() if positions else None,
                sequence_number=int(f["_MAX_SEQUENCE_NUMBER"]), file_size=int(f["_FILE_SIZE"]),
                merge_group=(e.partition, e.bucket) if keyed else None))
        return SnapshotContent(self._snapshot_meta(snapshot_id), schema, tuple(files), merge=merge)

    def _check_file(self, e: ManifestEntry, schema: Schema) -> None:
        """Refuse the files Paimon's readers treat specially and fieldshift does not read."""
        name = e.file["_FILE_NAME"]
        if e.bucket == -2:
            raise UnsupportedFormatFeatureError(f"paimon table {self.name}: {name} is in the postpone bucket "
                                                "(bucket -2), whose rows Paimon's readers see only after a "
                                                "compaction; compact the table first")
        cols = e.file.get("_WRITE_COLS")
        if cols is not None and list(cols) != self._schemas.get(int(e.file["_SCHEMA_ID"]), schema).names:
            raise UnsupportedFormatFeatureError(
                f"paimon table {self.name}: {name} holds only columns {list(cols)} (data evolution: rows "
                "stitched from files of different columns), which fieldshift does not read")

    def _snapshot_meta(self, snapshot_id: int) -> SourceSnapshot:
        snap = self._snapshot(snapshot_id)
        when = dt.datetime.fromtimestamp(int(snap["timeMillis"]) / 1000, dt.UTC)
        return SourceSnapshot(snapshot_id, when, int(snap["schemaId"]), snap.get("commitKind"))

    def _live_entries(self, snap: dict[str, Any]) -> list[ManifestEntry]:
        """The data files of a snapshot: every ADD of its base and delta manifests not cancelled by a DELETE."""
        live: dict[tuple[Any, ...], ManifestEntry] = {}
        for key in ("baseManifestList", "deltaManifestList"):
            if not snap.get(key):
                continue
            for meta in self.files.manifest_list(str(snap[key])):
                for e in self.files.manifest(str(meta["_FILE_NAME"])):
                    if e.kind == 0:
                        live[e.identifier] = e
                    elif e.kind == 1:
                        live.pop(e.identifier, None)
                    else:
                        raise UnsupportedFormatFeatureError(f"paimon table {self.name}: manifest {meta['_FILE_NAME']} "
                                                            f"has an entry of kind {e.kind} (0 adds, 1 deletes)")
        return list(live.values())

    def _vectors(self, snap: dict[str, Any]) -> dict[tuple[bytes, int, str], Any]:
        """Deletion vectors of the snapshot by (partition, bucket, data file): loaders of their positions."""
        index = snap.get("indexManifest")
        if not index:
            return {}
        live: dict[tuple[Any, ...], dict[str, Any]] = {}
        for r in self.files.read_avro("manifest", str(index)):
            key = (bytes(r["_PARTITION"]), int(r["_BUCKET"]), r["_INDEX_TYPE"], r["_FILE_NAME"])
            if int(r["_KIND"]) == 0:
                live[key] = r
            else:
                live.pop(key, None)
        read = vector_reader(self.files)
        out: dict[tuple[bytes, int, str], Any] = {}
        for (partition, bucket, kind, index_file), r in live.items():
            if kind != "DELETION_VECTORS":
                continue  # hash and global indexes locate rows; they delete none
            if r.get("_EXTERNAL_PATH"):
                raise UnsupportedFormatFeatureError(f"paimon table {self.name}: deletion vectors at an external path "
                                                    f"({r['_EXTERNAL_PATH']}) are not read")
            for dv in r.get("_DELETIONS_VECTORS_RANGES") or ():
                out[(partition, bucket, str(dv["f0"]))] = (
                    lambda n=index_file, o=int(dv["f1"]), ln=int(dv["f2"]): read(n, o, ln))
        return out

    # -- partitions, statistics, merging ----------------------------------------------------------
    def _partition_fields(self, schema: Schema, raw: dict[str, Any]) -> list[tuple[int, str, pa.DataType]]:
        out = []
        for key in raw.get("partitionKeys") or ():
            f = next((f for f in schema.fields if f.name == key), None)
            if f is None or not isinstance(f.type, pa.DataType):
                raise UnsupportedFormatFeatureError(f"paimon table {self.name}: partition key {key!r} is not a "
                                                    "top-level column of an atomic type in its schema")
            out.append((f.id, f.name, f.type))
        return out

    def _partition(self, data: bytes, fields: list[tuple[int, str, pa.DataType]], naming: tuple[bool, str]
                   ) -> tuple[tuple[PartitionValue, ...], str]:
        """A partition's values and its directory (``k=v/...``, as Paimon's writers name it)."""
        if not fields:
            return (), ""
        values = decode_row(data, [(n, t) for _, n, t in fields], f"paimon table {self.name}, a partition")
        parts = []
        for (_, name, _t), v in zip(fields, values, strict=True):
            blank = v is None or (isinstance(v, str) and not v.strip())
            parts.append(f"{name}={naming[1] if blank else _partition_text(v, naming[0])}")
        pv = tuple(PartitionValue(fid, "identity", v) for (fid, _, _), v in zip(fields, values, strict=True))
        return pv, "/".join(parts)

    def _stats(self, f: dict[str, Any], schema_id: int, keys: list[str]) -> dict[int, ColumnStats]:
        """Statistics of a data file in its own schema's types (numbers, dates and times only: Paimon
        truncates string bounds): the key's from ``_KEY_STATS``, the other columns' from ``_VALUE_STATS``."""
        out = self._bounds(f, f.get("_VALUE_STATS") or {}, f.get("_VALUE_STATS_COLS"), schema_id)
        if keys:
            out.update(self._bounds(f, f.get("_KEY_STATS") or {}, keys, schema_id))
        return out

    def _bounds(self, f: dict[str, Any], stats: dict[str, Any], names: list[str] | None,
                schema_id: int) -> dict[int, ColumnStats]:
        schema = self._schemas.get(schema_id)
        if schema is None or not stats.get("_MIN_VALUES") or (names is not None and not names):
            return {}
        by_name = {x.name: x for x in schema.fields}
        if names is not None and any(n not in by_name for n in names):
            return {}
        fields = [by_name[n] for n in names] if names is not None else list(schema.fields)
        layout = [(x.name, x.type if isinstance(x.type, pa.DataType) else pa.null()) for x in fields]
        try:
            lows = _decode_stats(stats["_MIN_VALUES"], layout)
            highs = _decode_stats(stats["_MAX_VALUES"], layout)
        except UnsupportedFormatFeatureError:
            return {}
        nulls = stats.get("_NULL_COUNTS") or [None] * len(fields)
        out = {}
        for x, lo, hi, nc in zip(fields, lows, highs, nulls, strict=False):
            t = x.type
            if not isinstance(t, pa.DataType) or not _prunable(t):
                continue
            out[x.id] = ColumnStats(value_count=int(f["_ROW_COUNT"]), null_count=None if nc is None else int(nc),
                                    lower=lo, upper=hi, type=t)
        return out

    def _merge_mode(self, schema: Schema, raw: dict[str, Any], options: dict[str, str]) -> MergeMode:
        engine = options.get("merge-engine", "deduplicate").strip().lower()
        where = f"paimon table {self.name}"
        if engine in ("first-row", "aggregation"):
            raise UnsupportedFormatFeatureError(f"{where} uses the {engine!r} merge engine, which fieldshift does not "
                                                "read yet (it reads 'deduplicate' and 'partial-update')")
        if engine not in ("deduplicate", "partial-update"):
            raise UnsupportedFormatFeatureError(f"{where} uses merge engine {engine!r}, which fieldshift does not know")
        by_name = {f.name: f.id for f in schema.fields}

        def ids(names: str, what: str) -> tuple[int, ...]:
            out = []
            for n in (x.strip() for x in names.split(",") if x.strip()):
                if n not in by_name:
                    raise UnsupportedFormatFeatureError(f"{where}: {what} {n!r} is not a column of schema "
                                                        f"{schema.schema_id}")
                out.append(by_name[n])
            return tuple(out)

        keys = ids(",".join(raw.get("primaryKeys") or ()), "primary key")
        order = ids(options.get("sequence.field", ""), "sequence.field")
        descending = options.get("sequence.field.sort-order", "ascending").strip().lower() == "descending"
        ignore = any(_truthy(options.get(k, "false")) for k in ("ignore-delete", f"{engine}.ignore-delete"))
        on_retract = "ignore" if ignore else "delete"
        if engine == "partial-update":
            per_field = (".sequence-group", ".aggregate-function", ".ignore-retract")
            unsupported = sorted(k for k in options if (k.startswith("fields.") and k.endswith(per_field))
                                 or k == "fields.default-aggregate-function"
                                 or (k == "partial-update.remove-record-on-sequence-group" and _truthy(options[k])))
            if unsupported:
                raise UnsupportedFormatFeatureError(f"{where}: partial updates with {', '.join(unsupported)} are not "
                                                    "read yet (fieldshift reads plain partial updates)")
            if not ignore:
                on_retract = "reset" if _truthy(options.get("partial-update.remove-record-on-delete", "false")) \
                    else "error"
        return MergeMode("key", keys, order, fields="latest_non_null" if engine == "partial-update" else "latest",
                         sequence_column=SEQUENCE_COLUMN, kind_column=KIND_COLUMN, retract_kinds=RETRACT_KINDS,
                         on_retract=on_retract, descending_order=descending, unique_per_file=True)


def _partition_text(value: Any, legacy: bool) -> str:
    """A partition value as Paimon names its directory: with ``partition.legacy-name`` (the default) a date
    is its day number and a timestamp Java's ``LocalDateTime`` text; otherwise both are cast to text."""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        value = value.replace(tzinfo=None)
        if legacy:
            text = value.strftime("%Y-%m-%dT%H:%M")
            if value.second or value.microsecond:
                text += value.strftime(":%S")
            if value.microsecond:
                text += f".{value.microsecond:06d}".rstrip("0").ljust(4, "0")
            return text
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return str((value - dt.date(1970, 1, 1)).days) if legacy else value.isoformat()
    return str(value)


def _prunable(t: pa.DataType) -> bool:
    T = pa.types
    return T.is_integer(t) or T.is_floating(t) or T.is_date(t) or T.is_decimal(t) or T.is_boolean(t)


def _decode_stats(data: bytes, layout: list[tuple[str, pa.DataType]]) -> tuple[Any, ...]:
    """A statistics row: nested columns hold no bounds (null), so they decode as nulls or not at all."""
    return decode_row(bytes(data), layout, "paimon statistics")
