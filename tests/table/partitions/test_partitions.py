"""Issue 15: partitioned tables, spec evolution, pruning through every spec, schema changes of partition keys.

Every pruning test compares the pruned scan with the same scan unpruned and with rows filtered in
plain Python, so a file wrongly skipped shows up as a missing row.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.schema.types import int_range
from fieldshift.table.partitions.transforms import Transform

BASE = dt.datetime(2024, 1, 1)
SCHEMA = pa.schema([("id", pa.int32()), ("ts", pa.timestamp("us")), ("region", pa.string()),
                    ("amount", pa.decimal128(10, 2))])


def _rows(rng: random.Random, n: int, start: int = 0) -> pa.Table:
    return pa.table({
        "id": pa.array([start + i if rng.random() > 0.05 else None for i in range(n)], pa.int32()),
        "ts": pa.array([BASE + dt.timedelta(minutes=rng.randint(-3 * 24 * 60, 5 * 24 * 60))
                        if rng.random() > 0.05 else None for _ in range(n)], pa.timestamp("us")),
        "region": [rng.choice(["eu", "us", "ap", "日本", None]) for _ in range(n)],
        "amount": pa.array([decimal.Decimal(rng.randint(-99999, 99999)).scaleb(-2) for _ in range(n)],
                           pa.decimal128(10, 2)),
    })


def _scan_both(t: fs.Table, flt: Any) -> tuple[list[dict], int, int]:
    """Rows of the pruned scan (== unpruned rows), files read pruned, files read unpruned."""
    pruned = t.scan(filter=flt)
    full = t.scan(filter=flt)
    full.prune = False
    got = sorted(pruned.to_arrow().to_pylist(), key=repr)
    assert got == sorted(full.to_arrow().to_pylist(), key=repr), flt
    return got, len(pruned.files()), len(full.files())


def _python_filter(rows: list[dict], flt: list[tuple]) -> list[dict]:
    def ok(r: dict) -> bool:
        for col, op, *val in flt:
            v = r[col]
            x = val[0] if val else None
            if op == "is_null":
                good = v is None
            elif op == "not_null":
                good = v is not None
            elif op == "!=":
                good = v is None or v != x
            elif op == "not in":
                good = v is None or v not in x
            elif v is None:
                good = False
            elif op == "in":
                good = v in x
            else:
                good = {"==": v.__eq__, "<": v.__lt__, "<=": v.__le__, ">": v.__gt__, ">=": v.__ge__}[op](x)
            if not good:
                return False
        return True
    return sorted((r for r in rows if ok(r)), key=repr)


def test_writes_split_rows_by_partition_and_record_typed_values(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", SCHEMA, partition_by=["days(ts)", "bucket(4, id)", "region"])
    data = _rows(random.Random(1), 300)
    t.append(data)
    spec = t.spec
    assert [(f.name, str(f.transform), f.field_id) for f in spec.fields] == [
        ("ts_day", "day", 1000), ("id_bucket_4", "bucket[4]", 1001), ("region", "identity", 1002)]
    files = t.scan().files()
    assert len({f.partition for f in files}) == len(files) > 10
    for f in files:
        assert f.spec_id == 0 and f.path.startswith("data/ts_day=")
        rows = pq.read_table(t.location / f.path)
        assert rows.column_names == SCHEMA.names  # source columns stay in the files
        for i, (field, name) in enumerate(zip(spec.fields, ["ts", "id", "region"], strict=True)):
            assert set(field.transform.values(rows.column(name))) == {f.partition[i]}
    assert sorted(t.to_arrow().to_pylist(), key=repr) == sorted(data.to_pylist(), key=repr)
    reopened = fs.Table.open(tmp_path / "t")
    assert reopened.spec == spec and [f.partition for f in reopened.scan().files()] == [f.partition for f in files]


def test_day_then_hour_prunes_both_specs_and_never_drops_a_row(tmp_path: Path) -> None:
    rng = random.Random(2)
    t = fs.Table.create(tmp_path / "t", SCHEMA, partition_by=["days(ts)"])
    everything = []
    for k in range(3):
        batch = _rows(rng, 200, start=k * 1000)
        t.append(batch)
        everything += batch.to_pylist()
    t.update_spec().replace_field("days(ts)", "hours(ts)").commit()
    assert [s.describe(t.schema) for s in t.specs()] == ["day(ts) AS ts_day", "hour(ts) AS ts_hour"]
    for k in range(2):
        batch = _rows(rng, 200, start=5000 + k * 1000)
        t.append(batch)
        everything += batch.to_pylist()
    hour = BASE + dt.timedelta(hours=13)
    flt = [("ts", ">=", hour), ("ts", "<", hour + dt.timedelta(hours=1))]
    got, read, total = _scan_both(t, flt)
    assert got == _python_filter(everything, flt)
    day_files = [f for f in t.scan(filter=flt).files() if f.spec_id == 0]
    hour_files = [f for f in t.scan(filter=flt).files() if f.spec_id == 1]
    assert {f.partition for f in day_files} == {((hour - dt.datetime(1970, 1, 1)).days,)}
    assert {f.partition for f in hour_files} == {(int((hour - dt.datetime(1970, 1, 1)).total_seconds() // 3600),)}
    assert read == len(day_files) + len(hour_files) < total / 10
    for _ in range(15):  # random filters on every column, compared with Python
        flt = _random_filter(rng)
        got, read, total = _scan_both(t, flt)
        assert got == _python_filter(everything, flt), flt


def _random_filter(rng: random.Random) -> list[tuple]:
    out = []
    for _ in range(rng.randint(1, 2)):
        col = rng.choice(["id", "ts", "region", "amount"])
        op = rng.choice(["==", "!=", "<", "<=", ">", ">=", "in", "not in", "is_null", "not_null"])
        if op in ("is_null", "not_null"):
            out.append((col, op))
            continue
        lit = {"id": lambda: rng.randint(-5, 7000),
               "ts": lambda: BASE + dt.timedelta(minutes=rng.randint(-4 * 1440, 6 * 1440)),
               "region": lambda: rng.choice(["eu", "us", "x", "日本", "a"]),
               "amount": lambda: decimal.Decimal(rng.randint(-99999, 99999)).scaleb(-2)}[col]
        out.append((col, op, [lit() for _ in range(rng.randint(1, 3))] if op in ("in", "not in") else lit()))
    return out


@pytest.mark.parametrize("terms", [["bucket(8, id)"], ["truncate(100, id)"], ["truncate(1, region)"],
                                   ["region", "months(ts)"], ["years(ts)", "truncate(10000, amount)"],
                                   ["void(id)"], ["bucket(3, region)", "bucket(5, amount)"]])
def test_every_transform_prunes_exactly(tmp_path: Path, terms: list[str]) -> None:
    rng = random.Random(hash(tuple(terms)) & 0xFFFF)
    t = fs.Table.create(tmp_path / "t", SCHEMA, partition_by=terms)
    everything = []
    for k in range(4):
        batch = _rows(rng, 150, start=k * 500)
        t.append(batch)
        everything += batch.to_pylist()
    pruned_somewhere = False
    for _ in range(30):
        flt = _random_filter(rng)
        got, read, total = _scan_both(t, flt)
        assert got == _python_filter(everything, flt), flt
        pruned_somewhere |= read < total
    assert pruned_somewhere or terms == ["void(id)"]


def test_identity_equality_reads_one_partition(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", SCHEMA, partition_by=["region"])
    t.append(_rows(random.Random(3), 400))
    _, read, total = _scan_both(t, ("region", "==", "eu"))
    assert read == 1 and total == 5
    _, read, _ = _scan_both(t, ("region", "is_null"))
    assert read == 1
    _, read, _ = _scan_both(t, ("region", "not in", ["eu", "us"]))
    assert read == 3


def test_update_spec_builder(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", SCHEMA)
    assert t.spec.is_unpartitioned and t.spec.spec_id == 0
    head = t.current_snapshot.snapshot_id
    spec = t.update_spec().add_field("bucket(16, id)").add_field("ts", "day", "d").commit()
    assert t.current_snapshot.operation == "partition-spec" and t.current_snapshot.snapshot_id == head + 1
    assert spec.describe(t.schema) == "bucket[16](id) AS id_bucket_16, day(ts) AS d"
    assert t.update_spec().commit() == spec and t.current_snapshot.snapshot_id == head + 1  # no-op: no snapshot
    spec2 = t.update_spec().remove_field("id_bucket_16").rename_field("d", "day").commit()
    assert spec2.spec_id == 2 and [f.field_id for f in spec2.fields] == [1001]
    spec3 = t.update_spec().add_field("bucket(16, id)").commit()  # the same (source, transform) keeps its id
    assert [f.field_id for f in spec3.fields] == [1001, 1000]
    with pytest.raises(fs.PartitionSpecError, match="already has bucket"):
        t.update_spec().add_field("bucket(16, id)")
    with pytest.raises(fs.PartitionSpecError, match="redundant"):
        t.update_spec().add_field("hours(ts)").commit()
    with pytest.raises(fs.PartitionSpecError, match="no field"):
        t.update_spec().remove_field("nope")
    with pytest.raises(fs.PartitionSpecError, match="not defined for"):
        t.update_spec().add_field("hours(region)")
    with pytest.raises(fs.PartitionSpecError, match="name of column"):
        t.update_spec().add_field("bucket(2, id)", name="region").commit()
    with pytest.raises(fs.PartitionSpecError, match="no_such"):
        t.update_spec().add_field("days(no_such)")
    assert len(t.specs()) == 4  # refusals recorded nothing


@pytest.mark.parametrize("bad", ["weeks(ts)", "bucket(id)", "bucket(x, id)", "truncate(0, id)", "days(ts, 3)",
                                 "hours(amount)", "bucket(4, ts) junk", ""])
def test_bad_partition_terms_are_refused_at_create(tmp_path: Path, bad: str) -> None:
    with pytest.raises(fs.PartitionSpecError):
        fs.Table.create(tmp_path / "t", SCHEMA, partition_by=[bad])
    assert not (tmp_path / "t" / "fieldshift.db").exists()


def test_schema_changes_of_partition_sources(tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int32()), ("d", pa.date32()), ("k", pa.int32()), ("s", pa.string())])
    t = fs.Table.create(tmp_path / "t", schema, partition_by=["bucket(4, id)", "days(d)", "truncate(10, k)"])
    t.append({"id": [1, 2, 3], "d": [dt.date(2024, 1, 1)] * 3, "k": [5, 15, 25], "s": ["a", "b", "c"]})
    t.update_schema().rename_column("id", "key").commit()  # by id: the field stays
    assert t.spec.describe(t.schema).startswith("bucket[4](key) AS id_bucket_4")
    t.update_schema().update_column("key", pa.int64()).update_column("k", pa.int64()).commit()  # same keys
    t.update_schema().update_column("d", pa.timestamp("us")).commit()  # day(date) == day(midnight)
    with pytest.raises(fs.PartitionKeyChangeError, match=r"Modify/Drop.*DROP PARTITION FIELD id_bucket_4"):
        t.update_schema().drop_column("key").commit()
    with pytest.raises(fs.PartitionKeyChangeError, match=r"'k_trunc_10' .truncate\[10\]"):
        t.update_schema(policy=fs.CastPolicy.onehouse()).update_column("k", pa.string()).commit()
    t.append({"key": [9], "d": [dt.datetime(2024, 1, 1, 5)], "k": [7], "s": ["x"]})
    _, read, total = _scan_both(t, ("key", "==", 2))
    assert read == 1 and total == 4
    _, read, _ = _scan_both(t, [("d", ">=", dt.datetime(2024, 1, 2))])
    assert read == 0
    t.update_spec().remove_field("id_bucket_4").commit()
    t.update_schema().drop_column("key").commit()  # no longer a key of the current spec
    assert sorted(t.to_arrow().column("k").to_pylist()) == [5, 7, 15, 25]


def test_identity_on_a_date_refuses_date_to_timestamp(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("d", pa.date32())]), partition_by=["d"])
    with pytest.raises(fs.PartitionKeyChangeError, match="from date32"):
        t.update_schema().update_column("d", pa.timestamp("us")).commit()


def test_on_write_evolution_cannot_retype_a_partition_source(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int32())]), partition_by=["truncate(10, id)"])
    t.append({"id": pa.array([1], pa.int32())})
    with pytest.raises(fs.PartitionKeyChangeError):
        t.append({"id": pa.array([1.5], pa.float64())})
    t.append({"id": pa.array([2**40], pa.int64())})  # int -> long keeps every key: allowed on write
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 2**40]


def test_identifier_fields_bound_the_spec(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("ts", pa.timestamp("us"))])
    with pytest.raises(fs.PartitionSpecError, match="identifier fields"):
        fs.Table.create(tmp_path / "a", schema, identifier_fields=["id"], partition_by=["days(ts)"])
    t = fs.Table.create(tmp_path / "b", schema, identifier_fields=["id"], partition_by=["bucket(8, id)"])
    with pytest.raises(fs.PartitionSpecError, match="identifier fields"):
        t.update_spec().add_field("days(ts)").commit()


def test_nested_source_column(tmp_path: Path) -> None:
    schema = pa.schema([("s", pa.struct([("region", pa.string()), ("n", pa.int32())]))])
    t = fs.Table.create(tmp_path / "t", schema, partition_by=["s.region"])
    t.append({"s": [{"region": "eu", "n": 1}, {"region": "us", "n": 2}, None, {"region": None, "n": 3}]})
    assert sorted(f.partition for f in t.scan().files() if f.partition != (None,)) == [("eu",), ("us",)]
    got, read, total = _scan_both(t, ("s.region", "==", "us"))
    assert got == [{"s": {"region": "us", "n": 2}}] and read == 1 and total == 3


def test_vacuum_reaches_partition_directories(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", SCHEMA, partition_by=["region"])
    t.append(_rows(random.Random(5), 50))
    live = {f.path for f in t.scan().files()}
    orphan = t.location / "data" / "region=eu" / f"{'a' * 32}.parquet"
    orphan.write_bytes(b"left by a crashed writer")
    foreign = t.location / "data" / "region=eu" / "notes.txt"
    foreign.write_text("not ours")
    old = time.time() - 7200
    os.utime(orphan, (old, old))
    assert t.vacuum() == [f"data/region=eu/{'a' * 32}.parquet"]
    assert foreign.exists() and {f.path for f in t.scan().files()} == live
    assert all((t.location / p).exists() for p in live)


def test_a_format_1_catalog_upgrades_to_spec_0(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", SCHEMA)
    t.append(_rows(random.Random(6), 20))
    conn = sqlite3.connect(t.catalog.path)
    conn.execute("DROP TABLE fs_partition_spec")
    conn.execute("ALTER TABLE fs_data_file DROP COLUMN spec_id")
    conn.execute("ALTER TABLE fs_data_file DROP COLUMN partition_values")
    conn.execute("UPDATE fs_metadata SET value = '1' WHERE key = 'format_version'")
    conn.commit()
    conn.close()
    t2 = fs.Table.open(tmp_path / "t")
    assert t2.spec.is_unpartitioned and [f.spec_id for f in t2.scan().files()] == [0]
    t2.update_spec().add_field("region").commit()
    t2.append(_rows(random.Random(7), 20))
    assert t2.scan().count() == 40 and t2.scan(filter=("region", "==", "eu")).count() > 0


def test_spec_commit_conflicts_with_a_concurrent_spec_change(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", SCHEMA)
    a = t.update_spec().add_field("region")
    t.update_spec().add_field("days(ts)").commit()
    with pytest.raises(fs.CommitConflictError):
        a.commit()
    assert [len(s.fields) for s in t.specs()] == [0, 1]


def test_an_identical_spec_reuses_its_id(tmp_path: Path) -> None:
    """Iceberg's rule: day -> hour -> day makes spec 0 current again instead of a spec 2 equal to it."""
    t = fs.Table.create(tmp_path / "t", SCHEMA, partition_by=["days(ts)"])
    rows = _rows(random.Random(10), 60)
    t.append(rows.slice(0, 20))
    assert t.update_spec().replace_field("ts_day", "hours(ts)").commit().spec_id == 1
    t.append(rows.slice(20, 20))
    again = t.update_spec().replace_field("ts_hour", "days(ts)").commit()
    assert (again.spec_id, t.spec.spec_id) == (0, 0)
    assert sorted(s.spec_id for s in t.specs()) == [0, 1]
    before = {f.path for f in t.scan().live_files()}
    t.append(rows.slice(40, 20))
    assert {f.spec_id for f in t.scan().live_files() if f.path not in before} == {0}
    assert {f.spec_id for f in t.scan().live_files()} == {0, 1}
    flt = ("ts", "<", BASE)
    assert sorted(t.scan(filter=flt).to_arrow().to_pylist(), key=repr) == _python_filter(rows.to_pylist(), [flt])
    assert t.update_spec().replace_field("ts_day", "hours(ts)").commit().spec_id == 1
    assert t.update_spec().remove_field("ts_hour").commit().spec_id == 2  # never seen: a new id
    assert t.update_spec().add_field("days(ts)").commit().spec_id == 0


