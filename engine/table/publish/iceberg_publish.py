"""Publishing a fieldshift table as an Iceberg table: metadata written beside the same Parquet files.

Every kept fieldshift snapshot ``S`` (but the empty one a table starts with, id 0: the Iceberg table
without snapshots) becomes the Iceberg snapshot ``S`` (sequence number ``S``, the schema and spec it
used) in a metadata version of its own (``metadata/vN.metadata.json``, the fieldshift snapshot recorded
in its property ``fieldshift.snapshot-id``); an expiry is a version of its own too, without the expired
snapshots. Catching up writes the versions after the newest published one, in snapshot order; each
version file is written create-if-absent, so when two processes catch up at once one writes a version and
the other reloads it and goes on, and ``version-hint.text`` moves last and only forward. Manifests group
data files by (the snapshot that added them, their spec): a later snapshot reuses a group's manifest while
none of its files has gone, and rewrites it (its survivors as EXISTING entries) when some have.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import uuid
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fieldshift.errors import UnpublishableError
from fieldshift.extras import require
from fieldshift.schema.defaults import default_to_json
from fieldshift.schema.model import Schema
from fieldshift.table.catalog.files import publish_file_rows, publish_file_rows_since
from fieldshift.table.catalog.snapshots import publish_rows
from fieldshift.table.catalog.specs import decode_partition
from fieldshift.table.catalog.sqlite import DataFile, Snapshot, SqliteCatalog
from fieldshift.table.files.storage import TableStorage
from fieldshift.table.partitions.partitioning import PartitionSpec
from fieldshift.table.publish.iceberg_deletes import snapshot_deletes, write_position_deletes
from fieldshift.table.publish.iceberg_entries import data_file_entry, deletion_vector_entry, position_delete_entry
from fieldshift.table.publish.iceberg_register import REGISTER_NAME_PROPERTY, REGISTER_URI_PROPERTY, move_pointer
from fieldshift.table.publish.iceberg_types import (
    check_publishable_change,
    iceberg_schema,
    needs_v3,
    promotion_problems,
    type_problems,
)
from fieldshift.table.publish.iceberg_v3 import (
    as_v3_manifest,
    file_row_ids,
    read_manifest_list_v3,
    write_deletion_vectors,
)
from fieldshift.table.publish.iceberg_values import partition_problem
from fieldshift.table.publish.iceberg_writers import manifest_list_writer, manifest_writer

__all__ = ["METADATA_DIR", "PUBLISH_FORMATS", "PublishResult", "PublishWarning", "catch_up", "check_format",
           "check_new_table",
           "publish_iceberg",
           "published_version"]

METADATA_DIR = "metadata"
HINT = f"{METADATA_DIR}/version-hint.text"
SNAPSHOT_PROPERTY = "fieldshift.snapshot-id"  # the fieldshift snapshot a metadata version publishes
PUBLISH_FORMATS = ("iceberg",)
# What this process last wrote or read (commits of one process follow each other): metadata versions by
# their file's identity, manifest lists (never rewritten: unique names) by path, as prepared for writing.
_VERSIONS: dict[Any, dict[str, Any]] = {}
_LISTS: dict[Any, list[Any]] = {}


_ENTRY_TEXT: dict[tuple[int, str], str] = {}  # a snapshot entry's JSON (entries never change once written)


def _io() -> Any:
    """The file adapters PyIceberg's writers take; PyIceberg (the ``iceberg`` extra) is imported only when
    a table is published, so the table layer imports without it."""
    require("pyiceberg", "iceberg", "publishing a table as Iceberg")
    from fieldshift.table.publish import iceberg_io

    return iceberg_io


def _encode(meta: dict[str, Any]) -> bytes:
    """``meta`` as JSON; the snapshot entries, the bulk of a long history's metadata and the same in every
    version, are encoded once per process."""
    pieces = []
    for entry in meta["snapshots"]:
        key = (entry["snapshot-id"], entry["manifest-list"])
        found = _ENTRY_TEXT.get(key)
        if found is None:
            if len(_ENTRY_TEXT) > 100_000:
                _ENTRY_TEXT.clear()
            found = _ENTRY_TEXT[key] = json.dumps(entry, separators=(",", ":"))
        pieces.append(found)
    logs = ("snapshot-log", "metadata-log")  # as long as the history, and their entries reused as objects
    head = json.dumps({k: v for k, v in meta.items() if k != "snapshots" and k not in logs}, separators=(",", ":"))
    tail = "".join(f',"{k}":[' + ",".join(_item_text(e) for e in meta[k]) + "]" for k in logs if k in meta)
    return (head[:-1] + tail + ',"snapshots":[' + ",".join(pieces) + "]}").encode()


_ITEM_TEXT: dict[int, tuple[Any, str]] = {}  # id of a log entry -> (the entry, kept so the id stays its, JSON)


def _item_text(entry: dict[str, Any]) -> str:
    """A log entry's JSON, encoded once while the same entry object is passed on from version to version
    (entries are never changed once made)."""
    found = _ITEM_TEXT.get(id(entry))
    if found is None or found[0] is not entry:
        if len(_ITEM_TEXT) > 200_000:
            _ITEM_TEXT.clear()
        found = _ITEM_TEXT[id(entry)] = (entry, json.dumps(entry, separators=(",", ":")))
    return found[1]


def _remember(cache: dict[Any, Any], key: Any, value: Any, keep: int = 16) -> None:
    if len(cache) >= keep:
        cache.pop(next(iter(cache)))
    cache[key] = value


class PublishWarning(UserWarning):
    """A commit succeeded but catching up its published metadata failed (it catches up later)."""


_MANIFEST_NAME = re.compile(r".*-s(\d+)-b(\d+)_(\d+)-p(\d+)-m\.avro$")
def _is_data(manifest: Any) -> bool:
    from pyiceberg.manifest import ManifestContent

    return manifest.content == ManifestContent.DATA


_BLOCKS = (1024, 32)  # files added in a finished block of this many snapshots share one manifest


def _block(begin: int, snapshot_id: int) -> tuple[int, int]:
    """The snapshots whose files share a manifest with those ``begin`` added, as of ``snapshot_id``: the
    largest finished block holding ``begin``, else ``begin`` alone. A snapshot then lists at most
    ``S / 1024 + 2 * 31`` manifests (Iceberg merges small manifests for the same reason), and a block's
    manifest is written once, when the block finishes."""
    for size in _BLOCKS:
        lo = begin - begin % size
        if lo + size - 1 <= snapshot_id:
            return lo, lo + size - 1
    return begin, begin


@dataclass(frozen=True)
class PublishResult:
    """What one catch-up did: the metadata versions it wrote (others may have been written concurrently)
    and the version ``version-hint.text`` names afterwards."""

    written: tuple[int, ...]
    version: int
    metadata_location: str


class _File:
    """A data file row of the catalog, as catching up needs it (statistics and partition values are decoded
    only for the files a manifest is written for: a long history has many files and few new ones)."""

    __slots__ = ("begin", "bucket", "content", "end", "file_id", "file_size", "partition_text", "path",
                 "record_count", "schema_id", "spec_id")

    def __init__(self, row: tuple[Any, ...]) -> None:
        (self.file_id, self.path, self.schema_id, self.record_count, self.file_size, self.begin, self.end,
         self.spec_id, self.partition_text, self.content, self.bucket) = row

    def live_at(self, snapshot_id: int) -> bool:
        return self.begin <= snapshot_id and (self.end is None or self.end > snapshot_id)

    def data_file(self, stats: dict[int, Any]) -> DataFile:
        return DataFile(self.path, self.schema_id, self.record_count, self.file_size, stats, self.file_id,
                        spec_id=self.spec_id, partition=decode_partition(self.partition_text))


def _metadata_name(version: int) -> str:
    return f"{METADATA_DIR}/v{version}.metadata.json"


def _abs(storage: TableStorage, rel: str) -> str:
    """Where Iceberg readers find ``rel``: a local path, or the object's URI (without the location's
    query options, which are fieldshift's way to reach the store, not part of the name)."""
    return storage.display(rel)


