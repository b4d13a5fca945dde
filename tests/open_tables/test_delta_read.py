"""Delta tables through ``fs.open_table(path, format="delta")``: a smoke test on a table deltalake writes,
and the log features checked on small logs written here by hand (deletion vectors inline, on disk and
corrupt; protocol features refused by name; commit times; schema ids with and without column mapping;
field ids a file carries but the table does not own; statistics that must not drop files; partition
values of each type). The peers' answers on real tables are in tests/conformance."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import struct
import uuid
import zlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.errors import (
    CatalogFormatError,
    DataFileError,
    ReadOnlyTableError,
    SnapshotNotFoundError,
    UnsupportedFormatFeatureError,
)
from fieldshift.open_tables.delta_dv import dv_file_path, inline_positions

# -- building logs by hand ------------------------------------------------------------------------
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_B85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"


def z85(data: bytes) -> str:
    assert len(data) % 4 == 0
    return base64.b85encode(data).decode().translate(str.maketrans(_B85, _Z85))


def dv_bytes(positions: list[int]) -> bytes:
    from pyroaring import BitMap64

    return struct.pack("<I", 1681511377) + BitMap64(positions).serialize()


def schema_string(*fields: tuple[str, str], mapped: bool = False) -> str:
    out = []
    for i, (name, kind) in enumerate(fields, 1):
        meta = {"delta.columnMapping.id": i, "delta.columnMapping.physicalName": f"col-{i}"} if mapped else {}
        out.append({"name": name, "type": kind, "nullable": True, "metadata": meta})
    return json.dumps({"type": "struct", "fields": out})


def protocol(reader: int = 1, features: list[str] | None = None) -> dict[str, Any]:
    p: dict[str, Any] = {"minReaderVersion": reader, "minWriterVersion": 7 if reader == 3 else 2}
    if reader == 3:
        p["readerFeatures"] = features or []
        p["writerFeatures"] = features or []
    return {"protocol": p}


def metadata(schema: str, partitions: list[str] | None = None, **config: str) -> dict[str, Any]:
    return {"metaData": {"id": "t", "format": {"provider": "parquet", "options": {}}, "schemaString": schema,
                         "partitionColumns": partitions or [], "configuration": config}}


def add(path: str, rows: int, stats: dict[str, Any] | None = None, partition: dict[str, str | None] | None = None,
        dv: dict[str, Any] | None = None) -> dict[str, Any]:
    action: dict[str, Any] = {"path": path, "partitionValues": partition or {}, "size": 1, "modificationTime": 0,
                              "dataChange": True, "stats": json.dumps({"numRecords": rows, **(stats or {})})}
    if dv is not None:
        action["deletionVector"] = dv
    return {"add": action}


def commit(root: Path, version: int, *actions: dict[str, Any], ict: int | None = None, op: str = "WRITE") -> None:
    info: dict[str, Any] = {"operation": op, "timestamp": 0}
    if ict is not None:
        info["inCommitTimestamp"] = ict
    log = root / "_delta_log"
    log.mkdir(parents=True, exist_ok=True)
    lines = [{"commitInfo": info}, *actions]
    (log / f"{version:020d}.json").write_text("\n".join(json.dumps(a) for a in lines) + "\n")


_STRINGS = pa.map_(pa.string(), pa.string())
_FORMAT = pa.struct([("provider", pa.string()), ("options", _STRINGS)])
_METADATA_TYPE = pa.struct([("id", pa.string()), ("format", _FORMAT), ("schemaString", pa.string()),
                            ("partitionColumns", pa.list_(pa.string())),
                            ("configuration", _STRINGS)])


def data(root: Path, name: str, table: pa.Table) -> str:
    pq.write_table(table, root / name)
    return name


# -- a table deltalake writes -----------------------------------------------------------------------
def test_smoke_deltalake_table_at_every_version(tmp_path: Path) -> None:
    from deltalake import DeltaTable, write_deltalake

    p = str(tmp_path / "t")
    write_deltalake(p, pa.table({"id": [1, 2, 3], "part": ["a", "b", "a"]}), partition_by=["part"])
    write_deltalake(p, pa.table({"id": [4], "part": ["b"], "x": [1.5]}), mode="append", schema_mode="merge")
    DeltaTable(p).delete("id = 1")
    with fs.open_table(p) as t:  # format detected by the _delta_log directory
        assert t.format == "delta"
        assert [s.snapshot_id for s in t.history()] == [0, 1, 2]
        assert [s.operation for s in t.history()][2] == "DELETE"
        assert len(t.schemas()) == 2
        for v in range(3):
            expected = DeltaTable(p, version=v).to_pyarrow_table()
            got = t.scan(snapshot_id=v).to_arrow()
            assert sorted(got.column_names) == sorted(expected.column_names)
            key = lambda r: r["id"]  # noqa: E731
            assert sorted(got.to_pylist(), key=key) == sorted(expected.select(got.column_names).to_pylist(), key=key)
        assert t.scan(filter=[("part", "==", "b")]).to_arrow()["id"].to_pylist() in ([2, 4], [4, 2])
        assert t.scan().count() == 3
        with pytest.raises(ReadOnlyTableError, match="write_deltalake"):
            t.append(pa.table({"id": [5]}))
        with pytest.raises(ReadOnlyTableError, match="write_deltalake"):
            t.merge(pa.table({"id": [5]}), on="id")


# -- deletion vectors -------------------------------------------------------------------------------
def _dv_table(root: Path, dv: dict[str, Any]) -> None:
    name = data(root, "f.parquet", pa.table({"v": pa.array(range(10), pa.int64())}))
    commit(root, 0, protocol(3, ["deletionVectors"]), metadata(schema_string(("v", "long"))),
           add(name, 10, dv=dv))


def test_inline_deletion_vector(tmp_path: Path) -> None:
    raw = dv_bytes([0, 3, 9])
    _dv_table(tmp_path, {"storageType": "i", "pathOrInlineDv": z85(raw + b"\0" * (-len(raw) % 4)),
                         "sizeInBytes": len(raw), "cardinality": 3})
    with fs.open_table(tmp_path, format="delta") as t:
        assert t.to_arrow()["v"].to_pylist() == [1, 2, 4, 5, 6, 7, 8]
        assert t.scan().count() == 7


def _dv_file(path: Path, positions: list[int], corrupt: bool = False) -> tuple[int, int]:
    body = dv_bytes(positions)
    crc = zlib.crc32(body) ^ (1 if corrupt else 0)
    path.write_bytes(b"\x01" + b"junk" + struct.pack(">I", len(body)) + body + struct.pack(">I", crc))
    return 5, len(body)


def test_deletion_vector_file_by_uuid_and_by_absolute_path(tmp_path: Path) -> None:
    u = uuid.uuid4()
    (tmp_path / "ab").mkdir()
    offset, size = _dv_file(tmp_path / "ab" / f"deletion_vector_{u}.bin", [2, 5])
    _dv_table(tmp_path, {"storageType": "u", "pathOrInlineDv": "ab" + z85(u.bytes), "offset": offset,
                         "sizeInBytes": size, "cardinality": 2})
    with fs.open_table(tmp_path, format="delta") as t:
        assert t.to_arrow()["v"].to_pylist() == [0, 1, 3, 4, 6, 7, 8, 9]
    with fs.open_table(tmp_path.as_uri(), format="delta") as t:  # a URI pyarrow.fs opens: files and vectors too
        assert t.to_arrow()["v"].to_pylist() == [0, 1, 3, 4, 6, 7, 8, 9]
    other = tmp_path / "elsewhere.bin"
    offset, size = _dv_file(other, [0])
    commit(tmp_path, 1, add("f.parquet", 10, dv={"storageType": "p", "pathOrInlineDv": other.as_uri(),
                                                 "offset": offset, "sizeInBytes": size, "cardinality": 1}),
           {"remove": {"path": "f.parquet", "dataChange": True, "deletionVector": {
               "storageType": "u", "pathOrInlineDv": "ab" + z85(u.bytes), "offset": 5, "sizeInBytes": size,
               "cardinality": 2}}})
    with fs.open_table(tmp_path, format="delta") as t:
        assert t.to_arrow()["v"].to_pylist() == list(range(1, 10))
        assert t.scan(snapshot_id=0).count() == 8


def test_corrupt_or_native_deletion_vectors_are_named(tmp_path: Path) -> None:
    offset, size = _dv_file(tmp_path / "dv.bin", [1], corrupt=True)
    _dv_table(tmp_path, {"storageType": "p", "pathOrInlineDv": str(tmp_path / "dv.bin"), "offset": offset,
                         "sizeInBytes": size, "cardinality": 1})
    with fs.open_table(tmp_path, format="delta") as t, pytest.raises(DataFileError, match="CRC-32"):
        t.to_arrow()
    native = "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L"  # the protocol's example (Java's format)
    with pytest.raises(UnsupportedFormatFeatureError, match="native"):
        inline_positions({"storageType": "i", "pathOrInlineDv": native, "sizeInBytes": 40}, "here")
    with pytest.raises(DataFileError, match="holds 1 rows; the log says 4"):
        raw = dv_bytes([7])
        inline_positions({"pathOrInlineDv": z85(raw + b"\0" * (-len(raw) % 4)), "sizeInBytes": len(raw),
                          "cardinality": 4}, "here")


def test_deletion_vector_path_of_the_protocol_example() -> None:
    dv = {"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^", "offset": 4}
    assert dv_file_path(dv, "s3://mytable", "x") == \
        "s3://mytable/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"


# -- protocol, history, time travel -----------------------------------------------------------------
@pytest.mark.parametrize(("proto", "match"), [
    (protocol(3, ["deletionVectors", "variantType"]), "variantType"),
    (protocol(3, ["catalogManaged"]), "catalogManaged"),
    ({"protocol": {"minReaderVersion": 4, "minWriterVersion": 7}}, "reader version 4"),
])
def test_unread_protocol_features_are_refused_by_name(tmp_path: Path, proto: dict[str, Any], match: str) -> None:
    commit(tmp_path, 0, proto, metadata(schema_string(("v", "long"))))
    with pytest.raises(UnsupportedFormatFeatureError, match=match):
        fs.open_table(tmp_path, format="delta")


def test_unknown_types_and_missing_logs_are_named(tmp_path: Path) -> None:
    commit(tmp_path / "a", 0, protocol(), metadata(schema_string(("g", "geometry"))))
    with pytest.raises(UnsupportedFormatFeatureError, match="'geometry'"):
        fs.open_table(tmp_path / "a", format="delta")
    (tmp_path / "b").mkdir()
    with pytest.raises(CatalogFormatError, match="no _delta_log"):
        fs.open_table(tmp_path / "b", format="delta")


def test_history_times_as_of_and_checkpoint_start(tmp_path: Path) -> None:
    base = 1_700_000_000_000
    name = data(tmp_path, "a.parquet", pa.table({"v": pa.array([1], pa.int64())}))
    commit(tmp_path, 0, protocol(), metadata(schema_string(("v", "long"))), add(name, 1), ict=base)
    commit(tmp_path, 1, add(data(tmp_path, "b.parquet", pa.table({"v": pa.array([2], pa.int64())})), 1),
           ict=base + 60_000)
    commit(tmp_path, 2, {"remove": {"path": "a.parquet", "dataChange": True}}, ict=base + 120_000, op="DELETE")
    with fs.open_table(tmp_path, format="delta") as t:
        times = [s.timestamp for s in t.history()]
        assert times[1] - times[0] == dt.timedelta(minutes=1)
        start = dt.datetime.fromtimestamp(base / 1000, dt.UTC)
        assert t.to_arrow(as_of=start + dt.timedelta(seconds=90))["v"].to_pylist() in ([1, 2], [2, 1])
        assert t.to_arrow(as_of=start + dt.timedelta(minutes=5))["v"].to_pylist() == [2]
        with pytest.raises(SnapshotNotFoundError):
            t.scan(as_of=start - dt.timedelta(seconds=1))
        with pytest.raises(SnapshotNotFoundError, match="no version 7"):
            t.scan(snapshot_id=7)
    # a checkpoint at 1 and commit 0 cleaned up: versions start at 1
    cp = pa.table({"add": pa.array([{"path": "a.parquet", "partitionValues": [], "size": 1, "modificationTime": 0,
                                     "dataChange": True, "stats": json.dumps({"numRecords": 1})},
                                    {"path": "b.parquet", "partitionValues": [], "size": 1, "modificationTime": 0,
                                     "dataChange": True, "stats": json.dumps({"numRecords": 1})}, None, None]),
                   "metaData": pa.array([None, None, {**metadata(schema_string(("v", "long")))["metaData"],
                                                      "format": {"provider": "parquet", "options": []},
                                                      "configuration": []}, None], _METADATA_TYPE),
                   "protocol": pa.array([None, None, None, protocol()["protocol"]])})
    pq.write_table(cp, tmp_path / "_delta_log" / f"{1:020d}.checkpoint.parquet")
    (tmp_path / "_delta_log" / f"{0:020d}.json").unlink()
    with fs.open_table(tmp_path, format="delta") as t:
        assert [s.snapshot_id for s in t.history()] == [1, 2]
        assert sorted(t.to_arrow(snapshot_id=1)["v"].to_pylist()) == [1, 2]
        with pytest.raises(SnapshotNotFoundError):
            t.scan(snapshot_id=0)


# -- schemas and field ids --------------------------------------------------------------------------
def test_rename_without_column_mapping_is_a_drop_and_an_add(tmp_path: Path) -> None:
    name = data(tmp_path, "a.parquet", pa.table({"a": pa.array([1], pa.int64()), "b": ["x"]}))
    commit(tmp_path, 0, protocol(), metadata(schema_string(("a", "long"), ("b", "string"))), add(name, 1))
    commit(tmp_path, 1, metadata(schema_string(("a", "long"), ("c", "string"))))
    with fs.open_table(tmp_path, format="delta") as t:
        old, new = (t.schemas()[s.schema_id] for s in t.history())
        assert old.find("a").id == new.find("a").id
        assert old.find("b").id != new.find("c").id
        assert t.to_arrow().to_pylist() == [{"a": 1, "c": None}]  # Delta reads by name: no column c in the file


def test_column_mapping_rename_keeps_the_id_and_reads_old_files(tmp_path: Path) -> None:
    name = data(tmp_path, "a.parquet", pa.table({"col-1": pa.array([1], pa.int64()), "col-2": ["x"]}))
    mapped = {"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "2"}
    commit(tmp_path, 0, protocol(2), metadata(schema_string(("a", "long"), ("b", "string"), mapped=True), **mapped),
           add(name, 1, stats={"minValues": {"col-2": "x"}, "maxValues": {"col-2": "x"}, "nullCount": {"col-2": 0}}))
    commit(tmp_path, 1, metadata(schema_string(("a", "long"), ("renamed", "string"), mapped=True), **mapped))
    with fs.open_table(tmp_path, format="delta") as t:
        old, new = (t.schemas()[s.schema_id] for s in t.history())
        assert old.find("b").id == new.find("renamed").id == 2
        assert t.to_arrow().to_pylist() == [{"a": 1, "renamed": "x"}]
        assert t.scan(filter=[("renamed", "==", "y")]).files() == []  # statistics found by physical name


def test_field_ids_a_file_carries_are_ignored_without_column_mapping(tmp_path: Path) -> None:
    swapped = pa.schema([pa.field("a", pa.int64(), metadata={b"PARQUET:field_id": b"2"}),
                         pa.field("b", pa.string(), metadata={b"PARQUET:field_id": b"1"})])
    name = data(tmp_path, "a.parquet", pa.table({"a": [1], "b": ["x"]}, schema=swapped))
    commit(tmp_path, 0, protocol(), metadata(schema_string(("a", "long"), ("b", "string"))), add(name, 1))
    with fs.open_table(tmp_path, format="delta") as t:
        assert t.to_arrow().to_pylist() == [{"a": 1, "b": "x"}]


# -- partition values and statistics ----------------------------------------------------------------
def test_partition_values_typed_by_the_schema(tmp_path: Path) -> None:
    schema = schema_string(("v", "long"), ("d", "date"), ("ts", "timestamp"), ("ntz", "timestamp_ntz"),
                           ("dec", "decimal(5,2)"), ("flag", "boolean"), ("bin", "binary"), ("s", "string"))
    parts = ["d", "ts", "ntz", "dec", "flag", "bin", "s"]
    one = data(tmp_path, "a.parquet", pa.table({"v": pa.array([1], pa.int64())}))
    two = data(tmp_path, "b.parquet", pa.table({"v": pa.array([2], pa.int64())}))
    commit(tmp_path, 0, protocol(3, ["timestampNtz"]), metadata(schema, parts),
           add(one, 1, partition={"d": "2024-02-29", "ts": "2024-01-02T03:04:05.123456Z", "ntz": "2024-01-02 03:04:05",
                                  "dec": "1.25", "flag": "true", "bin": "\u0001\u00ff", "s": "x y"}),
           add(two, 1, partition={"d": None, "ts": "", "ntz": None, "dec": None, "flag": None, "bin": None, "s": ""}))
    with fs.open_table(tmp_path, format="delta") as t:
        rows = sorted(t.to_arrow().to_pylist(), key=lambda r: r["v"])
        assert rows[0] == {"v": 1, "d": dt.date(2024, 2, 29), "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 123456, dt.UTC),
                           "ntz": dt.datetime(2024, 1, 2, 3, 4, 5), "dec": decimal.Decimal("1.25"), "flag": True,
                           "bin": b"\x01\xff", "s": "x y"}
        assert rows[1] == {"v": 2, **dict.fromkeys(parts)}
        assert t.scan(filter=[("d", "==", dt.date(2024, 2, 29))]).to_arrow()["v"].to_pylist() == [1]
        assert t.scan(filter=[("s", "is_null")]).to_arrow()["v"].to_pylist() == [2]
        assert len(t.scan(filter=[("flag", "==", True)]).files()) == 1


def test_statistics_never_drop_a_needed_file(tmp_path: Path) -> None:
    """Timestamps in statistics are truncated to milliseconds and strings to a prefix: a row whose value
    is past the recorded maximum by either truncation must still be found."""
    stamp = dt.datetime(2024, 1, 1, 0, 0, 0, 999, dt.UTC)
    long_text = "k" * 40
    table = pa.table({"ts": pa.array([stamp], pa.timestamp("us", tz="UTC")), "s": [long_text]})
    name = data(tmp_path, "a.parquet", table)
    stats = {"minValues": {"ts": "2024-01-01T00:00:00.000Z", "s": "k" * 32},
             "maxValues": {"ts": "2024-01-01T00:00:00.000Z", "s": "k" * 32}, "nullCount": {"ts": 0, "s": 0}}
    commit(tmp_path, 0, protocol(), metadata(schema_string(("ts", "timestamp"), ("s", "string"))),
           add(name, 1, stats=stats))
    with fs.open_table(tmp_path, format="delta") as t:
        assert t.scan(filter=[("ts", "==", stamp)]).count() == 1
        assert t.scan(filter=[("s", "==", long_text)]).count() == 1
        assert t.scan(filter=[("ts", ">", stamp + dt.timedelta(seconds=1))]).files() == []  # still prunes


def test_a_file_is_not_a_delta_table(tmp_path: Path) -> None:
    (tmp_path / "x.db").write_bytes(b"not a table")
    with pytest.raises(CatalogFormatError, match="no _delta_log"):
        fs.open_table(tmp_path / "x.db", format="delta")


def test_enabling_column_mapping_keeps_each_columns_id() -> None:
    """A table created without column mapping and later switched to ``name`` mode (physical names = the old
    display names), then a partition column renamed: one id per column across all versions."""
    path = Path(__file__).parents[1] / "conformance" / "data" / "delta" / "table_with_partitioning_mapping"
    with fs.open_table(path, format="delta") as t:
        schemas = [t.schemas()[s.schema_id] for s in t.history()]
        assert [s.names for s in schemas] == [["id", "description"]] * 3 + [["newid", "description"]] * 2
        assert {s.fields[0].id for s in schemas} == {1} and {s.fields[1].id for s in schemas} == {2}
        assert sorted(t.to_arrow()["newid"].to_pylist()) == [1, 2]
        assert t.to_arrow(snapshot_id=1).to_pylist() == [{"id": 1, "description": "Initial data"}]


def test_a_remove_names_a_logical_file_by_path_and_deletion_vector(tmp_path: Path) -> None:
    """The protocol keys a logical file by (path, deletion vector): removing (f, no vector) leaves (f, dv)
    live, and a JSON V2 checkpoint's tombstones never drop a live file."""
    raw = dv_bytes([0])
    dv = {"storageType": "i", "pathOrInlineDv": z85(raw + b"\0" * (-len(raw) % 4)), "sizeInBytes": len(raw),
          "cardinality": 1}
    _dv_table(tmp_path, dv)
    commit(tmp_path, 1, {"remove": {"path": "f.parquet", "dataChange": True}})
    with fs.open_table(tmp_path, format="delta") as t:
        assert t.scan(snapshot_id=1).count() == 9
    checkpoint = [{"checkpointMetadata": {"version": 1}}, protocol(3, ["deletionVectors", "v2Checkpoint"]),
                  metadata(schema_string(("v", "long"))), add("f.parquet", 10, dv=dv),
                  {"remove": {"path": "f.parquet", "dataChange": True}}]
    name = f"{1:020d}.checkpoint.{uuid.uuid4()}.json"
    (tmp_path / "_delta_log" / name).write_text("\n".join(json.dumps(a) for a in checkpoint))
    (tmp_path / "_delta_log" / f"{0:020d}.json").unlink()
    with fs.open_table(tmp_path, format="delta") as t:
        assert [s.snapshot_id for s in t.history()] == [1]
        assert t.scan().count() == 9


