"""Table locations on object storage: appends and scans of a small table on moto's S3 server (on this
machine, over HTTP on loopback) against the same table in a local directory.

The S3 server is moto's, in-process Python, so the numbers measure fieldshift's per-object overhead
(one PUT per file, a LIST and GETs per scan) plus moto's, not a real store's network latency.
Run: ``python -m pytest benchmarks/bench_object_store.py -s -m "" --benchmark-enable`` from the repository root
(it takes the moto fixture from tests/servers), or ``make bench``, whose report has an "Object storage" section.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import fieldshift as fs
from tests.servers.conftest import S3_BUCKET, s3_server  # noqa: F401  (the moto server fixture)

pytestmark = [pytest.mark.bench, pytest.mark.slow]

APPENDS = 20
ROWS_PER_APPEND = 10_000
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("score", pa.float64())])


def _batch(i: int) -> pa.Table:
    ids = range(i * ROWS_PER_APPEND, (i + 1) * ROWS_PER_APPEND)
    return pa.table({"id": ids, "name": [f"name-{j % 977}" for j in ids], "score": [j * 0.5 for j in ids]},
                    schema=SCHEMA)


@pytest.mark.parametrize("kind", ["local", "s3"])
def test_append_and_scan(benchmark: Any, kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if kind == "s3":
        request.getfixturevalue("s3_server")
        location: Any = f"s3://{S3_BUCKET}/bench-{uuid.uuid4().hex[:8]}/t"
    else:
        location = tmp_path / "t"
    table = fs.Table.create(location, SCHEMA, catalog=str(tmp_path / "catalog.db"), name="t")
    batches = [_batch(i) for i in range(APPENDS)]
    started = time.perf_counter()
    for b in batches:
        table.append(b)
    append_s = time.perf_counter() - started

    def scan() -> int:
        return fs.Table.open(location, catalog=str(tmp_path / "catalog.db"), name="t").to_arrow().num_rows

    assert benchmark.pedantic(scan, rounds=5, iterations=1) == APPENDS * ROWS_PER_APPEND
    compact_start = time.perf_counter()
    table.compact()
    compact_s = time.perf_counter() - compact_start
    benchmark.extra_info.update({"role": f"objstore.{kind}", "appends": APPENDS, "rows_per_append": ROWS_PER_APPEND,
                                 "append_ms_each": round(append_s / APPENDS * 1000, 1),
                                 "scan_ms": round(benchmark.stats.stats.median * 1000, 1),
                                 "compact_ms": round(compact_s * 1000, 1)})
    print(kind, benchmark.extra_info)

