"""Issue 35: command-line start-up and the keyed bulk load, each against its peer in the same run.

- ``fieldshift --version`` (a fresh process, median of ``FIELDSHIFT_SPEED_RUNS``, default 20): target
  <= 0.15 s; ``python -c pass`` is recorded beside it (the interpreter's own start).
- ``fieldshift capture SRC TABLE --once`` of 200 small JSON files against the same work from Python
  (a fresh ``python -c "import fieldshift as fs; fs.capture(SRC, TABLE)"``), runs interleaved, medians:
  target <= 1.2x. The in-process time of ``fs.capture()`` inside that script is recorded too.
  Both run with bytecode caching on (``PYTHONPYCACHEPREFIX`` in a temporary directory), as an installed
  package has it: with ``PYTHONDONTWRITEBYTECODE`` every start compiles fieldshift's sources anew.
- insert-only ``append`` of ``FIELDSHIFT_LOAD_ROWS`` rows (default 2,000,000; 200,000 with
  ``FIELDSHIFT_BENCH_SCALE=small``; string keys) into a new keyed table (4 buckets) against deltalake's
  ``write_deltalake`` of the same rows (target <= 1.3x), the same append without the issue's fast paths
  (exact group-by uniqueness, no remembered key hash, bucket files one after another), the same append in
  the layout before issue 35 (zstd, 131,072-row groups, a dictionary tried on every column), and the floor:
  pyarrow writing the same four bucket files in fieldshift's layout (``write_layout``) on two threads, and the
  append without the second round's fast paths (footer statistics, hashing on threads, one bucket order, a
  writer thread over the cores, key checks while the files are written). Runs interleaved, medians of
  ``FIELDSHIFT_LOAD_RUNS`` (default 5).

Results go to ``extra_info`` and are printed; ``speed.md`` holds the measured notes (report.py appends it).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import workloads as w

import fieldshift as fs

pytestmark = [pytest.mark.bench, pytest.mark.slow]

RUNS = int(os.environ.get("FIELDSHIFT_SPEED_RUNS", 20))
LOAD_ROWS = int(os.environ.get("FIELDSHIFT_LOAD_ROWS", 200_000 if w.SMALL else 2_000_000))
LOAD_RUNS = int(os.environ.get("FIELDSHIFT_LOAD_RUNS", 5))
PY = sys.executable
CLI = str(Path(PY).parent / "fieldshift")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of an installed package: bytecode cached (here in a temporary directory)."""
    out = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = str(tmp_path_factory.mktemp("pycache"))
    return out


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout


def _interleaved(fns: list[Callable[[], Any]], rounds: int, cpu: list[list[float]] | None = None) -> list[list[float]]:
    """Wall times of ``rounds`` rounds of each of ``fns`` in turn; ``cpu`` (one list per function) gets the
    process's CPU seconds of each run, steadier than wall time when other jobs share the machine."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            times[i].append(time.perf_counter() - start)
            if cpu is not None:
                cpu[i].append(time.process_time() - start_cpu)
    return times


def test_cli_version(benchmark: Any, env: dict[str, str]) -> None:
    for _ in range(2):  # warm the bytecode cache and the OS's file cache
        _run([CLI, "--version"], env)
    version, bare = _interleaved([lambda: _run([CLI, "--version"], env), lambda: _run([PY, "-c", "pass"], env)], RUNS)
    benchmark.pedantic(lambda: _run([CLI, "--version"], env), rounds=3, iterations=1)
    med, base = statistics.median(version), statistics.median(bare)
    benchmark.extra_info.update({"version_median_s": med, "python_pass_median_s": base, "runs": RUNS,
                                 "target_s": 0.15})
    print(f"\nfieldshift --version: median {med:.3f}s (python -c pass {base:.3f}s), {RUNS} runs; target 0.15s")


@pytest.fixture(scope="module")
def landing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("landing")
    for i in range(200):
        lines = [json.dumps({"id": i * 10 + j, "name": f"n{j}", "v": j * 1.5}) for j in range(10)]
        (src / f"f{i:03d}.json").write_text("\n".join(lines) + "\n")
    return src


def test_capture_once_vs_python(benchmark: Any, env: dict[str, str], landing: Path,
                                tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("captures")
    counter = iter(range(10_000))
    script = ("import sys, time, fieldshift as fs\nstart = time.perf_counter()\nfs.capture(sys.argv[1], sys.argv[2])\n"
              "print(time.perf_counter() - start)")
    inside: list[float] = []

    def cli() -> None:
        dest = root / f"c{next(counter)}"
        _run([CLI, "capture", str(landing), str(dest), "--once"], env)
        shutil.rmtree(dest)

    def python() -> None:
        dest = root / f"p{next(counter)}"
        inside.append(float(_run([PY, "-c", script, str(landing), str(dest)], env)[1]))
        shutil.rmtree(dest)

    cli(), python()  # warm
    inside.clear()
    rounds = max(5, RUNS // 2)
    t_cli, t_py = _interleaved([cli, python], rounds)
    benchmark.pedantic(cli, rounds=1, iterations=1)
    m_cli, m_py, m_in = statistics.median(t_cli), statistics.median(t_py), statistics.median(inside)
    benchmark.extra_info.update({"cli_median_s": m_cli, "python_median_s": m_py, "in_process_median_s": m_in,
                                 "ratio": m_cli / m_py, "ratio_in_process": m_cli / m_in, "rounds": rounds,
                                 "files": 200, "target": 1.2})
    print(f"\ncapture --once of 200 files: CLI {m_cli:.3f}s, python script {m_py:.3f}s ({m_cli / m_py:.2f}x), "
          f"fs.capture() inside it {m_in:.3f}s ({m_cli / m_in:.2f}x); {rounds} interleaved rounds")


SCHEMA = pa.schema([pa.field("id", pa.string(), nullable=False), ("n", pa.int64()), ("x", pa.float64()),
                    ("s", pa.string())])


def _load_rows(n: int) -> pa.Table:
    rng = np.random.default_rng(w.SEED)
    ids = rng.permutation(n)
    return pa.table({"id": pa.array([f"k{i:09d}" for i in ids]), "n": pa.array(ids.astype(np.int64)),
                     "x": pa.array(rng.random(n)), "s": pa.array([f"v{i % 1000}" for i in ids])}, schema=SCHEMA)


def test_keyed_bulk_load_vs_write_deltalake(benchmark: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    deltalake = pytest.importorskip("deltalake")
    from fieldshift.table.files import data_files
    from fieldshift.table.files.write_layout import DEFAULT_LAYOUT
    from fieldshift.table.keyed import keyed_write, keys
    from fieldshift.table.keyed.keys import bucket_of
    from fieldshift.table.partitions import partition_write
    from fieldshift.table.write import write_commit

    root = tmp_path_factory.mktemp("load")
    rows = _load_rows(LOAD_ROWS)
    schema = fs.Schema.from_arrow(SCHEMA, assign_ids=True)
    counter = iter(range(10_000))

    def fieldshift_append(properties: dict[str, str] | None = None) -> None:
        dest = root / f"fs{next(counter)}"
        fs.Table.create(dest, schema, identifier_fields=["id"], buckets=4, properties=properties).append(rows)
        shutil.rmtree(dest)

    def old_layout() -> None:
        fieldshift_append(OLD_LAYOUT_PROPERTIES)

    def without_round_two() -> None:
        """Without the second round's fast paths (footer statistics, hashing on threads, one bucket order
        per write, a writer thread over the cores, key checks while the files are written)."""
        saved = (data_files.FOOTER_STATS, keys._PARALLEL_ROWS, keys._LAST_ORDER, keyed_write.WRITE_THREADS_OVER_CORES,
                 write_commit.OVERLAP_KEY_CHECKS)
        data_files.FOOTER_STATS, keys._PARALLEL_ROWS, keys._LAST_ORDER = False, 1 << 62, _Forgetful()
        keyed_write.WRITE_THREADS_OVER_CORES, write_commit.OVERLAP_KEY_CHECKS = 0, False
        try:
            fieldshift_append()
        finally:
            (data_files.FOOTER_STATS, keys._PARALLEL_ROWS, keys._LAST_ORDER, keyed_write.WRITE_THREADS_OVER_CORES,
             write_commit.OVERLAP_KEY_CHECKS) = saved

    def without_fast_paths() -> None:
        saved = (write_commit.check_unique, partition_write.write_bucketed, keys._LAST_HASH)
        write_commit.check_unique = keyed_write.check_unique_exact
        partition_write.write_bucketed = functools.partial(keyed_write.write_bucketed, parallel=False)
        keys._LAST_HASH = _Forgetful()
        try:
            without_round_two()
        finally:
            write_commit.check_unique, partition_write.write_bucketed, keys._LAST_HASH = saved

    def delta() -> None:
        dest = root / f"dl{next(counter)}"
        deltalake.write_deltalake(str(dest), rows)
        shutil.rmtree(dest)

    spec = keys.KeySpec((1,), ("id",), None, None, 4)
    order = np.argsort(bucket_of(rows, spec).astype(np.int16), kind="stable")
    buckets = np.sort(bucket_of(rows, spec))
    parts = [rows.take(pa.array(order[buckets == b])) for b in range(4)]

    def floor() -> None:
        dest = Path(tempfile.mkdtemp(dir=root))
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda i: pq.write_table(
                parts[i], dest / f"{i}.parquet", compression=DEFAULT_LAYOUT.codec_for(parts[i], 1 << 20),
                row_group_size=DEFAULT_LAYOUT.group_rows(parts[i]),
                use_dictionary=DEFAULT_LAYOUT.dictionary_columns(parts[i])), range(4)))
        shutil.rmtree(dest)

    fieldshift_append(), delta()  # warm (numba's hash kernel, deltalake's runtime)
    cpu: list[list[float]] = [[] for _ in range(6)]
    t_fs, t_dl, t_slow, t_floor, t_old, t_two = _interleaved(
        [fieldshift_append, delta, without_fast_paths, floor, old_layout, without_round_two], LOAD_RUNS, cpu)
    benchmark.pedantic(fieldshift_append, rounds=1, iterations=1)
    m = {k: statistics.median(v) for k, v in
         {"fieldshift": t_fs, "deltalake": t_dl, "without_fast_paths": t_slow, "pyarrow_floor": t_floor,
          "old_layout": t_old, "without_round_two": t_two}.items()}
    c = {k: statistics.median(v) for k, v in zip(m, cpu, strict=True)}
    benchmark.extra_info.update({f"{k}_median_s": v for k, v in m.items()} | {
        "rows": LOAD_ROWS, "ratio": m["fieldshift"] / m["deltalake"], "target": 1.3,
        "ratio_without_fast_paths": m["without_fast_paths"] / m["deltalake"],
        "floor_ratio": m["pyarrow_floor"] / m["deltalake"], "old_layout_ratio": m["old_layout"] / m["deltalake"],
        "without_round_two_ratio": m["without_round_two"] / m["deltalake"],
        **{f"{k}_cpu_s": v for k, v in c.items()}, "cpu_ratio": c["fieldshift"] / c["deltalake"],
        "load_1min": os.getloadavg()[0]})
    print(f"\nkeyed append of {LOAD_ROWS:,} rows: fieldshift {m['fieldshift']:.3f}s, deltalake "
          f"{m['deltalake']:.3f}s ({m['fieldshift'] / m['deltalake']:.2f}x), without the fast paths "
          f"{m['without_fast_paths']:.3f}s ({m['without_fast_paths'] / m['deltalake']:.2f}x), pyarrow writing "
          f"the same bucket files {m['pyarrow_floor']:.3f}s ({m['pyarrow_floor'] / m['deltalake']:.2f}x), the layout "
          f"before issue 35 {m['old_layout']:.3f}s ({m['old_layout'] / m['deltalake']:.2f}x), without the second "
          f"round's fast paths {m['without_round_two']:.3f}s ({m['without_round_two'] / m['deltalake']:.2f}x); CPU "
          + ", ".join(f"{k} {v:.3f}s" for k, v in c.items()) + f"; 1-minute load {os.getloadavg()[0]:.1f}")


class _Forgetful(list):  # type: ignore[type-arg]
    """A remembered-hash slot that keeps nothing: every call hashes the keys anew (the old behaviour)."""

    def __setitem__(self, index: object, value: object) -> None:
        return None


SCAN_ROWS = int(os.environ.get("FIELDSHIFT_SCAN_ROWS", 1_000_000 if w.SMALL else 10_000_000))
OLD_LAYOUT_PROPERTIES = {"fieldshift.write.row-group-rows": "131072",  # the layout before issue 35
                         "fieldshift.write.row-group-bytes": str(1 << 62), "fieldshift.write.codec": "zstd",
                         "fieldshift.write.dictionary": "all"}


def _version_rows(version: int, n: int, offset: int) -> pa.Table:
    """Rows of a 20-column table in schema version 1, 2 (an int and the floats widened, a column added, one
    dropped) or 3 (a renamed column)."""
    ids = np.arange(offset, offset + n, dtype=np.int64)
    cols: dict[str, Any] = {"id": ids}
    for i in range(19 if version == 1 else 18):
        kind = i % 4
        name = f"c{i}" if not (version == 3 and i == 2) else "renamed"
        if kind == 0:
            cols[name] = (ids * (i + 3) % 100_000).astype(np.int32 if (version == 1 or i != 0) else np.int64)
        elif kind == 1:
            cols[name] = ((ids % 9973) * 0.25).astype(np.float32 if version == 1 else np.float64)
        elif kind == 2:
            cols[name] = pa.array(np.char.mod("v%d", ids % 1000))
        else:
            cols[name] = ids % 77
    if version > 1:
        cols["added"] = ids * 2
    return pa.table(cols)


def _three_version_table(location: Path, rows: int, properties: dict[str, str]) -> str:
    per = rows // 3
    first = _version_rows(1, per, 0)
    t = fs.Table.create(location, first.schema, properties=properties)
    t.append(first)
    u = t.update_schema().update_column("c0", pa.int64()).add_column("added", pa.int64()).drop_column("c18")
    for name in ("c1", "c5", "c9", "c13", "c17"):
        u = u.update_column(name, pa.float64())
    u.commit()
    t.append(_version_rows(2, per, per))
    t.update_schema().rename_column("c2", "renamed").commit()
    t.append(_version_rows(3, per, 2 * per))
    return t.publish().metadata_location


def _files_by_schema(location: Path) -> list[list[str]]:
    """The table's data files, grouped by the Arrow schema they were written in (one dataset each)."""
    groups: dict[str, list[str]] = {}
    for path in sorted((location / "data").rglob("*.parquet")):
        groups.setdefault(pq.read_schema(path).to_string(), []).append(str(path))
    return list(groups.values())