def _json_checkpoint(root: Path, version: int, *files: str) -> str:
    """A JSON V2 checkpoint at ``version`` holding one-row ``files``; returns its file name."""
    actions = [{"checkpointMetadata": {"version": version}}, protocol(), metadata(schema_string(("v", "long"))),
               *(add(f, 1) for f in files)]
    name = f"{version:020d}.checkpoint.{uuid.uuid4()}.json"
    (root / "_delta_log" / name).write_text("\n".join(json.dumps(a) for a in actions))
    return name


def test_last_checkpoint_names_which_checkpoint_of_a_version_is_read(tmp_path: Path) -> None:
    """Two checkpoints at version 1 (they would agree when one writer made both; here they differ so the
    choice shows): ``_last_checkpoint`` picks one; without it, or when it names a checkpoint that is gone,
    the listing's rule (a V2 one first) holds."""
    for n in (1, 2):
        data(tmp_path, f"{n}.parquet", pa.table({"v": pa.array([n], pa.int64())}))
    commit(tmp_path, 0, protocol(), metadata(schema_string(("v", "long"))), add("1.parquet", 1))
    commit(tmp_path, 1, add("2.parquet", 1))
    first = _json_checkpoint(tmp_path, 1, "1.parquet")
    second = _json_checkpoint(tmp_path, 1, "1.parquet", "2.parquet")
    (tmp_path / "_delta_log" / f"{0:020d}.json").unlink()
    pointer = tmp_path / "_delta_log" / "_last_checkpoint"
    for name, expected in ((first, [1]), (second, [1, 2])):
        pointer.write_text(json.dumps({"version": 1, "size": 3, "v2Checkpoint": {"path": name}}))
        with fs.open_table(tmp_path, format="delta") as t:
            assert sorted(t.to_arrow()["v"].to_pylist()) == expected
    pointer.write_text(json.dumps({"version": 1, "size": 3, "v2Checkpoint": {"path": "gone.json"}}))
    with fs.open_table(tmp_path, format="delta") as t:
        assert t.scan().count() in (1, 2)  # a stale pointer: the listing decides
    pointer.write_text("{not json")
    with fs.open_table(tmp_path, format="delta") as t:
        assert t.scan().count() in (1, 2)


