"""Small batches built in one piece: an input batch exported through the Arrow C data interface, a
numba program that writes the output's buffers, and Arrow's IPC reader building the output batch.

On a batch of a few rows, pyarrow's Python API costs a wrapper per array read and per array built
(W1's 16-row batch: ~80 of them); here the whole batch costs three calls into Arrow (export, IPC read,
release) and one numba call, whatever its width. The output owns a fresh copy of every value, so
this path is for batches small enough that copying them costs less than the wrappers it saves.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import pyarrow as pa

from fieldshift.kernels.ipc_ops import NUMBER_CODES, OP_WIDTH, Op
from fieldshift.kernels.ipc_template import IpcTemplate, ipc_template

__all__ = ["COPY_BUDGET", "IpcProgram", "exercise_ipc_program", "run_ipc_program"]

COPY_BUDGET = 512 * 1024
"""Bytes a program may copy before it hands the batch back: past this, copying long strings costs
more than the wrappers the program saves."""


@dataclass(frozen=True)
class IpcProgram:
    """``ops``: rows of 8 int64 (see ``_nb_tiny``); ``consts``: the constants' bytes; ``depth``: the
    deepest frame the ops open; ``schema``: the output schema the template was built for."""

    ops: np.ndarray
    consts: np.ndarray
    template: IpcTemplate
    depth: int
    schema: pa.Schema


@functools.cache
def _nb() -> ModuleType:
    from fieldshift.kernels import _nb_tiny

    return _nb_tiny


_RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_releasers: dict[int, Callable[[int], None]] = {}  # Arrow's release callback, by its address
_local = threading.local()


def _export_slot() -> tuple[np.ndarray, int]:
    """This thread's 80 bytes for an exported ``struct ArrowArray`` (released before reuse), and their
    address."""
    slot = getattr(_local, "slot", None)
    if slot is None:
        words = np.zeros(10, dtype=np.int64)
        slot = _local.slot = (words, words.ctypes.data)
    return slot


def _release(slot: np.ndarray, address: int) -> None:
    """Call the export's release callback (word 8 of ``struct ArrowArray``), as a consumer must."""
    release = int(slot[8])
    if release:
        fn = _releasers.get(release)
        if fn is None:
            fn = _releasers[release] = _RELEASE(release)
        fn(address)


def run_ipc_program(program: IpcProgram, batch: pa.RecordBatch) -> pa.RecordBatch | None:
    """The evolved batch, or None when the program declines it (then the general path answers)."""
    slot, address = _export_slot()
    batch._export_to_c(address)
    try:
        t = program.template
        message = _nb().run_program(address, batch.num_rows, program.ops, program.consts, t.prefix, t.length_at,
                                    t.body_length_at, t.nodes_at, t.buffers_at, program.depth, COPY_BUDGET)
    finally:
        _release(slot, address)
    if not len(message):
        return None
    return pa.ipc.read_record_batch(pa.py_buffer(message), program.schema)


def exercise_ipc_program() -> None:
    """Compile the program runner (``kernels.warm``): one int32 -> int64 column with a null."""
    schema = pa.schema([pa.field("a", pa.int64())])
    template = ipc_template(schema)
    assert template is not None
    ops = np.array([Op.FIXED, 0, 0, NUMBER_CODES[pa.int32()], NUMBER_CODES[pa.int64()], 0, 0, 0], dtype=np.int64)
    assert len(ops) == OP_WIDTH
    program = IpcProgram(ops, np.zeros(1, dtype=np.uint8), template, 2, schema)
    out = run_ipc_program(program, pa.record_batch({"a": pa.array([1, None], pa.int32())}))
    assert out is not None and out.column(0).to_pylist() == [1, None]
