"""What published Iceberg metadata still needs, for ``vacuum`` and expiry: the data files its newest version
names (never deleted while named, even when fieldshift forgot them and publishing is off), and the
metadata files no published snapshot needs any more (deleted)."""

from __future__ import annotations

import json
from typing import Any

from fieldshift.table.files.storage import TableStorage
from fieldshift.table.publish.iceberg_deletes import DELETES_DIR
from fieldshift.table.publish.iceberg_publish import METADATA_DIR, published_version

__all__ = ["published_data_paths", "vacuum_published"]


def _rel(storage: TableStorage, absolute: str) -> str | None:
    base = storage.display("").rstrip("/") + "/"
    return absolute[len(base):] if absolute.startswith(base) else None


def _load(storage: TableStorage, version: int) -> dict[str, Any]:
    return json.loads(storage.read_bytes(f"{METADATA_DIR}/v{version}.metadata.json"))


def _manifests(storage: TableStorage, meta: dict[str, Any]) -> tuple[set[str], list[Any]]:
    """The manifest lists of ``meta``'s snapshots and the manifests they list (relative paths, ManifestFiles)."""
    from pyiceberg.manifest import read_manifest_list

    from fieldshift.table.publish.iceberg_io import StorageInput

    lists, manifests = set(), {}
    for snap in meta.get("snapshots", []):
        rel = _rel(storage, snap["manifest-list"])
        if rel is None or not storage.exists(rel):
            continue
        lists.add(rel)
        for m in read_manifest_list(StorageInput(storage, rel, snap["manifest-list"])):
            manifests.setdefault(m.manifest_path, m)
    return lists, list(manifests.values())


def published_data_paths(storage: TableStorage) -> set[str]:
    """Every data and delete file (relative path) a snapshot of the newest published version names."""
    version = published_version(storage)
    if not version:
        return set()
    _, manifests = _manifests(storage, _load(storage, version))
    out = set()
    for m in manifests:
        for entry in m.fetch_manifest_entry(_StorageIO(storage), discard_deleted=True):
            path = _rel(storage, entry.data_file.file_path)
            if path is not None:
                out.add(path)
    return out


class _StorageIO:
    """The two FileIO methods ``ManifestFile.fetch_manifest_entry`` calls, over the table's storage."""

    def __init__(self, storage: TableStorage) -> None:
        self.storage = storage

    def new_input(self, location: str) -> Any:
        from fieldshift.table.publish.iceberg_io import StorageInput

        rel = _rel(self.storage, location)
        if rel is None:
            raise FileNotFoundError(location)
        return StorageInput(self.storage, rel, location)


def vacuum_published(storage: TableStorage, cutoff: float) -> list[str]:
    """Delete metadata versions naming a snapshot the newest version no longer has, and manifests, manifest
    lists and delete files (position deletes, Puffin deletion vectors) no remaining version names, modified
    before ``cutoff`` (a catch-up may be writing newer ones); returns their relative paths. The newest
    version and the hint are always kept."""
    newest = published_version(storage)
    if not newest:
        return []
    latest = _load(storage, newest)
    live = {s["snapshot-id"] for s in latest.get("snapshots", [])}
    entries = {e.name: e for e in storage.list_files(METADATA_DIR) if e.regular}
    removed = []
    for name, entry in entries.items():
        if not (name.startswith("v") and name.endswith(".metadata.json")) or entry.mtime > cutoff:
            continue
        try:
            version = int(name[1:-len(".metadata.json")])
        except ValueError:
            continue
        if version != newest and any(s["snapshot-id"] not in live for s in _load(storage, version).get("snapshots",
                                                                                                       [])):
            storage.delete(entry.rel)
            removed.append(entry.rel)
    lists, manifests = _manifests(storage, latest)
    needed = lists | {r for m in manifests if (r := _rel(storage, m.manifest_path)) is not None}
    deletes = [e for e in entries.values() if e.rel.startswith(DELETES_DIR + "/")
               and e.name.endswith((".parquet", ".puffin"))]  # v2 position deletes, v3 deletion vectors
    named = published_data_paths(storage) if deletes else set()
    for name, entry in entries.items():
        unneeded = (name.endswith(".avro") and entry.rel not in needed) or (entry in deletes and entry.rel not in named)
        if unneeded and entry.mtime <= cutoff:
            storage.delete(entry.rel)
            removed.append(entry.rel)
    return removed