def test_a_checkpoint_of_a_kind_not_read_is_named_when_the_read_needs_it(tmp_path: Path) -> None:
    data(tmp_path, "1.parquet", pa.table({"v": pa.array([1], pa.int64())}))
    commit(tmp_path, 0, protocol(), metadata(schema_string(("v", "long"))), add("1.parquet", 1))
    commit(tmp_path, 1, add("1.parquet", 1))
    odd = tmp_path / "_delta_log" / f"{1:020d}.checkpoint.compacted.avro"
    odd.write_bytes(b"not read")
    with fs.open_table(tmp_path, format="delta") as t:  # every commit is there: the odd file is not needed
        assert [s.snapshot_id for s in t.history()] == [0, 1]
    (tmp_path / "_delta_log" / f"{0:020d}.json").unlink()
    with pytest.raises(UnsupportedFormatFeatureError, match=r"checkpoint \(0+1\.checkpoint\.compacted\.avro\)"):
        fs.open_table(tmp_path, format="delta")


def test_a_column_subset_decodes_only_its_columns(tmp_path: Path) -> None:
    name = data(tmp_path, "a.parquet", pa.table({"a": pa.array([1], pa.int64()), "b": ["x"], "c": [2.0]}))
    commit(tmp_path, 0, protocol(), metadata(schema_string(("a", "long"), ("b", "string"), ("c", "double"))),
           add(name, 1))
    with fs.open_table(tmp_path, format="delta") as t:
        scan = t.scan(columns=["c", "a"])
        (entry,) = scan.files()
        assert scan._by_mapping(pq.read_schema(tmp_path / name), entry).names == ["a", "c"]
        assert scan.to_arrow().to_pylist() == [{"c": 2.0, "a": 1}]


