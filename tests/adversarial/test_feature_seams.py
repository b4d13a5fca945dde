"""Round 3 of adversarial testing: bugs found where features meet (keys x evolution, CLI x filters, ...).

Each test fails on the code before its fix and states the behaviour users rely on.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

import fieldshift as fs
from fieldshift.cli import app


def _keyed(tmp_path: Path, pre_type: pa.DataType, policy: str = "onehouse") -> fs.Table:
    schema = pa.schema([pa.field("k", pa.int64(), nullable=False), ("pre", pre_type), ("v", pa.string())])
    return fs.Table.create(tmp_path / "t", schema, identifier_fields=["k"], precombine="pre", policy=policy)


def test_precombine_cannot_change_to_a_type_that_reorders_its_values(tmp_path: Path) -> None:
    """Widening the precombine column long -> string (allowed by onehouse for other columns) made merges rank
    "9" above "10": the full merge (Spark-written or unresolved files, use_vectors=False) brought back the
    version the upsert of pre=10 had replaced, while the resolved read kept it; the two reads of one snapshot
    disagreed. A precombine type change that does not keep order is refused, and nothing changes."""
    t = _keyed(tmp_path, pa.int32())
    schema = t.schema.to_arrow()
    t.upsert(pa.table({"k": [1], "pre": pa.array([9], pa.int32()), "v": ["nine"]}, schema=schema))
    t.upsert(pa.table({"k": [1], "pre": pa.array([10], pa.int32()), "v": ["ten"]}, schema=schema))
    head = t.current_snapshot.snapshot_id
    with pytest.raises(fs.KeyDeclarationError, match="precombine column 'pre'"):
        t.update_schema().update_column("pre", pa.string()).commit()
    with pytest.raises(fs.KeyDeclarationError, match="precombine column 'pre'"):
        t.update_schema().update_column("pre", pa.float32()).commit()  # int32 -> float32 rounds above 2**24
    assert t.current_snapshot.snapshot_id == head
    full = t.scan()
    full.use_vectors = False
    assert full.to_arrow().to_pylist() == t.to_arrow().to_pylist() == [{"k": 1, "pre": 10, "v": "ten"}]
    t.update_schema().update_column("pre", pa.int64()).commit()  # order-keeping widenings stay allowed
    assert t.to_arrow().to_pylist() == [{"k": 1, "pre": 10, "v": "ten"}]


def test_precombine_widened_on_write_to_string_is_refused(tmp_path: Path) -> None:
    """The same through on-write evolution: under hudi() an upsert of a string precombine would widen it."""
    t = _keyed(tmp_path, pa.int64(), policy="hudi")
    t.upsert(pa.table({"k": [1], "pre": [10], "v": ["ten"]}))
    files = sorted((tmp_path / "t" / "data").rglob("*.parquet"))
    with pytest.raises(fs.KeyDeclarationError, match="precombine"):
        t.upsert(pa.table({"k": [1], "pre": ["9"], "v": ["nine"]}))
    assert t.schema.find("pre").type == pa.int64()
    assert t.to_arrow().to_pylist() == [{"k": 1, "pre": 10, "v": "ten"}]
    assert sorted((tmp_path / "t" / "data").rglob("*.parquet")) == files


def test_keyed_scan_of_no_columns_keeps_its_row_count(tmp_path: Path) -> None:
    """scan(columns=[]) is a count: on an unkeyed table to_arrow() has the rows' count, but a keyed table's
    to_arrow() said 0 rows (pa.concat_tables drops the length of tables without columns) while to_batches()
    and count() said 3."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    k = fs.Table.create(tmp_path / "k", schema, identifier_fields=["id"])
    k.upsert(pa.table({"id": [1, 2, 3], "v": ["a", "b", None]}, schema=schema))
    k.upsert(pa.table({"id": [1], "v": ["z"]}, schema=schema))
    for filt, n in [(None, 3), (("v", "not_null"), 2), (("v", "==", "z"), 1)]:
        assert k.scan(columns=[], filter=filt).to_arrow().num_rows == n
        assert sum(b.num_rows for b in k.scan(columns=[], filter=filt).to_batches()) == n
        assert k.scan(columns=[], filter=filt).count() == n


