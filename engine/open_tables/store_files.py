"""Opening a foreign table's files with the object-store options the caller gave (``storage_options=``),
not only with the environment's: DuckLake's, Delta's and Hudi's data, delete and log files.

The options use the key names delta-rs and hudi-rs take (object_store's: ``aws_access_key_id``,
``aws_secret_access_key``, ``aws_session_token``, ``aws_region``, ``aws_endpoint_url``, ``aws_allow_http``,
case-insensitive, with or without the ``aws_`` prefix), so one dictionary serves hudi-rs and fieldshift's
own reads. They configure ``pyarrow.fs.S3FileSystem`` for ``s3://`` and ``s3a://`` paths; other URIs and
local paths open as before. ``StoreFiles`` pickles with its options (never its open filesystems), so a
scan shipped to a Spark executor opens with the same credentials as the driver, whatever the executor's
environment holds.
"""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Mapping
from typing import Any

import pyarrow.fs as pafs
import pyarrow.parquet as pq

from fieldshift.errors import InvalidOptionError

__all__ = ["S3_KEYS", "WRITER_KEYS", "StoreFiles"]

# object_store's key (without the aws_ prefix) -> pyarrow.fs.S3FileSystem's argument
S3_KEYS = {"access_key_id": "access_key", "secret_access_key": "secret_key", "session_token": "session_token",
           "token": "session_token", "region": "region", "default_region": "region",
           "endpoint_url": "endpoint_override", "endpoint": "endpoint_override", "allow_http": "allow_http"}
_S3_SCHEMES = ("s3://", "s3a://")
# options delta-rs' writers take (commit safety on S3), often kept in the same dictionary: nothing to a reader
WRITER_KEYS = frozenset({"aws_s3_allow_unsafe_rename", "aws_conditional_put", "aws_s3_locking_provider",
                         "delta_dynamo_table_name", "aws_copy_if_not_exists"})


class StoreFiles:
    """Opens and lists a table's files; ``options`` are ``storage_options`` (None: the environment's).

    ``strict`` names a key that configures nothing here (DuckLake and Delta, whose files only fieldshift
    opens), but for delta-rs' writer-side keys (``WRITER_KEYS``); Hudi passes the rest of its options on to
    hudi-rs, so it is not strict."""

    def __init__(self, options: Mapping[str, Any] | None, what: str, *, strict: bool = True) -> None:
        self.options = {str(k): str(v) for k, v in (options or {}).items()}
        self.what = what
        self._s3_args: dict[str, Any] = {}
        unknown = []
        for key, value in self.options.items():
            short = key.lower().removeprefix("aws_")
            arg = S3_KEYS.get(short)
            if key.lower() in WRITER_KEYS:
                continue
            if arg is None:
                unknown.append(key)
            elif arg == "allow_http":
                if value.strip().lower() in ("true", "1", "yes"):
                    self._s3_args["scheme"] = "http"
            else:
                self._s3_args[arg] = value
        if strict and unknown:
            raise InvalidOptionError(f"{what}: storage option(s) {sorted(unknown)} are not ones fieldshift uses; it "
                                     f"takes {', '.join('aws_' + k for k in S3_KEYS)} (object_store's names)")
        self._lock = threading.Lock()
        self._s3: pafs.FileSystem | None = None

    def filesystem(self, path: str) -> tuple[pafs.FileSystem, str]:
        """The filesystem that holds ``path`` and the path inside it."""
        if "://" not in path:
            return pafs.LocalFileSystem(), path
        if self._s3_args and path.startswith(_S3_SCHEMES):
            with self._lock:
                if self._s3 is None:
                    self._s3 = pafs.S3FileSystem(**self._s3_args)
            return self._s3, urllib.parse.unquote(path.split("://", 1)[1])  # percent-decoded, as from_uri does
        return pafs.FileSystem.from_uri(path)

    def open(self, path: str) -> Any:
        """A random-access file for ``path``."""
        fs, inner = self.filesystem(path)
        return fs.open_input_file(inner)

    def __call__(self, path: str) -> Any:
        return self.open(path)

    def footer_rows(self, path: str) -> int:
        """Rows of a data file whose metadata does not record them (optional in Delta's and Hudi's logs),
        from its Parquet footer."""
        with self.open(path) as f:
            return int(pq.ParquetFile(f).metadata.num_rows)

    def __getstate__(self) -> dict[str, Any]:
        return {"options": self.options, "what": self.what, "_s3_args": self._s3_args}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._s3 = None