def test_column_comments_and_row_ids(tmp_path: Path) -> None:
    schema = json.dumps({"type": "struct", "fields": [
        {"name": "v", "type": "long", "nullable": True, "metadata": {"comment": "the value"}}]})
    name = data(tmp_path, "a.parquet", pa.table({"v": pa.array([1], pa.int64())}))
    action = add(name, 1)
    action["add"]["baseRowId"] = 40
    commit(tmp_path, 0, protocol(), metadata(schema), action)
    with fs.open_table(tmp_path, format="delta") as t:
        assert t.schema.find("v").doc == "the value"
        assert [f.first_row_id for f in t.scan().files()] == [40]


def test_iceberg_compatible_tables_give_list_and_map_children_their_stored_ids() -> None:
    """``delta.columnMapping.nested.ids`` (IcebergCompatV2) numbers list elements and map keys and values."""
    path = Path(__file__).parents[1] / "conformance" / "data" / "delta" / "table-with-icebegCompatV2Enabled"
    with fs.open_table(path, format="delta") as t:
        schema = t.schema
        assert schema.find("array_of_prims").type.element.id == 31
        assert schema.find(["array_of_arrays", "element"]).type.element.id == 33
        assert (schema.find("map_of_prims").type.key.id, schema.find("map_of_prims").type.value.id) == (43, 44)
        assert t.to_arrow().num_rows == 6


