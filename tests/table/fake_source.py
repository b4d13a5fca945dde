"""A made-up table format for the read-source interface's tests: a few Parquet files and a Python dict of
metadata, nothing of fieldshift's catalog. It is the interface's second implementation (the catalog is the
first), so the scan pipeline is shown to need nothing but the interface.

The table, as its metadata dict says:

- schema 0: ``id`` int32 (field 1), ``name`` string (2), ``region`` string (3, identity partition);
- schema 1: ``id`` promoted to int64, ``name`` renamed ``label``, ``score`` double (4) added;
- snapshot 1: ``a.parquet`` (schema 0, written with field ids; region ``eu``);
- snapshot 2: adds ``b.parquet`` (written by a tool that writes no ids: a name mapping resolves its
  columns, including the old name ``name``; region ``us``) and ``c.parquet`` (schema 1, field ids; region
  ``eu``), and deletes row 1 of ``a.parquet`` with a position delete file.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import fieldshift as fs
from fieldshift.open_tables.source import (
    ColumnStats,
    DataFileEntry,
    DeleteFile,
    PartitionValue,
    SnapshotContent,
    SourcePartitionField,
    SourcePartitionSpec,
    SourceSnapshot,
)
from fieldshift.schema.name_mapping import NameMapping

__all__ = ["EXPECTED", "FakeSource", "write_fake_table"]


def _field(name: str, t: pa.DataType, fid: int) -> pa.Field:
    return pa.field(name, t, metadata={b"PARQUET:field_id": str(fid).encode()})


SCHEMA_0 = pa.schema([_field("id", pa.int32(), 1), _field("name", pa.string(), 2), _field("region", pa.string(), 3)])
SCHEMA_1 = pa.schema([_field("id", pa.int64(), 1), _field("label", pa.string(), 2), _field("region", pa.string(), 3),
                      _field("score", pa.float64(), 4)])

EXPECTED: dict[int, list[dict[str, Any]]] = {
    1: [{"id": 1, "name": "a", "region": "eu"}, {"id": 2, "name": "b", "region": "eu"},
        {"id": 3, "name": "c", "region": "eu"}],
    2: [{"id": 1, "label": "a", "region": "eu", "score": None},
        {"id": 3, "label": "c", "region": "eu", "score": None},
        {"id": 10, "label": "x", "region": "us", "score": None},
        {"id": 11, "label": "y", "region": "us", "score": None},
        {"id": 20, "label": "p", "region": "eu", "score": 0.5},
        {"id": 5_000_000_000, "label": "q", "region": "eu", "score": 1.5}],
}
"""The rows of each snapshot in its own schema (what every reader of the format must return)."""


def write_fake_table(root: Path) -> dict[str, Any]:
    """Write the files and return the format's metadata: a plain dict, as a catalog of the format would hold."""
    root.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.int32()), "name": ["a", "b", "c"],
                             "region": ["eu"] * 3}, schema=SCHEMA_0), root / "a.parquet")
    pq.write_table(pa.table({"id": pa.array([10, 11], pa.int32()), "name": ["x", "y"], "region": ["us", "us"]}),
                   root / "b.parquet")  # no field ids
    pq.write_table(pa.table({"id": pa.array([20, 5_000_000_000], pa.int64()), "label": ["p", "q"],
                             "region": ["eu", "eu"], "score": [0.5, 1.5]}, schema=SCHEMA_1), root / "c.parquet")
    pq.write_table(pa.table({"file_path": [str(root / "a.parquet")], "pos": pa.array([1], pa.int64())}),
                   root / "a-deletes.parquet")
    a = {"path": str(root / "a.parquet"), "rows": 3, "schema": 0, "region": "eu",
         "bounds": {1: (3, 0, 1, 3, pa.int32())}}
    b = {"path": str(root / "b.parquet"), "rows": 2, "schema": 0, "region": "us",
         "mapping": [{"field-id": 1, "names": ["id"]}, {"field-id": 2, "names": ["label", "name"]},
                     {"field-id": 3, "names": ["region"]}],
         "bounds": {1: (2, 0, 10, 11, pa.int32())}}
    c = {"path": str(root / "c.parquet"), "rows": 2, "schema": 1, "region": "eu",
         "bounds": {1: (2, 0, 20, 5_000_000_000, pa.int64())}}
    return {
        "name": "fake_table",
        "schemas": {0: SCHEMA_0, 1: SCHEMA_1},
        "snapshots": [
            {"id": 1, "at": "2024-01-01T00:00:00+00:00", "schema": 0, "files": [a]},
            {"id": 2, "at": "2024-02-01T00:00:00+00:00", "schema": 1,
             "files": [{**a, "deletes": [str(root / "a-deletes.parquet")]}, b, c]},
        ],
    }


class FakeSource:
    """The fake format's metadata as a ``ReadSource``."""

    format = "fake"
    writer = "the fake writer"
    partition_transforms = "iceberg"

    def __init__(self, metadata: dict[str, Any]) -> None:
        self.meta = metadata
        self.name = metadata["name"]
        self.policy = fs.CastPolicy.iceberg()
        self._schemas = {sid: fs.Schema.from_arrow(s, schema_id=sid) for sid, s in metadata["schemas"].items()}

    def snapshots(self) -> tuple[SourceSnapshot, ...]:
        return tuple(SourceSnapshot(s["id"], dt.datetime.fromisoformat(s["at"]), s["schema"])
                     for s in self.meta["snapshots"])

    def schemas(self) -> Mapping[int, fs.Schema]:
        return self._schemas

    def specs(self) -> tuple[SourcePartitionSpec, ...]:
        return (SourcePartitionSpec(0, (SourcePartitionField(3, 1000, "region", "identity"),)),)

    def content(self, snapshot_id: int | str) -> SnapshotContent:
        snap = next(s for s in self.meta["snapshots"] if s["id"] == snapshot_id)
        files = tuple(self._entry(f) for f in snap["files"])
        at = next(s for s in self.snapshots() if s.snapshot_id == snapshot_id)
        return SnapshotContent(at, self._schemas[snap["schema"]], files)

    def _entry(self, f: dict[str, Any]) -> DataFileEntry:
        mapping = NameMapping.from_json(f["mapping"]) if "mapping" in f else None
        stats = {fid: ColumnStats(vc, nc, lo, hi, type=t) for fid, (vc, nc, lo, hi, t) in f["bounds"].items()}
        deletes = tuple(DeleteFile(p, "parquet", data_file_path=f["path"]) for p in f.get("deletes", ()))
        return DataFileEntry(f["path"], f["rows"], schema_id=f["schema"], name_mapping=mapping,
                             partition=(PartitionValue(3, "identity", f["region"]),), stats=stats,
                             delete_files=deletes)
