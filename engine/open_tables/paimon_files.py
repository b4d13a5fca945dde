"""Reading a Paimon table's own files: JSON schema and snapshot files, Avro manifest lists, manifests and
index manifests (through ``fastavro``, the optional ``paimon`` extra), and deletion-vector index files.

Paths are local or object-store URIs (``pyarrow.fs``). Manifests never change once written, so a
table keeps what it has read by file name. Paimon compresses its Avro files with zstandard by default;
fastavro reads that codec through ``backports.zstd`` (Python < 3.14), and where only the ``zstandard``
package is installed its decompressor is registered for the codec instead.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow.fs as pafs

from fieldshift.errors import CatalogFormatError, UnsupportedFormatFeatureError
from fieldshift.extras import require

__all__ = ["DV_MAGIC", "ManifestEntry", "PaimonFiles", "read_deletion_vector"]

DV_MAGIC = 1581511376  # Paimon's 32-bit bitmap deletion vector
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """One ADD (kind 0) or DELETE (kind 1) of a data file, as a manifest records it."""

    kind: int
    partition: bytes
    bucket: int
    total_buckets: int
    file: dict[str, Any]  # the DataFileMeta record (_FILE_NAME, _ROW_COUNT, _SCHEMA_ID, _LEVEL, ...)

    @property
    def identifier(self) -> tuple[Any, ...]:
        """What an ADD and a later DELETE of the same file share (Paimon's file identifier)."""
        f = self.file
        return (self.partition, self.bucket, f["_LEVEL"], f["_FILE_NAME"], tuple(f.get("_EXTRA_FILES") or ()),
                f.get("_EXTERNAL_PATH"))


def _fastavro() -> Any:
    fastavro = require("fastavro", "paimon", "Reading a Paimon table's manifests")
    _register_zstd(fastavro)
    return fastavro


def _register_zstd(fastavro: Any) -> None:
    """fastavro decodes zstandard blocks with ``backports.zstd``; where only ``zstandard`` is installed,
    give fastavro that library's decompressor under the codec's name."""
    readers = fastavro.read.BLOCK_READERS
    try:
        import backports.zstd  # noqa: F401

        return
    except ImportError:
        pass
    with _lock:
        if getattr(readers.get("zstandard"), "_fieldshift", False):
            return
        try:
            import zstandard
        except ImportError:
            return  # fastavro's own error names the library to install

        def read_block(fo: Any) -> Any:
            import io

            if hasattr(fo, "read_fixed"):  # fastavro's pure-Python decoder
                length = fo.read_long()
                data = fo.read_fixed(length)
            else:
                data = fo.read(_read_long(fo))
            return io.BytesIO(zstandard.ZstdDecompressor().decompressobj().decompress(data))

        read_block._fieldshift = True  # type: ignore[attr-defined]
        readers["zstandard"] = read_block


def _read_long(fo: Any) -> int:
    """An Avro long (zig-zag varint) from a file object."""
    shift = result = 0
    while True:
        b = fo.read(1)[0]
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return (result >> 1) ^ -(result & 1)
        shift += 7


class PaimonFiles:
    """The files under one Paimon table directory (``root``, a path or URI)."""

    def __init__(self, root: str) -> None:
        self.root = root.rstrip("/")
        if "://" in self.root:
            self.fs, self._base = pafs.FileSystem.from_uri(self.root)
        else:
            self.fs, self._base = pafs.LocalFileSystem(), self.root
        self._avro: dict[str, list[dict[str, Any]]] = {}

    def path(self, *parts: str) -> str:
        """A path under the table as the scan opens it (the table's own form: local path or URI)."""
        return "/".join([self.root, *parts])

    def _inner(self, *parts: str) -> str:
        return "/".join([self._base, *parts])

    def exists(self, *parts: str) -> bool:
        return self.fs.get_file_info(self._inner(*parts)).type != pafs.FileType.NotFound

    def listdir(self, *parts: str) -> list[str]:
        """Names of the files in a directory of the table (empty when it does not exist)."""
        info = self.fs.get_file_info(self._inner(*parts))
        if info.type != pafs.FileType.Directory:
            return []
        found = self.fs.get_file_info(pafs.FileSelector(self._inner(*parts)))
        return [i.base_name for i in found if i.type == pafs.FileType.File]

    def subdirs(self, *parts: str) -> list[str]:
        """Names of the directories in a directory of the table (empty when it does not exist)."""
        info = self.fs.get_file_info(self._inner(*parts))
        if info.type != pafs.FileType.Directory:
            return []
        found = self.fs.get_file_info(pafs.FileSelector(self._inner(*parts)))
        return [i.base_name for i in found if i.type == pafs.FileType.Directory]

    def read_bytes(self, *parts: str) -> bytes:
        with self.fs.open_input_stream(self._inner(*parts)) as f:
            return f.read()

    def read_json(self, *parts: str) -> dict[str, Any]:
        where = self.path(*parts)
        try:
            obj = json.loads(self.read_bytes(*parts))
        except (OSError, FileNotFoundError) as e:
            raise CatalogFormatError(f"cannot read Paimon file {where}: {e}") from None
        except ValueError as e:
            raise CatalogFormatError(f"Paimon file {where} is not JSON: {e}") from None
        if not isinstance(obj, dict):
            raise CatalogFormatError(f"Paimon file {where} holds {type(obj).__name__}, not a JSON object")
        return obj

    def read_avro(self, *parts: str) -> list[dict[str, Any]]:
        """The records of an Avro file under the table (read once per name: manifests never change)."""
        key = "/".join(parts)
        cached = self._avro.get(key)
        if cached is not None:
            return cached
        fastavro = _fastavro()
        where = self.path(*parts)
        try:
            with self.fs.open_input_file(self._inner(*parts)) as f:
                records = list(fastavro.reader(f))
        except FileNotFoundError:
            raise CatalogFormatError(f"Paimon table {self.root}: {where} is missing (expired, or not copied "
                                     "with the table)") from None
        except (ValueError, EOFError, OSError) as e:
            raise CatalogFormatError(f"cannot read Paimon manifest {where}: {e}") from None
        self._avro[key] = records
        return records

    def manifest_list(self, name: str) -> list[dict[str, Any]]:
        return self.read_avro("manifest", name)

    def manifest(self, name: str) -> list[ManifestEntry]:
        where = self.path("manifest", name)
        out = []
        for r in self.read_avro("manifest", name):
            try:
                out.append(ManifestEntry(int(r["_KIND"]), bytes(r["_PARTITION"]), int(r["_BUCKET"]),
                                         int(r.get("_TOTAL_BUCKETS") or 0), r["_FILE"]))
            except (KeyError, TypeError, ValueError) as e:
                raise CatalogFormatError(f"Paimon manifest {where} has an entry without {e}") from None
        return out


def read_deletion_vector(data: bytes, where: str) -> np.ndarray:
    """The deleted row positions of one deletion vector: a 4-byte big-endian size, Paimon's magic number,
    a portable 32-bit RoaringBitmap, a CRC-32 (not checked: the bitmap's own format is validated)."""
    pyroaring = require("pyroaring", "paimon", "Reading a Paimon table's deletion vectors")
    if len(data) < 8:
        raise UnsupportedFormatFeatureError(f"{where}: {len(data)} bytes are no Paimon deletion vector")
    size = int.from_bytes(data[:4], "big")
    magic = int.from_bytes(data[4:8], "big")
    if magic != DV_MAGIC:
        raise UnsupportedFormatFeatureError(f"{where}: a deletion vector with magic number {magic} (Paimon's 32-bit "
                                            f"bitmap vectors have {DV_MAGIC}; 64-bit ones are not read)")
    try:
        bitmap = pyroaring.BitMap.deserialize(bytes(data[8:4 + size]))
    except Exception as e:  # pyroaring raises plain exceptions for corrupt input
        raise UnsupportedFormatFeatureError(f"{where}: the deletion vector's bitmap does not decode ({e})") from None
    return np.asarray(bitmap.to_array(), dtype=np.int64)


def vector_reader(files: PaimonFiles) -> Callable[[str, int, int], np.ndarray]:
    """Reads the deletion vector at ``offset`` (``length`` bytes of bitmap) of an index file by name."""

    def read(name: str, offset: int, length: int) -> np.ndarray:
        with files.fs.open_input_file(files._inner("index", name)) as f:
            f.seek(offset)
            data = f.read(length + 8)
        return read_deletion_vector(data, f"{files.path('index', name)} at {offset}")

    return read