def _small_files_table(location: Path, properties: dict[str, str], files: int = 200) -> None:
    t = fs.Table.create(location, _version_rows(1, 1, 0).schema, properties=properties)
    for i in range(files):
        t.append(_version_rows(1, 1_000, i * 1_000))


def test_full_scan_by_layout(benchmark: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A full scan of a 20-column table of 3 schema versions, written in the old layout (zstd, 131,072-row
    groups, a dictionary on every column), the new one (zstd, row groups up to 1M rows / 256 MiB, dictionaries
    where values repeat) and the new one in snappy; each read by fieldshift,
    by pyarrow.dataset over the same files (one dataset per schema version: the Parquet floor) and by
    PyIceberg through the table's published Iceberg metadata (the same files). Also 200 small files of
    1,000 rows in the old and new layout (must not get slower)."""
    import pyarrow.dataset as ds

    static_table = pytest.importorskip("pyiceberg.table").StaticTable
    root = tmp_path_factory.mktemp("scan")
    layouts = {"new": {}, "old": OLD_LAYOUT_PROPERTIES, "snappy": {"fieldshift.write.codec": "snappy"}}
    metadata = {k: _three_version_table(root / k, SCAN_ROWS, props) for k, props in layouts.items()}
    groups = {k: _files_by_schema(root / k) for k in layouts}
    small_old = {k: v for k, v in OLD_LAYOUT_PROPERTIES.items() if k != "fieldshift.write.codec"}  # was snappy
    for k, props in (("new", {}), ("old", small_old)):
        _small_files_table(root / f"small_{k}", props)
    fns: dict[str, Callable[[], Any]] = {}
    for k in layouts:
        fns[f"fieldshift_{k}"] = functools.partial(lambda p: fs.Table.open(p).scan().to_arrow(), root / k)
        fns[f"dataset_{k}"] = functools.partial(
            lambda g: [ds.dataset(paths, format="parquet").to_table() for paths in g], groups[k])
        fns[f"pyiceberg_{k}"] = functools.partial(lambda m: static_table.from_metadata(m).scan().to_arrow(),
                                                  metadata[k])
    for k in ("new", "old"):
        fns[f"small_files_{k}"] = functools.partial(lambda p: fs.Table.open(p).scan().to_arrow(), root / f"small_{k}")
    expected = fns["fieldshift_old"]().sort_by("id")
    assert fns["fieldshift_new"]().sort_by("id").equals(expected)  # the layout changes no answer
    assert fns["fieldshift_snappy"]().sort_by("id").equals(expected)
    assert fns["pyiceberg_new"]().sort_by("id").cast(expected.schema).equals(expected)
    del expected
    for fn in fns.values():  # warm the OS's file cache
        fn()
    rounds = int(os.environ.get("FIELDSHIFT_SCAN_RUNS", 5))
    names = list(fns)
    cpu: list[list[float]] = [[] for _ in names]
    times = dict(zip(names, _interleaved([fns[n] for n in names], rounds, cpu), strict=True))
    benchmark.pedantic(fns["fieldshift_new"], rounds=1, iterations=1)
    m = {n: statistics.median(t) for n, t in times.items()}
    c = {n: statistics.median(t) for n, t in zip(names, cpu, strict=True)}
    ratios = {"new_over_old": m["fieldshift_new"] / m["fieldshift_old"],
              "new_over_dataset": m["fieldshift_new"] / m["dataset_new"],
              "old_over_dataset": m["fieldshift_old"] / m["dataset_old"],
              "new_over_pyiceberg": m["fieldshift_new"] / m["pyiceberg_new"],
              "old_over_pyiceberg_on_old": m["fieldshift_old"] / m["pyiceberg_old"],
              "snappy_over_pyiceberg_on_snappy": m["fieldshift_snappy"] / m["pyiceberg_snappy"],
              "small_files_new_over_old": m["small_files_new"] / m["small_files_old"]}
    sizes = {k: sum(p.stat().st_size for p in (root / k / "data").rglob("*.parquet")) for k in layouts}
    cpu_ratios = {"cpu_new_over_old": c["fieldshift_new"] / c["fieldshift_old"],
                  "cpu_new_over_dataset": c["fieldshift_new"] / c["dataset_new"],
                  "cpu_new_over_pyiceberg": c["fieldshift_new"] / c["pyiceberg_new"],
                  "cpu_snappy_over_new": c["fieldshift_snappy"] / c["fieldshift_new"],
                  "cpu_small_files_new_over_old": c["small_files_new"] / c["small_files_old"]}
    benchmark.extra_info.update({f"{n}_median_s": v for n, v in m.items()} | ratios | cpu_ratios | {
        **{f"{n}_cpu_s": v for n, v in c.items()},
        "rows": SCAN_ROWS, "rounds": rounds, "load_1min": os.getloadavg()[0],
        **{f"bytes_{k}": v for k, v in sizes.items()}})
    print(f"\nfull scan of {SCAN_ROWS:,} rows x 20 columns, 3 schema versions; medians of {rounds} interleaved "
          f"rounds, 1-minute load {os.getloadavg()[0]:.1f}")
    for n, v in m.items():
        print(f"  {n:24s} {v:.3f}s (CPU {c[n]:.3f}s)")
    for n, v in (ratios | cpu_ratios).items():
        print(f"  {n:28s} {v:.3f}")
    print("  file bytes: " + ", ".join(f"{k} {v / 1e6:.0f} MB" for k, v in sizes.items()))


PLAN_FILES = 2_000
PLAN_START = np.datetime64("2020-01-01", "D")


def test_plan_one_day_of_2000_files_vs_delta_rs(benchmark: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Planning a one-day filter on an open table of 2,000 day partitions (one file each): fieldshift's
    ``scan(filter=...).files()`` (target <= 1 ms), the same without the columnar partition and statistics
    tests (``vector_prune = False``), the same with a catalog connection per read (``hold_reads = False``), and
    delta-rs' ``file_uris(partition_filters=...)`` on the same rows partitioned by a day column. Medians of
    interleaved rounds."""
    deltalake = pytest.importorskip("deltalake")
    import datetime as dt

    root = tmp_path_factory.mktemp("plan")
    days = PLAN_START + np.repeat(np.arange(PLAN_FILES), 2)
    ts = days.astype("datetime64[us]") + np.tile(np.array([3, 15], "timedelta64[h]"), PLAN_FILES)
    rows = pa.table({"id": np.arange(len(ts), dtype=np.int64), "ts": pa.array(ts), "v": np.ones(len(ts))})
    fs.Table.create(root / "fs", rows.schema, partition_by=["days(ts)"]).append(rows)
    deltalake.write_deltalake(str(root / "dl"), rows.append_column("day", pa.array(days.astype(str))),
                              partition_by=["day"])
    t = fs.Table.open(root / "fs")
    plain = fs.Table.open(root / "fs")  # a catalog connection per read, as before the held read connections
    plain.catalog.dialect.hold_reads = False  # type: ignore[attr-defined]
    plain.close()
    delta = deltalake.DeltaTable(str(root / "dl"))
    day = dt.datetime(2021, 12, 1)
    flt = [("ts", ">=", day), ("ts", "<", day + dt.timedelta(days=1))]

    def fieldshift_plan() -> int:
        return len(t.scan(filter=flt).files())

    def without_columnar_tests() -> int:
        scan = t.scan(filter=flt)
        scan.vector_prune = False
        return len(scan.files())

    def per_read_connections() -> int:
        return len(plain.scan(filter=flt).files())

    def delta_plan() -> int:
        return len(delta.file_uris(partition_filters=[("day", "=", "2021-12-01")]))

    assert fieldshift_plan() == without_columnar_tests() == per_read_connections() == delta_plan() == 1
    assert [f.path for f in t.scan(filter=flt).files()] == [f.path for f in plain.scan(filter=flt).files()]
    assert len(t.scan().live_files()) == PLAN_FILES
    cpu: list[list[float]] = [[], [], [], []]
    rounds = int(os.environ.get("FIELDSHIFT_PLAN_RUNS", 200))
    t_fs, t_slow, t_plain, t_dl = _interleaved(
        [fieldshift_plan, without_columnar_tests, per_read_connections, delta_plan], rounds, cpu)
    benchmark.pedantic(fieldshift_plan, rounds=20, iterations=1)
    m = {"fieldshift": statistics.median(t_fs), "without_columnar_tests": statistics.median(t_slow),
         "per_read_connections": statistics.median(t_plain), "delta_rs": statistics.median(t_dl)}
    c = {k: statistics.median(v) for k, v in zip(m, cpu, strict=True)}
    benchmark.extra_info.update({f"{k}_median_ms": v * 1000 for k, v in m.items()} | {
        f"{k}_cpu_ms": v * 1000 for k, v in c.items()} | {
        "files": PLAN_FILES, "rounds": rounds, "target_ms": 1.0, "ratio": m["fieldshift"] / m["delta_rs"],
        "load_1min": os.getloadavg()[0]})
    print(f"\nplan a one-day filter of {PLAN_FILES:,} files ({rounds} interleaved rounds, medians, 1-minute load "
          f"{os.getloadavg()[0]:.1f}): " + ", ".join(f"{k} {v * 1000:.2f} ms (CPU {c[k] * 1000:.2f} ms)"
                                                      for k, v in m.items()))
