"""Numpy views of Arrow buffers (no copies), respecting array offsets, for the numba kernels."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

__all__ = ["EMPTY_BYTES", "packed_validity", "primitive_view", "string_views", "validity_view"]

EMPTY_BYTES = np.zeros(1, dtype=np.uint8)


def primitive_view(arr: pa.Array, dtype: np.dtype) -> np.ndarray:
    """The ``len(arr)`` values of a fixed-width array as numpy (garbage under nulls)."""
    buf = arr.buffers()[1]
    if buf is None or len(arr) == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(buf, dtype=dtype, count=arr.offset + len(arr))[arr.offset:]


def validity_view(arr: pa.Array) -> tuple[np.ndarray, int, bool]:
    """(validity bytes, bit offset of row 0 in them, has nulls); a dummy byte when there are none."""
    if arr.null_count == 0:
        return EMPTY_BYTES, 0, False
    buf = arr.buffers()[0]
    if buf is None:  # pragma: no cover - nulls without a bitmap only for the null type
        raise ValueError("array has nulls but no validity bitmap")
    return np.frombuffer(buf, dtype=np.uint8), arr.offset, True


def string_views(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets for rows 0..len, inclusive, and the whole data buffer) of a string/binary array."""
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    odt = np.int64 if large else np.int32
    bufs = arr.buffers()
    if len(arr) == 0:
        return np.zeros(1, dtype=odt), EMPTY_BYTES
    offsets = np.frombuffer(bufs[1], dtype=odt, count=arr.offset + len(arr) + 1)[arr.offset:]
    data = EMPTY_BYTES if bufs[2] is None or bufs[2].size == 0 else np.frombuffer(bufs[2], dtype=np.uint8)
    return offsets, data


def packed_validity(valid: np.ndarray, voff: int, has_nulls: bool, failed: np.ndarray, shift: int) -> pa.Buffer:
    """The validity bitmap of ``len(failed)`` output rows from bit ``shift``: valid and not failed, in
    two vectorised byte passes. The output keeps the input's bit position within a byte (``shift`` is
    ``voff % 8`` when there are nulls), so input bytes map to output bytes one to one."""
    if has_nulls and voff % 8 != shift:
        raise ValueError(f"the output's bits start at {shift}, the input's at {voff % 8}: they must line up")
    if shift:
        failed = np.concatenate([np.zeros(shift, dtype=bool), failed])
    keep = ~np.packbits(failed, bitorder="little")
    if has_nulls:
        keep &= valid[voff // 8:voff // 8 + len(keep)]
    return pa.py_buffer(keep)
