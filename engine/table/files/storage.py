"""Where a table's files live: a local directory or a location on an object store, through ``pyarrow.fs``.

Every data-file read, write, delete and listing of the table store goes through a :class:`TableStorage`.
A local directory (a plain path or a ``file://`` URI) keeps the embedded behaviour: a file is written
under a temporary name, fsynced and renamed into place. An object store (``s3://``, ``gs://``, ``abfs://``,
whatever ``pyarrow.fs.FileSystem.from_uri`` knows) has no rename: a file is serialized in memory and sent
as one object, which the store makes visible only when the upload completes (a writer killed midway
leaves nothing a listing or a reader can see).

Credentials come from the usual environment (``AWS_ACCESS_KEY_ID``, profiles, instance roles; an S3-compatible
endpoint from ``AWS_ENDPOINT_URL``), or from ``storage_options`` (pyarrow's ``S3FileSystem`` arguments or
PyIceberg's ``s3.*`` property names), or a ready ``filesystem=``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from fieldshift.errors import StorageLocationError
from fieldshift.table.files.dictionary_read import open_parquet

try:
    import fcntl
except ImportError:  # no advisory locks (Windows): vacuum keeps to its age margin for temporary files
    fcntl = None  # type: ignore[assignment]

__all__ = ["TMP_SUFFIX", "StoredFile", "TableStorage", "is_object_store", "location_key", "open_storage"]

TMP_SUFFIX = ".tmp"

# PyIceberg's FileIO property names, as pyarrow's S3FileSystem arguments.
_PYICEBERG_S3 = {"s3.endpoint": "endpoint_override", "s3.access-key-id": "access_key",
                 "s3.secret-access-key": "secret_key", "s3.session-token": "session_token", "s3.region": "region",
                 "s3.force-virtual-addressing": "force_virtual_addressing"}


def is_object_store(location: str | os.PathLike[str]) -> bool:
    """True for a URI of a non-local filesystem (``s3://bucket/t``); plain paths and ``file://`` are local."""
    if not isinstance(location, str) or "://" not in location:
        return False
    return urlsplit(location).scheme.lower() not in ("", "file", "local")


def location_key(location: str | os.PathLike[str]) -> Path | str:
    """A location as ``TableStorage.location`` has it (a resolved path, or the URI), without opening it."""
    if is_object_store(location):
        return str(location).rstrip("/")
    text = str(location)
    if text.startswith(("file://", "local://")):
        text = pafs.FileSystem.from_uri(text)[1]
    return Path(text).resolve()


@dataclass(frozen=True)
class StoredFile:
    """One entry of a listing: its path relative to the table, modification time (seconds), and whether it
    is a regular file (directories and symlinks are not, and vacuum leaves them alone)."""

    rel: str
    mtime: float
    regular: bool

    @property
    def name(self) -> str:
        return self.rel.rsplit("/", 1)[-1]


def _s3_options(options: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in options.items():
        out[_PYICEBERG_S3.get(key, key)] = value
    env_endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if "endpoint_override" not in out and env_endpoint:  # from_uri reads it; the constructor does not
        out["endpoint_override"] = env_endpoint
    endpoint = out.get("endpoint_override")
    if isinstance(endpoint, str) and "://" in endpoint:  # pyarrow wants host:port plus a scheme
        parts = urlsplit(endpoint)
        out["endpoint_override"] = parts.netloc
        out.setdefault("scheme", parts.scheme)
    return out


_FILESYSTEMS: dict[tuple[Any, ...], pafs.FileSystem] = {}


def _filesystem(uri: str, options: Mapping[str, Any] | None) -> tuple[pafs.FileSystem, str]:
    """The filesystem and the path on it of an object-store URI (one filesystem per bucket, options and
    credentials environment in a process: opening one may ask the store for the bucket's region)."""
    parts = urlsplit(uri)
    path = (parts.netloc + parts.path).rstrip("/")
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(("AWS_", "GOOGLE_", "AZURE_"))))
    key = (parts.scheme, parts.netloc, parts.query, repr(sorted((options or {}).items())), env)
    if key not in _FILESYSTEMS:
        _FILESYSTEMS[key] = _new_filesystem(uri, options)
    return _FILESYSTEMS[key], path