def test_a_table_whose_old_commits_deltalake_cleaned_up_reads_from_its_checkpoint(tmp_path: Path) -> None:
    """delta-rs writes a checkpoint, then ``cleanup_metadata`` deletes the commits it covers (once they are
    older than the log retention: their times are moved back here): the table still reads from the
    checkpoint, its history starts there, and a version before it is a named error."""
    import os
    import time

    from deltalake import DeltaTable, write_deltalake

    p = str(tmp_path / "t")
    write_deltalake(p, pa.table({"id": [1, 2, 3]}))
    write_deltalake(p, pa.table({"id": [4], "x": [1.5]}), mode="append", schema_mode="merge")
    DeltaTable(p).delete("id = 2")
    DeltaTable(p).create_checkpoint()
    write_deltalake(p, pa.table({"id": [5], "x": [2.5]}), mode="append")
    log = Path(p, "_delta_log")
    old = time.time() - 40 * 86400  # past the 30-day default retention
    for f in log.iterdir():
        os.utime(f, (old, old))
    DeltaTable(p).cleanup_metadata()
    assert not (log / f"{0:020d}.json").exists() and not (log / f"{1:020d}.json").exists()
    with fs.open_table(p) as t:
        assert [s.snapshot_id for s in t.history()] == [2, 3]
        for v in (2, 3):
            expected = DeltaTable(p, version=v).to_pyarrow_table().sort_by("id")
            assert t.to_arrow(snapshot_id=v).sort_by("id").to_pylist() == expected.to_pylist()
        assert t.schema.names == ["id", "x"]
        with pytest.raises(SnapshotNotFoundError, match="cleaned up"):
            t.scan(snapshot_id=1)
        with pytest.raises(SnapshotNotFoundError, match="no snapshot at or before"):
            t.scan(as_of=t.history()[0].timestamp - dt.timedelta(seconds=1))


