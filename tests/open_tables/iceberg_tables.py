"""Small Iceberg tables written by hand, file by file, for what PyIceberg cannot write.

PyIceberg 0.12 writes v1/v2 tables and deletes by rewriting files; it writes no position delete
files, no equality deletes, no deletion vectors and no v3 metadata. ``IcebergBuilder`` writes them
as the Iceberg spec lays them out: Parquet data files carrying field ids, Parquet position and equality
delete files, deletion vectors as ``deletion-vector-v1`` blobs in one Puffin file, manifests and manifest
lists in Avro (fastavro, with the field ids of PyIceberg's own manifest schemas), metadata JSON and a
``version-hint.text``. Sequence numbers are chosen by the test (one per commit), so the spec's rules on
which delete applies to which data file can be exercised exactly. DuckDB's ``iceberg_scan`` reads these
tables in the conformance suite, so they are checked against a peer as well as against the spec.
"""

from __future__ import annotations

import json
import struct
import uuid
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import fieldshift as fs

__all__ = ["Added", "IcebergBuilder", "encode_bound", "puffin_deletion_vectors"]

FILE_PATH_ID, POS_ID = 2147483546, 2147483545


def encode_bound(value: Any, t: pa.DataType) -> bytes | None:
    """Iceberg's binary single-value serialization of ``value`` in Arrow type ``t`` (None: not written)."""
    if value is None:
        return None
    if pa.types.is_int32(t):
        return struct.pack("<i", value)
    if pa.types.is_int64(t):
        return struct.pack("<q", value)
    if pa.types.is_float32(t):
        return struct.pack("<f", value)
    if pa.types.is_float64(t):
        return struct.pack("<d", value)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return value.encode()
    if pa.types.is_date32(t):
        return struct.pack("<i", pa.scalar(value, t).cast(pa.int32()).as_py())
    if pa.types.is_timestamp(t):
        return struct.pack("<q", pa.scalar(value, t).cast(pa.int64()).as_py())
    return None


def _roaring32(values: list[int]) -> bytes:
    """A 32-bit roaring bitmap in the portable format (array and bitmap containers, no runs)."""
    by_key: dict[int, list[int]] = {}
    for v in sorted(set(values)):
        by_key.setdefault(v >> 16, []).append(v & 0xFFFF)
    keys = sorted(by_key)
    out = struct.pack("<II", 12346, len(keys))
    out += b"".join(struct.pack("<HH", k, len(by_key[k]) - 1) for k in keys)
    bodies = []
    for k in keys:
        lows = by_key[k]
        if len(lows) > 4096:
            bits = bytearray(8192)
            for low in lows:
                bits[low >> 3] |= 1 << (low & 7)
            bodies.append(bytes(bits))
        else:
            bodies.append(b"".join(struct.pack("<H", low) for low in lows))
    offset = len(out) + 4 * len(keys)
    for body in bodies:
        out += struct.pack("<I", offset)
        offset += len(body)
    return out + b"".join(bodies)


def _deletion_vector_blob(positions: list[int]) -> bytes:
    """One ``deletion-vector-v1`` blob: BE length, magic, portable 64-bit roaring bitmap, BE CRC-32."""
    highs: dict[int, list[int]] = {}
    for p in positions:
        highs.setdefault(p >> 32, []).append(p & 0xFFFFFFFF)
    bitmap = struct.pack("<Q", len(highs)) + b"".join(
        struct.pack("<I", h) + _roaring32(lows) for h, lows in sorted(highs.items()))
    body = b"\xd1\xd3\x39\x64" + bitmap
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def puffin_deletion_vectors(vectors: list[tuple[str, list[int]]]) -> tuple[bytes, list[tuple[int, int]]]:
    """A Puffin file holding one deletion vector per (data file path, positions); and each blob's
    (offset, length)."""
    out = bytearray(b"PFA1")
    blobs, where = [], []
    for path, positions in vectors:
        blob = _deletion_vector_blob(positions)
        where.append((len(out), len(blob)))
        blobs.append({"type": "deletion-vector-v1", "fields": [2147483645], "snapshot-id": -1,
                      "sequence-number": -1, "offset": len(out), "length": len(blob),
                      "properties": {"referenced-data-file": path, "cardinality": str(len(set(positions)))}})
        out += blob
    payload = json.dumps({"blobs": blobs, "properties": {"created-by": "fieldshift tests"}}).encode()
    out += b"PFA1" + payload + struct.pack("<i", len(payload)) + b"\x00\x00\x00\x00" + b"PFA1"
    return bytes(out), where


