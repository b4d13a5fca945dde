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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fieldshift.errors import UnpublishableError
from fieldshift.extras import require
from fieldshift.schema.model import Schema
from fieldshift.table.catalog.files import publish_file_rows
from fieldshift.table.catalog.snapshots import publish_rows
from fieldshift.table.catalog.specs import decode_partition
from fieldshift.table.catalog.sqlite import DataFile, Snapshot, SqliteCatalog
from fieldshift.table.files.storage import TableStorage
from fieldshift.table.partitions.partitioning import PartitionSpec
from fieldshift.table.publish.iceberg_deletes import delete_manifest_writer, snapshot_deletes, write_position_deletes
from fieldshift.table.publish.iceberg_entries import data_file_entry, position_delete_entry
from fieldshift.table.publish.iceberg_register import REGISTER_NAME_PROPERTY, REGISTER_URI_PROPERTY, move_pointer
from fieldshift.table.publish.iceberg_types import (
    check_publishable_change,
    iceberg_schema,
    needs_v3,
    promotion_problems,
    type_problems,
)
from fieldshift.table.publish.iceberg_values import partition_problem

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
    head = json.dumps({k: v for k, v in meta.items() if k != "snapshots"}, separators=(",", ":"))
    return (head[:-1] + ',"snapshots":[' + ",".join(pieces) + "]}").encode()


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


def published_version(storage: TableStorage) -> int:
    """The newest metadata version written (0: none): the hint, then any version written after it."""
    version = 0
    if storage.exists(HINT):
        try:
            version = int(storage.read_bytes(HINT).decode().strip())
        except ValueError:
            version = 0
    while storage.exists(_metadata_name(version + 1)):
        version += 1
    return version


def _load_files(catalog: SqliteCatalog, table_id: int) -> list[_File]:
    return [_File(r) for r in catalog.read(publish_file_rows, table_id)]


def _ms(committed_at: str) -> int:
    stamp = dt.datetime.fromisoformat(committed_at)
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.UTC)
    return int(stamp.timestamp() * 1000)


def _check(schemas: dict[int, Schema], snapshots: Sequence[Snapshot], files: Sequence[_File], name: str,
           problems: list[str]) -> None:
    """Refuse, before anything is written, what Iceberg readers could not read (every problem at once)."""
    _io()  # PyIceberg checks the schemas: a missing one is named with its extra
    for s in schemas.values():
        found = type_problems(s)
        problems += found
        if not found:
            try:
                iceberg_schema(s)
            except ValueError as e:  # Iceberg indexes fields by dotted path: a column 'a.b' beside struct a's b
                problems.append(f"schema {s.schema_id}: {e}; Iceberg names a nested field by its dotted path, so "
                                "rename one of the two columns")
        if needs_v3(s):
            problems.append(f"schema {s.schema_id}: initial or write defaults need Iceberg v3, which publishing "
                            "does not write yet; compact() and drop the defaults, or wait for v3 publishing")
    seen: set[tuple[int, int]] = set()
    for snap in snapshots:  # the snapshots to publish (those published were checked when they were)
        for schema_id in {f.schema_id for f in files if f.live_at(snap.snapshot_id)}:
            pair = (schema_id, snap.schema_id)
            if pair not in seen:
                seen.add(pair)
                if pair[0] != pair[1]:
                    problems += promotion_problems(schemas[pair[0]], schemas[pair[1]])
    if problems:
        listed = "\n  ".join(dict.fromkeys(problems))
        raise UnpublishableError(f"table {name!r} cannot be published as an Iceberg table; nothing was written:"
                                 f"\n  {listed}")