def test_a_deltalake_table_with_several_checkpoints_reads_every_version_left_after_cleanup(tmp_path: Path) -> None:
    """Checkpoints at versions 2 and 4 (``_last_checkpoint`` names 4), then ``cleanup_metadata``: every
    version still readable equals delta-rs' read of it, including a schema change before the checkpoint."""
    import os
    import time

    from deltalake import DeltaTable, write_deltalake

    p = str(tmp_path / "t")
    write_deltalake(p, pa.table({"id": [1, 2, 3]}))
    write_deltalake(p, pa.table({"id": [4], "x": [1.5]}), mode="append", schema_mode="merge")
    DeltaTable(p).delete("id = 2")
    DeltaTable(p).create_checkpoint()
    write_deltalake(p, pa.table({"id": [5], "x": [2.5], "y": ["a"]}), mode="append", schema_mode="merge")
    DeltaTable(p).update({"x": "x + 1"}, predicate="id > 3")
    DeltaTable(p).create_checkpoint()
    write_deltalake(p, pa.table({"id": [6], "x": [0.5], "y": ["b"]}), mode="append")
    log = Path(p, "_delta_log")
    assert json.loads((log / "_last_checkpoint").read_text())["version"] == 4
    old = time.time() - 40 * 86400
    for f in log.iterdir():
        if f.name < f"{3:020d}":
            os.utime(f, (old, old))
    DeltaTable(p).cleanup_metadata()
    assert not (log / f"{1:020d}.json").exists()
    with fs.open_table(p) as t:
        versions = [s.snapshot_id for s in t.history()]
        assert versions[-1] == 5 and versions[0] >= 2
        for v in versions:
            expected = DeltaTable(p, version=v).to_pyarrow_table().sort_by("id")
            assert t.to_arrow(snapshot_id=v).sort_by("id").to_pylist() == expected.to_pylist(), v
        with pytest.raises(SnapshotNotFoundError, match="cleaned up"):
            t.scan(snapshot_id=1)
