"""Paimon tables written by pypaimon 2.1.0, read through ``fs.open_table`` and compared with pypaimon's own
read at every snapshot.

pypaimon runs in its own virtualenv (``paimon_peers``): it creates the tables, writes the rows, evolves
the schema (add, rename, drop, retype, drop-then-re-add of a name) between writes, and reads each
snapshot back; fieldshift reads the same files from the warehouse. Append tables and primary-key tables
(several commits, so several sorted runs per bucket; updates, deletes through ``rowkind.field``, a
``sequence.field``, partial updates). What fieldshift refuses is asserted as a named error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from paimon_peers import PaimonPeer

import fieldshift as fs
from fieldshift.errors import UnsupportedFormatFeatureError

pytestmark = pytest.mark.conformance


def _rows(table: pa.Table, keys: list[str]) -> list[dict[str, Any]]:
    return table.sort_by([(k, "ascending") for k in keys]).to_pylist()


def assert_every_snapshot(peer: PaimonPeer, warehouse: Path, name: str, keys: list[str]) -> list[int]:
    """fieldshift's read of each snapshot equals pypaimon's (rows, column names and order); the ids."""
    t = fs.open_table(warehouse, format="paimon", name=name)
    ids = [s.snapshot_id for s in t.history()]
    expected = peer.read(name, ids)
    for sid in ids:
        got = t.scan(snapshot_id=sid).to_arrow()
        want = expected[sid]
        assert got.column_names == want.column_names, (sid, got.column_names, want.column_names)
        assert _rows(got, keys) == _rows(want, keys), sid
        assert t.scan(snapshot_id=sid).count() == want.num_rows
    return ids


@pytest.fixture
def peer(tmp_path: Path) -> PaimonPeer:
    return PaimonPeer(tmp_path / "warehouse", tmp_path / "scratch")


def test_append_table_through_add_rename_drop_retype_and_readd(peer: PaimonPeer, tmp_path: Path) -> None:
    wh = tmp_path / "warehouse"
    s0 = pa.schema([("id", pa.int32()), ("name", pa.string()), ("v", pa.int32()), ("f", pa.float32())])
    peer.create("db.events", s0)
    peer.write("db.events", [{"id": i, "name": f"n{i}", "v": i * 10, "f": i / 2} for i in range(5)], s0)
    peer.alter("db.events", ["add", "c", "STRING"])
    s1 = pa.schema([*s0, ("c", pa.string())])
    peer.write("db.events", [{"id": i, "name": f"n{i}", "v": i, "f": 1.5, "c": f"c{i}"} for i in range(5, 8)], s1)
    peer.alter("db.events", ["rename", "name", "label"], ["retype", "v", "BIGINT"], ["retype", "f", "DOUBLE"])
    s2 = pa.schema([("id", pa.int32()), ("label", pa.string()), ("v", pa.int64()), ("f", pa.float64()),
                    ("c", pa.string())])
    peer.write("db.events", [{"id": 8, "label": "L8", "v": 2**40, "f": 0.1, "c": "c8"}], s2)
    peer.alter("db.events", ["drop", "c"], ["retype", "id", "BIGINT"])
    s3 = pa.schema([("id", pa.int64()), ("label", pa.string()), ("v", pa.int64()), ("f", pa.float64())])
    peer.write("db.events", [{"id": 9, "label": "L9", "v": 9, "f": 9.0}], s3)
    peer.alter("db.events", ["add", "c", "INT"])  # the dropped name again: a new field, old values stay gone
    s4 = pa.schema([*s3, ("c", pa.int32())])
    peer.write("db.events", [{"id": 10, "label": "L10", "v": 10, "f": 10.0, "c": 10}], s4)
    peer.run()

    ids = assert_every_snapshot(peer, wh, "db.events", ["id"])
    t = fs.open_table(wh, format="paimon", name="db.events")
    assert len(ids) == 5 and len(t.schemas()) == 5  # one schema per alter_table
    latest = t.to_arrow().sort_by("id")
    assert latest.column("c").to_pylist() == [None] * 10 + [10]  # the re-added c is another field
    assert latest.schema.field("id").type == pa.int64() and latest.column("label")[0].as_py() == "n0"
    assert t.schema.field(t.schema.find("id").id).id == 0  # Paimon numbers fields from 0


def test_partitioned_primary_key_table_updates_deletes_and_evolution(peer: PaimonPeer, tmp_path: Path) -> None:
    wh = tmp_path / "warehouse"
    s0 = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("v", pa.int32()),
                    pa.field("dt", pa.string(), nullable=False), ("op", pa.string())])
    peer.create("db.users", s0, primary_keys=["id", "dt"], partition_keys=["dt"],
                options={"bucket": "2", "rowkind.field": "op"})
    peer.write("db.users", [{"id": i, "name": f"a{i}", "v": i, "dt": "d1" if i % 3 else "d2", "op": "+I"}
                            for i in range(30)], s0)
    peer.write("db.users", [{"id": i, "name": f"b{i}", "v": i * 2, "dt": "d1" if i % 3 else "d2", "op": "+U"}
                            for i in range(0, 30, 4)], s0)
    peer.write("db.users", [{"id": i, "name": None, "v": None, "dt": "d1" if i % 3 else "d2", "op": "-D"}
                            for i in range(0, 30, 5)], s0)
    peer.alter("db.users", ["retype", "v", "BIGINT"], ["rename", "name", "label"], ["add", "extra", "DOUBLE"])
    s1 = pa.schema([pa.field("id", pa.int64(), nullable=False), ("label", pa.string()), ("v", pa.int64()),
                    pa.field("dt", pa.string(), nullable=False), ("op", pa.string()), ("extra", pa.float64())])
    peer.write("db.users", [{"id": i, "label": f"c{i}", "v": 2**33 + i, "dt": "d1" if i % 3 else "d2", "op": "+I",
                             "extra": i / 4} for i in (0, 5, 7, 31)], s1)
    peer.write("db.users", [{"id": 7, "label": None, "v": None, "dt": "d1", "op": "-D"}], s1)
    peer.run()

    ids = assert_every_snapshot(peer, wh, "db.users", ["id", "dt"])
    assert len(ids) == 5
    t = fs.open_table(wh, format="paimon", name="db.users")
    latest = {r["id"]: r for r in t.to_arrow().to_pylist()}
    assert 7 not in latest and 10 not in latest and latest[0]["label"] == "c0" and latest[4]["label"] == "b4"
    # a filter on a value column is applied after the merge: the older version of 0 ("a0") never shows
    assert t.scan(filter=[("label", "==", "a0")]).to_arrow().num_rows == 0
    assert t.scan(filter=[("id", "<", 3)], columns=["id", "label"]).to_arrow().sort_by("id").to_pylist() == \
        [{"id": 0, "label": "c0"}, {"id": 1, "label": "a1"}, {"id": 2, "label": "a2"}]


def test_primary_key_table_with_sequence_field(peer: PaimonPeer, tmp_path: Path) -> None:
    wh = tmp_path / "warehouse"
    s0 = pa.schema([pa.field("k", pa.int32(), nullable=False), ("ts", pa.int64()), ("v", pa.string())])
    peer.create("db.seq", s0, primary_keys=["k"], options={"bucket": "1", "sequence.field": "ts"})
    peer.write("db.seq", [{"k": i, "ts": 100, "v": f"first{i}"} for i in range(6)], s0)
    # a later commit with an older ts loses to the earlier row; a newer ts wins
    peer.write("db.seq", [{"k": i, "ts": 50 if i % 2 else 200, "v": f"second{i}"} for i in range(6)], s0)
    peer.run()
    assert_every_snapshot(peer, wh, "db.seq", ["k"])
    got = {r["k"]: r["v"] for r in fs.open_table(wh, format="paimon", name="db.seq").to_arrow().to_pylist()}
    assert got == {i: f"second{i}" if i % 2 == 0 else f"first{i}" for i in range(6)}


def test_partial_update_table(peer: PaimonPeer, tmp_path: Path) -> None:
    wh = tmp_path / "warehouse"
    s0 = pa.schema([pa.field("k", pa.int32(), nullable=False), ("a", pa.string()), ("b", pa.int32()),
                    ("c", pa.float64())])
    peer.create("db.partial", s0, primary_keys=["k"], options={"bucket": "2", "merge-engine": "partial-update"})
    peer.write("db.partial", [{"k": i, "a": f"a{i}", "b": None, "c": None} for i in range(8)], s0)
    peer.write("db.partial", [{"k": i, "a": None, "b": i, "c": None} for i in range(0, 8, 2)], s0)
    peer.write("db.partial", [{"k": i, "a": f"z{i}", "b": None, "c": i / 2} for i in range(0, 8, 3)], s0)
    peer.run()
    assert_every_snapshot(peer, wh, "db.partial", ["k"])
    got = {r["k"]: r for r in fs.open_table(wh, format="paimon", name="db.partial").to_arrow().to_pylist()}
    assert got[0] == {"k": 0, "a": "z0", "b": 0, "c": 0.0} and got[1] == {"k": 1, "a": "a1", "b": None, "c": None}


@pytest.mark.parametrize("engine", ["first-row", "aggregation"])
def test_unread_merge_engines_are_named_errors(peer: PaimonPeer, tmp_path: Path, engine: str) -> None:
    wh = tmp_path / "warehouse"
    s0 = pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.int64())])
    options = {"bucket": "1", "merge-engine": engine}
    if engine == "aggregation":
        options["fields.v.aggregate-function"] = "sum"
    peer.create("db.t", s0, primary_keys=["k"], options=options)
    peer.write("db.t", [{"k": 1, "v": 1}], s0).write("db.t", [{"k": 1, "v": 2}], s0).run()
    t = fs.open_table(wh, format="paimon", name="db.t")
    assert [f.name for f in t.schema.fields] == ["k", "v"] and len(t.history()) == 2  # metadata still reads
    with pytest.raises(UnsupportedFormatFeatureError, match=engine):
        t.to_arrow()


def test_types_nested_columns_and_typed_partitions(peer: PaimonPeer, tmp_path: Path) -> None:
    import datetime as dt
    import decimal

    wh = tmp_path / "warehouse"
    s0 = pa.schema([("id", pa.int64()), ("day", pa.date32()), ("n", pa.int32()),
                    ("amount", pa.decimal128(12, 2)), ("at", pa.timestamp("us")), ("raw", pa.binary()),
                    ("ok", pa.bool_()), ("tags", pa.list_(pa.string())), ("attrs", pa.map_(pa.string(), pa.int64())),
                    ("point", pa.struct([("x", pa.float64()), ("y", pa.float64())]))])
    rows = [{"id": i, "day": dt.date(2024, 1, 1 + i % 2), "n": i % 3, "amount": decimal.Decimal(f"{i}.25"),
             "at": dt.datetime(2024, 5, 1, 12, 0, i), "raw": bytes([i]), "ok": i % 2 == 0, "tags": [f"t{i}"] * (i % 3),
             "attrs": [("a", i)], "point": {"x": i / 2, "y": -i / 2}} for i in range(8)]
    peer.create("db.typed", s0, partition_keys=["day", "n"])
    peer.write("db.typed", rows, s0)
    peer.alter("db.typed", ["add", "note", "STRING"], ["retype", "amount", "DECIMAL(20, 4)"])
    s1 = pa.schema([*[f if f.name != "amount" else pa.field("amount", pa.decimal128(20, 4)) for f in s0],
                    ("note", pa.string())])
    peer.write("db.typed", [{**r, "id": r["id"] + 100, "note": "new"} for r in rows[:3]], s1)
    peer.run()
    assert_every_snapshot(peer, wh, "db.typed", ["id"])
    t = fs.open_table(wh, format="paimon", name="db.typed")
    assert t.scan(filter=[("n", "==", 1)]).count() == 4
    assert {p.value for f in t.scan().files() for p in f.partition if p.source_id == t.schema.find("day").id} == {
        dt.date(2024, 1, 1), dt.date(2024, 1, 2)}


def test_deletion_vectors_pypaimon_writes(peer: PaimonPeer, tmp_path: Path) -> None:
    wh = tmp_path / "warehouse"
    s0 = pa.schema([("id", pa.int64()), ("v", pa.string())])
    peer.create("db.dv", s0, options={"row-tracking.enabled": "true", "data-evolution.enabled": "true",
                                      "deletion-vectors.enabled": "true"})
    for start in (0, 10):
        peer.write("db.dv", [{"id": i, "v": str(i)} for i in range(start, start + 10)], s0)
    peer.delete_rows("db.dv", [1, 3, 12]).delete_rows("db.dv", [19])
    peer.run()
    assert_every_snapshot(peer, wh, "db.dv", ["id"])
    t = fs.open_table(wh, format="paimon", name="db.dv")
    assert sorted(t.to_arrow().column("id").to_pylist()) == [i for i in range(19) if i not in (1, 3, 12)]
    assert t.scan().count() == 16


def test_explicit_casts_between_versions(peer: PaimonPeer, tmp_path: Path) -> None:
    wh = tmp_path / "warehouse"
    s0 = pa.schema([("id", pa.int32()), ("i", pa.int32()), ("big", pa.int64()), ("d", pa.float64()),
                    ("s", pa.string())])
    peer.create("db.casts", s0)
    peer.write("db.casts", [{"id": n, "i": n * 7, "big": n * 1000, "d": n + 0.5, "s": str(n * 3)} for n in range(5)],
               s0)
    peer.alter("db.casts", ["retype", "i", "STRING"], ["retype", "big", "INT"], ["retype", "d", "FLOAT"],
               ["retype", "s", "BIGINT"])
    s1 = pa.schema([("id", pa.int32()), ("i", pa.string()), ("big", pa.int32()), ("d", pa.float32()),
                    ("s", pa.int64())])
    peer.write("db.casts", [{"id": 9, "i": "nine", "big": 9, "d": 9.25, "s": 9}], s1)
    peer.run()
    assert_every_snapshot(peer, wh, "db.casts", ["id"])


JAVA_TABLES = Path(__file__).parent / "data" / "paimon"  # written by Java Paimon (see its NOTICE)


def test_a_java_written_primary_key_table_reads_as_pypaimon_reads_it(tmp_path: Path) -> None:
    """Java Paimon's files carry field ids (``_KEY_`` and system columns near 2**31), its snapshots the
    version-3 layout, its index manifest B-tree and bitmap global indexes beside deletion vectors: every
    snapshot equals pypaimon's read (level-0 files stay unseen until compacted, deletion vectors apply)."""
    import shutil

    warehouse = tmp_path / "warehouse"
    shutil.copytree(JAVA_TABLES / "default.db", warehouse / "default.db")
    ids = assert_every_snapshot(PaimonPeer(warehouse, tmp_path / "scratch"), warehouse,
                                "default.test_pk_global_index_golden", ["id"])
    assert ids == [1, 2, 3, 4, 5, 6]
    t = fs.open_table(warehouse, format="paimon", name="default.test_pk_global_index_golden")
    assert t.to_arrow().sort_by("id").column("id").to_pylist() == [1, 2, 3, 4, 5, 6]
    with pytest.raises(UnsupportedFormatFeatureError, match="VECTOR"):
        fs.open_table(warehouse, format="paimon", name="default.test_pk_vector_golden")