def _read_hint(storage: TableStorage) -> int:
    """The version ``version-hint.text`` names (0: none, or not a number)."""
    try:
        return int(storage.read_bytes(HINT).decode().strip())
    except (FileNotFoundError, ValueError):
        return 0


def published_version(storage: TableStorage, hinted: int | None = None) -> int:
    """The newest metadata version written (0: none): the hint, then any version written after it."""
    version = _read_hint(storage) if hinted is None else hinted
    while storage.exists(_metadata_name(version + 1)):
        version += 1
    return version


# (catalog, table) -> (highest file id, head snapshot, files by id) as last read by this process: a file's row
# only ever changes by its end snapshot being set (to a snapshot after any seen), so a catch-up reads the rows
# added or ended since, and everything again when rows were forgotten (expiry) or the table is not the same
_FILES: dict[tuple[str, str, int], tuple[int, int, dict[int, _File]]] = {}


def _load_files(catalog: SqliteCatalog, table_id: int, head: int) -> list[_File]:
    """The table's data and delete file rows, by file id (``head``: the newest snapshot the catalog has)."""
    key = (type(catalog).__name__, str(getattr(catalog, "uri", None) or catalog.path), table_id)
    cached = _FILES.get(key)
    files: dict[int, _File] = {}
    if cached is not None:
        top, seen, known = cached
        rows, count = catalog.read(publish_file_rows_since, table_id, top, seen)
        newest = next((r for r in rows if r[0] == top), None)
        if newest is not None and top in known and newest[1] == known[top].path:
            files = dict(known)
            files.update((r[0], _File(r)) for r in rows)
        if len(files) != count:  # the newest row seen is gone or another, or rows were forgotten (expiry)
            files = {}
    if not files:
        files = {r[0]: _File(r) for r in catalog.read(publish_file_rows, table_id)}
    if files:
        if len(_FILES) > 64:
            _FILES.clear()
        _FILES[key] = (max(files), head, files)
    return [files[i] for i in sorted(files)]


