"""Deleted positions from a portable 64-bit RoaringBitmap, the serialisation Iceberg's ``deletion-vector-v1``
blobs (DuckLake writes them too) and Delta's deletion vectors share, decoded by ``pyroaring``: one well-kept
decoder for every format, never a hand-written one."""

from __future__ import annotations

import numpy as np

from fieldshift.errors import DataFileError
from fieldshift.extras import require

__all__ = ["roaring64_positions"]


def roaring64_positions(data: bytes, where: str, extra: str) -> np.ndarray:
    """The sorted int64 positions of a serialized portable ``Roaring64Map``; ``extra`` is the fieldshift extra
    that installs pyroaring for this format (named when it is missing). Corrupt bytes are a DataFileError."""
    roaring = require("pyroaring", extra, "reading deletion vectors")
    try:
        bitmap = roaring.BitMap64.deserialize(bytes(data))
    except (ValueError, OverflowError) as e:
        raise DataFileError(f"{where}: the deletion vector's bitmap does not decode: {e}") from None
    return np.fromiter(bitmap, np.int64, len(bitmap))