def test_time_travel_prunes_with_the_files_own_specs(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", SCHEMA, partition_by=["days(ts)"])
    first = _rows(random.Random(8), 100)
    snap = t.append(first).snapshot_id
    t.update_spec().replace_field("ts_day", "hours(ts)").commit()
    t.append(_rows(random.Random(9), 100))
    flt = ("ts", "<", BASE)
    old = t.scan(filter=flt, snapshot_id=snap)
    assert sorted(old.to_arrow().to_pylist(), key=repr) == _python_filter(first.to_pylist(), [flt])
    assert all(f.spec_id == 0 for f in old.files())


def test_transform_values_match_file_partitions_for_unit_changes() -> None:
    arr = pa.array([BASE], pa.timestamp("ms"))
    for kind in ("identity", "hour", "day", "month", "year", "bucket"):
        tr = Transform(kind, 7 if kind == "bucket" else None)
        assert tr.values(arr) == tr.values(arr.cast(pa.timestamp("ns")))


def test_a_failure_midway_through_the_partitions_leaves_no_file(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("region", pa.string()), ("ts", pa.timestamp("s"))]),
                        partition_by=["region"])
    far = 2**62  # seconds beyond what Parquet can store: refused when that partition's file is written
    bad = pa.table({"region": ["a", "a", "b"], "ts": pa.array([0, 1, far], pa.timestamp("s"))})
    with pytest.raises(fs.SchemaEvolutionError, match="Parquet cannot store"):
        t.append(bad)
    assert len(t.history()) == 1 and not list((t.location / "data").rglob("*.parquet"))
    t.append(bad.slice(0, 2))
    assert [f.partition for f in t.scan().files()] == [("a",)]