def _ms(committed_at: str) -> int:
    stamp = dt.datetime.fromisoformat(committed_at)
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.UTC)
    return int(stamp.timestamp() * 1000)


def _check(schemas: dict[int, Schema], snapshots: Sequence[Snapshot], live: Any, name: str,
           problems: list[str]) -> None:
    """Refuse, before anything is written, what Iceberg readers could not read (every problem at once)."""
    _io()  # PyIceberg checks the schemas: a missing one is named with its extra
    for s in schemas.values():
        found = _converted("problems", s, type_problems)
        problems += found
        if not found:
            try:
                _ice_schema(s)
            except ValueError as e:  # Iceberg indexes fields by dotted path: a column 'a.b' beside struct a's b
                problems.append(f"schema {s.schema_id}: {e}; Iceberg names a nested field by its dotted path, so "
                                "rename one of the two columns")
    seen: set[tuple[int, int]] = set()
    for snap in snapshots:  # the snapshots to publish (those published were checked when they were)
        for schema_id in {f.schema_id for f in live(snap.snapshot_id)}:
            pair = (schema_id, snap.schema_id)
            if pair not in seen:
                seen.add(pair)
                if pair[0] != pair[1]:
                    problems += promotion_problems(schemas[pair[0]], schemas[pair[1]])
    if problems:
        listed = "\n  ".join(dict.fromkeys(problems))
        raise UnpublishableError(f"table {name!r} cannot be published as an Iceberg table; nothing was written:"
                                 f"\n  {listed}")


_CONVERTED: dict[tuple[str, Any], Any] = {}  # fieldshift schemas and specs as PyIceberg's (they never change)


def _converted(kind: str, value: Any, make: Any) -> Any:
    """``make(value)``, made once per process for equal values (PyIceberg's schemas index themselves when
    built: a fixed cost of every catch-up otherwise)."""
    key = (kind, value)
    found = _CONVERTED.get(key)
    if found is None:
        if len(_CONVERTED) > 4096:
            _CONVERTED.clear()
        found = _CONVERTED[key] = make(value)
    return found


def _ice_schema(schema: Schema) -> Any:
    return _converted("schema", schema, iceberg_schema)


def _schema_json(schema: Schema) -> dict[str, Any]:
    """``schema`` as Iceberg JSON with its fields' initial and write defaults (a schema with any makes the
    published table v3, the first format that has them); never mutated (shared by every version)."""
    return _converted("json", schema, _make_schema_json)


def _make_schema_json(schema: Schema) -> dict[str, Any]:
    out = json.loads(_ice_schema(schema).model_dump_json(by_alias=True))
    defaults = {f.id: f for f in schema.all_fields() if f.initial_default is not None or f.write_default is not None}
    if defaults:
        _add_defaults(out, defaults)
    return out


def _add_defaults(node: Any, defaults: dict[int, Any]) -> None:
    if isinstance(node, list):
        for item in node:
            _add_defaults(item, defaults)
    elif isinstance(node, dict):
        if "name" in node and "required" in node and node.get("id") in defaults:  # a struct's field
            f = defaults[node["id"]]
            if f.initial_default is not None:
                node["initial-default"] = default_to_json(f.initial_default, f.type)
            if f.write_default is not None:
                node["write-default"] = default_to_json(f.write_default, f.type)
        for value in node.values():
            _add_defaults(value, defaults)


