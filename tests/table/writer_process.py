"""A writer run as a separate process by the crash and concurrency tests.

Appends batches tagged (writer, batch) with BATCH_ROWS rows each and, with --alter, also changes
the schema between appends. Prints one line per commit so the parent can tell what surely landed.
With --keyed, runs KEYED_STEPS on a keyed table instead (upserts, deletes, compactions, expiries); with
--rows, ROW_STEPS on an unkeyed table (merges, updates and deletes by filter, compactions).
"""

from __future__ import annotations

import argparse
import sys

import pyarrow as pa

import fieldshift as fs

BATCH_ROWS = 500
SLOTS = 50
KEYED_STEPS = ("upsert", "upsert", "delete", "compact", "upsert", "delete", "upsert", "expire")


def keyed_state(steps: int) -> dict[int, int]:
    """slot -> batch of one writer's rows after its first ``steps`` keyed steps (what the table must hold)."""
    state: dict[int, int] = {}
    for b in range(steps):
        kind = KEYED_STEPS[b % len(KEYED_STEPS)]
        if kind == "upsert":
            state.update(dict.fromkeys(range(SLOTS), b))
        elif kind == "delete":
            for slot in [s for s in state if s % 5 == b % 5]:
                del state[slot]
    return state


ROW_STEPS = ("merge", "update", "delete", "merge", "compact", "update", "delete")


def row_state(steps: int) -> dict[int, int]:
    """slot -> batch of one writer's rows on an unkeyed table after its first ``steps`` ROW_STEPS."""
    state: dict[int, int] = {}
    for b in range(steps):
        kind = ROW_STEPS[b % len(ROW_STEPS)]
        if kind == "merge":
            state.update(dict.fromkeys(range(SLOTS), b))
        elif kind == "update":
            state.update({slot: b for slot in state if slot % 3 == b % 3})
        elif kind == "delete":
            for slot in [s for s in state if s % 5 == b % 5]:
                del state[slot]
    return state


def row_step(table: fs.Table, writer: int, b: int) -> None:
    kind = ROW_STEPS[b % len(ROW_STEPS)]
    if kind == "merge":
        source = pa.table({"writer": pa.array([writer] * SLOTS, pa.int32()), "slot": pa.array(range(SLOTS), pa.int32()),
                           "batch": pa.array([b] * SLOTS, pa.int32()),
                           "value": pa.array([writer * 1000 + b] * SLOTS, pa.int64())})
        table.merge(source, on=["writer", "slot"]).when_matched_update().when_not_matched_insert().execute()
    elif kind == "update":
        slots = ", ".join(str(s) for s in range(b % 3, SLOTS, 3))
        table.update({"batch": b}, where=f"writer = {writer} and slot in ({slots})")
    elif kind == "delete":
        slots = ", ".join(str(s) for s in range(b % 5, SLOTS, 5))
        table.delete(filter=f"writer = {writer} and slot in ({slots})")
    else:
        table.compact()


def keyed_step(table: fs.Table, writer: int, b: int) -> None:
    from fieldshift.table.maintenance import remove_expired_files

    kind = KEYED_STEPS[b % len(KEYED_STEPS)]
    if kind == "upsert":
        table.upsert(pa.table({"writer": pa.array([writer] * SLOTS, pa.int32()),
                               "slot": pa.array(range(SLOTS), pa.int32()), "batch": pa.array([b] * SLOTS, pa.int32()),
                               "value": pa.array([writer * 1000 + b] * SLOTS, pa.int64())}))
    elif kind == "delete":
        slots = [s for s in range(SLOTS) if s % 5 == b % 5]
        table.delete({"writer": [writer] * len(slots), "slot": slots})
    elif kind == "compact":
        table.compact()
    else:
        remove_expired_files(table.io, table.expire_snapshots(older_than=0, retain_last=3))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("location")
    ap.add_argument("--writer", type=int, default=0)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--alter", action="store_true")
    ap.add_argument("--keyed", action="store_true")
    ap.add_argument("--rows", action="store_true")
    args = ap.parse_args()
    table = fs.Table.open(args.location)
    if args.keyed or args.rows:
        for b in range(args.batches):
            (keyed_step if args.keyed else row_step)(table, args.writer, b)
            print(f"step {args.writer} {b}", flush=True)
        sys.exit(0)
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
