"""An Arrow IPC record-batch message for a schema, with the places where its numbers go.

Building a small batch through pyarrow's Python API costs a wrapper per array; Arrow's IPC reader
builds a whole nested batch from one buffer in one call. A message's metadata is fixed per schema
except for its numbers (the batch length, each node's length and null count, each buffer's offset
and length in the body, the body's length), which sit at fixed byte positions of the flatbuffer: this
module serialises one sample batch and finds them, so a kernel can patch a copy and append a body.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

__all__ = ["IpcTemplate", "ipc_template"]

_MESSAGE_BODY_LENGTH = 3  # field indexes in Arrow's Message.fbs / RecordBatch tables
_MESSAGE_HEADER = 2
_BATCH_LENGTH, _BATCH_NODES, _BATCH_BUFFERS, _BATCH_COMPRESSION = 0, 1, 2, 3


@dataclass(frozen=True)
class IpcTemplate:
    """``prefix``: the message up to its body (continuation marker, length, metadata); positions are
    byte offsets into it: ``length_at`` (int64 rows), ``body_length_at`` (int64), ``nodes_at`` (16 bytes
    a node: length, null count), ``buffers_at`` (16 bytes a buffer: body offset, length)."""

    prefix: np.ndarray
    length_at: int
    body_length_at: int
    nodes_at: int
    nodes: int
    buffers_at: int
    buffers: int


def ipc_template(schema: pa.Schema) -> IpcTemplate | None:
    """The template for batches of ``schema``, or None when its message does not have the expected
    shape (a field that flatbuffers left out, compression, or a layout this reader does not know)."""
    sample = pa.RecordBatch.from_arrays([pa.nulls(1, f.type) for f in schema], schema=schema)
    message = sample.serialize().to_pybytes()
    marker, meta_size = struct.unpack_from("<Ii", message, 0)
    if marker != 0xFFFFFFFF:
        return None
    start = 8
    fb = message[start:start + meta_size]
    root = _table(fb, struct.unpack_from("<I", fb, 0)[0])
    body_length = root.field(_MESSAGE_BODY_LENGTH)
    header = root.field(_MESSAGE_HEADER)
    if body_length is None or header is None:
        return None
    batch = _table(fb, header + struct.unpack_from("<I", fb, header)[0])
    length, nodes, buffers = (batch.field(i) for i in (_BATCH_LENGTH, _BATCH_NODES, _BATCH_BUFFERS))
    if length is None or nodes is None or buffers is None or batch.field(_BATCH_COMPRESSION) is not None:
        return None
    nodes += struct.unpack_from("<I", fb, nodes)[0]  # vectors: an offset to (count, elements)
    buffers += struct.unpack_from("<I", fb, buffers)[0]
    return IpcTemplate(
        prefix=np.frombuffer(message[:start + meta_size], dtype=np.uint8).copy(),
        length_at=start + length, body_length_at=start + body_length,
        nodes_at=start + nodes + 4, nodes=struct.unpack_from("<I", fb, nodes)[0],
        buffers_at=start + buffers + 4, buffers=struct.unpack_from("<I", fb, buffers)[0],
    )


@dataclass(frozen=True)
class _Table:
    fb: bytes
    pos: int
    vtable: int

    def field(self, index: int) -> int | None:
        """Byte position of field ``index`` in the flatbuffer, None when it was left out."""
        vt_size = struct.unpack_from("<H", self.fb, self.vtable)[0]
        slot = 4 + 2 * index
        if slot >= vt_size:
            return None
        rel = struct.unpack_from("<H", self.fb, self.vtable + slot)[0]
        return None if rel == 0 else self.pos + rel


def _table(fb: bytes, pos: int) -> _Table:
    return _Table(fb, pos, pos - struct.unpack_from("<i", fb, pos)[0])