def test_a_killed_partitioned_writer_loses_only_its_uncommitted_batch(tmp_path: Path) -> None:
    """A real writer process (tests/table/writer_process.py) appending to a partitioned table, killed."""
    schema = pa.schema([("writer", pa.int32()), ("batch", pa.int32()), ("value", pa.int64())])
    t = fs.Table.create(tmp_path / "t", schema, partition_by=["batch", "bucket(4, value)"])
    writer = Path(__file__).parents[1] / "writer_process.py"
    for seed in (1, 2):
        proc = subprocess.Popen([sys.executable, str(writer), str(t.location), "--writer", str(seed), "--batches",
                                 "40"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        first = proc.stdout.readline()  # one commit surely landed; kill somewhere in the following ones
        time.sleep(random.Random(seed).uniform(0.0, 0.8))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        out = first + out
        landed = {(seed, int(line.split()[2])) for line in out.splitlines() if line.startswith("appended")}
        rows = fs.Table.open(t.location).scan().to_arrow()
        per_batch = Counter(zip(rows.column("writer").to_pylist(), rows.column("batch").to_pylist(), strict=True))
        assert all(n == 500 for n in per_batch.values()) and landed <= {k for k in per_batch if k[0] == seed}
        assert landed, first
    live = {f.path for f in t.scan().live_files()}
    assert all(len(f.partition) == 2 for f in t.scan().live_files())
    removed = t.vacuum(older_than=0)
    assert not set(removed) & live and all(r.startswith("data/batch=") for r in removed)
    assert t.scan().count() == rows.num_rows and all((t.location / p).exists() for p in live)


def test_stream_appends_and_captures_split_by_the_spec(tmp_path: Path) -> None:
    from fieldshift.table.catalog.stream_marks import StreamMark
    from fieldshift.table.streams.stream_commit import append_once

    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int32()), ("region", pa.string())]),
                        partition_by=["region", "truncate(10, id)"])
    batch = pa.table({"id": pa.array([1, 15, 3], pa.int32()), "region": ["eu", "eu", "us"]})
    assert append_once(t, batch, StreamMark("s", 0)) is not None
    land = tmp_path / "land"
    land.mkdir()
    pq.write_table(pa.table({"id": pa.array([22], pa.int32()), "region": ["ap"]}), land / "a.parquet")
    assert fs.capture(land, t).files == 1
    assert sorted(f.partition for f in t.scan().files()) == [("ap", 20), ("eu", 0), ("eu", 10), ("us", 0)]
    pq.write_table(pa.table({"id": [1.5], "region": ["eu"]}), land / "b.parquet")  # double into a truncated int
    with pytest.raises(fs.CaptureFileError, match=r"b\.parquet.*partition field 'id_trunc_10'"):
        fs.capture(land, t)
    with pytest.raises(fs.PartitionKeyChangeError):
        append_once(t, pa.table({"id": [2.5], "region": ["eu"]}), StreamMark("s", 1))
    assert t.scan().count() == 4 and t.scan(filter=("region", "==", "ap")).files()[0].partition == ("ap", 20)