def _iceberg_spec(spec: PartitionSpec) -> Any:
    return _converted("spec", spec, _make_iceberg_spec)


def _spec_json(spec: PartitionSpec) -> dict[str, Any]:
    return _converted("spec-json", spec, lambda s: json.loads(_iceberg_spec(s).model_dump_json(by_alias=True)))


def _make_iceberg_spec(spec: PartitionSpec) -> Any:
    from pyiceberg.partitioning import PartitionField
    from pyiceberg.partitioning import PartitionSpec as IcebergSpec
    from pyiceberg.transforms import parse_transform

    return IcebergSpec(*[PartitionField(f.source_id, f.field_id, parse_transform(str(f.transform)), f.name)
                         for f in spec.fields], spec_id=spec.spec_id)


class _Publisher:
    """One catch-up of one table: the catalog's state read once, then each missing version written."""

    def __init__(self, catalog: SqliteCatalog, table_id: int, name: str, storage: TableStorage) -> None:
        self.catalog, self.table_id, self.name, self.storage = catalog, table_id, name, storage
        self.rows = catalog.read(publish_rows, table_id)  # without summaries: a long history's are not parsed
        self.schemas = catalog.schemas(table_id)
        self.specs = catalog.specs(table_id)
        self.specs_by_id = {s.spec_id: s for s, _ in self.specs}
        self.all_files = _load_files(catalog, table_id, max((r[0] for r in self.rows), default=0))
        self.files = [f for f in self.all_files if f.content == "data"]  # a keyed table's key deletes are not rows
        self.keyed = any(f.bucket is not None for f in self.all_files)
        self.deletes: dict[int, dict[int, Any]] = {}  # snapshot -> data file id -> positions dropped
        self._live_files: dict[int, list[_File]] = {}
        self._begins = Counter(f.begin for f in self.files)  # files added and removed by each snapshot
        self._ends = Counter(f.end for f in self.files if f.end is not None)
        self.location = _abs(storage, "")

    def _live(self, snapshot_id: int) -> list[_File]:
        """The data files live at ``snapshot_id`` (asked for by several parts of one version: listed once)."""
        found = self._live_files.get(snapshot_id)
        if found is None:
            found = self._live_files[snapshot_id] = [f for f in self.files if f.live_at(snapshot_id)]
        return found

    # -- metadata of one snapshot -----------------------------------------------------------------
    def _base(self, previous: dict[str, Any] | None, snap: Snapshot) -> dict[str, Any]:
        schema_ids = sorted(i for i in self.schemas if i <= max(
            r[2] for r in self.rows if r[0] <= snap.snapshot_id))
        live_specs = {f.spec_id for f in self._live(snap.snapshot_id)}
        specs = [s for s, begin in self.specs if begin <= snap.snapshot_id]
        default = specs[-1] if specs else self.specs[0][0]
        spec_ids = sorted({s.spec_id for s in specs} | live_specs | {default.spec_id})
        fmt = 3 if (previous or {}).get("format-version") == 3 or any(
            needs_v3(self.schemas[i]) for i in schema_ids) else 2
        meta: dict[str, Any] = {
            "format-version": fmt,
            "table-uuid": previous["table-uuid"] if previous else str(uuid.uuid4()),
            "location": self.location,
            "last-sequence-number": max(snap.snapshot_id, 0),
            "last-updated-ms": _ms(snap.committed_at),
            "last-column-id": max(self.schemas[i].highest_field_id for i in schema_ids),
            "current-schema-id": snap.schema_id,
            "schemas": [_schema_json(self.schemas[i]) for i in schema_ids],
            "default-spec-id": default.spec_id,
            "partition-specs": [_spec_json(self.specs_by_id[i]) for i in spec_ids],
            "last-partition-id": max([999] + [f.field_id for i in spec_ids for f in self.specs_by_id[i].fields]),
            "properties": {"fieldshift.table": self.name},
            "sort-orders": [{"order-id": 0, "fields": []}],
            "default-sort-order-id": 0,
        }
        if fmt == 3:  # row ids assigned so far (an upgraded table starts at 0)
            meta["next-row-id"] = (previous or {}).get("next-row-id", 0)
        return meta

    def _manifests(self, snap: Snapshot, previous_manifests: list[Any], fmt: int) -> list[Any]:
        from pyiceberg.manifest import ManifestEntry, ManifestEntryStatus

        sid = snap.snapshot_id
        groups: dict[tuple[int, int, int], list[_File]] = {}
        for f in self._live(sid):
            lo, hi = _block(f.begin, sid)
            groups.setdefault((lo, hi, f.spec_id), []).append(f)
        reusable: dict[tuple[int, int, int], Any] = {}
        for m in previous_manifests:
            found = _MANIFEST_NAME.match(m.manifest_path)
            if found:
                reusable[(int(found.group(2)), int(found.group(3)), int(found.group(4)))] = m
        out: list[Any] = []
        to_write = []
        for key, members in sorted(groups.items()):
            old = reusable.get(key)
            if old is not None and old.added_files_count + old.existing_files_count == len(members):
                out.append(old)  # none of its files has gone
            else:
                to_write.append((key, members))
        if not to_write:
            return out
        ids = sorted(f.file_id for _, members in to_write for f in members if f.file_id is not None)
        stats = self.catalog.file_stats(ids)
        schema = _ice_schema(self.schemas[snap.schema_id])
        row_ids = self._row_ids(previous_manifests, to_write, sid) if fmt == 3 else {}
        for (lo, hi, spec_id), members in to_write:
            spec = self.specs_by_id[spec_id]
            rel = f"{METADATA_DIR}/{uuid.uuid4().hex}-s{sid}-b{lo}_{hi}-p{spec_id}-m.avro"
            target = _io().StorageOutput(self.storage, rel, _abs(self.storage, rel))
            entries = [(f, data_file_entry(f.data_file(stats.get(f.file_id, {})), _abs(self.storage, f.path), spec,
                                           self.schemas[f.schema_id], fmt,
                                           None if f.begin == sid else row_ids.get(_abs(self.storage, f.path))))
                       for f in members]  # any error before writing
            with manifest_writer(fmt, _iceberg_spec(spec), schema, target, sid) as writer:
                for f, df in entries:
                    if f.begin == sid:
                        writer.add_entry(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=sid,
                                                                 data_file=df))
                    else:
                        writer.add_entry(ManifestEntry.from_args(
                            status=ManifestEntryStatus.EXISTING, snapshot_id=f.begin, sequence_number=f.begin,
                            file_sequence_number=f.begin, data_file=df))
            out.append(writer.to_manifest_file())
        return out

    def _row_ids(self, previous_manifests: list[Any], to_write: list[Any], sid: int) -> dict[str, int | None]:
        """The ``first_row_id`` the files a rewritten manifest carries on (EXISTING) had where they were: read
        from the previous snapshot's manifests that held them (v3 keeps a row's id while it lives)."""
        wanted = {(f.begin, f.spec_id) for _, members in to_write for f in members if f.begin != sid}
        out: dict[str, int | None] = {}
        for m in previous_manifests:
            found = _MANIFEST_NAME.match(m.manifest_path)
            if found is None or not any(int(found.group(2)) <= b <= int(found.group(3)) and int(found.group(4)) == p
                                        for b, p in wanted):
                continue
            rel = self._rel(m.manifest_path)
            out.update(file_row_ids(m, _io().StorageInput(self.storage, rel, m.manifest_path)))
        return out

    def _delete_manifests(self, snap: Snapshot, fmt: int) -> list[Any]:
        """The snapshot's position deletes (its deletion vectors), one file per partition, one manifest per
        spec; written whole for every snapshot that has any."""
        from pyiceberg.manifest import ManifestEntry, ManifestEntryStatus

        sid = snap.snapshot_id
        dropped = self.deletes.get(sid) or {}
        if not dropped:
            return []
        by_id = {f.file_id: f for f in self.files}
        if fmt == 3:
            return self._deletion_vectors(snap, dropped, by_id)
        groups: dict[tuple[int, str | None], list[tuple[str, Any]]] = {}
        for fid, positions in dropped.items():
            f = by_id[fid]
            groups.setdefault((f.spec_id, f.partition_text), []).append((_abs(self.storage, f.path), positions))
        written = write_position_deletes(self.storage, groups, sid)
        schema = _ice_schema(self.schemas[snap.schema_id])
        out = []
        for spec_id in sorted({k[0] for k in written}):
            spec = self.specs_by_id[spec_id]
            rel = f"{METADATA_DIR}/{uuid.uuid4().hex}-s{sid}-deletes-m.avro"
            target = _io().StorageOutput(self.storage, rel, _abs(self.storage, rel))
            with manifest_writer(2, _iceberg_spec(spec), schema, target, sid, deletes=True) as writer:
                for (group_spec, partition_text), (path, rows, size) in sorted(written.items(), key=str):
                    if group_spec != spec_id:
                        continue
                    entry = position_delete_entry(_abs(self.storage, path), rows, size, spec,
                                                  self.schemas[snap.schema_id], decode_partition(partition_text))
                    writer.add_entry(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=sid,
                                                             data_file=entry))
            out.append(writer.to_manifest_file())
        return out

    def _deletion_vectors(self, snap: Snapshot, dropped: dict[int, Any], by_id: dict[int, _File]) -> list[Any]:
        """v3: the snapshot's deletion vectors as one Puffin file (a ``deletion-vector-v1`` blob per data file),
        one delete manifest per spec; v3 readers take no position-delete files."""
        from pyiceberg.manifest import ManifestEntry, ManifestEntryStatus

        from fieldshift.table.publish.iceberg_deletes import DELETES_DIR

        sid = snap.snapshot_id
        order = sorted(dropped, key=lambda fid: (by_id[fid].spec_id, by_id[fid].path))
        rel, size, placed = write_deletion_vectors(
            self.storage, [(_abs(self.storage, by_id[fid].path), dropped[fid]) for fid in order], sid, DELETES_DIR)
        puffin = _abs(self.storage, rel)
        schema = _ice_schema(self.schemas[snap.schema_id])
        out = []
        for spec_id in sorted({by_id[fid].spec_id for fid in order}):
            spec = self.specs_by_id[spec_id]
            mrel = f"{METADATA_DIR}/{uuid.uuid4().hex}-s{sid}-deletes-m.avro"
            target = _io().StorageOutput(self.storage, mrel, _abs(self.storage, mrel))
            with manifest_writer(3, _iceberg_spec(spec), schema, target, sid, deletes=True) as writer:
                for fid, (path, offset, length, cardinality) in zip(order, placed, strict=True):
                    f = by_id[fid]
                    if f.spec_id != spec_id:
                        continue
                    entry = deletion_vector_entry(puffin, size, path, offset, length, cardinality, spec,
                                                  self.schemas[f.schema_id], decode_partition(f.partition_text))
                    writer.add_entry(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=sid,
                                                             data_file=entry))
            out.append(writer.to_manifest_file())
        return out

    def _snapshot(self, snap: Snapshot, parent: int | None, manifests: list[Any], fmt: int, first_row_id: int
                  ) -> dict[str, Any]:
        sid = snap.snapshot_id
        rel = f"{METADATA_DIR}/snap-{sid}-{uuid.uuid4().hex}.avro"
        target = _io().StorageOutput(self.storage, rel, _abs(self.storage, rel))
        with manifest_list_writer(fmt, target, sid, parent, sid, first_row_id) as writer:
            prepared = [writer.prepare_manifest(m) for m in manifests]  # v3: assigns the row ids, in list order
            writer.add_manifests(prepared)  # preparing what is prepared changes nothing
            _remember(_LISTS, (str(self.storage.location), rel), prepared)
        added = self._begins.get(sid, 0)
        removed = self._ends.get(sid, 0)
        dropped = self.deletes.get(sid) or {}
        operation = ("overwrite" if added and removed else "append" if added else "delete" if removed
                     else "replace")
        live = self._live(sid)
        out: dict[str, Any] = {
            "snapshot-id": sid,
            "sequence-number": sid,
            "timestamp-ms": _ms(snap.committed_at),
            "manifest-list": _abs(self.storage, rel),
            "summary": {"operation": operation, "fieldshift-operation": snap.operation,
                        "added-data-files": str(added), "deleted-data-files": str(removed),
                        "total-data-files": str(len(live)),
                        "total-records": str(sum(f.record_count for f in live)),
                        "total-delete-files": str(len({(f.spec_id, f.partition_text) for f in self.files
                                                       if f.file_id in dropped}) if dropped else 0),
                        "total-position-deletes": str(sum(len(p) for p in dropped.values())),
                        "total-equality-deletes": "0"},
            "schema-id": snap.schema_id,
        }
        if parent is not None:
            out["parent-snapshot-id"] = parent
        if fmt == 3:
            out["first-row-id"] = first_row_id
            out["added-rows"] = writer.next_row_id - first_row_id
        return out

    # -- catching up ------------------------------------------------------------------------------
    def run(self) -> PublishResult:
        kept = {r[0] for r in self.rows}
        written: list[int] = []
        hinted = _read_hint(self.storage)
        version = published_version(self.storage, hinted)
        checked = False
        while True:  # each turn writes the next version, or finds another process wrote it and reloads
            previous = self._read_version(version) if version else None
            last = int(previous["properties"][SNAPSHOT_PROPERTY]) if previous else -1
            if not checked:  # before anything is written
                todo = self._after(last)
                problems = []
                for snap in todo:  # deletion vectors: a keyed table's, an unkeyed table's deletes and updates
                    live = [f for f in self.all_files if f.live_at(snap.snapshot_id)]
                    self.deletes[snap.snapshot_id] = snapshot_deletes(self.catalog, self.table_id, self.storage,
                                                                      snap.snapshot_id, live)
                for f in self.files:  # files published before were checked then
                    if f.begin > last and self.specs_by_id[f.spec_id].fields and any(f.live_at(x.snapshot_id)
                                                                                    for x in todo):
                        found = partition_problem(self.specs_by_id[f.spec_id], self.schemas[f.schema_id],
                                                  decode_partition(f.partition_text), _abs(self.storage, f.path))
                        if found:
                            problems.append(found)
                _check(self.schemas, todo, self._live, self.name, problems)
                checked = True
            pending = self._after(last)
            expired = [e for e in (previous or {}).get("snapshots", []) if e["snapshot-id"] not in kept]
            if pending:
                meta = self._version(previous, version, pending[0], kept)
            elif expired:
                meta = self._expired(previous, version, kept)  # type: ignore[arg-type]
            else:
                break
            text = _encode(meta)
            if _io().put_if_absent(self.storage, _metadata_name(version + 1), text):
                written.append(version + 1)
                stamp = self._stamp(version + 1)
                if stamp is not None:
                    _remember(_VERSIONS, stamp, meta)
            version += 1
        final = self._move_hint(version, hinted)
        return PublishResult(tuple(written), final, _abs(self.storage, _metadata_name(final)))

    def _after(self, last: int) -> list[Snapshot]:
        """The kept snapshots after ``last`` (only those are built: a long history has few new ones)."""
        return [Snapshot(int(r[0]), r[1], int(r[2]), r[3], r[4], {}) for r in self.rows if r[0] > last]

    def _stamp(self, version: int) -> tuple[Any, ...] | None:
        """What identifies a local metadata file's content (a version file never changes once written; the
        size and time tell a directory made again apart); None on an object store (read every time)."""
        if self.storage.local_path is None:
            return None
        try:
            st = os.stat(self.storage.local_path / _metadata_name(version))
        except FileNotFoundError:
            return None
        return (str(self.storage.local_path), version, st.st_size, st.st_mtime_ns, st.st_ino)

    def _read_version(self, version: int) -> dict[str, Any]:
        stamp = self._stamp(version)
        found = _VERSIONS.get(stamp) if stamp is not None else None
        if found is None:
            found = json.loads(self.storage.read_bytes(_metadata_name(version)))
            if stamp is not None:
                _remember(_VERSIONS, stamp, found)
        return found

    def _log(self, previous: dict[str, Any] | None, version: int) -> list[dict[str, Any]]:
        if previous is None:
            return []
        return [*previous.get("metadata-log", []), {"metadata-file": _abs(self.storage, _metadata_name(version)),
                                                    "timestamp-ms": previous["last-updated-ms"]}]

    def _expired(self, previous: dict[str, Any], version: int, kept: set[int]) -> dict[str, Any]:
        """``previous`` without the snapshots fieldshift expired (a version of its own: expiry is no snapshot)."""
        meta = dict(previous)
        meta["snapshots"] = [e for e in previous["snapshots"] if e["snapshot-id"] in kept]
        meta["snapshot-log"] = [e for e in previous.get("snapshot-log", []) if e["snapshot-id"] in kept]
        meta["metadata-log"] = self._log(previous, version)
        meta["last-updated-ms"] = max(previous["last-updated-ms"], int(dt.datetime.now(dt.UTC).timestamp()
                                                                        * 1000))
        return meta

    def _version(self, previous: dict[str, Any] | None, version: int, snap: Snapshot, kept: set[int]
                 ) -> dict[str, Any]:
        meta = self._base(previous, snap)
        meta["properties"][SNAPSHOT_PROPERTY] = str(snap.snapshot_id)
        meta["metadata-log"] = self._log(previous, version)
        if snap.snapshot_id == 0:  # the empty snapshot a table starts with: Iceberg's table without snapshots
            meta.update({"snapshots": [], "snapshot-log": [], "refs": {}})
            return meta
        previous_entries = list(previous.get("snapshots", [])) if previous else []
        current = next((e for e in reversed(previous_entries)  # the newest, as a rule
                        if e["snapshot-id"] == previous.get("current-snapshot-id")), None) if previous else None
        prior: list[Any] = []
        if current is not None:  # its manifests are reused where none of their files has gone
            rel = self._rel(current["manifest-list"])
            prior = _LISTS.get((str(self.storage.location), rel)) or read_manifest_list_v3(
                _io().StorageInput(self.storage, rel, current["manifest-list"]))
        fmt = meta["format-version"]
        data = [m for m in prior if _is_data(m)]
        if fmt == 3:
            data = [as_v3_manifest(m) for m in data]
        manifests = self._manifests(snap, data, fmt)
        manifests += self._delete_manifests(snap, fmt)
        parent = snap.parent_snapshot_id if snap.parent_snapshot_id in {e["snapshot-id"] for e in previous_entries} \
            else None
        entry = self._snapshot(snap, parent, manifests, fmt, meta.get("next-row-id", 0))
        if fmt == 3:
            meta["next-row-id"] = entry["first-row-id"] + entry["added-rows"]
        snapshots = [e for e in previous_entries if e["snapshot-id"] in kept] + [entry]
        log = [e for e in (previous or {}).get("snapshot-log", []) if e["snapshot-id"] in kept]
        log.append({"snapshot-id": snap.snapshot_id, "timestamp-ms": entry["timestamp-ms"]})
        meta.update({"snapshots": snapshots, "snapshot-log": log, "current-snapshot-id": snap.snapshot_id,
                     "refs": {"main": {"snapshot-id": snap.snapshot_id, "type": "branch"}}})
        return meta

    def _rel(self, absolute: str) -> str:
        base = self.location.rstrip("/") + "/"
        if not absolute.startswith(base):
            raise UnpublishableError(f"published metadata names {absolute}, outside the table at {self.location}; "
                                     "the table moved: remove its metadata/ directory and publish again")
        return absolute[len(base):]

    def _move_hint(self, version: int, hinted: int) -> int:
        """Point ``version-hint.text`` at ``version`` unless it already names a newer one (``hinted``: what it
        named when this catch-up began); read again after writing, as another catch-up may have written."""
        current = hinted
        for _ in range(3):
            if current >= version:
                return current
            _io().replace_file(self.storage, HINT, str(version).encode())
            current = _read_hint(self.storage)
        return version


