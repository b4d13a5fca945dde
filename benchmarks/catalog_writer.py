"""One of the benchmark's concurrent writers: waits for the start signal, appends small batches, one
commit each, and prints each commit's latency (seconds) as a JSON list."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pyarrow as pa

import fieldshift as fs

ROWS = 10


def main() -> None:
    location, writer, commits, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    table = fs.Table.open(location)
    table.schema  # noqa: B018 - connect (and fill the pool) before the clock starts
    while not go.exists():
        time.sleep(0.01)
    latencies = []
    for b in range(commits):
        rows = pa.table({"writer": pa.array([writer] * ROWS, pa.int32()), "batch": pa.array([b] * ROWS, pa.int32()),
                         "value": pa.array(range(ROWS), pa.int64())})
        start = time.perf_counter()
        table.append(rows)
        latencies.append(time.perf_counter() - start)
    print(json.dumps(latencies), flush=True)


if __name__ == "__main__":
    main()
