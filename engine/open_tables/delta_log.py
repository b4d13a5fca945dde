"""A Delta table's transaction log, read directly: commits (JSON lines), checkpoints (classic and multi-part
Parquet, V2 ones in JSON or Parquet with sidecar files), replayed into the live files of a version.

The directory listing is the truth: the latest complete checkpoint at or before a version is its base (a
multi-part checkpoint missing a part is ignored, as the protocol requires), then the commits after it in
order. ``_last_checkpoint`` names which checkpoint a writer finished last: where several are at its version
(a classic and a V2 one, or multi-part ones of different part counts) the one it names is read, and a
pointer to a file that is gone is a hint that went stale, not an error. A checkpoint file of a kind not
read here (a name that follows none of the protocol's patterns) is a named error when a read needs it.
Log compaction files, staged commits and checksum files are optional for readers and not read. Within a
commit, removes apply before adds, so a file whose deletion vector changed stays live with the new one; a
remove names the logical file by path and deletion vector, and removes only that one.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from fieldshift.errors import (
    CatalogFormatError,
    DataFileError,
    SnapshotNotFoundError,
    UnsupportedFormatFeatureError,
)
from fieldshift.open_tables.delta_dv import dv_unique_id

__all__ = ["Checkpoint", "DeltaLog", "LastCheckpoint", "LogState"]

_COMMIT = re.compile(r"(\d{20})\.json")
_CLASSIC = re.compile(r"(\d{20})\.checkpoint\.parquet")
_MULTI = re.compile(r"(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet")
_UUID = re.compile(r"(\d{20})\.checkpoint\.[0-9a-fA-F-]{36}\.(json|parquet)")
_ANY_CHECKPOINT = re.compile(r"(\d{20})\.checkpoint\..+")
_CHECKPOINT_ACTIONS = ("add", "metaData", "protocol", "sidecar")


@dataclass(frozen=True)
class Checkpoint:
    version: int
    paths: tuple[str, ...]  # one file, or every part of a multi-part checkpoint in order
    kind: str  # classic, multi-part, v2
    mtime: dt.datetime | None = None


@dataclass(frozen=True)
class LastCheckpoint:
    """What ``_delta_log/_last_checkpoint`` says: the version, the part count of a multi-part checkpoint,
    the file name of a V2 one."""

    version: int
    parts: int | None = None
    v2_path: str | None = None

    @classmethod
    def parse(cls, text: str) -> LastCheckpoint | None:
        """None when the file is not the JSON object the protocol describes (a reader then lists the log)."""
        try:
            value = json.loads(text)
            version = int(value["version"])
            parts = value.get("parts")
            v2 = value.get("v2Checkpoint") or {}
            return cls(version, None if parts is None else int(parts), v2.get("path"))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None

    def names(self, cp: Checkpoint) -> bool:
        if cp.version != self.version:
            return False
        if self.v2_path is not None:
            return cp.kind == "v2" and cp.paths[0].rsplit("/", 1)[-1] == self.v2_path.rsplit("/", 1)[-1]
        if self.parts is not None and self.parts > 1:
            return cp.kind == "multi-part" and len(cp.paths) == self.parts
        return cp.kind == "classic"


@dataclass
class LogState:
    """A version's replayed state: protocol, metadata and the live files (``add`` actions by path)."""

    version: int
    protocol: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    files: dict[str, dict[str, Any]] = field(default_factory=dict)