def publish_iceberg(catalog: SqliteCatalog, table_id: int, name: str, storage: TableStorage) -> PublishResult:
    """Write Iceberg metadata for every committed snapshot not yet published, in snapshot order.

    Raises:
        UnpublishableError: a type or history Iceberg readers cannot read (nothing is written).
    """
    with catalog.one_connection():  # a dozen reads of the catalog, one connection
        result = _Publisher(catalog, table_id, name, storage).run()
        props = catalog.properties(table_id)
    if props.get(REGISTER_URI_PROPERTY) and props.get(REGISTER_NAME_PROPERTY):
        move_pointer(props[REGISTER_URI_PROPERTY], props[REGISTER_NAME_PROPERTY], result.metadata_location)
    return result


def catch_up(catalog: SqliteCatalog, table_id: int, name: str, storage: TableStorage) -> PublishResult | None:
    """``publish_iceberg`` after a commit: the commit stands whatever happens here, so a failure is a
    warning (the published view stays behind until the next commit or ``publish()``), never an error."""
    try:
        return publish_iceberg(catalog, table_id, name, storage)
    except Exception as e:  # any failure: the commit succeeded, and raising would invite a duplicate retry
        warnings.warn(f"table {name!r} committed, but publishing its Iceberg metadata failed ({type(e).__name__}: "
                      f"{e}); the published view stays behind until the next commit or publish()",
                      PublishWarning, stacklevel=3)
        return None


def check_format(publish: str | None) -> dict[str, str]:
    """The table property that turns publishing in ``publish`` on (none for None); an unknown format raises."""
    if publish is None:
        return {}
    if publish not in PUBLISH_FORMATS:
        raise ValueError(f"publish={publish!r}: fieldshift publishes tables as {', '.join(PUBLISH_FORMATS)} only")
    return {"fieldshift.publish": publish}


def check_new_table(schema: Schema, identifier_fields: Sequence[str], location: str) -> None:
    """Refuse ``Table.create(..., publish=...)`` of a table publishing cannot express, before it exists."""
    check_publishable_change(schema, [], location)
