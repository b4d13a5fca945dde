"""Shared fixtures for the benchmark suite (``make bench``); never collected by the default ``pytest``.

``pyproject.toml`` sets ``testpaths = ["tests"]``, so a bare ``pytest`` does not look here; on top of
that every item under ``benchmarks/`` is marked ``slow`` and ``bench`` below, so even
``pytest benchmarks`` deselects them through the default ``-m 'not slow'``. ``make bench`` passes
``-m ""`` and ``--benchmark-enable``. For a quick smoke run::

    FIELDSHIFT_BENCH_SCALE=small .venv/bin/python -m pytest benchmarks -p no:cacheprovider -m ""

(with ``--benchmark-disable`` from the project's addopts, each benchmark body runs once, untimed).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Arrow's allocator must keep idle pages (see the Makefile); set before pyarrow allocates anything.
_PURGE_PRESET = "MIMALLOC_PURGE_DELAY" in os.environ
os.environ.setdefault("MIMALLOC_PURGE_DELAY", "-1")
os.environ.setdefault("POLARS_MAX_THREADS", os.environ.get("FIELDSHIFT_BENCH_THREADS", "2"))

sys.path.insert(0, str(Path(__file__).parent))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import pytest  # noqa: E402
import workloads as w  # noqa: E402
from workloads import THREADS, W1  # noqa: E402

from fieldshift.kernels.warm import warm_up  # noqa: E402

_BENCH_DIR = Path(__file__).parent.resolve()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """Collect ``bench_*.py`` here (pytest's default pattern only knows ``test_*.py``).

    A file named on the command line is collected by pytest itself, so it is left alone here.
    """
    if file_path.suffix != ".py" or not file_path.name.startswith("bench_") or parent.session.isinitpath(file_path):
        return None
    if _BENCH_DIR != file_path.parent.resolve():
        return None
    return pytest.Module.from_parent(parent, path=file_path)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "bench: a benchmark (benchmarks/, run by `make bench`)")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark everything under benchmarks/ as bench + slow (before -m deselects), whoever wrote it."""
    for item in items:
        if _BENCH_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.bench)
            item.add_marker(pytest.mark.slow)


def pytest_report_header(config: pytest.Config) -> list[str]:
    pool = pa.default_memory_pool()
    return [
        f"fieldshift benchmarks: scale={w.SCALE} (W1 rows={w.W1_ROWS:,}), threads={THREADS}, "
        f"arrow pool={pool.backend_name}, MIMALLOC_PURGE_DELAY={os.environ.get('MIMALLOC_PURGE_DELAY')}"
        f"{'' if _PURGE_PRESET else ' (set by conftest)'}"
    ]


@pytest.fixture(scope="session", autouse=True)
def _threads() -> None:
    pa.set_cpu_count(THREADS)
    pa.set_io_thread_count(THREADS)
    w.set_fieldshift_threads(THREADS)
    warm_up()  # numba's compile (or cache load) before any timing, not in a background thread during one


@pytest.fixture(scope="session")
def w1() -> W1:
    """W1 as independent record batches of 131,072 rows (generated once per session)."""
    file_schema = w.w1_file_schema()
    arrow = file_schema.to_arrow()
    return W1(file_schema, w.w1_read_schema(), arrow, w.make_batches(arrow, w.W1_ROWS))


@pytest.fixture(scope="session")
def w1_parquet(w1: W1, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """W1 written to Parquet (row groups of 131,072, field ids in the footer, snappy)."""
    path = tmp_path_factory.mktemp("w1") / "w1.parquet"
    pq.write_table(w1.table, path, row_group_size=w.BATCH_ROWS, compression="snappy")
    return path
