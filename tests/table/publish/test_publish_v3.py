"""Publishing as Iceberg format v3: a table whose schema has initial or write defaults is published as v3
(defaults in the schemas, keyed deletes as Puffin deletion vectors, row lineage), read back by PyIceberg
with fieldshift's rows; a table without them stays v2."""

from __future__ import annotations

import itertools
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from fieldshift.open_tables.position_deletes import decode_deletion_vector
from fieldshift.table import Table
from fieldshift.table.publish.iceberg_io import StorageInput
from fieldshift.table.publish.iceberg_v3 import file_row_ids, manifest_first_row_id, read_manifest_list_v3
from tests.table.publish_helpers import fieldshift_rows, pyiceberg_rows, static_table


def _newest(t: Table) -> dict[str, Any]:
    hint = int((t.location / "metadata" / "version-hint.text").read_text())
    return json.loads((t.location / "metadata" / f"v{hint}.metadata.json").read_text())


def _keyed(tmp_path: Path) -> Table:
    t = Table.create(tmp_path / "k", pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())]),
                     identifier_fields=["id"], buckets=2, publish="iceberg")
    t.upsert({"id": [1, 2, 3], "v": ["a", "b", "c"]})
    return t


def test_a_table_without_defaults_stays_v2(tmp_path: Path) -> None:
    t = _keyed(tmp_path)
    t.upsert({"id": [2], "v": ["B"]})
    meta = _newest(t)
    assert meta["format-version"] == 2 and "next-row-id" not in meta
    assert all(p.suffix == ".parquet" for p in (t.location / "metadata" / "deletes").iterdir())


def test_defaults_publish_as_v3_with_deletion_vectors_read_back_by_pyiceberg(tmp_path: Path) -> None:
    t = _keyed(tmp_path)
    t.update_schema().add_column("score", pa.int64(), default=7).commit()  # the table becomes v3 here
    t.upsert({"id": [2, 4], "v": ["B", "d"], "score": [1, None]})
    t.delete([3])
    meta = _newest(t)
    assert meta["format-version"] == 3
    score = next(f for f in meta["schemas"][-1]["fields"] if f["name"] == "score")
    assert score["initial-default"] == 7 and score["write-default"] == 7
    for snap in t.history()[1:]:
        assert pyiceberg_rows(t, snap.snapshot_id) == fieldshift_rows(t, snap.snapshot_id)
    assert pyiceberg_rows(t, t.current_snapshot.snapshot_id) == [
        '{"id": 1, "score": 7, "v": "a"}', '{"id": 2, "score": 1, "v": "B"}', '{"id": 4, "score": null, "v": "d"}']
    # the deletes are Puffin files of deletion-vector-v1 blobs: length, magic, roaring bitmap, CRC-32
    puffins = sorted((t.location / "metadata" / "deletes").glob("*.puffin"))
    assert puffins and not list((t.location / "metadata" / "deletes").glob("*.parquet"))
    newest = next(p for p in puffins if p.name.endswith(f"-s{t.current_snapshot.snapshot_id}-dv.puffin"))
    data = newest.read_bytes()
    assert data[:4] == data[-4:] == b"PFA1"
    (size,) = struct.unpack("<I", data[-12:-8])
    footer = json.loads(data[-12 - size:-12])
    dropped, decoded = 0, 0
    for blob in footer["blobs"]:
        assert blob["type"] == "deletion-vector-v1" and blob["fields"] == [2147483645]
        assert blob["snapshot-id"] == blob["sequence-number"] == -1 and "compression-codec" not in blob
        raw = data[blob["offset"]:blob["offset"] + blob["length"]]
        (length,) = struct.unpack(">I", raw[:4])
        assert raw[4:8] == bytes([0xD1, 0xD3, 0x39, 0x64]) and length == len(raw) - 8
        assert struct.unpack(">I", raw[-4:])[0] == zlib.crc32(raw[4:-4])
        assert Path(blob["properties"]["referenced-data-file"]).is_file()
        dropped += int(blob["properties"]["cardinality"])
        decoded += len(decode_deletion_vector(raw, str(newest)))  # fieldshift's own Iceberg reader
    assert dropped == decoded == 2  # the rows of ids 2 and 3
    entries = [e for m in static_table(t).current_snapshot().manifests(static_table(t).io)
               for e in m.fetch_manifest_entry(static_table(t).io)]
    dv = [e.data_file for e in entries if e.data_file.file_format.name == "PUFFIN"]
    assert len(dv) == len(footer["blobs"]) and all(d.content.name == "POSITION_DELETES" for d in dv)


