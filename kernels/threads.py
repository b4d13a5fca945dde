"""One setting for how many threads kernels may use, and the shared pool they run chunks on.

Numba kernels are compiled with ``nogil=True``, so a plain thread pool runs their chunks truly in
parallel. ``set_threads(1)`` keeps everything on the calling thread (what a Spark task that owns one
core wants). The default is ``$FIELDSHIFT_THREADS`` or else the number of cores this process may use.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, TypeVar

__all__ = ["get_threads", "run_parallel", "set_threads", "split_range"]

T = TypeVar("T")


def _available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _initial_threads() -> int:
    env = os.environ.get("FIELDSHIFT_THREADS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    return _available_cores()


_threads = _initial_threads()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_lock = threading.Lock()


def set_threads(n: int | None) -> None:
    """Use ``n`` threads in kernels (``None`` or 0: all cores this process may use)."""
    global _threads
    if n is None or n == 0:
        n = _available_cores()
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"threads must be a positive integer, got {n!r}")
    _threads = n


def get_threads() -> int:
    """How many threads kernels use (1 = everything runs on the caller's thread)."""
    return _threads


def _get_pool(workers: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size < workers:
            old = _pool
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fieldshift-kernel")
            _pool_size = workers
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def split_range(n: int, min_chunk: int, threads: int | None = None) -> list[tuple[int, int]]:
    """Split ``[0, n)`` into at most ``threads`` contiguous pieces of at least ``min_chunk`` items."""
    t = get_threads() if threads is None else threads
    pieces = max(1, min(t, n // max(1, min_chunk)))
    step = -(-n // pieces) if n else 0
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)] if n else [(0, 0)]


def run_parallel(fn: Callable[..., T], args: Sequence[tuple[Any, ...]]) -> list[T]:
    """``[fn(*a) for a in args]`` on at most ``get_threads()`` threads (this one included).

    Threads take the next item as they finish one, so put the costliest items first: a fixed split
    would leave one core idle while the other formats two string columns.
    """
    workers = min(get_threads(), len(args))
    if workers <= 1 or getattr(_local, "in_worker", False):
        # inside a pool task (e.g. a column evaluated in parallel) nested work stays on this thread:
        # waiting on the same pool from its own workers could deadlock
        return [fn(*a) for a in args]
    results: list[Any] = [None] * len(args)
    todo = iter(range(len(args)))  # next() on a range iterator is atomic under the GIL

    def drain() -> None:
        for i in todo:
            results[i] = fn(*args[i])

    pool = _get_pool(workers - 1)
    futures = [pool.submit(_as_worker, drain, ()) for _ in range(workers - 1)]
    try:
        _as_worker(drain, ())  # this thread is one of the workers: its items' nested work stays here
    finally:
        wait(futures)
    for f in futures:
        f.result()  # re-raise a worker's error here
    return results


_local = threading.local()


def _as_worker(fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    outer = getattr(_local, "in_worker", False)
    _local.in_worker = True
    try:
        return fn(*args)
    finally:
        _local.in_worker = outer