def test_cli_read_of_an_expired_snapshot_says_it_was_expired(tmp_path: Path) -> None:
    """`fieldshift read --as-of N` of an expired snapshot said "no snapshot N" with exit 2 (a wrong command
    line), while Table.scan raises SnapshotExpiredError: the table refused, so exit 1 and say why."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
    for i in range(3):
        t.append(pa.table({"id": [i]}))
    t.expire_snapshots(older_than=0, retain_last=1)
    result = CliRunner().invoke(app, ["read", str(t.location), "--as-of", "1", "--quiet"])
    assert result.exit_code == 1, result.output
    assert "expired" in result.output
    result = CliRunner().invoke(app, ["read", str(t.location), "--as-of", "99", "--quiet"])
    assert result.exit_code == 2 and "no snapshot 99" in result.output


@pytest.mark.parametrize("keys", [["a"], [1, "x"], [5, 2**70], [{"k": 1}, {"k": "z"}]], ids=repr)
def test_keys_to_delete_that_do_not_fit_name_the_value_and_delete_nothing(tmp_path: Path, keys: list) -> None:
    """delete() with keys of the wrong type said "value None (row 0)", or raised pyarrow's own error for
    mixed plain values; it must name what does not fit, be a fieldshift error, and delete nothing."""
    t = _keyed(tmp_path, pa.int64())
    t.upsert({"k": [1, 2], "pre": [1, 1], "v": ["a", "b"]})
    before = t.current_snapshot.snapshot_id
    bad = next(k for k in ([r["k"] for r in keys] if isinstance(keys[0], dict) else keys) if k not in (1, 5))
    with pytest.raises(fs.CastValueError, match=f"value {bad!r} .*nothing was deleted"):
        t.delete(keys)
    assert t.current_snapshot.snapshot_id == before
    assert sorted(t.to_arrow().column("k").to_pylist()) == [1, 2]


def test_an_overwrite_with_a_repeated_key_says_overwrite(tmp_path: Path) -> None:
    t = _keyed(tmp_path, pa.int64())
    t.upsert({"k": [1], "pre": [1], "v": ["a"]})
    with pytest.raises(fs.DuplicateKeyError, match="the rows to overwrite hold key"):
        t.overwrite({"k": [2, 2], "pre": [1, 2], "v": ["x", "y"]})
    assert t.to_arrow().column("v").to_pylist() == ["a"]


def test_an_upsert_whose_head_is_expired_meanwhile_retries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two keyed writers: one expires snapshots (older_than=0) while the other looks its keys up in the head
    it read; that snapshot is gone by the lookup. The upsert must retry on the new head, not fail with
    SnapshotExpiredError (the stateful two-writer test hit this now and then)."""
    import fieldshift.table.write.write_commit as write_commit

    t = _keyed(tmp_path, pa.int64())
    t.upsert({"k": [1, 2], "pre": [1, 1], "v": ["a", "b"]})
    lookup = write_commit.plan_vectors

    def racing(*args: object, **kwargs: object) -> object:
        monkeypatch.setattr(write_commit, "plan_vectors", lookup)  # one race, then look up as usual
        other = fs.Table.open(t.location)
        other.upsert({"k": [3], "pre": [1], "v": ["c"]})
        other.expire_snapshots(older_than=0, retain_last=1)
        return lookup(*args, **kwargs)

    monkeypatch.setattr(write_commit, "plan_vectors", racing)
    t.upsert({"k": [1], "pre": [2], "v": ["a2"]})
    rows = sorted(fs.Table.open(t.location).to_arrow().to_pylist(), key=lambda r: r["k"])
    assert [(r["k"], r["v"]) for r in rows] == [(1, "a2"), (2, "b"), (3, "c")]