def test_tags_and_a_branch_pypaimon_writes(peer: PaimonPeer, tmp_path: Path) -> None:
    """A tag read by name equals pypaimon's ``scan.tag-name`` read; a branch created from the tag, evolved
    and written on its own, reads as pypaimon reads ``db.t$branch_dev``, and the main table is unchanged."""
    wh = tmp_path / "warehouse"
    s0 = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    peer.create("db.t", s0, primary_keys=["id"], options={"bucket": "1"})
    peer.write("db.t", [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}], s0)
    peer.tag("db.t", "first")
    peer.write("db.t", [{"id": 2, "v": "B"}, {"id": 3, "v": "c"}], s0)
    peer.branch("db.t", "dev", "first")
    peer.alter("db.t$branch_dev", ["add", "w", "DOUBLE"])
    s1 = pa.schema([*s0, ("w", pa.float64())])
    peer.write("db.t$branch_dev", [{"id": 1, "v": "dev", "w": 0.5}], s1)
    peer.run()

    t = fs.open_table(wh, format="paimon", name="db.t")
    assert t.source.tags() == {"first": 1}
    assert _rows(t.to_arrow(snapshot_id="first"), ["id"]) == _rows(peer.read_tag("db.t", "first"), ["id"])
    assert _rows(t.to_arrow(snapshot_id="first"), ["id"]) == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
    assert_every_snapshot(peer, wh, "db.t", ["id"])
    dev = fs.open_table(wh, format="paimon", name="db.t$branch_dev")
    assert dev.schema.names == ["id", "v", "w"]
    assert_every_snapshot(peer, wh, "db.t$branch_dev", ["id"])
    assert _rows(dev.to_arrow(), ["id"]) == [{"id": 1, "v": "dev", "w": 0.5}, {"id": 2, "v": "b", "w": None}]