def test_row_lineage_assigns_disjoint_ids_and_keeps_them_when_manifests_are_rewritten(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
    t.append({"id": [0]})
    t.publish()  # v2 first: the table is upgraded when the default arrives
    t.update_schema().add_column("x", pa.int32(), default=5).commit()
    for i in range(1, 36):  # a finished block of 32 snapshots: its files move into one manifest as EXISTING
        t.append({"id": [i, -i]})
    t.publish()
    meta = _newest(t)
    assert meta["format-version"] == 3
    upgraded = [s for s in meta["snapshots"] if "first-row-id" in s]
    assert [s["snapshot-id"] for s in meta["snapshots"] if "first-row-id" not in s] == [1]  # written as v2
    for a, b in itertools.pairwise(upgraded):
        assert b["first-row-id"] == a["first-row-id"] + a["added-rows"]  # each snapshot's ids follow the last
    assert meta["next-row-id"] == upgraded[-1]["first-row-id"] + upgraded[-1]["added-rows"]

    def ids_at(entry: dict[str, Any]) -> dict[str, int | None]:
        rel = entry["manifest-list"][len(str(t.location)) + 1:]
        out: dict[str, int | None] = {}
        for m in read_manifest_list_v3(StorageInput(t.storage, rel, entry["manifest-list"])):
            assert manifest_first_row_id(m) is not None  # every data manifest has ids after the upgrade
            mrel = m.manifest_path[len(str(t.location)) + 1:]
            out.update(file_row_ids(m, StorageInput(t.storage, mrel, m.manifest_path)))
        return out

    first, last = ids_at(upgraded[0]), ids_at(upgraded[-1])
    assert set(first) <= set(last) and all(last[p] == first[p] for p in first)  # ids kept while a file lives
    starts = sorted(v for v in last.values() if v is not None)
    assert len(starts) == len(last) == 36 and len(set(starts)) == 36  # no two files share a range
    for snap in (1, 2, 20, t.current_snapshot.snapshot_id):
        assert pyiceberg_rows(t, snap) == fieldshift_rows(t, snap)


def test_vacuum_removes_deletion_vectors_only_expired_snapshots_named(tmp_path: Path) -> None:
    t = Table.create(tmp_path / "k", pa.schema([pa.field("id", pa.int64(), nullable=False),
                                                 pa.field("v", pa.string())]),
                     identifier_fields=["id"], buckets=1, publish="iceberg")
    t.update_schema().add_column("w", pa.string(), default="x").commit()
    t.upsert({"id": [1, 2], "v": ["a", "b"]})
    t.upsert({"id": [2], "v": ["B"]})
    t.upsert({"id": [1], "v": ["A"]})
    before = set((t.location / "metadata" / "deletes").glob("*.puffin"))
    t.expire_snapshots(older_than=0, retain_last=1)
    removed = t.vacuum(older_than=0)
    assert any(r.endswith(".puffin") for r in removed)
    assert set((t.location / "metadata" / "deletes").glob("*.puffin")) < before
    head = t.current_snapshot.snapshot_id
    assert pyiceberg_rows(t, head) == fieldshift_rows(t, head)
    assert len(pyiceberg_rows(t, head)) == 2


@pytest.mark.parametrize("kind", ["initial", "write"])
def test_a_commit_that_adds_defaults_to_a_published_table_is_no_longer_refused(tmp_path: Path, kind: str) -> None:
    t = Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]), publish="iceberg")
    t.append({"id": [1]})
    update = t.update_schema()
    update = (update.add_column("d", pa.string(), default="dflt") if kind == "initial"
              else update.add_column("d", pa.string(), write_default="w"))
    update.commit()
    t.append({"id": [2]})
    meta = _newest(t)
    assert meta["format-version"] == 3
    head = t.current_snapshot.snapshot_id
    assert pyiceberg_rows(t, head) == fieldshift_rows(t, head)