@dataclass
class Added:
    """One file a commit adds (a manifest entry before its snapshot and sequence number are known)."""

    content: int  # 0 data, 1 position deletes (or a deletion vector), 2 equality deletes
    path: str
    file_format: str
    record_count: int
    file_size: int
    partition: tuple[Any, ...] = ()
    value_counts: dict[int, int] | None = None
    null_counts: dict[int, int] | None = None
    lower: dict[int, bytes] | None = None
    upper: dict[int, bytes] | None = None
    equality_ids: list[int] | None = None
    referenced: str | None = None
    offset: int | None = None
    size: int | None = None
    key_metadata: bytes | None = None
    snapshot_id: int | None = field(default=None, repr=False)
    sequence_number: int | None = field(default=None, repr=False)


class IcebergBuilder:
    """An Iceberg table written by hand under ``root`` (``root/metadata``, ``root/data``).

    ``schema`` is Iceberg schema JSON (schema id 0); ``spec`` the partition fields (Iceberg JSON, spec id
    0). ``data()``/``position_deletes()``/``equality_deletes()``/``deletion_vectors()`` write files and
    return their entries; ``commit(added, removed)`` writes a snapshot whose manifests hold every live
    file (earlier ones as EXISTING with their own sequence numbers)."""

    def __init__(self, root: Path, schema: dict[str, Any], *, format_version: int = 2,
                 spec: list[dict[str, Any]] | None = None, properties: dict[str, str] | None = None) -> None:
        self.root, self.format_version = root, format_version
        (root / "metadata").mkdir(parents=True, exist_ok=True)
        (root / "data").mkdir(parents=True, exist_ok=True)
        self.schemas = [{**schema, "schema-id": 0}]
        self.current_schema_id = 0
        self.spec = spec or []
        self.properties = dict(properties or {})
        self.snapshots: list[dict[str, Any]] = []
        self.log: list[dict[str, Any]] = []
        self.live: list[Added] = []
        self.manifests: list[dict[str, Any]] = []
        self.sequence = 0
        self.version = 0
        self.clock = 1_700_000_000_000
        self.next_row_id = 0
        self._files = 0
        self.metadata_path = self._write_metadata()

    # -- schema ---------------------------------------------------------------------------------
    @property
    def schema(self) -> fs.Schema:
        return fs.Schema.from_json(self.schemas[self.current_schema_id])

    def evolve(self, schema: dict[str, Any]) -> int:
        """Add a schema version and make it current (ids of new fields are the test's)."""
        sid = len(self.schemas)
        self.schemas.append({**schema, "schema-id": sid})
        self.current_schema_id = sid
        self.metadata_path = self._write_metadata()
        return sid

    # -- files ----------------------------------------------------------------------------------
    def _name(self, stem: str, ext: str) -> Path:
        self._files += 1
        return self.root / "data" / f"{self._files:03d}-{stem}.{ext}"

    def data(self, rows: pa.Table | list[dict[str, Any]], partition: tuple[Any, ...] = (), *,
             schema: fs.Schema | None = None, stats: bool = True, name: str = "data",
             file_format: str = "PARQUET") -> Added:
        """A Parquet data file of ``rows`` under the current schema (or ``schema``), ids in its footer."""
        target = (schema or self.schema).to_arrow()
        table = rows.cast(target) if isinstance(rows, pa.Table) else pa.Table.from_pylist(rows, schema=target)
        path = self._name(name, "parquet")
        pq.write_table(table, path)
        counts, nulls, lower, upper = {}, {}, {}, {}
        if stats:
            for i, f in enumerate(target):
                fid = int(f.metadata[b"PARQUET:field_id"])
                col = table.column(i)
                if pa.types.is_nested(f.type):
                    continue
                counts[fid], nulls[fid] = len(col), col.null_count
                valid = col.drop_null()
                if len(valid) and (lo := encode_bound(pa.compute.min(valid).as_py(), f.type)) is not None:
                    lower[fid] = lo
                    upper[fid] = encode_bound(pa.compute.max(valid).as_py(), f.type)
        return Added(0, path.as_uri(), file_format, table.num_rows, path.stat().st_size, partition,
                     counts or None, nulls or None, lower or None, upper or None)

    def position_deletes(self, deletes: list[tuple[Added, int]], partition: tuple[Any, ...] = (), *,
                         bounds: bool = True) -> Added:
        """A Parquet position delete file (``file_path``, ``pos``, sorted) deleting from several files."""
        pairs = sorted((d.path, pos) for d, pos in deletes)
        schema = pa.schema([pa.field("file_path", pa.string(), False, {"PARQUET:field_id": str(FILE_PATH_ID)}),
                            pa.field("pos", pa.int64(), False, {"PARQUET:field_id": str(POS_ID)})])
        table = pa.Table.from_pylist([{"file_path": p, "pos": n} for p, n in pairs], schema=schema)
        path = self._name("pos-deletes", "parquet")
        pq.write_table(table, path)
        lower = upper = None
        if bounds:
            lower = {FILE_PATH_ID: pairs[0][0].encode(), POS_ID: struct.pack("<q", min(n for _, n in pairs))}
            upper = {FILE_PATH_ID: pairs[-1][0].encode(), POS_ID: struct.pack("<q", max(n for _, n in pairs))}
        return Added(1, path.as_uri(), "PARQUET", len(pairs), path.stat().st_size, partition, lower=lower,
                     upper=upper)

    def equality_deletes(self, rows: list[dict[str, Any]], equality_ids: list[int], partition: tuple[Any, ...] = (),
                         *, schema: fs.Schema | None = None) -> Added:
        """A Parquet equality delete file of ``rows`` (columns of the current schema, or ``schema``)."""
        base = schema or self.schema
        names = list(rows[0]) if rows else []
        target = base.select(names).to_arrow()
        table = pa.Table.from_pylist(rows, schema=target)
        path = self._name("eq-deletes", "parquet")
        pq.write_table(table, path)
        return Added(2, path.as_uri(), "PARQUET", table.num_rows, path.stat().st_size, partition,
                     equality_ids=list(equality_ids))

    def deletion_vectors(self, vectors: list[tuple[Added, list[int]]]) -> list[Added]:
        """One Puffin file with a deletion vector per data file; an entry per vector."""
        data, where = puffin_deletion_vectors([(d.path, positions) for d, positions in vectors])
        path = self._name("deletion-vectors", "puffin")
        path.write_bytes(data)
        return [Added(1, path.as_uri(), "PUFFIN", len(set(positions)), len(data), d.partition, referenced=d.path,
                      offset=o, size=n) for (d, positions), (o, n) in zip(vectors, where, strict=True)]

    # -- commits --------------------------------------------------------------------------------
    def commit(self, added: list[Added], removed: list[Added] = (), *, operation: str = "append",
               inherit: bool = False) -> int:
        """A snapshot: ``added`` get this commit's sequence number (``inherit``: left null in the manifest,
        so readers inherit it from the manifest list), ``removed`` leave. Returns the snapshot id."""
        self.sequence += 1
        self.clock += 60_000
        snapshot_id = 1000 + self.sequence * 7919  # not ordered like the commits are: ids are only ids
        gone = {a.path + str(a.offset) for a in removed}
        self.live = [a for a in self.live if a.path + str(a.offset) not in gone]
        for a in added:
            a.snapshot_id, a.sequence_number = snapshot_id, self.sequence
        # a fast append keeps the earlier manifests and adds its own; a removal rewrites them all
        manifests = [] if removed else list(self.manifests)
        for content, name in ((0, "data"), (1, "deletes")):
            entries = [(a, 0) for a in self.live if (a.content == 0) == (content == 0)] if removed else []
            entries += [(a, 1) for a in added if (a.content == 0) == (content == 0)]
            if entries:
                manifests.append(self._manifest(entries, content, name, snapshot_id, inherit))
        self.manifests = manifests
        self.live += added
        rows = sum(a.record_count for a in added if a.content == 0)
        listing = self.root / "metadata" / f"snap-{snapshot_id}-{self.sequence}.avro"
        self._write_avro(listing, "manifest_file", _manifest_list_schema(), manifests,
                         {"snapshot-id": str(snapshot_id), "sequence-number": str(self.sequence),
                          "format-version": str(self.format_version),
                          "parent-snapshot-id": str(self.snapshots[-1]["snapshot-id"]) if self.snapshots else "null"})
        snap = {"snapshot-id": snapshot_id, "sequence-number": self.sequence, "timestamp-ms": self.clock,
                "manifest-list": listing.as_uri(), "summary": {"operation": operation},
                "schema-id": self.current_schema_id}
        if self.snapshots:
            snap["parent-snapshot-id"] = self.snapshots[-1]["snapshot-id"]
        if self.format_version >= 3:
            snap["first-row-id"], snap["added-rows"] = self.next_row_id, rows
            self.next_row_id += rows
        self.snapshots.append(snap)
        self.log.append({"snapshot-id": snapshot_id, "timestamp-ms": self.clock})
        self.metadata_path = self._write_metadata()
        return snapshot_id

    def _manifest(self, entries: list[tuple[Added, int]], content: int, name: str, snapshot_id: int,
                  inherit: bool) -> dict[str, Any]:
        path = self.root / "metadata" / f"manifest-{self.sequence}-{name}.avro"
        records = [self._entry(a, status, inherit) for a, status in entries]
        meta = {"schema": json.dumps(self.schemas[self.current_schema_id]), "partition-spec": json.dumps(self.spec),
                "partition-spec-id": "0", "format-version": str(self.format_version),
                "content": "data" if content == 0 else "deletes"}
        self._write_avro(path, "manifest_entry", self._entry_schema(), records, meta)
        added = [a for a, s in entries if s == 1]
        existing = [a for a, s in entries if s == 0]
        out = {"manifest_path": path.as_uri(), "manifest_length": path.stat().st_size, "partition_spec_id": 0,
               "content": content, "sequence_number": self.sequence,
               "min_sequence_number": min(a.sequence_number for a, _ in entries), "added_snapshot_id": snapshot_id,
               "added_files_count": len(added), "existing_files_count": len(existing), "deleted_files_count": 0,
               "added_rows_count": sum(a.record_count for a in added),
               "existing_rows_count": sum(a.record_count for a in existing), "deleted_rows_count": 0,
               "partitions": self._summaries([a for a, _ in entries]), "key_metadata": None, "first_row_id": None}
        if self.format_version >= 3 and content == 0:
            out["first_row_id"] = self.next_row_id
        return out

    def _summaries(self, files: list[Added]) -> list[dict[str, Any]] | None:
        """The manifest list's partition field summaries (null, bounds) of these files' partition values."""
        if not self.spec:
            return None
        out = []
        for i, f in enumerate(self.spec):
            values = [a.partition[i] for a in files]
            present = [v for v in values if v is not None]
            t = _partition_arrow(self, f)
            lo = encode_bound(min(present), t) if present else None
            hi = encode_bound(max(present), t) if present else None
            out.append({"contains_null": any(v is None for v in values), "contains_nan": False,
                        "lower_bound": lo, "upper_bound": hi})
        return out

    def _entry(self, a: Added, status: int, inherit: bool) -> dict[str, Any]:
        def as_map(m: dict[int, Any] | None) -> list[dict[str, Any]] | None:
            return None if m is None else [{"key": k, "value": v} for k, v in sorted(m.items())]

        fields = [f["name"] for f in self.spec]
        data_file = {
            "content": a.content, "file_path": a.path, "file_format": a.file_format,
            "partition": dict(zip(fields, a.partition, strict=True)), "record_count": a.record_count,
            "file_size_in_bytes": a.file_size, "column_sizes": None, "value_counts": as_map(a.value_counts),
            "null_value_counts": as_map(a.null_counts), "nan_value_counts": None, "lower_bounds": as_map(a.lower),
            "upper_bounds": as_map(a.upper), "key_metadata": a.key_metadata, "split_offsets": None,
            "equality_ids": a.equality_ids, "sort_order_id": None, "first_row_id": None,
            "referenced_data_file": a.referenced, "content_offset": a.offset, "content_size_in_bytes": a.size}
        seq = None if (inherit and status == 1) else a.sequence_number
        return {"status": status, "snapshot_id": a.snapshot_id, "sequence_number": seq,
                "file_sequence_number": seq, "data_file": data_file}

    def _entry_schema(self) -> dict[str, Any]:
        from pyiceberg.manifest import MANIFEST_ENTRY_SCHEMAS
        from pyiceberg.utils.schema_conversion import AvroSchemaConversion

        avro = AvroSchemaConversion().iceberg_to_avro(MANIFEST_ENTRY_SCHEMAS[3], schema_name="manifest_entry")
        data_file = next(f for f in avro["fields"] if f["name"] == "data_file")["type"]
        partition = next(f for f in data_file["fields"] if f["name"] == "partition")
        partition["type"] = {"type": "record", "name": "r102", "fields": [
            {"name": f["name"], "field-id": f["field-id"], "type": ["null", _partition_avro(self, f)], "default": None}
            for f in self.spec]}
        return avro

    def _write_avro(self, path: Path, name: str, schema: dict[str, Any], records: list[dict[str, Any]],
                    meta: dict[str, str]) -> None:
        import fastavro

        with open(path, "wb") as out:
            fastavro.writer(out, fastavro.parse_schema({**schema, "name": name}), records, metadata=meta)

    def _write_metadata(self) -> str:
        current = self.snapshots[-1]["snapshot-id"] if self.snapshots else None
        meta: dict[str, Any] = {
            "format-version": self.format_version, "table-uuid": str(uuid.UUID(int=7)), "location": self.root.as_uri(),
            "last-sequence-number": self.sequence, "last-updated-ms": self.clock,
            "last-column-id": max(_highest_id(s) for s in self.schemas),
            "current-schema-id": self.current_schema_id, "schemas": self.schemas, "default-spec-id": 0,
            "partition-specs": [{"spec-id": 0, "fields": self.spec}],
            "last-partition-id": max((f["field-id"] for f in self.spec), default=999),
            "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}],
            "properties": self.properties, "current-snapshot-id": current if current is not None else -1,
            "snapshots": self.snapshots, "snapshot-log": self.log, "metadata-log": [],
            "refs": {"main": {"snapshot-id": current, "type": "branch"}} if current is not None else {}}
        if self.format_version >= 3:
            meta["next-row-id"] = self.next_row_id
        self.version += 1
        path = self.root / "metadata" / f"v{self.version}.metadata.json"
        path.write_text(json.dumps(meta, indent=1))
        (self.root / "metadata" / "version-hint.text").write_text(str(self.version))
        return str(path)


