"""Numba's compile time off the user's first call: Arrow answers while the kernels compile in the background.

A numba kernel's first call in a fresh install compiles it (seconds; numba's cache then makes later
processes fast, but the first user pays, and numba's AOT compiler is deprecated). So the first call
of a numba kernel starts one background thread that compiles every kernel (by running each on a
few rows) and, until that thread is done, the kernels answer through Arrow's cast, which gives the
same values and failure masks (the kernels accept exactly what Arrow accepts). ``warm_up()`` (and
``fieldshift warmup``) compiles everything now, e.g. in a Docker build or a Spark executor's start-up.
``FIELDSHIFT_NUMBA_BACKGROUND=0`` turns the background route off: first calls compile and wait.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import pyarrow as pa

from fieldshift.kernels.ipc_batches import exercise_ipc_program
from fieldshift.kernels.registry import (
    INT_TO_STRING,
    RANGE_CHECKED,
    STRING_TO_DATE32,
    STRING_TO_DECIMAL,
    STRING_TO_FLOAT,
    STRING_TO_INT,
    STRING_TO_TIMESTAMP,
    get_kernel,
)

__all__ = ["numba_ready", "warm_up"]

_lock = threading.Lock()
_done = threading.Event()
_local = threading.local()
_thread: list[threading.Thread] = []


def _background_enabled() -> bool:
    return os.environ.get("FIELDSHIFT_NUMBA_BACKGROUND", "1").strip().lower() not in ("0", "false", "no", "off")


def _exercise(on_kernel: Callable[[str], None] | None) -> None:
    """Run every numba kernel on a few rows of each array layout it compiles a signature for.

    The kernels ask ``numba_ready`` before they use numba, so they import this module: it finds them by
    registry key, as plans do (importing ``fieldshift.kernels`` registers every kernel, and importing this
    module imports that package first)."""
    range_checked_cast = get_kernel(RANGE_CHECKED)
    int_to_string = get_kernel(INT_TO_STRING)
    string_to_int, string_to_date32, string_to_timestamp, string_to_float, string_to_decimal = (
        get_kernel(key) for key in (STRING_TO_INT, STRING_TO_DATE32, STRING_TO_TIMESTAMP, STRING_TO_FLOAT,
                                    STRING_TO_DECIMAL))
    range_checked_cast(pa.array([2**40, 1, None], pa.int64()), pa.int32())  # checked narrowing's failure loop
    rows = 2_048  # above int_to_string's Arrow threshold
    for t in (pa.int32(), pa.int64(), pa.uint64()):
        int_to_string(pa.array([None, *range(rows)], t), pa.string())
    int_to_string(pa.array([2**40, *range(rows)], pa.int64()), pa.string())  # the wide path
    cases = [
        (["12", "x", None], string_to_int, pa.int64()),
        (["2024-01-02", "x", None], string_to_date32, pa.date32()),
        (["2024-01-02T03:04:05", "x", None], string_to_timestamp, pa.timestamp("us")),
        (["1.5", "x", None], string_to_float, pa.float64()),
        (["1.25", "x", None], string_to_decimal, pa.decimal128(10, 2)),
    ]
    for values, fn, target in cases:
        for text in (pa.string(), pa.large_string()):
            fn(pa.array(values, text), target)
        if on_kernel is not None:
            on_kernel(fn.__name__)
    if on_kernel is not None:
        on_kernel(int_to_string.__name__)
    exercise_ipc_program()
    if on_kernel is not None:
        on_kernel("small batches")


def _compile(on_kernel: Callable[[str], None] | None = None) -> None:
    _local.compiling = True
    try:
        _exercise(on_kernel)
    finally:
        _local.compiling = False
        _done.set()


def _after_fork() -> None:
    """A forked child has no compiling thread (and maybe a lock a parent thread held): start afresh."""
    global _lock
    _lock = threading.Lock()
    if not _done.is_set():
        _thread.clear()


os.register_at_fork(after_in_child=_after_fork)


def numba_ready() -> bool:
    """May a kernel call numba now? If not yet, the background compile is started and Arrow answers.

    True once everything is compiled, inside the compiling thread itself, and always when the
    background route is off (``FIELDSHIFT_NUMBA_BACKGROUND=0``).
    """
    if _done.is_set() or getattr(_local, "compiling", False) or not _background_enabled():
        return True
    with _lock:
        if not _thread:
            # a daemon: a short process (a CLI call) exits without waiting for the compile; numba
            # writes each cache entry whole, so an interrupted compile leaves nothing half-written
            _thread.append(threading.Thread(target=_compile, name="fieldshift-numba-warmup", daemon=True))
            _thread[0].start()
    return _done.is_set()


def warm_up(on_kernel: Callable[[str], None] | None = None) -> float:
    """Compile every numba kernel now (or load it from numba's cache); returns the seconds it took.

    Later first calls in this process use numba straight away, and numba's on-disk cache makes
    other processes on this machine start fast too. ``on_kernel(name)`` is called as each is ready.
    """
    start = time.perf_counter()
    if _done.is_set():
        return 0.0
    with _lock:
        running = _thread[0] if _thread else None
        if running is None:
            _thread.append(threading.current_thread())
    if running is threading.current_thread():
        _compile(on_kernel)
    elif running is not None:
        running.join()
        if on_kernel is not None:
            on_kernel("all")
    else:
        _compile(on_kernel)
    return time.perf_counter() - start
