"""The demo's partition evolution scenario (Flink Table Store proposal): day partitions, then hour partitions.

A table partitioned by day gets hourly partitions without rewriting anything; a query spanning the
change prunes the old day files and the new hour files each through its own spec, and the demo
prints how many files each side read. Takes the demo object (``d``) by duck typing.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa

import fieldshift as fs
from fieldshift.table.partitions.ddl_partitions import apply_partition_alter

__all__ = ["partition_evolution"]

_START = dt.datetime(2024, 5, 1)


def _every_6h(first: dt.datetime, days: int, start_id: int) -> pa.Table:
    n = days * 4
    return pa.table({"id": pa.array(range(start_id, start_id + n), pa.int64()),
                     "ts": pa.array([first + dt.timedelta(hours=6 * h) for h in range(n)], pa.timestamp("us")),
                     "v": [f"v{start_id + h}" for h in range(n)]})


def partition_evolution(d: Any) -> None:
    d.scenario("Table Store: day partitions → hour partitions, no data rewritten", "flink-table-store FLIP")
    schema = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us")), ("v", pa.string())])
    d.step("CREATE TABLE T (id BIGINT, ts TIMESTAMP, v STRING) PARTITIONED BY (days(ts))")
    t = fs.Table.create(d.root / "T_parts", schema, partition_by=["days(ts)"])
    old = _every_6h(_START, 3, 0)
    t.append(old)
    d.step("INSERT three days of rows every 6 hours → one file per day: "
           + ", ".join(sorted({f.path.split("/")[1] for f in t.scan().files()})))
    statement = "ALTER TABLE T REPLACE PARTITION FIELD days(ts) WITH hours(ts)"
    d.step(statement + "  (a new spec; old files keep theirs)")
    apply_partition_alter(t.update_spec(), statement).commit()
    new = _every_6h(_START + dt.timedelta(days=3), 2, 1000)
    t.append(new)
    specs = {s.spec_id: s.describe(t.schema) for s in t.specs()}
    files = t.scan().files()
    by_spec = {sid: sum(f.spec_id == sid for f in files) for sid in specs}
    d.step("INSERT two more days → " + "; ".join(f"spec {sid} ({specs[sid]}): {n} files"
                                                  for sid, n in by_spec.items()))
    lo, hi = _START + dt.timedelta(days=2, hours=17), _START + dt.timedelta(days=3, hours=7)
    flt = [("ts", ">=", lo), ("ts", "<", hi)]
    d.step(f"SELECT * FROM T WHERE ts >= '{lo}' AND ts < '{hi}'  (spans the change)")
    scan = t.scan(filter=flt)
    read = scan.files()
    got = scan.to_arrow()
    full = t.scan(filter=flt)
    full.prune = False
    day_read = sum(f.spec_id == 0 for f in read)
    hour_read = sum(f.spec_id == 1 for f in read)
    d.show(got, f"rows (read {day_read} of {by_spec[0]} day files and {hour_read} of {by_spec[1]} hour files)")
    expected = [r for r in (*old.to_pylist(), *new.to_pylist()) if lo <= r["ts"] < hi]
    d.check("the query returns every row of the window", sorted(got.to_pylist(), key=repr) ==
            sorted(expected, key=repr) == sorted(full.to_arrow().to_pylist(), key=repr))
    d.check("old day files pruned by day: only the day that holds the window's start is read", day_read == 1)
    d.check("new hour files pruned by hour: only the 2 hours of the window holding rows are read",
            hour_read == 2)
    d.step("ALTER TABLE T DROP COLUMN ts")
    try:
        t.update_schema().drop_column("ts").commit()
        d.check("dropping a partition key is refused", False, "it was committed")
    except fs.PartitionKeyChangeError as e:
        d.check("dropping a partition key is refused: " + str(e).split(". ")[1][:70] + "…", True)
    d.read_and_check(t, [*old.to_pylist(), *new.to_pylist()])