def _highest_id(node: Any) -> int:
    """The largest field id anywhere in a schema's JSON (without parsing its types)."""
    if isinstance(node, dict):
        own = [v for k, v in node.items() if k in ("id", "element-id", "key-id", "value-id") and isinstance(v, int)]
        return max([*own, *(_highest_id(v) for v in node.values())], default=0)
    if isinstance(node, list):
        return max((_highest_id(v) for v in node), default=0)
    return 0


def _partition_avro(builder: IcebergBuilder, f: dict[str, Any]) -> Any:
    """The Avro type of a partition field's values (identity: the source column's type; else int)."""
    if f["transform"] != "identity":
        return "int"
    t = builder.schema.field(f["source-id"]).type
    if pa.types.is_int64(t):
        return "long"
    if pa.types.is_string(t):
        return "string"
    if pa.types.is_date32(t):
        return {"type": "int", "logicalType": "date"}
    return "int"


def _partition_arrow(builder: IcebergBuilder, f: dict[str, Any]) -> pa.DataType:
    """The Arrow type of a partition field's values (the source column's for identity; else int)."""
    return builder.schema.field(f["source-id"]).type if f["transform"] == "identity" else pa.int32()


def _manifest_list_schema() -> dict[str, Any]:
    from pyiceberg.manifest import MANIFEST_LIST_FILE_SCHEMAS
    from pyiceberg.utils.schema_conversion import AvroSchemaConversion

    return AvroSchemaConversion().iceberg_to_avro(MANIFEST_LIST_FILE_SCHEMAS[3], schema_name="manifest_file")