def _iceberg_spec(spec: PartitionSpec) -> Any:
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
        self.all_files = _load_files(catalog, table_id)
        self.files = [f for f in self.all_files if f.content == "data"]  # a keyed table's key deletes are not rows
        self.keyed = any(f.bucket is not None for f in self.all_files)
        self.deletes: dict[int, dict[int, Any]] = {}  # snapshot -> data file id -> positions dropped
        self.location = _abs(storage, "")

    # -- metadata of one snapshot -----------------------------------------------------------------
    def _base(self, previous: dict[str, Any] | None, snap: Snapshot) -> dict[str, Any]:
        schema_ids = sorted(i for i in self.schemas if i <= max(
            r[2] for r in self.rows if r[0] <= snap.snapshot_id))
        live_specs = {f.spec_id for f in self.files if f.live_at(snap.snapshot_id)}
        specs = [s for s, begin in self.specs if begin <= snap.snapshot_id]
        default = specs[-1] if specs else self.specs[0][0]
        spec_ids = sorted({s.spec_id for s in specs} | live_specs | {default.spec_id})
        iceberg_specs = [_iceberg_spec(self.specs_by_id[i]) for i in spec_ids]
        return {
            "format-version": 2,
            "table-uuid": previous["table-uuid"] if previous else str(uuid.uuid4()),
            "location": self.location,
            "last-sequence-number": max(snap.snapshot_id, 0),
            "last-updated-ms": _ms(snap.committed_at),
            "last-column-id": max(self.schemas[i].highest_field_id for i in schema_ids),
            "current-schema-id": snap.schema_id,
            "schemas": [json.loads(iceberg_schema(self.schemas[i]).model_dump_json(by_alias=True))
                        for i in schema_ids],
            "default-spec-id": default.spec_id,
            "partition-specs": [json.loads(s.model_dump_json(by_alias=True)) for s in iceberg_specs],
            "last-partition-id": max([999] + [f.field_id for i in spec_ids for f in self.specs_by_id[i].fields]),
            "properties": {"fieldshift.table": self.name},
            "sort-orders": [{"order-id": 0, "fields": []}],
            "default-sort-order-id": 0,
        }

    def _manifests(self, snap: Snapshot, previous_manifests: list[Any]) -> list[Any]:
        from pyiceberg.manifest import ManifestEntry, ManifestEntryStatus, write_manifest

        sid = snap.snapshot_id
        groups: dict[tuple[int, int, int], list[_File]] = {}
        for f in self.files:
            if f.live_at(sid):
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
        schema = iceberg_schema(self.schemas[snap.schema_id])
        for (lo, hi, spec_id), members in to_write:
            spec = self.specs_by_id[spec_id]
            rel = f"{METADATA_DIR}/{uuid.uuid4().hex}-s{sid}-b{lo}_{hi}-p{spec_id}-m.avro"
            target = _io().StorageOutput(self.storage, rel, _abs(self.storage, rel))
            entries = [(f, data_file_entry(f.data_file(stats.get(f.file_id, {})), _abs(self.storage, f.path), spec,
                                           self.schemas[f.schema_id])) for f in members]  # any error before writing
            with write_manifest(2, _iceberg_spec(spec), schema, target, sid, "null") as writer:
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

    def _delete_manifests(self, snap: Snapshot) -> list[Any]:
        """The snapshot's position deletes (its deletion vectors), one file per partition, one manifest per
        spec; written whole for every snapshot that has any."""
        from pyiceberg.manifest import ManifestEntry, ManifestEntryStatus

        sid = snap.snapshot_id
        dropped = self.deletes.get(sid) or {}
        if not dropped:
            return []
        by_id = {f.file_id: f for f in self.files}
        groups: dict[tuple[int, str | None], list[tuple[str, Any]]] = {}
        for fid, positions in dropped.items():
            f = by_id[fid]
            groups.setdefault((f.spec_id, f.partition_text), []).append((_abs(self.storage, f.path), positions))
        written = write_position_deletes(self.storage, groups, sid)
        schema = iceberg_schema(self.schemas[snap.schema_id])
        out = []
        for spec_id in sorted({k[0] for k in written}):
            spec = self.specs_by_id[spec_id]
            rel = f"{METADATA_DIR}/{uuid.uuid4().hex}-s{sid}-deletes-m.avro"
            target = _io().StorageOutput(self.storage, rel, _abs(self.storage, rel))
            with delete_manifest_writer(_iceberg_spec(spec), schema, target, sid) as writer:
                for (group_spec, partition_text), (path, rows, size) in sorted(written.items(), key=str):
                    if group_spec != spec_id:
                        continue
                    entry = position_delete_entry(_abs(self.storage, path), rows, size, spec,
                                                  self.schemas[snap.schema_id], decode_partition(partition_text))
                    writer.add_entry(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=sid,
                                                             data_file=entry))
            out.append(writer.to_manifest_file())
        return out

    def _snapshot(self, snap: Snapshot, parent: int | None, manifests: list[Any]) -> dict[str, Any]:
        from pyiceberg.manifest import write_manifest_list

        sid = snap.snapshot_id
        rel = f"{METADATA_DIR}/snap-{sid}-{uuid.uuid4().hex}.avro"
        target = _io().StorageOutput(self.storage, rel, _abs(self.storage, rel))
        with write_manifest_list(2, target, sid, parent, sid, "null") as writer:
            writer.add_manifests(manifests)
            _remember(_LISTS, (str(self.storage.location), rel), [writer.prepare_manifest(m) for m in manifests])
        added = sum(1 for f in self.files if f.begin == sid)
        removed = sum(1 for f in self.files if f.end == sid)
        operation = ("overwrite" if added and removed else "append" if added else "delete" if removed
                     else "replace")
        live = [f for f in self.files if f.live_at(sid)]
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
                                                       if f.file_id in (self.deletes.get(sid) or {})})),
                        "total-position-deletes": str(sum(len(p) for p in (self.deletes.get(sid) or {}).values())),
                        "total-equality-deletes": "0"},
            "schema-id": snap.schema_id,
        }
        if parent is not None:
            out["parent-snapshot-id"] = parent
        return out

    # -- catching up ------------------------------------------------------------------------------
    def run(self) -> PublishResult:
        kept = {r[0] for r in self.rows}
        written: list[int] = []
        version = published_version(self.storage)
        checked = False
        while True:  # each turn writes the next version, or finds another process wrote it and reloads
            previous = self._read_version(version) if version else None
            last = int(previous["properties"][SNAPSHOT_PROPERTY]) if previous else -1
            if not checked:  # before anything is written
                todo = self._after(last)
                problems = []
                for snap in todo if self.keyed else ():
                    live = [f for f in self.all_files if f.live_at(snap.snapshot_id)]
                    self.deletes[snap.snapshot_id], found = snapshot_deletes(self.catalog, self.table_id,
                                                                             snap.snapshot_id, live)
                    problems += found
                for f in self.files:  # files published before were checked then
                    if f.begin > last and self.specs_by_id[f.spec_id].fields and any(f.live_at(x.snapshot_id)
                                                                                    for x in todo):
                        found = partition_problem(self.specs_by_id[f.spec_id], self.schemas[f.schema_id],
                                                  decode_partition(f.partition_text), _abs(self.storage, f.path))
                        if found:
                            problems.append(found)
                _check(self.schemas, todo, self.files, self.name, problems)
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
        final = self._move_hint(version)
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
        from pyiceberg.manifest import read_manifest_list

        meta = self._base(previous, snap)
        meta["properties"][SNAPSHOT_PROPERTY] = str(snap.snapshot_id)
        meta["metadata-log"] = self._log(previous, version)
        if snap.snapshot_id == 0:  # the empty snapshot a table starts with: Iceberg's table without snapshots
            meta.update({"snapshots": [], "snapshot-log": [], "refs": {}})
            return meta
        previous_entries = list(previous.get("snapshots", [])) if previous else []
        current = next((e for e in previous_entries if e["snapshot-id"] == previous.get("current-snapshot-id")),
                       None) if previous else None
        prior: list[Any] = []
        if current is not None:  # its manifests are reused where none of their files has gone
            rel = self._rel(current["manifest-list"])
            prior = _LISTS.get((str(self.storage.location), rel)) or list(
                read_manifest_list(_io().StorageInput(self.storage, rel, current["manifest-list"])))
        manifests = self._manifests(snap, [m for m in prior if _is_data(m)])
        manifests += self._delete_manifests(snap)
        parent = snap.parent_snapshot_id if snap.parent_snapshot_id in {e["snapshot-id"] for e in previous_entries} \
            else None
        entry = self._snapshot(snap, parent, manifests)
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

    def _move_hint(self, version: int) -> int:
        """Point ``version-hint.text`` at ``version`` unless it already names a newer one."""
        for _ in range(3):
            current = 0
            if self.storage.exists(HINT):
                try:
                    current = int(self.storage.read_bytes(HINT).decode().strip())
                except ValueError:
                    current = 0
            if current >= version:
                return current
            _io().replace_file(self.storage, HINT, str(version).encode())
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
