"""Delta deletion vectors: the rows of a data file that a Delta table no longer holds.

A descriptor (``add.deletionVector``) keeps the vector inline in the log (``i``: Z85 text of the
serialized bitmap), or in a file next to the data (``u``: a Z85-encoded UUID with an optional directory
prefix; ``p``: an absolute path). In a file, each vector sits at ``offset``: a big-endian size, the
serialized bitmap, a big-endian CRC-32 of it; the file starts with a version byte (1). The serialized
bitmap is a little-endian magic number (1681511377) and a 64-bit RoaringBitmap in the portable format,
which ``pyroaring`` (the ``delta`` extra) decodes. Positions come back sorted, as int64.
"""

from __future__ import annotations

import base64
import struct
import uuid
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from fieldshift.errors import DataFileError, UnsupportedFormatFeatureError
from fieldshift.open_tables.roaring import roaring64_positions

__all__ = ["DV_MAGIC", "decode_bitmap", "dv_file_path", "dv_unique_id", "inline_positions", "read_dv_file",
           "z85_decode"]

DV_MAGIC = 1681511377
NATIVE_MAGIC = 1681511376  # Java's native RoaringNavigableMap serialization, which readers need not take
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_B85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
_TO_B85 = str.maketrans(_Z85, _B85)  # the same digit values in the alphabet base64.b85decode reads


def z85_decode(text: str, where: str) -> bytes:
    """ZeroMQ's Base85 (Z85) text as bytes; its alphabet is re-mapped onto Python's b85 one."""
    if len(text) % 5 or not set(text) <= set(_Z85):
        raise DataFileError(f"{where}: {text!r} is not Z85 text (a multiple of 5 characters of its alphabet)")
    try:
        return base64.b85decode(text.translate(_TO_B85))
    except ValueError as e:
        raise DataFileError(f"{where}: {text!r} is not valid Z85 text: {e}") from None


def dv_unique_id(dv: Mapping[str, Any]) -> str:
    """The descriptor's identity in log replay: storage type, path or inline data, and offset."""
    base = f"{dv.get('storageType')}{dv.get('pathOrInlineDv')}"
    return base if dv.get("offset") is None else f"{base}@{dv['offset']}"


def dv_file_path(dv: Mapping[str, Any], table_root: str, where: str) -> str:
    """Where an on-disk vector lives: ``u`` under the table root (``<prefix>/deletion_vector_<uuid>.bin``),
    ``p`` the absolute path the log gives."""
    kind, text = dv.get("storageType"), str(dv.get("pathOrInlineDv", ""))
    if kind == "p":
        return text
    if kind != "u":
        raise UnsupportedFormatFeatureError(f"{where}: deletion vector storage type {kind!r} is not one of the "
                                            "protocol's (u, p, i)")
    if len(text) < 20:
        raise DataFileError(f"{where}: deletion vector path {text!r} is shorter than a Z85-encoded UUID")
    prefix, code = text[:-20], text[-20:]
    name = f"deletion_vector_{uuid.UUID(bytes=z85_decode(code, where))}.bin"
    return "/".join(p for p in (table_root.rstrip("/"), prefix, name) if p)


def decode_bitmap(data: bytes, where: str) -> np.ndarray:
    """Positions of a serialized vector: the magic number, then a portable 64-bit RoaringBitmap."""
    if len(data) >= 4 and NATIVE_MAGIC in (struct.unpack_from("<I", data)[0], struct.unpack_from(">I", data)[0]):
        raise UnsupportedFormatFeatureError(f"{where}: the deletion vector is in Java's native RoaringBitmap "
                                            "serialization; fieldshift reads the portable one Delta writers use")
    if len(data) < 4 or struct.unpack_from("<I", data)[0] != DV_MAGIC:
        raise DataFileError(f"{where}: not a Delta deletion vector (no magic number {DV_MAGIC} at its start)")
    return roaring64_positions(data[4:], where, "delta")


def inline_positions(dv: Mapping[str, Any], where: str) -> np.ndarray:
    """An inline (``i``) vector's positions; ``sizeInBytes`` is the decoded size (Z85 pads to 4 bytes)."""
    data = z85_decode(str(dv.get("pathOrInlineDv", "")), where)
    size = int(dv.get("sizeInBytes") or len(data))
    return _checked(decode_bitmap(data[:size], where), dv, where)


def read_dv_file(path: str, offset: int | None, size: int | None, cardinality: int | None,
                 open_input: Callable[[str], Any]) -> np.ndarray:
    """One vector of a deletion-vector file: version byte, then at ``offset`` (1 when absent) its size,
    bitmap and CRC-32, all checked."""
    start = 1 if offset is None else int(offset)
    try:
        with open_input(path) as f:
            version = f.read(1)
            f.seek(start)
            head = f.read(4)
            if len(head) < 4:
                raise DataFileError(f"deletion vector file {path} ends before offset {start}")
            (length,) = struct.unpack(">I", head)
            body = f.read(length + 4)
    except FileNotFoundError:
        raise DataFileError(f"deletion vector file {path} is missing; the table's log references it, so the rows "
                            "it deletes cannot be known. Restore it from a backup.") from None
    if version != b"\x01":
        raise UnsupportedFormatFeatureError(f"deletion vector file {path} is of format version {version!r}; "
                                            "fieldshift reads version 1")
    if size is not None and length != size:
        raise DataFileError(f"deletion vector in {path} at offset {start} is {length} bytes; the log says {size}")
    if len(body) < length + 4:
        raise DataFileError(f"deletion vector file {path} ends inside the vector at offset {start}")
    data, (crc,) = body[:length], struct.unpack(">I", body[length:])
    if zlib.crc32(data) != crc:
        raise DataFileError(f"deletion vector in {path} at offset {start} fails its CRC-32 check (the file is "
                            "corrupt)")
    return _checked(decode_bitmap(data, f"deletion vector file {path}"), {"cardinality": cardinality},
                    f"deletion vector file {path}")


def _checked(positions: np.ndarray, dv: Mapping[str, Any], where: str) -> np.ndarray:
    expected = dv.get("cardinality")
    if expected is not None and int(expected) != len(positions):
        raise DataFileError(f"{where}: the deletion vector holds {len(positions)} rows; the log says {expected}")
    return positions
