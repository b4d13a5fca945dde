"""Keyed tables (issue 14): merge-on-read vs a compacted read, upserts vs deltalake's merge, compaction.

Rows: ``FIELDSHIFT_KEYS_ROWS`` (default 4,000,000; 200,000 with ``FIELDSHIFT_BENCH_SCALE=small``).

- read: a keyed table of N live rows whose 10% of keys were updated in 5 later commits under 2 newer
  schema versions (1.1 N physical rows), read merged; the same table after ``compact()``; an unkeyed
  table holding the same N rows. Targets: merged <= 1.5x compacted; compacted ~ unkeyed.
- upsert: 100,000 rows (half existing keys, half new) into the N-row table, against deltalake's
  ``merge`` (when matched update all, when not matched insert all) on a Delta table of the same rows.
- compaction: N rows written under 3 schema versions, compacted, against pyarrow reading and writing
  the same rows (zstd, the same row groups) without evolution. Target: <= 2x.

Each test times both sides in the same run and records them (and the ratio) in ``extra_info``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import workloads as w

import fieldshift as fs
from fieldshift.table.scan.live_rows import live_parts

pytestmark = [pytest.mark.bench, pytest.mark.slow]

ROWS = int(os.environ.get("FIELDSHIFT_KEYS_ROWS", 200_000 if w.SMALL else 4_000_000))
UPSERT_ROWS = min(100_000, ROWS // 4)
BUCKETS = 4
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("pre", pa.int64()), ("a", pa.int32()),
                    ("s", pa.string()), ("x", pa.float64())])


def _rows(ids: np.ndarray, pre: int, wide: bool = False, extra: bool = False) -> pa.Table:
    rng = np.random.default_rng(int(ids[0]) + pre)
    a = rng.integers(-1000, 1000, len(ids))
    cols: dict[str, Any] = {
        "id": pa.array(ids, pa.int64()), "pre": pa.array(np.full(len(ids), pre), pa.int64()),
        "a": pa.array(a * (2**33 if wide else 1), pa.int64() if wide else pa.int32()),
        "s": pa.array([f"s{v}" for v in a % 97]).cast(pa.string()), "x": pa.array(rng.random(len(ids))),
    }
    if extra:
        cols["e"] = pa.array(a % 7, pa.int32())
    return pa.table(cols)


def _best(*fns: Callable[[], Any], rounds: int = 5, cpu: list[float] | None = None) -> list[float]:
    """The fastest of ``rounds`` runs of each function, the runs interleaved (a shared machine's load
    then weighs on every side alike); ``cpu`` receives each function's least process CPU time, which
    other processes on the machine disturb less than wall time."""
    times: list[list[float]] = [[] for _ in fns]
    cpus: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            times[i].append(time.perf_counter() - start)
            cpus[i].append(time.process_time() - start_cpu)
    if cpu is not None:
        cpu[:] = [min(c) for c in cpus]
    return [min(t) for t in times]


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, fs.Table]:
    root = tmp_path_factory.mktemp("keys")
    merged = fs.Table.create(root / "merged", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=BUCKETS)
    for start in range(0, ROWS, 1_000_000):
        merged.upsert(_rows(np.arange(start, min(ROWS, start + 1_000_000)), 0))
    rng = np.random.default_rng(w.SEED)
    updated = rng.choice(ROWS, ROWS // 10, replace=False)
    for i, part in enumerate(np.array_split(updated, 5)):  # 5 commits; schema 1 after the 2nd, 2 after the 4th
        merged.upsert(_rows(np.sort(part), i + 1, wide=i >= 2, extra=i >= 4))
    assert len(merged.schemas()) == 3
    shutil.copytree(root / "merged", root / "compacted")
    compacted = fs.Table.open(root / "compacted")
    compacted.compact()
    plain = fs.Table.create(root / "plain", compacted.schema.to_arrow())
    for batch in compacted.to_arrow().to_batches(1_000_000):
        plain.append(pa.Table.from_batches([batch]))
    return {"merged": merged, "compacted": compacted, "plain": plain}


def test_merged_read_vs_compacted_and_unkeyed(benchmark: Any, tables: dict[str, fs.Table]) -> None:
    merged, compacted, plain = tables["merged"], tables["compacted"], tables["plain"]
    assert merged.scan().count() == ROWS
    result = benchmark.pedantic(merged.to_arrow, rounds=3, iterations=1)
    assert result.num_rows == ROWS
    cpu: list[float] = []
    t_merged, t_compacted, t_plain = _best(merged.to_arrow, compacted.to_arrow, plain.to_arrow, rounds=9, cpu=cpu)
    benchmark.extra_info.update({"rows": ROWS, "merged_s": t_merged, "compacted_s": t_compacted,
                                 "unkeyed_s": t_plain, "merged_over_compacted": t_merged / t_compacted,
                                 "compacted_over_unkeyed": t_compacted / t_plain,
                                 "cpu_s": cpu, "cpu_merged_over_compacted": cpu[0] / cpu[1],
                                 "cpu_compacted_over_unkeyed": cpu[1] / cpu[2]})
    print(f"\nread {ROWS:,} rows: merged {t_merged:.3f}s, compacted {t_compacted:.3f}s, unkeyed {t_plain:.3f}s "
          f"-> {t_merged / t_compacted:.2f}x, {t_compacted / t_plain:.2f}x; CPU {cpu[0]:.3f}s, {cpu[1]:.3f}s, "
          f"{cpu[2]:.3f}s -> {cpu[0] / cpu[1]:.2f}x, {cpu[1] / cpu[2]:.2f}x")


MOR_ROUNDS = int(os.environ.get("FIELDSHIFT_MOR_RUNS", 15))


def _medians(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, tuple[float, float]]:
    """Per reader, (median wall, median process CPU over all threads) of ``rounds`` runs interleaved round by
    round, after one warm-up run each (a shared machine's load then weighs on every reader alike). The order
    turns each round and each run starts after a pause: delta-rs' worker threads stay busy for a moment after
    it returns, which would otherwise land on the next reader's time, in wall and in process CPU."""
    for fn in fns.values():
        fn()
    wall: dict[str, list[float]] = {k: [] for k in fns}
    cpu: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for r in range(rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            time.sleep(0.05)
            start, start_cpu = time.perf_counter(), time.process_time()
            fns[k]()
            wall[k].append(time.perf_counter() - start)
            cpu[k].append(time.process_time() - start_cpu)
    return {k: (statistics.median(wall[k]), statistics.median(cpu[k])) for k in fns}


def _without_fast_paths(table: fs.Table) -> Callable[[], pa.Table]:
    """The scan as it read before issue 35's merge-on-read work: one filter per batch for the deleted rows, every
    row group decoded, small files opened and read chunk by chunk, strings decoded dense by the Parquet reader, a
    pool job per task (the files are the same: the write layout is not switched here)."""
    def read() -> pa.Table:
        pipeline = (scan := table.scan()).pipeline()
        pipeline.fast_deletes = pipeline.whole_small_files = pipeline.dictionary_strings = False
        pipeline.small_task_rows = 0
        return scan.to_arrow()
    return read


def _mor_tables(root: Any, clustered: bool) -> tuple[fs.Table, fs.Table]:
    """bench_keys' read table (10% of the keys upserted in 5 commits under 2 newer schemas): the keys chosen at
    random, or (``clustered``) one range of keys (recent rows updated), and the same table compacted."""
    merged = fs.Table.create(root / "merged", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=BUCKETS)
    for start in range(0, ROWS, 1_000_000):
        merged.upsert(_rows(np.arange(start, min(ROWS, start + 1_000_000)), 0))
    rng = np.random.default_rng(w.SEED)
    updated = np.arange(ROWS - ROWS // 10, ROWS) if clustered else rng.choice(ROWS, ROWS // 10, replace=False)
    for i, part in enumerate(np.array_split(updated, 5)):
        merged.upsert(_rows(np.sort(part), i + 1, wide=i >= 2, extra=i >= 4))
    shutil.copytree(root / "merged", root / "compacted")
    compacted = fs.Table.open(root / "compacted")
    compacted.compact()
    return merged, compacted


@pytest.mark.parametrize("updates", ["random", "clustered"])
def test_merge_on_read_vs_compacted_and_delta_rs(benchmark: Any, updates: str,
                                                tmp_path_factory: pytest.TempPathFactory) -> None:
    """Issue 35: a scan right after the upserts (merge-on-read: deletion vectors, the update files) against the
    same rows compacted and delta-rs reading them from one Delta table; ``mor_before`` is the same scan without
    the fast paths (``_without_fast_paths``)."""
    deltalake = pytest.importorskip("deltalake")
    root = tmp_path_factory.mktemp(f"mor-{updates}")
    merged, compacted = _mor_tables(root, updates == "clustered")
    expected = compacted.to_arrow().sort_by("id")
    assert merged.to_arrow().sort_by("id").equals(expected)
    deltalake.write_deltalake(str(root / "delta"), expected)
    delta = deltalake.DeltaTable(str(root / "delta"))
    result = benchmark.pedantic(merged.to_arrow, rounds=3, iterations=1)
    assert result.num_rows == ROWS
    timed = _medians({"mor": merged.to_arrow, "mor_before": _without_fast_paths(merged),
                      "compacted": compacted.to_arrow, "delta_rs": delta.to_pyarrow_table}, MOR_ROUNDS)
    physical = sum(f.record_count for f in merged.scan().live_files())
    info: dict[str, Any] = {"rows": ROWS, "updates": updates, "physical_rows": physical,
                            "load_1m": os.getloadavg()[0]}
    for k, (wall_s, cpu_s) in timed.items():
        info[f"{k}_s"], info[f"{k}_cpu_s"] = wall_s, cpu_s
    for k in ("mor", "mor_before", "delta_rs"):
        info[f"{k}_over_compacted"] = timed[k][0] / timed["compacted"][0]
        info[f"cpu_{k}_over_compacted"] = timed[k][1] / timed["compacted"][1]
    info["mor_over_delta_rs"] = timed["mor"][0] / timed["delta_rs"][0]
    info["cpu_mor_over_delta_rs"] = timed["mor"][1] / timed["delta_rs"][1]
    info.update(_task_costs(merged, compacted))
    benchmark.extra_info.update(info)
    print(f"\nmerge-on-read, {updates} updates, {ROWS:,} rows ({physical:,} physical), medians of {MOR_ROUNDS}, "
          f"load {info['load_1m']:.1f}:")
    for k, (wall_s, cpu_s) in timed.items():
        print(f"  {k:15s} wall {wall_s * 1e3:7.1f} ms ({wall_s / timed['compacted'][0]:.2f}x)  "
              f"CPU {cpu_s * 1e3:7.1f} ms ({cpu_s / timed['compacted'][1]:.2f}x)")
    print("  one thread, task by task (median CPU): " + ", ".join(
        f"{k} {v * 1e3:.1f} ms" for k, v in info.items() if k.startswith("task_")))


def _task_costs(merged: fs.Table, compacted: fs.Table, rounds: int = 7) -> dict[str, float]:
    """Where the merge-on-read's time goes, read task by task on one thread (median process CPU of ``rounds``):
    its base files (deletion vectors applied), the same files decoded whole, the deleted rows' removal alone
    (the filter or slices of the decoded batches), its update files, and the compacted table's files; ``_before``:
    without the fast paths."""
    def sides(table: fs.Table) -> tuple[Any, list[Any], list[Any]]:
        pipe = table.scan().pipeline()
        reader = object.__new__(type(pipe))
        reader.__dict__.update(pipe.__dict__, batch_size=1 << 20)  # as to_arrow reads
        tasks = reader.tasks()
        return reader, [t for t in tasks if t.files[0].positions is not None], \
            [t for t in tasks if t.files[0].positions is None]

    reader, base, updates = sides(merged)
    before = object.__new__(type(reader))
    before.__dict__.update(reader.__dict__, fast_deletes=False, whole_small_files=False, dictionary_strings=False)
    compact_reader, _, compact_tasks = sides(compacted)
    whole = [list(pq.ParquetFile(t.files[0].path).iter_batches(1 << 20)) for t in base]
    positions = [np.asarray(t.files[0].positions, np.int64) for t in base]

    def run(r: Any, tasks: list[Any]) -> Callable[[], None]:
        def read() -> None:
            for t in tasks:
                for b in r.task_batches(t):
                    r.finish(b)
        return read

    def remove() -> None:
        for batches, gone in zip(whole, positions, strict=True):
            offset = 0
            for b in batches:
                lo, hi = np.searchsorted(gone, [offset, offset + b.num_rows])
                live_parts(b, gone[lo:hi] - offset)
                offset += b.num_rows

    def decode() -> None:
        for t in base:
            pq.ParquetFile(t.files[0].path).read(use_threads=False)

    fns = {"task_mor_base": run(reader, base), "task_mor_base_before": run(before, base),
           "task_base_decode_only": decode, "task_remove_deleted": remove, "task_mor_updates": run(reader, updates),
           "task_mor_updates_before": run(before, updates), "task_compacted": run(compact_reader, compact_tasks)}
    cpu: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            start = time.process_time()
            fn()
            cpu[k].append(time.process_time() - start)
    return {k: statistics.median(v) for k, v in cpu.items()}


def test_upsert_vs_deltalake_merge(benchmark: Any, tables: dict[str, fs.Table],
                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    deltalake = pytest.importorskip("deltalake")
    root = tmp_path_factory.mktemp("upsert")
    source = tables["compacted"]
    rows = source.to_arrow()
    rng = np.random.default_rng(w.SEED + 1)
    ids = np.concatenate([rng.choice(ROWS, UPSERT_ROWS // 2, replace=False),
                          np.arange(ROWS, ROWS + UPSERT_ROWS - UPSERT_ROWS // 2)])
    batch = _rows(np.sort(ids), 9, wide=True, extra=True)
    counter = iter(range(100))

    def fresh() -> tuple[tuple[fs.Table], dict]:
        dest = root / f"t{next(counter)}"
        shutil.copytree(source.location, dest)
        return (fs.Table.open(dest),), {}

    benchmark.pedantic(lambda t: t.upsert(batch), setup=fresh, rounds=3, iterations=1)
    t_fs = min(benchmark.stats.stats.data) if benchmark.stats else 0.0

    delta_times = []
    for r in range(3):
        path = str(root / f"delta{r}")
        deltalake.write_deltalake(path, rows)
        table = deltalake.DeltaTable(path)
        start = time.perf_counter()
        (table.merge(batch, predicate="t.id = s.id", source_alias="s", target_alias="t")
         .when_matched_update_all().when_not_matched_insert_all().execute())
        delta_times.append(time.perf_counter() - start)
        assert deltalake.DeltaTable(path).to_pyarrow_table(columns=["id"]).num_rows == ROWS + UPSERT_ROWS // 2
    t_delta = min(delta_times)
    benchmark.extra_info.update({"rows": ROWS, "upsert_rows": UPSERT_ROWS, "fieldshift_s": t_fs,
                                 "deltalake_s": t_delta,
                                 "fieldshift_rows_per_s": UPSERT_ROWS / t_fs if t_fs else None,
                                 "deltalake_rows_per_s": UPSERT_ROWS / t_delta})
    print(f"\nupsert {UPSERT_ROWS:,} into {ROWS:,}: fieldshift {t_fs:.3f}s "
          f"({UPSERT_ROWS / max(t_fs, 1e-9):,.0f} rows/s), "
          f"deltalake merge {t_delta:.3f}s ({UPSERT_ROWS / t_delta:,.0f} rows/s)")


def test_compaction_vs_pyarrow_read_write(benchmark: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("compact")
    base = fs.Table.create(root / "base", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=BUCKETS)
    thirds = np.array_split(np.arange(ROWS), 3)  # three schema versions: as written, a widened, e added
    base.upsert(_rows(thirds[0], 0))
    base.upsert(_rows(thirds[1], 0, wide=True))
    base.upsert(_rows(thirds[2], 0, wide=True, extra=True))
    assert len(base.schemas()) == 3
    counter = iter(range(100))

    def fresh() -> tuple[tuple[fs.Table], dict]:
        dest = root / f"c{next(counter)}"
        shutil.copytree(base.location, dest)
        return (fs.Table.open(dest),), {}

    results = []
    benchmark.pedantic(lambda t: results.append(t.compact()), setup=fresh, rounds=3, iterations=1)
    assert results[-1].rows_written == ROWS
    t_compact = min(benchmark.stats.stats.data) if benchmark.stats else 0.0
    done = fs.Table.open(root / f"c{2}")
    paths = [done.location / f.path for f in done.scan().live_files()]
    out = root / "pyarrow"
    out.mkdir()

    def read_write() -> None:
        for i, p in enumerate(paths):
            pq.write_table(pq.read_table(p), out / f"{i}.parquet", row_group_size=131_072, compression="zstd")

    t_pyarrow, = _best(read_write, rounds=3)
    benchmark.extra_info.update({"rows": ROWS, "compact_s": t_compact, "pyarrow_read_write_s": t_pyarrow,
                                 "ratio": t_compact / t_pyarrow if t_compact else None})
    print(f"\ncompact {ROWS:,} rows over 3 schemas: {t_compact:.3f}s; pyarrow read+write {t_pyarrow:.3f}s "
          f"-> {t_compact / t_pyarrow:.2f}x")
