"""PyIceberg's file interface over a table's ``TableStorage`` (so manifests go wherever the table lives),
and the create-if-absent write that makes concurrent catch-ups safe."""

from __future__ import annotations

import contextlib
import io
import os
import uuid
from typing import Any

from pyiceberg.io import InputFile, InputStream, OutputFile, OutputStream

from fieldshift.table.files.storage import TableStorage

__all__ = ["StorageInput", "StorageOutput", "put_if_absent", "replace_file"]


class _Buffer(io.BytesIO):
    def __init__(self, done: Any) -> None:
        super().__init__()
        self._done = done

    def close(self) -> None:
        if not self.closed:
            self._done(self.getvalue())
        super().close()


class StorageOutput(OutputFile):
    """A new file at ``rel`` under the table: written whole when the writer closes it."""

    def __init__(self, storage: TableStorage, rel: str, location: str) -> None:
        super().__init__(location)
        self._storage, self._rel, self._size = storage, rel, 0

    def __len__(self) -> int:
        return self._size

    def exists(self) -> bool:
        return self._storage.exists(self._rel)

    def to_input_file(self) -> InputFile:
        return StorageInput(self._storage, self._rel, self.location)

    def create(self, overwrite: bool = False) -> OutputStream:
        def done(data: bytes) -> None:
            self._storage.put(self._rel, data)
            self._size = len(data)

        return _Buffer(done)  # type: ignore[return-value]


class StorageInput(InputFile):
    """A file at ``rel`` under the table, read whole."""

    def __init__(self, storage: TableStorage, rel: str, location: str) -> None:
        super().__init__(location)
        self._storage, self._rel = storage, rel
        self._data: bytes | None = None

    def _bytes(self) -> bytes:
        if self._data is None:
            self._data = self._storage.read_bytes(self._rel)
        return self._data

    def __len__(self) -> int:
        return len(self._bytes())

    def exists(self) -> bool:
        return self._storage.exists(self._rel)

    def open(self, seekable: bool = True) -> InputStream:
        return io.BytesIO(self._bytes())  # type: ignore[return-value]


def put_if_absent(storage: TableStorage, rel: str, data: bytes) -> bool:
    """Write ``rel`` unless it exists (True: this call wrote it). Locally a hard link of a whole temporary
    file, so a concurrent writer of the same name either wins or loses, never mixes. On an object store an
    existence check then one upload: ``pyarrow.fs`` offers no conditional put (S3's ``If-None-Match``), so
    two writers past the check at once both upload and both return True; each upload is one whole object
    (the last one stays), which is safe here because both hold metadata of the same snapshot."""
    if storage.local_path is None:
        if storage.exists(rel):
            return False
        storage.put(rel, data)
        return True
    final = storage.local_path / rel
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    try:
        os.link(tmp, final)
        return True
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def replace_file(storage: TableStorage, rel: str, data: bytes) -> None:
    """Write ``rel`` whole, replacing it (a temporary name of this call's own: concurrent writers of the same
    file each rename a whole file into place)."""
    if storage.local_path is None:
        storage.put(rel, data)
        return
    final = storage.local_path / rel
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, final)