def _new_filesystem(uri: str, options: Mapping[str, Any] | None) -> pafs.FileSystem:
    parts = urlsplit(uri)
    if not options:
        try:
            return pafs.FileSystem.from_uri(uri)[0]
        except (pa.ArrowInvalid, OSError) as e:
            raise StorageLocationError(f"cannot open table location {uri}: {e}. Check the URI, the credentials "
                                       "(the usual environment, e.g. AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL for an "
                                       "S3-compatible server) or pass storage_options= / filesystem=") from None
    if parts.scheme.lower() in ("s3", "s3a"):
        return pafs.S3FileSystem(**_s3_options(options))
    if parts.scheme.lower() in ("gs", "gcs"):
        return pafs.GcsFileSystem(**options)
    raise StorageLocationError(f"storage_options are understood for s3:// and gs:// locations, not {uri}; "
                               "pass filesystem= (a pyarrow.fs.FileSystem) instead")


class TableStorage:
    """A table's files: a pyarrow filesystem plus the table's base path on it (see the module docstring).

    Pickles as its location and options, so a Spark executor opens the filesystem itself (credentials
    from its own environment unless ``storage_options`` carry them)."""

    def __init__(self, location: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None,
                 filesystem: pafs.FileSystem | None = None) -> None:
        self._args = (location, dict(storage_options) if storage_options else None, filesystem)
        self.local_path: Path | None = None
        if is_object_store(location):
            uri = str(location).rstrip("/")
            self.location: Path | str = uri
            if filesystem is not None:
                parts = urlsplit(uri)
                self.fs, self.base = filesystem, (parts.netloc + parts.path).rstrip("/")
            else:
                self.fs, self.base = _filesystem(uri, storage_options)
            self._shown = uri.split("?", 1)[0]
        else:
            self.local_path = Path(location_key(location))
            self.location = self.local_path
            self.fs, self.base = pafs.LocalFileSystem(), str(self.local_path)
            self._shown = str(self.local_path)

    def __reduce__(self) -> tuple[Any, ...]:
        return (TableStorage, self._args)

    def __repr__(self) -> str:
        return f"TableStorage({self._shown!r})"

    @property
    def is_local(self) -> bool:
        return self.local_path is not None

    def full(self, rel: str) -> str:
        """The path of ``rel`` on the filesystem (a plain OS path when local)."""
        if self.local_path is not None:
            return str(self.local_path / rel)
        return f"{self.base}/{rel}" if rel else self.base

    def display(self, rel: str = "") -> str:
        """``rel`` as people see it in messages: a local path, or the URI."""
        if self.local_path is not None:
            return str(self.local_path / rel) if rel else str(self.local_path)
        return f"{self._shown}/{rel}" if rel else self._shown

    # -- writing --------------------------------------------------------------------------------
    def write_parquet(self, rel: str, table: pa.Table, **options: Any) -> int:
        """Write ``table`` as a Parquet file at ``rel`` all-or-nothing; returns its size in bytes.

        Local: a temporary name, fsync, rename. Object store: serialized in memory, then one upload, so
        no partial object is ever visible (a failure before the upload completes leaves none)."""
        if self.local_path is not None:
            final = self.local_path / rel
            final.parent.mkdir(parents=True, exist_ok=True)
            tmp = final.with_name(f".{final.name}{TMP_SUFFIX}")
            for attempt in range(3):  # locked while written: vacuum (delete_idle) leaves it alone
                try:
                    with open(tmp, "ab") as fh:
                        if fcntl is not None:
                            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
                        pq.write_table(table, tmp, **options)  # the same file: the lock stays on it
                        os.fsync(fh.fileno())
                        size = os.fstat(fh.fileno()).st_size
                        os.replace(tmp, final)
                    return size
                except FileNotFoundError:  # deleted between its creation and its lock: write it again
                    if attempt == 2:
                        raise
            raise AssertionError("unreachable")
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, **options)
        buf = sink.getvalue()
        self.put(rel, buf)
        return buf.size

    def put(self, rel: str, data: bytes | pa.Buffer) -> None:
        """One object (or, locally, one file written whole and renamed into place)."""
        if self.local_path is not None:
            final = self.local_path / rel
            final.parent.mkdir(parents=True, exist_ok=True)
            tmp = final.with_name(f".{final.name}{TMP_SUFFIX}")
            tmp.write_bytes(bytes(data))
            os.replace(tmp, final)
            return
        path = self.full(rel)
        try:
            with self.fs.open_output_stream(path) as out:
                out.write(data)
        except BaseException:
            with contextlib.suppress(OSError):  # an upload that failed midway must not leave an object
                self.fs.delete_file(path)
            raise

    # -- reading --------------------------------------------------------------------------------
    def parquet_file(self, rel: str, *, whole: bool = False, **options: Any) -> pq.ParquetFile:
        """A Parquet reader of ``rel`` (a missing file raises FileNotFoundError, as locally). ``whole``: the file is
        read in one request and decoded from memory (a small file: opening it and reading its footer and column
        chunks one request at a time costs more than its rows, and an object store a request each).
        ``read_dictionary``: string and binary columns to read as dictionaries where their chunks allow
        (``dictionary_read.open_parquet``)."""
        if whole:  # in memory: nothing to pre-buffer (Arrow's read-ahead has a set-up cost per file)
            return open_parquet(pa.BufferReader(self._whole(rel)), **{"pre_buffer": False, **options})
        if self.local_path is not None:
            return open_parquet(self.local_path / rel, **options)
        return open_parquet(self.fs.open_input_file(self.full(rel)), **options)

    def _whole(self, rel: str) -> bytes | pa.Buffer:
        """``rel``'s bytes in one read: locally straight into an Arrow buffer (no Python bytes object, no path
        object; benchmarks/README issue 35's fifth part)."""
        if self.local_path is not None:
            with self.fs.open_input_file(os.path.join(self.base, rel)) as fh:
                return fh.read_buffer()
        return self.read_bytes(rel)

    def read_table(self, rel: str, columns: list[str] | None = None) -> pa.Table:
        if self.local_path is not None:
            return pq.read_table(self.local_path / rel, columns=columns)
        with self.fs.open_input_file(self.full(rel)) as fh:
            return pq.read_table(fh, columns=columns)

    def read_bytes(self, rel: str) -> bytes:
        if self.local_path is not None:
            return (self.local_path / rel).read_bytes()
        with self.fs.open_input_stream(self.full(rel)) as fh:
            return bytes(fh.read())

    def exists(self, rel: str) -> bool:
        """Whether ``rel`` is a file."""
        if self.local_path is not None:
            return (self.local_path / rel).is_file()
        return self.fs.get_file_info(self.full(rel)).type == pafs.FileType.File

    # -- deleting and listing -------------------------------------------------------------------
    def delete(self, rel: str, *, missing_ok: bool = True) -> None:
        """Delete one file (``missing_ok=False``: a missing one raises FileNotFoundError)."""
        if self.local_path is not None:
            (self.local_path / rel).unlink(missing_ok=missing_ok)
            return
        path = self.full(rel)
        if not missing_ok and self.fs.get_file_info(path).type == pafs.FileType.NotFound:
            raise FileNotFoundError(self.display(rel))
        try:
            self.fs.delete_file(path)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def delete_idle(self, rel: str) -> bool:
        """Delete a local temporary file unless a writer holds it (``write_parquet`` locks it while it writes);
        whether it was deleted. On an object store there are no temporary files: a plain delete."""
        if self.local_path is None:
            self.delete(rel, missing_ok=False)
            return True
        with open(self.local_path / rel, "rb") as fh:
            try:
                if fcntl is not None:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            (self.local_path / rel).unlink()
        return True

    def list_files(self, folder: str) -> list[StoredFile]:
        """Every entry below ``folder`` (partition directories included), sorted, without following
        symlinks; an absent folder lists nothing."""
        if self.local_path is not None:
            return list(self._walk_local(self.local_path / folder))
        infos = self.fs.get_file_info(pafs.FileSelector(self.full(folder), allow_not_found=True, recursive=True))
        start = len(self.base) + 1
        return sorted((StoredFile(i.path[start:], i.mtime.timestamp() if i.mtime else 0.0,
                                  i.type == pafs.FileType.File) for i in infos if i.type == pafs.FileType.File),
                      key=lambda e: e.rel)

    def _walk_local(self, top: Path) -> Iterator[StoredFile]:
        assert self.local_path is not None
        for root, dirs, names in os.walk(top):
            dirs.sort()
            for n in sorted([*names, *(d for d in dirs if (Path(root) / d).is_symlink())]):
                path = Path(root) / n
                try:
                    st = path.lstat()
                except FileNotFoundError:  # removed while listing (a concurrent vacuum)
                    continue
                yield StoredFile(path.relative_to(self.local_path).as_posix(), st.st_mtime,
                                 not path.is_symlink() and path.is_file())


def open_storage(location: TableStorage | str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None,
                 filesystem: pafs.FileSystem | None = None) -> TableStorage:
    """``location`` as a :class:`TableStorage` (one given is returned as it is)."""
    if isinstance(location, TableStorage):
        return location
    return TableStorage(location, storage_options, filesystem)
