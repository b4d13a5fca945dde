"""Paimon tables through ``fs.open_table(warehouse, format="paimon", name="db.table")``, written file by file
(``tests/open_tables/paimon_tables.py``: pypaimon pins an older pyarrow, so it writes tables only in the conformance
suite). Expected rows follow the format's rules by hand: files by the schema id they record, versions of a
key merged by sequence number, row kinds that retract, deletion vectors."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.errors import (
    InvalidNameError,
    ReadOnlyTableError,
    SnapshotNotFoundError,
    UnsupportedFormatFeatureError,
)
from fieldshift.open_tables.paimon_binary_row import decode_row
from fieldshift.open_tables.paimon_types import atomic_type, field_from_json
from fieldshift.schema.types import ListType, MapType, StructType
from tests.open_tables.paimon_tables import DataFile, PaimonBuilder, binary_row

F = [{"id": 0, "name": "id", "type": "INT NOT NULL"}, {"id": 1, "name": "name", "type": "STRING"},
     {"id": 2, "name": "v", "type": "INT"}, {"id": 3, "name": "dt", "type": "STRING"}]


def _sorted(t: pa.Table, key: str = "id") -> list[dict]:
    return t.sort_by(key).to_pylist()


def test_append_table_two_schema_versions_partitions_and_time_travel(tmp_path: Path) -> None:
    b = PaimonBuilder(tmp_path, "db.events", partition_keys=["dt"])
    b.schema(F)
    s0 = pa.schema([("id", pa.int32()), ("name", pa.string()), ("v", pa.int32()), ("dt", pa.string())])
    b.commit([DataFile(pa.Table.from_pylist([{"id": 1, "name": "a", "v": 10, "dt": "x"},
                                             {"id": 2, "name": "b", "v": 20, "dt": "x"}], s0), ("x",)),
              DataFile(pa.Table.from_pylist([{"id": 3, "name": "c", "v": 30, "dt": None}], s0), (None,))])
    # schema 1: name renamed to label, v widened to BIGINT and then read as STRING is the FLIP's explicit cast,
    # a new column w
    b.schema([F[0], {"id": 1, "name": "label", "type": "STRING"}, {"id": 2, "name": "v", "type": "STRING"},
              F[3], {"id": 4, "name": "w", "type": "DOUBLE"}])
    s1 = pa.schema([("id", pa.int32()), ("label", pa.string()), ("v", pa.string()), ("dt", pa.string()),
                    ("w", pa.float64())])
    b.commit([DataFile(pa.Table.from_pylist([{"id": 4, "label": "d", "v": "forty", "dt": "y", "w": 0.5}], s1), ("y",))])

    t = fs.open_table(tmp_path, format="paimon", name="db.events")
    assert repr(t) == "OpenTable(paimon, 'db.events')"
    assert [s.snapshot_id for s in t.history()] == [1, 2] and t.history()[0].operation == "APPEND"
    assert sorted(t.schemas()) == [0, 1] and t.schema.names == ["id", "label", "v", "dt", "w"]
    assert _sorted(t.to_arrow()) == [
        {"id": 1, "label": "a", "v": "10", "dt": "x", "w": None},
        {"id": 2, "label": "b", "v": "20", "dt": "x", "w": None},
        {"id": 3, "label": "c", "v": "30", "dt": None, "w": None},
        {"id": 4, "label": "d", "v": "forty", "dt": "y", "w": 0.5}]
    first = t.scan(snapshot_id=1).to_arrow()
    assert first.column_names == ["id", "name", "v", "dt"] and first.schema.field("v").type == pa.int32()
    assert t.scan(as_of=t.history()[0].timestamp + dt.timedelta(seconds=1)).count() == 3
    with pytest.raises(SnapshotNotFoundError):
        t.scan(as_of=t.history()[0].timestamp - dt.timedelta(seconds=1))
    with pytest.raises(SnapshotNotFoundError, match="no snapshot 7"):
        t.scan(snapshot_id=7)
    # the partition value prunes a whole file; a null partition lives under __DEFAULT_PARTITION__
    s = t.scan(filter=[("dt", "==", "y")])
    assert [f.path.rsplit("/", 3)[-3] for f in s.files()] == ["dt=y"] and s.count() == 1
    assert t.scan(filter=[("dt", "is_null", None)]).to_arrow().column("id").to_pylist() == [3]
    with pytest.raises(ReadOnlyTableError, match="Paimon writer"):
        t.append(pa.table({"id": [1]}))
    # the table directory itself opens too, and format=None finds it
    assert fs.open_table(b.root).to_arrow().num_rows == 4


def test_value_statistics_prune_append_files(tmp_path: Path) -> None:
    b = PaimonBuilder(tmp_path)
    b.schema(F[:3])
    s = pa.schema([("id", pa.int32()), ("name", pa.string()), ("v", pa.int32())])
    b.commit([DataFile(pa.Table.from_pylist([{"id": i, "name": "n", "v": i} for i in range(5)], s),
                       stats=([0, None, 0], [4, None, 4], [0, 0, 0])),
              DataFile(pa.Table.from_pylist([{"id": i, "name": "n", "v": i} for i in range(10, 15)], s),
                       stats=([10, None, 10], [14, None, 14], [0, 0, 0]))])
    t = fs.open_table(tmp_path, format="paimon", name="db.t")
    scan = t.scan(filter=[("v", ">", 11)])
    assert len(scan.files()) == 1 and scan.to_arrow().column("id").to_pylist() == [12, 13, 14]


KEYED = [{"id": 0, "name": "k", "type": "BIGINT NOT NULL"}, {"id": 1, "name": "name", "type": "STRING"},
         {"id": 2, "name": "v", "type": "INT"}]
KS = pa.schema([pa.field("k", pa.int64(), nullable=False), ("name", pa.string()), ("v", pa.int32())])


def _rows(*rows: tuple) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(KS.names, r, strict=True)) for r in rows], KS)


def test_primary_key_table_merges_sorted_runs_with_deletes_and_a_retype(tmp_path: Path) -> None:
    b = PaimonBuilder(tmp_path, primary_keys=["k"], options={"bucket": "1"})
    b.schema(KEYED)
    b.commit([DataFile(_rows((1, "a", 1), (2, "b", 2), (3, "c", 3), (4, "d", 4)))])
    # a second run: 2 updated, 3 deleted (-D), 5 inserted, 4 updated then retracted (-U) then set again (+U)
    b.commit([DataFile(_rows((2, "B", 20), (3, None, None), (4, "x", 0), (5, "e", 5)), kinds=[2, 3, 1, 0]),
              DataFile(_rows((4, "D", 40)), kinds=[2])])
    b.schema([KEYED[0], {"id": 1, "name": "label", "type": "STRING"}, {"id": 2, "name": "v", "type": "BIGINT"}])
    ks1 = pa.schema([pa.field("k", pa.int64(), nullable=False), ("label", pa.string()), ("v", pa.int64())])
    b.commit([DataFile(pa.Table.from_pylist([{"k": 1, "label": "A", "v": 2**40}, {"k": 5, "label": None, "v": None}],
                                            ks1), kinds=[0, 3])])
    t = fs.open_table(tmp_path, format="paimon", name="db.t")
    assert _sorted(t.scan(snapshot_id=1).to_arrow(), "k") == [
        {"k": 1, "name": "a", "v": 1}, {"k": 2, "name": "b", "v": 2}, {"k": 3, "name": "c", "v": 3},
        {"k": 4, "name": "d", "v": 4}]
    assert _sorted(t.scan(snapshot_id=2).to_arrow(), "k") == [
        {"k": 1, "name": "a", "v": 1}, {"k": 2, "name": "B", "v": 20}, {"k": 4, "name": "D", "v": 40},
        {"k": 5, "name": "e", "v": 5}]
    latest = t.scan()
    assert _sorted(latest.to_arrow(), "k") == [
        {"k": 1, "label": "A", "v": 2**40}, {"k": 2, "label": "B", "v": 20}, {"k": 4, "label": "D", "v": 40}]
    assert latest.count() == 3
    # filters see merged rows only: the old version of 1 ("a") is not a row any more
    assert t.scan(filter=[("label", "==", "a")]).count() == 0
    assert t.scan(columns=["v"], filter=[("k", ">=", 2)]).to_arrow().column("v").to_pylist() in ([20, 40], [40, 20])
    assert sorted(k for b in latest.to_batches() for k in b.column("k").to_pylist()) == [1, 2, 4]


def test_sequence_field_orders_versions_before_the_sequence_number(tmp_path: Path) -> None:
    b = PaimonBuilder(tmp_path, primary_keys=["k"], options={"bucket": "1", "sequence.field": "v"})
    b.schema(KEYED)
    b.commit([DataFile(_rows((1, "old-but-high", 9), (2, "first", 1), (3, "null-seq", None)))])
    b.commit([DataFile(_rows((1, "new-but-low", 5), (2, "second", 2), (3, "later", None)))])
    got = {r["k"]: r["name"] for r in fs.open_table(tmp_path, format="paimon", name="db.t").to_arrow().to_pylist()}
    assert got == {1: "old-but-high", 2: "second", 3: "later"}
    b.schema(KEYED, options={"bucket": "1", "sequence.field": "v", "sequence.field.sort-order": "descending"})
    b.commit()
    got = {r["k"]: r["name"] for r in fs.open_table(tmp_path, format="paimon", name="db.t").to_arrow().to_pylist()}
    assert got == {1: "new-but-low", 2: "first", 3: "later"}


def test_deletion_vectors_drop_rows_of_compacted_files(tmp_path: Path) -> None:
    b = PaimonBuilder(tmp_path, primary_keys=["k"], partition_keys=[], options={"bucket": "1",
                                                                               "deletion-vectors.enabled": "true"})
    b.schema(KEYED)
    compacted = DataFile(_rows((1, "a", 1), (2, "b", 2), (3, "c", 3)), level=5)
    b.commit([compacted], kind="COMPACT")
    # a level-0 file is not visible until compacted; the compaction that takes it writes a vector for row 1
    b.commit([DataFile(_rows((2, "B", 20)), level=0)])
    t = fs.open_table(tmp_path, format="paimon", name="db.t")
    assert _sorted(t.to_arrow(), "k")[1]["name"] == "b"
    b.commit([DataFile(_rows((2, "B", 20)), level=1)], vectors={((), 0): {compacted.name: [1]}}, kind="COMPACT")
    t = fs.open_table(tmp_path, format="paimon", name="db.t")
    assert _sorted(t.to_arrow(), "k") == [{"k": 1, "name": "a", "v": 1}, {"k": 2, "name": "B", "v": 20},
                                          {"k": 3, "name": "c", "v": 3}]
    assert t.scan().count() == 3 and t.scan(snapshot_id=1).count() == 3


def test_deletion_vectors_of_an_append_table_and_a_64_bit_vector_refused(tmp_path: Path) -> None:
    b = PaimonBuilder(tmp_path, options={"deletion-vectors.enabled": "true"})
    b.schema(F[:3])
    s = pa.schema([("id", pa.int32()), ("name", pa.string()), ("v", pa.int32())])
    f = DataFile(pa.Table.from_pylist([{"id": i, "name": str(i), "v": i} for i in range(6)], s))
    b.commit([f])
    b.commit(vectors={((), 0): {f.name: [0, 4]}})
    t = fs.open_table(tmp_path, format="paimon", name="db.t")
    assert _sorted(t.to_arrow())[0]["id"] == 1 and t.scan().count() == 4 and t.scan(snapshot_id=1).count() == 6
    b.commit(vectors={((), 0): {f.name: [1]}}, dv_magic=1234)
    with pytest.raises(UnsupportedFormatFeatureError, match="magic number 1234"):
        fs.open_table(tmp_path, format="paimon", name="db.t").to_arrow()


def test_partial_update_with_its_retraction_options(tmp_path: Path) -> None:
    def table(options: dict[str, str]) -> tuple[PaimonBuilder, Path]:
        wh = tmp_path / str(len(list(tmp_path.iterdir())))
        b = PaimonBuilder(wh, primary_keys=["k"], options={"bucket": "1", "merge-engine": "partial-update", **options})
        b.schema(KEYED)
        b.commit([DataFile(_rows((1, "a", None), (2, "b", 2), (3, "c", 3)))])
        b.commit([DataFile(_rows((1, None, 10), (2, None, None), (3, "C", None)), kinds=[0, 3, 0])])
        b.commit([DataFile(_rows((2, None, 22)))])
        return b, wh

    _, wh = table({"ignore-delete": "true"})
    assert _sorted(fs.open_table(wh, format="paimon", name="db.t").to_arrow(), "k") == [
        {"k": 1, "name": "a", "v": 10}, {"k": 2, "name": "b", "v": 22}, {"k": 3, "name": "C", "v": 3}]
    _, wh = table({"partial-update.remove-record-on-delete": "true"})
    t = fs.open_table(wh, format="paimon", name="db.t")
    assert _sorted(t.to_arrow(), "k") == [  # the -D of 2 forgets "b"; the later +I starts it again
        {"k": 1, "name": "a", "v": 10}, {"k": 2, "name": None, "v": 22}, {"k": 3, "name": "C", "v": 3}]
    assert [r["k"] for r in t.scan(snapshot_id=2).to_arrow().to_pylist()].count(2) == 0
    _, wh = table({})
    with pytest.raises(UnsupportedFormatFeatureError, match="ignore-delete"):
        fs.open_table(wh, format="paimon", name="db.t").to_arrow()
    _, wh = table({"fields.v.sequence-group": "name"})
    with pytest.raises(UnsupportedFormatFeatureError, match="sequence-group"):
        fs.open_table(wh, format="paimon", name="db.t").to_arrow()


def test_partitioned_keys_merge_within_their_partition_and_bucket(tmp_path: Path) -> None:
    # a key moved to another partition (cross-partition update): its -D in the old bucket must not delete
    # the new row, whose sequence number (its own bucket's) is lower
    fields = [*KEYED, {"id": 3, "name": "p", "type": "STRING NOT NULL"}]
    b = PaimonBuilder(tmp_path, primary_keys=["k"], partition_keys=["p"], options={"bucket": "-1"})
    b.schema(fields)
    ps = pa.schema([*KS, pa.field("p", pa.string(), nullable=False)])
    rows = pa.Table.from_pylist
    b.commit([DataFile(rows([{"k": 1, "name": "a", "v": 1, "p": "one"}], ps), ("one",), sequence=[7])])
    b.commit([DataFile(rows([{"k": 1, "name": "a", "v": 1, "p": "one"}], ps), ("one",), kinds=[3], sequence=[8]),
              DataFile(rows([{"k": 1, "name": "A", "v": 2, "p": "a-partition-name-longer-than-7"}], ps),
                       ("a-partition-name-longer-than-7",), sequence=[0])])
    got = fs.open_table(tmp_path, format="paimon", name="db.t").to_arrow().to_pylist()
    assert got == [{"k": 1, "name": "A", "v": 2, "p": "a-partition-name-longer-than-7"}]


def test_refusals_are_named(tmp_path: Path) -> None:
    def keyed(options: dict[str, str], **file: object) -> object:
        wh = tmp_path / str(len(list(tmp_path.iterdir())))
        b = PaimonBuilder(wh, primary_keys=["k"], options={"bucket": "1", **options})
        b.schema(KEYED)
        b.commit([DataFile(_rows((1, "a", 1)), **file)])
        return fs.open_table(wh, format="paimon", name="db.t")

    with pytest.raises(UnsupportedFormatFeatureError, match="'first-row' merge engine"):
        keyed({"merge-engine": "first-row"}).to_arrow()
    with pytest.raises(UnsupportedFormatFeatureError, match="'aggregation' merge engine"):
        keyed({"merge-engine": "aggregation"}).to_arrow()
    with pytest.raises(UnsupportedFormatFeatureError, match="postpone bucket"):
        keyed({}, bucket=-2).to_arrow()
    with pytest.raises(UnsupportedFormatFeatureError, match="holds only columns"):
        keyed({}, extra={"_WRITE_COLS": ["k", "name"]}).to_arrow()
    with pytest.raises(UnsupportedFormatFeatureError, match="ORC"):
        keyed({}, name="data-1.orc").to_arrow()
    with pytest.raises(UnsupportedFormatFeatureError, match=r"'v'.*VARIANT.*variant"):
        b = PaimonBuilder(tmp_path / "variant")
        b.schema([{"id": 0, "name": "v", "type": "VARIANT"}])
        fs.open_table(tmp_path / "variant", format="paimon", name="db.t")
    with pytest.raises(InvalidNameError, match=r"no table 'db\.missing'"):
        fs.open_table(tmp_path, format="paimon", name="db.missing")
    with pytest.raises(InvalidNameError, match=r"database\.table"):
        fs.open_table(tmp_path, format="paimon", name="nodot")


def test_types_and_nested_ids() -> None:
    assert atomic_type("DECIMAL(20, 3) NOT NULL", "c") == (pa.decimal128(20, 3), False)
    assert atomic_type("TIMESTAMP(9) WITH LOCAL TIME ZONE", "c")[0] == pa.timestamp("ns", "UTC")
    assert atomic_type("TIMESTAMP(3)", "c")[0] == pa.timestamp("ms")
    assert atomic_type("VARCHAR(10)", "c")[0] == pa.string() and atomic_type("BINARY(4)", "c")[0] == pa.binary()
    f = field_from_json({"id": 5, "name": "m", "type": {"type": "MAP", "key": "STRING NOT NULL", "value": {
        "type": "ARRAY", "element": {"type": "ROW", "fields": [{"id": 6, "name": "x", "type": "INT"}]}}}})
    assert isinstance(f.type, MapType) and isinstance(f.type.value.type, ListType)
    inner = f.type.value.type.element
    assert isinstance(inner.type, StructType) and inner.type.fields[0].id == 6
    again = field_from_json({"id": 5, "name": "m2", "type": {"type": "MAP", "key": "STRING", "value": "INT"}})
    assert again.type.key.id == f.type.key.id and again.type.value.id == f.type.value.id  # stable across versions
    assert len({f.type.key.id, f.type.value.id, inner.id, 5, 6}) == 5


def test_binary_rows_decode_every_layout() -> None:
    types = [pa.bool_(), pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.float32(), pa.float64(), pa.string(),
             pa.string(), pa.binary(), pa.date32(), pa.decimal128(10, 2), pa.decimal128(30, 4),
             pa.timestamp("ms"), pa.timestamp("us", "UTC"), pa.int32()]
    values = [True, -3, 300, -70000, 2**40, 1.5, -2.25, "short", "a string longer than seven", b"\x00\x01",
              dt.date(2024, 2, 29), decimal.Decimal("-12.34"), decimal.Decimal("123456789012345678901.2345"),
              dt.datetime(2024, 1, 2, 3, 4, 5, 6000), dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=dt.UTC), None]
    row = decode_row(binary_row(values, types), [(str(i), t) for i, t in enumerate(types)], "test")
    assert list(row) == values
    with pytest.raises(UnsupportedFormatFeatureError, match="2 fields"):
        decode_row(binary_row([1, 2], [pa.int32()] * 2), [("a", pa.int32())], "test")


def test_versions_order_by_sequence_number_not_by_file(tmp_path: Path) -> None:
    # overlapping sequence ranges: the file with the higher maximum holds the older version of key 1
    b = PaimonBuilder(tmp_path, primary_keys=["k"], options={"bucket": "1"})
    b.schema(KEYED)
    b.commit([DataFile(_rows((1, "newer", 1), (2, "x", 2)), sequence=[9, 0], level=1),
              DataFile(_rows((1, "older", 1), (3, "y", 3)), sequence=[5, 12])])
    got = {r["k"]: r["name"] for r in fs.open_table(tmp_path, format="paimon", name="db.t").to_arrow().to_pylist()}
    assert got == {1: "newer", 2: "x", 3: "y"}


def test_composite_and_string_keys_merge(tmp_path: Path) -> None:
    fields = [{"id": 0, "name": "a", "type": "STRING NOT NULL"}, {"id": 1, "name": "b", "type": "INT NOT NULL"},
              {"id": 2, "name": "v", "type": "STRING"}]
    s = pa.schema([pa.field("a", pa.string(), nullable=False), pa.field("b", pa.int32(), nullable=False),
                   ("v", pa.string())])
    b = PaimonBuilder(tmp_path, primary_keys=["a", "b"], options={"bucket": "1"})
    b.schema(fields)
    b.commit([DataFile(pa.Table.from_pylist([{"a": "x", "b": 1, "v": "1"}, {"a": "x", "b": 2, "v": "2"},
                                             {"a": "y", "b": 1, "v": "3"}], s))])
    b.commit([DataFile(pa.Table.from_pylist([{"a": "x", "b": 2, "v": "new"}, {"a": "y", "b": 1, "v": None}], s),
                       kinds=[0, 3])])
    got = fs.open_table(tmp_path, format="paimon", name="db.t").to_arrow().sort_by([("a", "ascending"),
                                                                                    ("b", "ascending")])
    assert got.to_pylist() == [{"a": "x", "b": 1, "v": "1"}, {"a": "x", "b": 2, "v": "new"}]


def test_key_statistics_prune_files_of_a_merged_table(tmp_path: Path) -> None:
    b = PaimonBuilder(tmp_path, primary_keys=["k"], options={"bucket": "1"})
    b.schema(KEYED)
    b.commit([DataFile(_rows((1, "a", 1), (2, "b", 2)))])
    b.commit([DataFile(_rows((10, "x", 10), (11, "y", 11)))])
    b.commit([DataFile(_rows((2, "B", 0), (10, "X", 0)))])
    t = fs.open_table(tmp_path, format="paimon", name="db.t")
    low = t.scan(filter=[("k", "<=", 2)])
    assert len(low.files()) == 2 and _sorted(low.to_arrow(), "k") == [{"k": 1, "name": "a", "v": 1},
                                                                      {"k": 2, "name": "B", "v": 0}]
    # value columns never prune a merged table: the newer version of 2 (v=0) sits in a file whose v is low
    by_value = t.scan(filter=[("v", ">=", 2)])
    assert len(by_value.files()) == 3 and sorted(r["k"] for r in by_value.to_arrow().to_pylist()) == [11]


def test_a_warehouse_uri(tmp_path: Path) -> None:
    b = PaimonBuilder(tmp_path, primary_keys=["k"], options={"bucket": "1"})
    b.schema(KEYED)
    b.commit([DataFile(_rows((1, "a", 1)))])
    b.commit([DataFile(_rows((1, "b", 2)))])
    t = fs.open_table(tmp_path.as_uri(), format="paimon", name="db.t")
    assert t.to_arrow().to_pylist() == [{"k": 1, "name": "b", "v": 2}]


NESTED = [{"id": 6, "name": "id", "type": "INT NOT NULL"},  # its _KEY_id column's Java id is 2**30 + 5,
          {"id": 0, "name": "tags", "type": {"type": "ARRAY", "element": "INT"}},  # fieldshift's id of tags' element
          {"id": 2, "name": "attrs", "type": {"type": "MAP", "key": "STRING NOT NULL", "value": {
              "type": "ARRAY", "element": "STRING"}}},
          {"id": 3, "name": "point", "type": {"type": "ROW", "fields": [{"id": 4, "name": "x", "type": "INT"},
                                                                        {"id": 5, "name": "y", "type": "INT"}]}}]


@pytest.mark.parametrize("java_ids", [False, True])
def test_files_with_java_paimons_field_ids_read_like_pypaimons(tmp_path: Path, java_ids: bool) -> None:
    """Java Paimon's Parquet files carry ids: the ROW fields' own, Paimon's formulas for array elements and
    map keys and values (not fieldshift's numbering of them), ``_KEY_`` and system columns near 2**31. A file
    still resolves by name through the schema it was written with, as Paimon's readers do: a rename and a
    merge of two sorted runs read the same with and without those ids."""
    b = PaimonBuilder(tmp_path, "db.t", primary_keys=["id"], java_ids=java_ids)
    b.schema(NESTED)
    s0 = pa.schema([("id", pa.int32()), ("tags", pa.list_(pa.int32())),
                    ("attrs", pa.map_(pa.string(), pa.list_(pa.string()))),
                    ("point", pa.struct([("x", pa.int32()), ("y", pa.int32())]))])
    b.commit([DataFile(pa.Table.from_pylist([
        {"id": 1, "tags": [1, 2], "attrs": [("a", ["p"])], "point": {"x": 1, "y": 2}},
        {"id": 2, "tags": None, "attrs": [], "point": None}], s0))])
    renamed = [NESTED[0], {**NESTED[1], "name": "labels"}, NESTED[2],
               {**NESTED[3], "type": {"type": "ROW", "fields": [{"id": 4, "name": "x", "type": "INT"},
                                                                 {"id": 5, "name": "y2", "type": "INT"}]}}]
    b.schema(renamed)
    s1 = pa.schema([("id", pa.int32()), ("labels", pa.list_(pa.int32())), s0.field("attrs"),
                    ("point", pa.struct([("x", pa.int32()), ("y2", pa.int32())]))])
    b.commit([DataFile(pa.Table.from_pylist([
        {"id": 2, "labels": [7], "attrs": [("b", None)], "point": {"x": 5, "y2": 6}}], s1))])
    if java_ids:
        import pyarrow.parquet as pq

        for f in b.root.joinpath("bucket-0").iterdir():
            found = pq.read_schema(f)
            element = found.field(found.names[4]).type.value_field  # tags, or labels after the rename
            assert element.metadata == {b"PARQUET:field_id": str((2**31 - 1) // 4 + 1).encode()}  # as Java has it
            assert found.field("_KEY_id").metadata == {b"PARQUET:field_id": str(2**30 + 5).encode()}
    t = fs.open_table(tmp_path, format="paimon", name="db.t")
    assert _sorted(t.to_arrow()) == [
        {"id": 1, "labels": [1, 2], "attrs": [("a", ["p"])], "point": {"x": 1, "y2": 2}},
        {"id": 2, "labels": [7], "attrs": [("b", None)], "point": {"x": 5, "y2": 6}}]


def test_tags_read_as_the_snapshot_they_keep_and_branches_by_name(tmp_path: Path) -> None:
    """``snapshot_id="<tag>"`` reads the tagged snapshot, even after the snapshot itself expired (its
    ``snapshot-N`` file deleted, the tag keeping its files); ``db.t$branch_b`` reads the branch's own
    schemas and snapshots over the table's shared manifests and data files."""
    import json
    import shutil

    b = PaimonBuilder(tmp_path, "db.t")
    b.schema(F[:2])
    s0 = pa.schema([("id", pa.int32()), ("name", pa.string())])
    b.commit([DataFile(pa.Table.from_pylist([{"id": 1, "name": "a"}], s0))])
    b.commit([DataFile(pa.Table.from_pylist([{"id": 2, "name": "b"}], s0))])
    (b.root / "tag").mkdir()
    first = json.loads((b.root / "snapshot" / "snapshot-1").read_text())
    (b.root / "tag" / "tag-v1").write_text(json.dumps({**first, "tagCreateTime": [2024, 1, 1, 0, 0]}))
    # the branch "dev" forked at snapshot 1, then evolved on its own: a new column, no new rows
    dev = b.root / "branch" / "branch-dev"
    (dev / "snapshot").mkdir(parents=True)
    shutil.copytree(b.root / "schema", dev / "schema")
    schema1 = json.loads((b.root / "schema" / "schema-0").read_text())
    schema1.update(id=1, fields=[*F[:2], {"id": 4, "name": "extra", "type": "DOUBLE"}], highestFieldId=4)
    (dev / "schema" / "schema-1").write_text(json.dumps(schema1))
    (dev / "snapshot" / "snapshot-1").write_text(json.dumps(first))
    (dev / "snapshot" / "snapshot-2").write_text(json.dumps({**first, "id": 2, "schemaId": 1}))

    t = fs.open_table(tmp_path, format="paimon", name="db.t")
    assert t.source.tags() == {"v1": 1}
    assert _sorted(t.to_arrow(snapshot_id="v1")) == [{"id": 1, "name": "a"}]
    assert t.scan(snapshot_id="v1").snapshot_id == 1
    with pytest.raises(SnapshotNotFoundError, match="no tag 'v9'; its tags are v1"):
        t.scan(snapshot_id="v9")
    (b.root / "snapshot" / "snapshot-1").unlink()  # expired: only the tag keeps it
    t = fs.open_table(tmp_path, format="paimon", name="db.t")
    assert [s.snapshot_id for s in t.history()] == [2]
    assert _sorted(t.to_arrow(snapshot_id="v1")) == [{"id": 1, "name": "a"}]
    assert _sorted(t.to_arrow(snapshot_id=1)) == [{"id": 1, "name": "a"}]  # as a Spark executor asks for it

    d = fs.open_table(tmp_path, format="paimon", name="db.t$branch_dev")
    assert d.name == "db.t$branch_dev" and [s.snapshot_id for s in d.history()] == [1, 2]
    assert _sorted(d.to_arrow()) == [{"id": 1, "name": "a", "extra": None}]
    with pytest.raises(InvalidNameError, match="no branch 'nope' \\(branches: dev\\)"):
        fs.open_table(tmp_path, format="paimon", name="db.t$branch_nope")