EDGE_TYPES = {"int": pa.int32(), "long": pa.int64()}


@pytest.mark.parametrize("kind", ["int", "long"])
@pytest.mark.parametrize("width", [3, 10, 1000])
def test_truncate_near_the_integer_minimum_never_prunes_wrongly(tmp_path: Path, kind: str, width: int) -> None:
    """Issue 27: truncate of a value near the type's minimum floors below it; recorded wrapped (a huge
    positive number), ``x < 0`` pruned that file. Pruned == unpruned == Python, values as PyIceberg's."""
    typ = EDGE_TYPES[kind]
    lo, hi = int_range(typ)
    t = fs.Table.create(tmp_path / "t", pa.schema([("x", typ)]), partition_by=[f"truncate({width}, x)"])
    everything = []
    for values in ([lo], [lo + 1, lo + width - 1], [lo + width, -1], [0, 5, hi], [None, lo + 2]):
        t.append(pa.table({"x": pa.array(values, typ)}))
        everything += [{"x": v} for v in values]
    recorded = sorted(f.partition[0] for f in t.scan().files() if f.partition[0] is not None)
    assert recorded[0] == lo - lo % width < lo  # the specification's value, below the type's minimum
    filters = [("x", "<", 0), ("x", "<=", lo), ("x", "==", lo), ("x", "<", lo + width), ("x", ">=", lo),
               ("x", "in", [lo, 5]), ("x", ">", lo + 1), ("x", "!=", lo), ("x", "<", -(2**64)), ("x", ">", hi - 1)]
    for flt in filters:
        got = _scan_both(t, flt)[0]
        assert got == _python_filter(everything, [flt]), flt
    assert _scan_both(t, ("x", ">=", 0))[1] < len(t.scan().files())  # still prunes