class DeltaLog:
    """The ``_delta_log`` directory of the table at ``root`` (a local path or a URI pyarrow.fs opens)."""

    def __init__(self, root: str, filesystem: pafs.FileSystem, fs_root: str) -> None:
        self.root = root
        self.fs = filesystem
        self.log_dir = fs_root.rstrip("/") + "/_delta_log"
        self.commits: dict[int, tuple[str, dt.datetime | None]] = {}
        self.checkpoints: dict[int, list[Checkpoint]] = {}
        self.unread_checkpoints: dict[int, list[str]] = {}  # checkpoint files of a kind not read here
        self.last_checkpoint: LastCheckpoint | None = None
        self._actions: dict[int, list[dict[str, Any]]] = {}
        self.refresh()

    # -- listing --------------------------------------------------------------------------------
    def refresh(self) -> None:
        """List the log again (a writer may have committed since)."""
        try:
            infos = self.fs.get_file_info(pafs.FileSelector(self.log_dir))
        except (FileNotFoundError, NotADirectoryError):
            raise CatalogFormatError(f"{self.root} is not a Delta table: it has no _delta_log directory") from None
        commits: dict[int, tuple[str, dt.datetime | None]] = {}
        parts: dict[tuple[int, int], dict[int, str]] = {}
        checkpoints: dict[int, list[Checkpoint]] = {}
        mtimes: dict[int, dt.datetime | None] = {}
        unread: dict[int, list[str]] = {}
        last: LastCheckpoint | None = None
        for info in infos:
            name = info.base_name
            if (m := _COMMIT.fullmatch(name)) is not None:
                commits[int(m.group(1))] = (info.path, info.mtime)
            elif (m := _CLASSIC.fullmatch(name) or _UUID.fullmatch(name)) is not None:
                kind = "classic" if name.endswith(".checkpoint.parquet") else "v2"
                checkpoints.setdefault(int(m.group(1)), []).append(
                    Checkpoint(int(m.group(1)), (info.path,), kind, info.mtime))
            elif (m := _MULTI.fullmatch(name)) is not None:
                parts.setdefault((int(m.group(1)), int(m.group(3))), {})[int(m.group(2))] = info.path
                mtimes[int(m.group(1))] = info.mtime
            elif (m := _ANY_CHECKPOINT.fullmatch(name)) is not None and info.type == pafs.FileType.File:
                unread.setdefault(int(m.group(1)), []).append(name)
            elif name == "_last_checkpoint":
                last = LastCheckpoint.parse(self._text(info.path))
        for (version, count), found in parts.items():
            if sorted(found) == list(range(1, count + 1)):  # a multi-part checkpoint missing a part is ignored
                ordered = tuple(found[i] for i in range(1, count + 1))
                cp = Checkpoint(version, ordered, "multi-part", mtimes.get(version))
                checkpoints.setdefault(version, []).append(cp)
        self.commits, self.checkpoints = commits, checkpoints
        self.unread_checkpoints, self.last_checkpoint = unread, last

    @property
    def latest(self) -> int:
        versions = [*self.commits, *self.checkpoints]
        if not versions:
            raise CatalogFormatError(f"{self.root} is not a Delta table: its _delta_log holds no commit or checkpoint")
        return max(versions)

    def earliest(self) -> int:
        """The oldest version the log can rebuild: 0 when every commit is there, else the oldest checkpoint
        after which no commit is missing."""
        latest = self.latest
        candidates = ([-1] if 0 in self.commits else []) + sorted(self.checkpoints)
        for start in candidates:
            if all(v in self.commits for v in range(start + 1, latest + 1)):
                return max(start, 0)
        self.base_checkpoint(latest)  # names a checkpoint of a kind not read, if that is what is missing
        raise CatalogFormatError(f"Delta table {self.root}: commits are missing after every checkpoint, so no "
                                 "version can be rebuilt")

    def base_checkpoint(self, version: int) -> Checkpoint | None:
        """The checkpoint a read of ``version`` starts from (None: replay from commit 0)."""
        usable = [v for v in self.checkpoints if v <= version
                  and all(c in self.commits for c in range(v + 1, version + 1))]
        unread = [v for v in self.unread_checkpoints if v <= version and v not in self.checkpoints
                  and all(c in self.commits for c in range(v + 1, version + 1))]
        if not usable:
            if all(c in self.commits for c in range(version + 1)):
                return None
            if unread:
                names = ", ".join(sorted(self.unread_checkpoints[max(unread)]))
                raise UnsupportedFormatFeatureError(
                    f"Delta table {self.root} cannot be read at version {version}: its commits before it were "
                    f"cleaned up and its checkpoint ({names}) is of a kind fieldshift does not read (it reads "
                    "classic, multi-part and V2 checkpoints named as the Delta protocol describes)")
            raise SnapshotNotFoundError(f"Delta table {self.root} cannot be read at version {version}: its commits "
                                        "were cleaned up and no checkpoint covers it")
        found = self.checkpoints[max(usable)]
        named = [c for c in found if self.last_checkpoint is not None and self.last_checkpoint.names(c)]
        if named:
            return named[0]  # the one the writer finished last, by _last_checkpoint
        return sorted(found, key=lambda c: (c.kind != "v2", -len(c.paths)))[0]  # else a V2 one, then most parts

    # -- reading --------------------------------------------------------------------------------
    def commit_actions(self, version: int) -> list[dict[str, Any]]:
        """The actions of one commit, in file order (parsed once: a commit never changes)."""
        if version not in self._actions:
            if version not in self.commits:
                raise SnapshotNotFoundError(f"Delta table {self.root} has no commit {version}")
            self._actions[version] = self._json_lines(self.commits[version][0])
        return self._actions[version]

    def _text(self, path: str) -> str:
        try:
            with self.fs.open_input_stream(path) as f:
                return f.read().decode("utf-8")
        except FileNotFoundError:
            raise CatalogFormatError(f"Delta log file {path} disappeared while it was read") from None

    def _json_lines(self, path: str) -> list[dict[str, Any]]:
        text = self._text(path)
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError as e:
                    raise CatalogFormatError(f"Delta log file {path}, line {n}: not JSON ({e})") from None
        return out

    def checkpoint_actions(self, cp: Checkpoint) -> Iterator[dict[str, Any]]:
        """The add, metaData and protocol actions of a checkpoint (sidecars of a V2 one included)."""
        for path in cp.paths:
            actions = self._json_lines(path) if path.endswith(".json") else self._parquet_actions(path)
            for action in actions:
                if "remove" in action:
                    continue  # a checkpoint's removes are tombstones for VACUUM, never live files
                if "sidecar" in action:
                    sidecar = str(action["sidecar"]["path"])
                    name = sidecar if "/" in sidecar else f"{self.log_dir}/_sidecars/{sidecar}"
                    yield from self._parquet_actions(name)
                else:
                    yield action

    def _parquet_actions(self, path: str) -> list[dict[str, Any]]:
        try:
            with self.fs.open_input_file(path) as f:
                pf = pq.ParquetFile(f)
                names = [n for n in _CHECKPOINT_ACTIONS if n in pf.schema_arrow.names]
                table = pf.read(columns=names)
        except FileNotFoundError:
            raise DataFileError(f"Delta checkpoint file {path} is missing; the log references it") from None
        except (pa.ArrowInvalid, OSError) as e:
            raise DataFileError(f"Delta checkpoint file {path} is unreadable: {e}") from None
        out: list[dict[str, Any]] = []
        for name in names:
            column = table.column(name)
            column = column.filter(column.is_valid())
            if name == "add":
                out.extend({"add": a} for a in _adds(column))
            else:
                out.extend({name: _plain(value)} for value in column.to_pylist())
        return out

    # -- replay ---------------------------------------------------------------------------------
    def replay(self, version: int) -> LogState:
        """The state at ``version``: the base checkpoint's, then each later commit applied in order."""
        if version > self.latest or version < 0:
            raise SnapshotNotFoundError(f"Delta table {self.root} has no version {version}; its latest is "
                                        f"{self.latest}")
        cp = self.base_checkpoint(version)
        state = LogState(version)
        start = 0
        if cp is not None:
            for action in self.checkpoint_actions(cp):
                _apply(state, [action])
            start = cp.version + 1
        for v in range(start, version + 1):
            _apply(state, self.commit_actions(v))
        return state


