"""Delta tables read through ``fs.open_table`` equal the peers' reads at every version.

Tables written here by deltalake (appends with ``schema_mode="merge"``, deletes, updates, merges, a
partition overwrite, a checkpoint), and upstream test tables (``data/delta``, see its NOTICE) for what
deltalake cannot write: column mapping by name and id, a renamed partition column, type widening,
deletion vectors inline and in files, multi-part and V2 checkpoints with sidecars, partition values of
every type. Peers: delta-rs' ``QueryBuilder`` and DuckDB's ``delta_scan`` (``duckdb-extension-delta``).
Where a peer reads wrong by the Delta protocol, a test names the case and asserts the protocol's answer.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pyarrow as pa
import pytest
from delta_peers import delta_rs_read, duckdb_read, fieldshift_read, plain_rows, write_versions

import fieldshift as fs

pytestmark = pytest.mark.conformance

DATA = Path(__file__).parent / "data" / "delta"
# Tables whose every version both peers read (delta-rs refuses typeWidening-preview, tested below).
BOTH = ["dv-with-columnmapping", "table-with-columnmapping-mode-name", "multi-part-checkpoint",
        "data-reader-partition-values", "time-travel-schema-changes-b", "log-replay-dv-key-cases",
        "kernel-timestamp-partition-col-ISO8601", "table_with_partitioning_mapping", "table-with-dv-small",
        "with-short-dv", "v2-parquet-sidecars-struct-stats-only", "v2-json-sidecars-struct-stats-only",
        "cdf-column-mapping-name-mode", "table-with-icebegCompatV2Enabled",
        "cdf-column-mapping-id-mode"]


def _versions(path: Path) -> list[int]:
    with fs.open_table(str(path), format="delta") as t:
        return [s.snapshot_id for s in t.history()]


def _assert_same(ours: pa.Table, theirs: pa.Table, what: str) -> None:
    assert ours.column_names == theirs.column_names, what
    assert plain_rows(ours) == plain_rows(theirs), what


@pytest.mark.parametrize("name", BOTH)
def test_upstream_table_equals_both_peers_at_every_version(name: str) -> None:
    path = DATA / name
    versions = _versions(path)
    assert versions
    for v in versions:
        ours = fieldshift_read(path, v)
        _assert_same(ours, delta_rs_read(path, v), f"{name} at version {v} vs delta-rs")
        _assert_same(ours, duckdb_read(path, v), f"{name} at version {v} vs DuckDB")


def test_deltalake_written_table_equals_both_peers_at_every_version(tmp_path: Path) -> None:
    latest = write_versions(tmp_path / "t")
    assert _versions(tmp_path / "t") == list(range(latest + 1))
    for v in range(latest + 1):
        ours = fieldshift_read(tmp_path / "t", v)
        _assert_same(ours, delta_rs_read(tmp_path / "t", v), f"version {v} vs delta-rs")
        _assert_same(ours, duckdb_read(tmp_path / "t", v), f"version {v} vs DuckDB")
    from deltalake import DeltaTable

    with fs.open_table(str(tmp_path / "t")) as t:  # detected by its _delta_log
        assert t.schema.names == [f.name for f in DeltaTable(str(tmp_path / "t")).schema().fields]
        assert sorted(t.schema.names) == ["id", "name", "part", "score", "ts"]
        assert len(t.schemas()) == 3  # created, score merged in, ts merged in
        filtered = t.scan(filter=[("part", "==", "q")]).to_arrow()
        assert filtered["id"].to_pylist() == [9]
        for snap in t.history():  # as_of a version's commit time: the version delta-rs loads at that time
            peer = DeltaTable(str(tmp_path / "t"))
            peer.load_as_version(snap.timestamp)
            assert t.resolve(as_of=snap.timestamp) == peer.version() == snap.snapshot_id


@pytest.mark.parametrize("name", ["type-widening", "type-widening-nested"])
def test_type_widening_equals_duckdb_and_the_protocol(name: str) -> None:
    """delta-rs refuses the ``typeWidening-preview`` reader feature these Spark tables use; DuckDB reads
    them, and fieldshift must read the files written before the widening in the wider type."""
    path = DATA / name
    for v in _versions(path):
        _assert_same(fieldshift_read(path, v), duckdb_read(path, v), f"{name} at version {v} vs DuckDB")
    with pytest.raises(Exception, match="TypeWideningPreview"):
        delta_rs_read(path, 2)


def test_type_widening_values_by_the_protocol() -> None:
    t = fieldshift_read(DATA / "type-widening")
    old = {r["int_long"]: r for r in t.to_pylist()}[2]  # the row written before every column widened
    assert t.schema.field("byte_long").type == pa.int64()
    assert t.schema.field("date_timestamp_ntz").type == pa.timestamp("us")
    assert old["byte_long"] == 1 and old["float_double"] == pytest.approx(3.4, rel=1e-6)
    assert old["decimal_decimal_greater_scale"] == decimal.Decimal("67.89000")
    assert old["long_decimal"] == decimal.Decimal("4.0")
    assert old["date_timestamp_ntz"] == dt.datetime(2024, 9, 9)


def test_int96_timestamps_past_2262_delta_rs_overflows() -> None:
    """Spark wrote ``BIG_DATE`` as INT96; delta-rs reads it through nanoseconds and wraps past 2262
    (9999-12-30 comes back as 1816-03-28). The protocol's timestamp is microseconds, which hold it:
    fieldshift and DuckDB read 9999-12-30."""
    path = DATA / "table_with_edge_timestamps"
    ours = fieldshift_read(path)
    big = sorted(ours["BIG_DATE"].to_pylist())
    assert big == [dt.datetime(9999, 12, 30, tzinfo=dt.UTC), dt.datetime(9999, 12, 31, tzinfo=dt.UTC)]
    _assert_same(ours, duckdb_read(path), "table_with_edge_timestamps vs DuckDB")
    assert sorted(delta_rs_read(path)["BIG_DATE"].to_pylist())[0].year == 1816


def test_column_mapped_table_delta_rs_to_pyarrow_table_reads_nulls() -> None:
    """delta-rs' ``to_pyarrow_table`` reads a column-mapped table (reader version 2) as all-NULL columns:
    it looks for display names in files that hold physical names. The protocol resolves physical names;
    fieldshift reads the values (equal to delta-rs' own QueryBuilder)."""
    from deltalake import DeltaTable

    path = DATA / "cdf-column-mapping-name-mode"
    ours = fieldshift_read(path)
    assert sorted(ours["name"].to_pylist()) == ["Bob", "Charlie", "David"]
    assert sorted(ours["value"].to_pylist()) == [250.0, 300.0, 400.0]
    flat = DeltaTable(str(path)).to_pyarrow_table()
    assert flat["name"].null_count == flat.num_rows  # the peer's wrong answer, named


def test_renamed_partition_column_under_column_mapping() -> None:
    """``id`` became ``newid`` (physical name still ``id``): files before and after the rename read under
    the new name, partition values found by physical name."""
    path = DATA / "table_with_partitioning_mapping"
    with fs.open_table(str(path), format="delta") as t:
        assert t.schemas()[t.history()[3].schema_id].names == ["newid", "description"]
        assert t.schemas()[t.history()[1].schema_id].names == ["id", "description"]
        latest = t.to_arrow()
        assert sorted(latest["newid"].to_pylist()) == [1, 2]
        assert t.scan(filter=[("newid", "==", 2)]).to_arrow()["description"].to_pylist() == ["Additional data"]


def test_deletion_vectors_counted_without_reading_rows() -> None:
    path = DATA / "dv-with-columnmapping"
    with fs.open_table(str(path), format="delta") as t:
        for v in (0, 5, 15):
            assert t.scan(snapshot_id=v).count() == duckdb_read(path, v).num_rows


def test_pruning_by_statistics_and_partitions_never_drops_a_needed_file() -> None:
    """Every filter gives the same rows with and without file pruning, and pruning does skip files."""
    path = DATA / "dv-with-columnmapping"
    with fs.open_table(str(path), format="delta") as t:
        filters = [[("part", "==", 3)], [("col1", ">", 40)], [("col2", "==", "foo1")], [("col1", "<", 0)],
                   [("part", "in", [1, 7]), ("col1", ">=", 20)]]
        for flt in filters:
            scan = t.scan(filter=flt)
            unpruned = t.scan(filter=flt)
            unpruned.prune = False
            assert plain_rows(scan.to_arrow()) == plain_rows(unpruned.to_arrow()), flt
            assert len(scan.files()) < len(unpruned.files()), flt


@pytest.mark.parametrize("seed", range(3))
def test_pruning_on_deltalake_statistics_never_drops_a_needed_file(tmp_path: Path, seed: int) -> None:
    """Random filters over files deltalake wrote (its own statistics: microsecond timestamps, long strings,
    NaN, nulls): the pruned scan equals the unpruned one, and pruning does skip files."""
    import numpy as np
    from deltalake import write_deltalake

    rng = np.random.default_rng(seed)
    base = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    for i in range(6):
        n = 50
        ints = rng.integers(-100, 100, n)
        floats = rng.normal(0, 10, n)
        floats[rng.random(n) < 0.1] = np.nan
        words = ["w" * int(k) + str(int(k)) for k in rng.integers(0, 45, n)]
        stamps = [base + dt.timedelta(microseconds=int(us)) for us in rng.integers(0, 5_000_000, n)]
        table = pa.table({"i": pa.array(ints, pa.int64(), mask=rng.random(n) < 0.1), "f": floats,
                          "s": pa.array(words), "ts": pa.array(stamps, pa.timestamp("us", tz="UTC")),
                          "p": pa.array([f"k{i % 3}"] * n)})
        write_deltalake(str(tmp_path / "t"), table, mode="append", partition_by=["p"])
    conn_rows = duckdb_read(tmp_path / "t")
    stamps_all = sorted(conn_rows["ts"].to_pylist())
    words_all = sorted(conn_rows["s"].to_pylist())
    read = skipped = 0
    with fs.open_table(str(tmp_path / "t"), format="delta") as t:
        for _ in range(25):
            column = rng.choice(["i", "f", "s", "ts", "p"])
            op = rng.choice(["==", "<", "<=", ">", ">=", "!=", "is_null", "not_null"])
            if column == "i":
                value: object = int(rng.integers(-110, 110))
            elif column == "f":
                value = float(rng.normal(0, 12))
            elif column == "s":
                value = words_all[int(rng.integers(len(words_all)))]
            elif column == "ts":
                value = stamps_all[int(rng.integers(len(stamps_all)))]
            else:
                value = f"k{int(rng.integers(4))}"
            flt = [(str(column), str(op))] if op in ("is_null", "not_null") else [(str(column), str(op), value)]
            pruned = t.scan(filter=flt)
            full = t.scan(filter=flt)
            full.prune = False
            assert plain_rows(pruned.to_arrow()) == plain_rows(full.to_arrow()), flt
            read, skipped = read + len(pruned.files()), skipped + len(full.files()) - len(pruned.files())
    assert skipped > 0 and read > 0


@pytest.mark.parametrize("name", ["multi-part-checkpoint", "v2-parquet-sidecars-struct-stats-only",
                                  "v2-json-sidecars-struct-stats-only", "dv-with-columnmapping"])
def test_an_upstream_table_whose_log_starts_at_its_checkpoint(tmp_path: Path, name: str) -> None:
    """The commits up to the checkpoint ``_last_checkpoint`` names removed (as log cleanup leaves a table):
    every version left reads from the checkpoint (multi-part, V2 with sidecars, classic) equal to delta-rs'
    read of the same pruned log and to the full log's read; the versions before it are a named error."""
    import json
    import shutil

    from fieldshift.errors import SnapshotNotFoundError

    path = tmp_path / name
    shutil.copytree(DATA / name, path)
    log = path / "_delta_log"
    start = json.loads((log / "_last_checkpoint").read_text())["version"]
    for v in range(start + 1):
        (log / f"{v:020d}.json").unlink(missing_ok=True)
    versions = _versions(path)
    assert versions[0] == start
    for v in versions:
        ours = fieldshift_read(path, v)
        _assert_same(ours, fieldshift_read(DATA / name, v), f"{name} at version {v} vs the full log")
        _assert_same(ours, delta_rs_read(path, v), f"{name} at version {v} vs delta-rs on the pruned log")
    with fs.open_table(str(path), format="delta") as t, pytest.raises(SnapshotNotFoundError, match="cleaned up"):
        t.scan(snapshot_id=start - 1)
