"""Writing keyed tables: rows and deleted keys go to one file per hidden bucket.

``upsert`` keeps, of several rows of one key in a batch, the one with the highest precombine value
(the later on ties); an insert-only ``append`` refuses a key given twice or already in the table
(:class:`DuplicateKeyError`); ``delete`` writes *delete files*: the key columns of the removed rows,
tagged with the commit's sequence number, which the merge applies to every older row of those keys.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.errors import CastValueError, DuplicateKeyError, IncompatibleTypeError, SchemaEvolutionError
from fieldshift.kernels.threads import get_threads, run_parallel
from fieldshift.schema.model import Schema
from fieldshift.table.catalog.sqlite import DataFile
from fieldshift.table.files.data_files import write_data_file
from fieldshift.table.files.write_layout import DEFAULT_LAYOUT, WriteLayout
from fieldshift.table.keyed.keys import KeySpec, bucket_order, key_hash

__all__ = ["Placement", "check_unique", "check_unique_exact", "key_rows", "new_keys_only", "write_bucketed"]


@dataclass(frozen=True, slots=True)
class Placement:
    """What bucket files are and where they go: their content (``data`` or ``deletes``), the partition spec
    id and values they are recorded with, the directory under the table they are written in."""

    content: str = "data"
    spec_id: int = 0
    partition: tuple[Any, ...] = ()
    directory: str = "data"


def write_bucketed(location: Any, schema: Schema, data: pa.Table, spec: KeySpec, written: list[str], *,
                   max_rows: int = 1 << 20, where: Placement = Placement(), parallel: bool = True,
                   layout: WriteLayout = DEFAULT_LAYOUT) -> list[DataFile]:
    """Write ``data`` (rows of one partition) as one file per bucket it touches (more when a bucket
    exceeds ``max_rows``), placed as ``where`` says. ``parallel``: the buckets' files are written on
    ``get_threads()`` threads and one more (``_run_writes``; Arrow's take, the Parquet writer and fsync release
    the GIL); False writes them one after another, in the same order."""
    files = []
    if not data.num_rows:
        return files
    buckets, order = bucket_order(data, spec)
    counts = np.bincount(buckets, minlength=spec.buckets)  # the order holds each bucket's rows in one run
    hit = np.flatnonzero(counts)
    ends = np.cumsum(counts)[hit]
    starts = ends - counts[hit]
    bucket_at = dict(zip(starts.tolist(), hit.tolist(), strict=True))
    file_schema = schema.select(data.column_names)

    def write_bucket(start: int, end: int) -> list[DataFile]:
        part = data.take(pa.array(order[start:end]))
        out = []
        for offset in range(0, part.num_rows, max_rows):
            f = write_data_file(location, file_schema, part.slice(offset, max_rows), spec_id=where.spec_id,
                                partition=where.partition, directory=where.directory, layout=layout)
            written.append(f.path)  # as it lands: a failure elsewhere removes it (list.append is atomic)
            out.append(replace(f, content=where.content, bucket=bucket_at[start]))
        return out

    jobs = sorted(zip(starts.tolist(), ends.tolist(), strict=True), key=lambda se: se[0] - se[1])  # largest first
    done = dict(zip(jobs, _run_writes(write_bucket, jobs) if parallel else [write_bucket(*j) for j in jobs],
                    strict=True))
    for job in zip(starts.tolist(), ends.tolist(), strict=True):  # bucket order, whichever finished first
        files += done[job]
    return files


WRITE_THREADS_OVER_CORES = 1
"""Bucket files are written on ``get_threads()`` plus this many threads: a thread waiting for its file's
fsync or upload then leaves no core idle."""


def _run_writes(write: Callable[[int, int], list[DataFile]], jobs: list[tuple[int, int]]) -> list[list[DataFile]]:
    """``[write(*j) for j in jobs]`` on up to ``get_threads() + WRITE_THREADS_OVER_CORES`` threads (one thread:
    on this one); every job has ended when this returns or raises (its files are in ``written``)."""
    workers = min(len(jobs), get_threads() + WRITE_THREADS_OVER_CORES) if get_threads() > 1 else 1
    if workers <= 1:
        return [write(*j) for j in jobs]
    if not WRITE_THREADS_OVER_CORES:
        return run_parallel(write, jobs)
    with ThreadPoolExecutor(workers, thread_name_prefix="fieldshift-bucket-write") as pool:  # exit waits for all
        futures = [pool.submit(write, *j) for j in jobs]
    return [f.result() for f in futures]  # the first failure (in job order) is raised


def _shown(data: pa.Table, i: int, spec: KeySpec) -> str:
    return ", ".join(f"{n}={data.column(n)[i].as_py()!r}" for n in spec.key_names)


_FILTER_BITS = 1 << 20


def check_unique(data: pa.Table, spec: KeySpec, operation: str = "append") -> None:
    """An insert-only batch (an append, or an overwrite's new rows) may not hold one key twice.

    Only rows whose key hash (the bucket hash, shared with the bucket split) occurs more than once can
    repeat a key: those few rows get the exact check. Equal hashes of different keys (about n**2 / 2**33
    pairs, ~500 in 2M rows) are told apart there; the answer and the error are ``check_unique_exact``'s."""
    if data.num_rows < 2:
        return
    names = list(spec.key_names)
    if any(data.column(n).null_count for n in names):  # key columns are required; be exact all the same
        check_unique_exact(data, spec, operation)
        return
    h = key_hash(data, spec)
    ordered = np.sort(h)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if not len(repeated):
        return
    repeated = np.unique(repeated)
    # a bit table of the repeated hashes' low 20 bits passes every suspect and ~n * len(repeated) / 2**20
    # others, which the exact membership test then drops (a gather instead of 2M binary searches)
    low = np.zeros(_FILTER_BITS, dtype=bool)
    low[repeated & np.uint32(_FILTER_BITS - 1)] = True
    maybe = np.flatnonzero(low[h & np.uint32(_FILTER_BITS - 1)])
    at = np.searchsorted(repeated, h[maybe]).clip(max=len(repeated) - 1)
    suspects = maybe[repeated[at] == h[maybe]]  # in row order: the first repeated key is the same one
    check_unique_exact(data.select(names).take(pa.array(suspects)), spec, operation)


def check_unique_exact(data: pa.Table, spec: KeySpec, operation: str = "append") -> None:
    """``check_unique`` by grouping every row's key (Arrow's hash group-by, on one thread so the first
    repeated key named is the first in row order)."""
    if data.num_rows < 2:
        return
    counted = data.select(list(spec.key_names)).group_by(list(spec.key_names), use_threads=False).aggregate(
        [([], "count_all")])
    dup = np.flatnonzero(counted.column("count_all").to_numpy() > 1)
    if len(dup):
        raise DuplicateKeyError(f"the rows to {operation} hold key ({_shown(counted, int(dup[0]), spec)}) more than "
                                f"once ({len(dup)} duplicated key(s)); {operation} keeps every row it is given on a "
                                "keyed table, whose keys are unique: nothing was written. Use table.upsert() to keep "
                                "the latest row per key.")


def new_keys_only(data: pa.Table, existing: pa.Table, spec: KeySpec) -> None:
    """Refuse rows whose key the table already holds (``existing``: the live key columns)."""
    if not data.num_rows or not existing.num_rows:
        return
    keys = list(spec.key_names)
    if len(keys) == 1:
        hit = pc.is_in(data.column(keys[0]), value_set=existing.column(keys[0]).combine_chunks())
        found = np.flatnonzero(hit.to_numpy(zero_copy_only=False))
    else:
        rows = data.select(keys).append_column("__fs_row", pa.array(np.arange(data.num_rows)))
        found = np.sort(rows.join(existing.select(keys), keys, join_type="left semi").column("__fs_row").to_numpy())
    if len(found):
        raise DuplicateKeyError(f"key ({_shown(data, int(found[0]), spec)}) is already in the table ({len(found)} "
                                "row(s) of the batch have keys the table holds); append is insert-only on a keyed "
                                "table: nothing was written. Use table.upsert() to replace rows by key.")


def _first_failing(column: pa.Array, target: pa.DataType) -> int:
    """The first row whose cast fails, by bisection (the error path of a cast that failed as a whole)."""
    lo, hi = 0, len(column)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            column.slice(lo, mid - lo).cast(target, safe=True)
            lo = mid
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            hi = mid
    return lo


def _kind(t: pa.DataType) -> str:
    """The family of literals a scan filter compares with a column of type ``t`` (keys follow the same)."""
    T = pa.types
    if T.is_integer(t) or T.is_floating(t) or T.is_decimal(t):
        return "a number (int, float or Decimal)"
    if T.is_string(t) or T.is_large_string(t) or T.is_string_view(t):
        return "a str"
    if T.is_binary(t) or T.is_large_binary(t) or T.is_binary_view(t) or T.is_fixed_size_binary(t):
        return "bytes"
    if T.is_date(t) or T.is_timestamp(t):
        return "a datetime.date or datetime.datetime"
    if T.is_time(t):
        return "a datetime.time"
    return str(t)


def _check_kind(name: str, column: pa.ChunkedArray, target: pa.DataType) -> None:
    """Refuse keys of another kind than their column, as scan filters refuse such literals: text is not
    parsed into a number or a date, a bool is not the number 1, a number is not its text."""
    wanted = _kind(target)
    if pa.types.is_null(column.type) or _kind(column.type) == wanted:
        return
    values = column.to_pylist()
    row = next((i for i, v in enumerate(values) if v is not None), 0)
    raise CastValueError(name, row, values[row], str(column.type), str(target),
                         f"A key to delete is {wanted}, as a scan filter's literal is (no text is parsed, no bool "
                         "counts as a number); nothing was deleted.")


def _from_python(keys: dict[str, Any] | list[Any], schema: Schema) -> pa.Table:
    try:
        return pa.table({n: keys[n] for n in keys}) if isinstance(keys, dict) else pa.Table.from_pylist(keys)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:  # mixed or out-of-range plain values
        error = e
    columns = keys if isinstance(keys, dict) else \
        {n: [row.get(n) for row in keys] for n in dict.fromkeys(n for row in keys for n in row)}
    for name, values in columns.items():
        target = schema.find(name).type if name in schema.names else None
        for row, value in enumerate(values if target is not None else ()):
            try:
                pa.scalar(value, type=target)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
                raise CastValueError(name, row, value, type(value).__name__, str(target),
                                     "The keys to delete do not fit the key column; nothing was deleted.") from None
    raise IncompatibleTypeError(f"the keys to delete do not make one column per key ({error}); nothing was deleted")


def key_rows(keys: Any, schema: Schema, spec: KeySpec) -> pa.Table:
    """The key columns of ``keys`` (Arrow data, a dict of lists, a list of dicts, or plain values for a
    one-column key) cast exactly to the key types, one row per key."""
    names = list(spec.key_names)
    if isinstance(keys, (list, tuple)) and keys and not isinstance(keys[0], dict) and len(names) == 1:
        keys = {names[0]: list(keys)}
    if isinstance(keys, (dict, list)):
        table = _from_python(keys, schema)
    elif isinstance(keys, pa.RecordBatch):
        table = pa.Table.from_batches([keys])
    elif isinstance(keys, pa.Table):
        table = keys
    else:
        raise TypeError(f"keys must be Arrow data, a dict of lists or a list of dicts, not {type(keys).__name__}")
    missing = [n for n in names if n not in table.column_names]
    if missing:
        raise SchemaEvolutionError(f"the keys to delete lack key column(s) {missing}; the key is {names}")
    out = {}
    for n in names:
        target = schema.find(n).type
        column = table.column(n)
        _check_kind(n, column, target)
        if column.null_count:
            raise SchemaEvolutionError(f"key column {n!r} of the keys to delete holds nulls; keys are never null")
        try:
            out[n] = column.cast(target, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            row = _first_failing(column.combine_chunks(), target)
            raise CastValueError(n, row, column[row].as_py(), str(column.type), str(target),
                                 f"The keys to delete do not fit the key column ({e}); nothing was deleted.") from None
    result = pa.table(out, schema=schema.select(names).to_arrow())
    return _distinct(result, names)


def _distinct(table: pa.Table, names: Sequence[str]) -> pa.Table:
    if table.num_rows < 2:
        return table
    return table.group_by(list(names), use_threads=False).aggregate([]).cast(table.schema)