def _apply(state: LogState, actions: list[dict[str, Any]]) -> None:
    adds: dict[str, dict[str, Any]] = {}
    for action in actions:
        if "add" in action:
            adds[action["add"]["path"]] = action["add"]
        elif "remove" in action:
            rm = action["remove"]
            live = state.files.get(rm["path"])
            dv = rm.get("deletionVector")
            if live is not None and _dv_id(live) == (None if dv is None else dv_unique_id(dv)):
                del state.files[rm["path"]]
        elif "metaData" in action:
            state.metadata = action["metaData"]
        elif "protocol" in action:
            state.protocol = action["protocol"]
    state.files.update(adds)


_ADD_FIELDS = ("path", "partitionValues", "size", "stats", "deletionVector", "baseRowId")


def _adds(column: pa.ChunkedArray) -> list[dict[str, Any]]:
    """A checkpoint's add actions, converted field by field and only the fields a read uses (the parsed
    statistics only where the JSON ones are missing): a checkpoint of many files converts quickly."""
    if not len(column):
        return []
    struct = column.combine_chunks()
    present = {f.name for f in struct.type}
    fields = [n for n in _ADD_FIELDS if n in present]
    values = {n: struct.field(n).to_pylist() for n in fields}
    if "stats_parsed" in present and ("stats" not in values or None in values["stats"]):
        fields.append("stats_parsed")
        values["stats_parsed"] = struct.field("stats_parsed").to_pylist()
    adds = [dict(zip(fields, row, strict=True)) for row in zip(*(values[n] for n in fields), strict=True)]
    for a in adds:
        if isinstance(a.get("partitionValues"), list):
            a["partitionValues"] = dict(a["partitionValues"])
    return adds


def _dv_id(add: Mapping[str, Any]) -> str | None:
    dv = add.get("deletionVector")
    return None if dv is None else dv_unique_id(dv)


def _plain(value: Any) -> Any:
    """A checkpoint row as the JSON action it stands for: Parquet maps (lists of pairs) as dicts."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(x, tuple) and len(x) == 2 for x in value):
        return dict(value)
    return value