def test_a_wrapped_truncate_value_of_an_older_catalog_keeps_its_file(tmp_path: Path) -> None:
    """Catalogs written before truncate was exact hold the wrapped value; such a file is never pruned."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("x", pa.int64())]), partition_by=["truncate(10, x)"])
    t.append(pa.table({"x": pa.array([-(2**63)], pa.int64())}))
    t.append(pa.table({"x": pa.array([5], pa.int64())}))
    conn = sqlite3.connect(t.catalog.path)
    conn.execute("UPDATE fs_data_file SET partition_values = ? WHERE partition_values = ?",
                 (f"[{2**63 - 2}]", f"[{-(2**63) - 2}]"))  # what Java's wrapping arithmetic gives
    assert conn.total_changes == 1
    conn.commit()
    conn.close()
    t = fs.Table.open(tmp_path / "t")
    assert sorted(f.partition for f in t.scan().files()) == [(0,), (2**63 - 2,)]
    assert _scan_both(t, ("x", "<", 0))[0] == [{"x": -(2**63)}]
    assert _scan_both(t, ("x", "==", -(2**63)))[0] == [{"x": -(2**63)}]
    assert _scan_both(t, ("x", ">", 2**62))[0] == []


def test_truncate_of_a_decimal_accepts_every_value_of_its_column(tmp_path: Path) -> None:
    """Issue 27: truncate(100, x) on decimal(9,2) raised a raw ArrowInvalid on -9999999.99 (its floor,
    -10000000.00, needs precision 10). Every value the column allows is accepted and pruned right."""
    typ = pa.decimal128(9, 2)
    t = fs.Table.create(tmp_path / "t", pa.schema([("x", typ)]), partition_by=["truncate(100, x)"])
    D = decimal.Decimal
    values = [D("-9999999.99"), D("9999999.99"), D("-9999999.00"), D("0.00"), D("-0.01"), None]
    for v in values:
        t.append(pa.table({"x": pa.array([v], typ)}))
    assert sorted(f.partition[0] for f in t.scan().files() if f.partition[0] is not None)[0] == D("-10000000.00")
    reopened = fs.Table.open(tmp_path / "t")
    assert sorted(reopened.to_arrow().column("x").to_pylist(), key=repr) == sorted(values, key=repr)
    everything = [{"x": v} for v in values]
    for flt in [("x", "<", D("-9999999")), ("x", "==", D("-9999999.99")), ("x", ">=", D("-9999999.50")),
                ("x", "<", 0), ("x", "in", [D("-9999999.99"), D("9999999.99")])]:
        got, _, _ = _scan_both(reopened, flt)
        assert got == _python_filter(everything, [flt]), flt


@pytest.mark.parametrize(("typ", "width"), [(pa.int64(), 10), (pa.int32(), 10), (pa.int64(), 1000), (pa.int32(), 7)])
def test_wrapped_truncate_values_of_java_written_tables_prune_nothing(typ: pa.DataType, width: int) -> None:
    """Iceberg tables written by Java hold truncate's floor of a value near the minimum wrapped to a huge
    positive number; neither a file with it nor a manifest whose partition summary may include it is
    pruned (the summary's bound may be a true value with the wrapped one between)."""
    from fieldshift.table.expressions.filters import bind_filter, parse_filter
    from fieldshift.table.partitions.partition_prune import project, project_range

    lo_type, hi_type = int_range(typ)
    bits = 64 if typ == pa.int64() else 32
    exact = lo_type - lo_type % width
    wrapped = exact + 2**bits  # Java's int/long arithmetic
    assert wrapped > hi_type - width and wrapped % width != 0
    top = hi_type - hi_type % width  # the largest true value
    schema = fs.Schema.from_arrow(pa.schema([pa.field("x", typ, metadata={"PARQUET:field_id": "1"})]))
    transform = Transform("truncate", width)
    for flt in [("x", "<", 0), ("x", "==", lo_type), ("x", "<=", lo_type + 1), ("x", "in", [lo_type, 3])]:
        p = bind_filter(parse_filter(flt), schema)
        assert project(transform, p)(wrapped), flt
        assert not project(transform, p)(top) or flt[1] != "<", flt  # true values still prune
        ranged = project_range(transform, p)
        assert ranged(wrapped, wrapped, False) and ranged(top - width, top, False), flt
        assert ranged(wrapped, top, False) and ranged(top, wrapped, False), flt
    p = bind_filter(parse_filter(("x", "<", 0)), schema)
    assert not project_range(transform, p)(width, 50 * width, False)  # an ordinary group still prunes


def test_kept_projections_equal_projections_made_anew_and_never_mix_types() -> None:
    """Projections are kept per process by (transform, operator, comparison type, literal keys): the kept test
    answers as one made anew on every value, a second scan's equal leaf gets the kept one, and leaves whose
    keys are equal but whose types differ (an int32 19724 and the date 19724 days after 1970) get their own."""
    from fieldshift.table.expressions.filters import bind_filter, parse_filter
    from fieldshift.table.partitions.partition_prune import clear_projections, project, project_range, project_strict

    arrow = pa.schema([pa.field("i", pa.int32(), metadata={"PARQUET:field_id": "1"}),
                       pa.field("d", pa.date32(), metadata={"PARQUET:field_id": "2"}),
                       pa.field("ts", pa.timestamp("us"), metadata={"PARQUET:field_id": "3"}),
                       pa.field("s", pa.string(), metadata={"PARQUET:field_id": "4"})])
    schema = fs.Schema.from_arrow(arrow)
    day = dt.date(2024, 1, 2)
    cases = [
        (Transform("identity"), ("i", "==", 19724), [19724, 19723, None, day]),
        (Transform("identity"), ("d", "==", day), [day, 19724, dt.date(2024, 1, 3), None]),
        (Transform("day"), ("ts", ">=", dt.datetime(2024, 1, 2, 5)), [19723, 19724, 19725, None]),
        (Transform("day"), ("ts", "<", dt.datetime(2024, 1, 2)), [19723, 19724, None]),
        (Transform("month"), ("d", "<=", day), [647, 648, 649, None]),
        (Transform("bucket", 8), ("i", "in", [1, 2, 3]), [*range(8), None]),
        (Transform("truncate", 10), ("i", "not in", [10, 11]), [0, 10, 20, None, 15]),
        (Transform("truncate", 2), ("s", "starts_with", "abc"), ["ab", "ac", None, "abc"]),
        (Transform("identity"), ("s", "not_null"), ["x", None]),
    ]
    for transform, flt, values in cases:
        clear_projections()
        fresh = [f(transform, bind_filter(parse_filter(flt), schema)) for f in (project, project_strict)]
        ranged = project_range(transform, bind_filter(parse_filter(flt), schema))
        again = bind_filter(parse_filter(flt), schema)  # another scan's equal leaf, bound anew
        kept = [f(transform, again) for f in (project, project_strict)]
        assert kept == fresh and project_range(transform, again) is ranged, flt  # the same objects
        clear_projections()
        made = [f(transform, again) for f in (project, project_strict)]
        for a, b in zip(kept, made, strict=True):
            assert (a is None) == (b is None), flt
            if a is not None:
                assert [a(v) for v in values] == [b(v) for v in values], flt
    clear_projections()
    as_int = project(Transform("identity"), bind_filter(parse_filter(("i", "==", 19724)), schema))
    as_date = project(Transform("identity"), bind_filter(parse_filter(("d", "==", day)), schema))
    assert as_int is not as_date and as_int(19724) and not as_int(day) and as_date(day) and not as_date(19724)


def test_a_table_scan_binds_its_filter_once(tmp_path: Path) -> None:
    """The scan's pipeline takes the filter the scan bound (binding it again was a planned scan's dearest step
    after the catalog)."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("ts", pa.timestamp("us"))]), partition_by=["days(ts)"])
    t.append(pa.table({"ts": pa.array([dt.datetime(2024, 1, d) for d in (1, 2, 3)], pa.timestamp("us"))}))
    scan = t.scan(filter=[("ts", ">=", dt.datetime(2024, 1, 2)), ("ts", "<", dt.datetime(2024, 1, 3))])
    assert scan.pipeline().filter.bound is scan.bound
    assert len(scan.files()) == 1 and scan.to_arrow().num_rows == 1


def test_a_scan_plans_every_schema_version_of_the_snapshot_from_the_kept_distinct_ids(tmp_path: Path) -> None:
    """The snapshot's entries keep their distinct schema ids (a plan took ``np.unique`` of every file's id per
    scan); a filter that prunes the old version's files still plans it, so an unreadable file fails any scan."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("ts", pa.timestamp("us")), ("v", pa.int32())]),
                        partition_by=["days(ts)"])
    t.append(pa.table({"ts": pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("us")), "v": pa.array([1], pa.int32())}))
    t.update_schema().update_column("v", pa.int64()).commit()
    t.append(pa.table({"ts": pa.array([dt.datetime(2024, 1, 2)], pa.timestamp("us")), "v": pa.array([2], pa.int64())}))
    scan = t.scan(filter=[("ts", ">=", dt.datetime(2024, 1, 2))])
    entries = scan.pipeline().content.files
    assert entries.distinct_schema_ids == sorted({f.schema_id for f in t.scan().files()}) and \
        len(entries.distinct_schema_ids) == 2
    assert [r["v"] for r in scan.to_arrow().to_pylist()] == [2] and len(scan.files()) == 1
    assert sorted(scan.pipeline()._schema_plans) == entries.distinct_schema_ids  # both versions planned
