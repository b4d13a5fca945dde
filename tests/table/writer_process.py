"""A writer run as a separate process by the crash and concurrency tests.

Appends batches tagged (writer, batch) with BATCH_ROWS rows each and, with --alter, also changes
the schema between appends. Prints one line per commit so the parent can tell what surely landed.
"""

from __future__ import annotations

import argparse
import sys

import pyarrow as pa

import fieldshift as fs

BATCH_ROWS = 500


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("location")
    ap.add_argument("--writer", type=int, default=0)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--alter", action="store_true")
    args = ap.parse_args()
    table = fs.Table.open(args.location)
    for b in range(args.batches):
        rows = pa.table({
            "writer": pa.array([args.writer] * BATCH_ROWS, pa.int32()),
            "batch": pa.array([b] * BATCH_ROWS, pa.int32()),
            "value": pa.array(range(BATCH_ROWS), pa.int64()),
        })
        table.append(rows)
        print(f"appended {args.writer} {b}", flush=True)
        if args.alter and b % 3 == 1:
            name = f"extra_{args.writer}_{b}"
            try:
                table.update_schema().add_column(name, pa.string(), default="d").commit()
                print(f"altered {name}", flush=True)
            except fs.CommitConflictError:
                print("alter conflict", flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
