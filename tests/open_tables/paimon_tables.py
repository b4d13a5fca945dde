"""Paimon tables written file by file for tests that must run without pypaimon (it pins an older pyarrow).

``PaimonBuilder`` lays a table out as Paimon's specification and pypaimon do: ``schema/schema-N`` JSON,
``snapshot/snapshot-N`` JSON, Avro manifest lists, manifests and index manifests (fastavro, with the
record schemas written out here from the format's field names), BinaryRow partition values and key
statistics, Parquet data files without field ids under ``<k=v>/bucket-N/`` (primary-key files with
``_KEY_<k>``, ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND`` before the values), and deletion-vector index files
(a version byte, then per vector its size, Paimon's magic number, a portable 32-bit RoaringBitmap, a
CRC-32). Only what the reader tests need: no statistics beyond the optional value bounds, no changelog.
With ``java_ids`` the data files carry field ids as Java Paimon's Parquet writer numbers them (ROW fields by
their ids, array elements and map keys and values from ``SpecialFields``' formulas, ``_KEY_`` columns and
the system columns near 2**31), which pypaimon's files lack.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import struct
import uuid
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["DV_MAGIC", "DataFile", "PaimonBuilder", "binary_row", "java_field_ids"]

DV_MAGIC = 1581511376

_STATS = {"type": "record", "name": "stats", "fields": [
    {"name": "_MIN_VALUES", "type": "bytes"}, {"name": "_MAX_VALUES", "type": "bytes"},
    {"name": "_NULL_COUNTS", "type": ["null", {"type": "array", "items": ["null", "long"]}], "default": None}]}
_FILE = {"type": "record", "name": "DataFileMeta", "fields": [
    {"name": "_FILE_NAME", "type": "string"}, {"name": "_FILE_SIZE", "type": "long"},
    {"name": "_ROW_COUNT", "type": "long"}, {"name": "_MIN_KEY", "type": "bytes"},
    {"name": "_MAX_KEY", "type": "bytes"},
    {"name": "_KEY_STATS", "type": {**_STATS, "name": "key_stats"}},
    {"name": "_VALUE_STATS", "type": {**_STATS, "name": "value_stats"}},
    {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"}, {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"},
    {"name": "_SCHEMA_ID", "type": "long"}, {"name": "_LEVEL", "type": "int"},
    {"name": "_EXTRA_FILES", "type": {"type": "array", "items": "string"}},
    {"name": "_CREATION_TIME", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}], "default": None},
    {"name": "_DELETE_ROW_COUNT", "type": ["null", "long"], "default": None},
    {"name": "_EMBEDDED_FILE_INDEX", "type": ["null", "bytes"], "default": None},
    {"name": "_FILE_SOURCE", "type": ["null", "int"], "default": None},
    {"name": "_VALUE_STATS_COLS", "type": ["null", {"type": "array", "items": "string"}], "default": None},
    {"name": "_EXTERNAL_PATH", "type": ["null", "string"], "default": None},
    {"name": "_FIRST_ROW_ID", "type": ["null", "long"], "default": None},
    {"name": "_WRITE_COLS", "type": ["null", {"type": "array", "items": "string"}], "default": None}]}
MANIFEST = {"type": "record", "name": "ManifestEntry", "fields": [
    {"name": "_VERSION", "type": "int"}, {"name": "_KIND", "type": "int"}, {"name": "_PARTITION", "type": "bytes"},
    {"name": "_BUCKET", "type": "int"}, {"name": "_TOTAL_BUCKETS", "type": "int"}, {"name": "_FILE", "type": _FILE}]}
MANIFEST_LIST = {"type": "record", "name": "ManifestFileMeta", "fields": [
    {"name": "_VERSION", "type": "int"}, {"name": "_FILE_NAME", "type": "string"},
    {"name": "_FILE_SIZE", "type": "long"},
    {"name": "_NUM_ADDED_FILES", "type": "long"}, {"name": "_NUM_DELETED_FILES", "type": "long"},
    {"name": "_PARTITION_STATS", "type": {**_STATS, "name": "partition_stats"}},
    {"name": "_SCHEMA_ID", "type": "long"}]}
INDEX_MANIFEST = {"type": "record", "name": "IndexManifestEntry", "fields": [
    {"name": "_VERSION", "type": "int"}, {"name": "_KIND", "type": "int"}, {"name": "_PARTITION", "type": "bytes"},
    {"name": "_BUCKET", "type": "int"}, {"name": "_INDEX_TYPE", "type": "string"},
    {"name": "_FILE_NAME", "type": "string"}, {"name": "_FILE_SIZE", "type": "long"},
    {"name": "_ROW_COUNT", "type": "long"},
    {"name": "_DELETIONS_VECTORS_RANGES", "type": ["null", {"type": "array", "items": {
        "type": "record", "name": "DeletionVectorMeta", "fields": [
            {"name": "f0", "type": "string"}, {"name": "f1", "type": "int"}, {"name": "f2", "type": "int"},
            {"name": "_CARDINALITY", "type": ["null", "long"], "default": None}]}}], "default": None},
    {"name": "_EXTERNAL_PATH", "type": ["null", "string"], "default": None}]}


def _slot_var(data: bytes, var: bytearray, base: int) -> bytes:
    """A string/binary slot: inline when it fits in 7 bytes, else an offset into the variable part."""
    if len(data) <= 7:
        word = bytearray(data.ljust(7, b"\0"))
        word.append(0x80 | len(data))
        return bytes(word)
    offset = base + len(var)
    var.extend(data + b"\0" * (-len(data) % 8))
    return struct.pack("<Q", (offset << 32) | len(data))


def binary_row(values: Sequence[Any], types: Sequence[pa.DataType]) -> bytes:
    """A serialised Paimon BinaryRow (with its 4-byte arity) of ``values`` typed ``types``."""
    n = len(values)
    nulls = bytearray(((n + 63 + 8) // 64) * 8)
    base = len(nulls) + 8 * n
    slots, var = bytearray(), bytearray()
    for i, (v, t) in enumerate(zip(values, types, strict=True)):
        if v is None:
            nulls[(i + 8) // 8] |= 1 << ((i + 8) % 8)
            slots += bytes(8)
            continue
        T = pa.types
        if T.is_boolean(t):
            slots += struct.pack("<?7x", v)
        elif T.is_int8(t) or T.is_int16(t) or T.is_int32(t):
            slots += struct.pack("<i4x", v)[:8] if T.is_int32(t) else struct.pack("<q", v)
        elif T.is_int64(t):
            slots += struct.pack("<q", v)
        elif T.is_float64(t):
            slots += struct.pack("<d", v)
        elif T.is_float32(t):
            slots += struct.pack("<f4x", v)
        elif T.is_string(t):
            slots += _slot_var(v.encode(), var, base)
        elif T.is_binary(t):
            slots += _slot_var(v, var, base)
        elif T.is_date32(t):
            slots += struct.pack("<i4x", (v - dt.date(1970, 1, 1)).days)
        elif T.is_decimal(t):
            unscaled = int(decimal.Decimal(v).scaleb(t.scale))
            if t.precision <= 18:
                slots += struct.pack("<q", unscaled)
            else:
                raw = unscaled.to_bytes(16, "big", signed=True)
                offset = base + len(var)
                var.extend(raw)
                slots += struct.pack("<Q", (offset << 32) | len(raw))
        elif T.is_timestamp(t):
            delta = v.replace(tzinfo=None) - dt.datetime(1970, 1, 1)
            micros = delta // dt.timedelta(microseconds=1)
            millis, rest = divmod(micros, 1000)
            if t.unit in ("s", "ms"):
                slots += struct.pack("<q", millis)
            else:
                offset = base + len(var)
                var.extend(struct.pack("<q", millis))
                slots += struct.pack("<Q", (offset << 32) | (rest * 1000))
        else:
            raise TypeError(t)
    return struct.pack(">i", n) + bytes(nulls) + bytes(slots) + bytes(var)


def deletion_vector(positions: Sequence[int], magic: int = DV_MAGIC) -> bytes:
    from pyroaring import BitMap

    body = struct.pack(">I", magic) + BitMap(positions).serialize()
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


@dataclass
class DataFile:
    """One data file to add: its value rows (and, in a primary-key table, their row kinds)."""

    rows: pa.Table
    partition: tuple[Any, ...] = ()
    bucket: int = 0
    level: int = 0
    schema_id: int | None = None
    kinds: Sequence[int] | None = None  # _VALUE_KIND per row (primary-key tables); +I by default
    sequence: Sequence[int] | None = None  # _SEQUENCE_NUMBER per row; the bucket's next numbers by default
    name: str = field(default_factory=lambda: f"data-{uuid.uuid4()}-0.parquet")
    extra: dict[str, Any] = field(default_factory=dict)  # DataFileMeta fields to override
    stats: tuple[list[Any], list[Any], list[int]] | None = None  # value bounds (min, max, nulls) of every field


_ID = b"PARQUET:field_id"
_INT_MAX = 2**31 - 1
_STRUCTURED_BASE = _INT_MAX // 4  # SpecialFields.STRUCTURED_TYPE_FIELD_ID_BASE
_KEY_BASE = _INT_MAX // 2  # SpecialFields.KEY_FIELD_ID_START
_SYSTEM_IDS = {"_SEQUENCE_NUMBER": _INT_MAX - 1, "_VALUE_KIND": _INT_MAX - 2}


def _java_typed(t: pa.DataType, json_type: Any, anchor: int, depth: int) -> pa.DataType:
    """``t`` with Java Paimon's ids on its nested fields: ROW fields their own, the rest by formula."""
    if pa.types.is_struct(t):
        fields = json_type["fields"]
        return pa.struct([_java_field(t.field(i), fields[i]["type"], fields[i]["id"]) for i in range(t.num_fields)])
    if pa.types.is_list(t):
        element = _STRUCTURED_BASE + anchor * 1024 + depth + 1
        inner = _java_typed(t.value_type, json_type["element"], anchor, depth + 1)
        return pa.list_(pa.field("element", inner, t.value_field.nullable, {_ID: str(element)}))
    if pa.types.is_map(t):
        key_id = _STRUCTURED_BASE - anchor * 1024 - depth - 1
        value_id = _STRUCTURED_BASE + anchor * 1024 + depth + 1
        key = _java_typed(t.key_type, json_type["key"], anchor, depth + 1)
        value = _java_typed(t.item_type, json_type["value"], anchor, depth + 1)
        return pa.map_(pa.field("key", key, False, {_ID: str(key_id)}),
                       pa.field("value", value, t.item_field.nullable, {_ID: str(value_id)}))
    return t


def _java_field(f: pa.Field, json_type: Any, fid: int) -> pa.Field:
    return pa.field(f.name, _java_typed(f.type, json_type, fid, 0), f.nullable, {_ID: str(fid)})


def java_field_ids(schema: pa.Schema, fields: list[dict[str, Any]]) -> pa.Schema:
    """A data file's schema with the field ids Java Paimon's Parquet writer gives it (``fields``: the schema
    file's fields the file was written with)."""
    by_name = {f["name"]: f for f in fields}
    out = []
    for f in schema:
        if f.name in by_name:
            out.append(_java_field(f, by_name[f.name]["type"], by_name[f.name]["id"]))
        elif f.name.startswith("_KEY_"):
            out.append(f.with_metadata({_ID: str(_KEY_BASE + by_name[f.name[5:]]["id"])}))
        else:
            out.append(f.with_metadata({_ID: str(_SYSTEM_IDS[f.name])}))
    return pa.schema(out)


class PaimonBuilder:
    """A Paimon table at ``<warehouse>/<db>.db/<table>``, committed snapshot by snapshot."""

    def __init__(self, warehouse: Path, name: str = "db.t", *, partition_keys: Sequence[str] = (),
                 primary_keys: Sequence[str] = (), options: dict[str, str] | None = None,
                 java_ids: bool = False) -> None:
        db, table = name.split(".")
        self.java_ids = java_ids
        self.root = Path(warehouse) / f"{db}.db" / table
        for d in ("schema", "snapshot", "manifest"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        self.partition_keys, self.primary_keys = list(partition_keys), list(primary_keys)
        self.options = dict(options or {})
        self.schemas: dict[int, list[dict[str, Any]]] = {}
        self.manifests: list[str] = []
        self.next_seq: dict[tuple[Any, ...], int] = {}
        self.snapshot_id = 0
        self.index_manifest: str | None = None
        self.time_ms = 1_700_000_000_000

    # -- schemas --------------------------------------------------------------------------------
    def schema(self, fields: list[dict[str, Any]], options: dict[str, str] | None = None) -> int:
        sid = len(self.schemas)
        self.schemas[sid] = fields
        if options is not None:
            self.options = dict(options)
        obj = {"version": 3, "id": sid, "fields": fields, "highestFieldId": max(f["id"] for f in fields),
               "partitionKeys": self.partition_keys, "primaryKeys": self.primary_keys, "options": self.options,
               "comment": None, "timeMillis": self.time_ms}
        (self.root / "schema" / f"schema-{sid}").write_text(json.dumps(obj, indent=2))
        return sid

    def _partition_types(self, sid: int) -> list[pa.DataType]:
        from fieldshift.open_tables.paimon_types import atomic_type

        by_name = {f["name"]: f for f in self.schemas[sid]}
        return [atomic_type(by_name[k]["type"], k)[0] for k in self.partition_keys]

    # -- files ----------------------------------------------------------------------------------
    def _write_data(self, f: DataFile, sid: int) -> dict[str, Any]:
        parts = []
        for k, v in zip(self.partition_keys, f.partition, strict=True):
            parts.append(f"{k}={'__DEFAULT_PARTITION__' if v is None else v}")
        directory = self.root.joinpath(*parts, f"bucket-{f.bucket}")
        directory.mkdir(parents=True, exist_ok=True)
        table = f.rows
        n = table.num_rows
        seq_key = (f.partition, f.bucket)
        if self.primary_keys:
            start = self.next_seq.get(seq_key, 0)
            seq = list(f.sequence) if f.sequence is not None else list(range(start, start + n))
            self.next_seq[seq_key] = max([start - 1, *seq]) + 1
            trimmed = [k for k in self.primary_keys if k not in self.partition_keys]
            cols = [table.column(k) for k in trimmed]
            names = [f"_KEY_{k}" for k in trimmed]
            kinds = pa.array(f.kinds if f.kinds is not None else [0] * n, pa.int8())
            table = pa.table([*cols, pa.array(seq, pa.int64()), kinds, *table.columns],
                             names=[*names, "_SEQUENCE_NUMBER", "_VALUE_KIND", *table.column_names])
            lo, hi = min(seq, default=0), max(seq, default=0)
        else:
            lo, hi = 0, 0
        path = directory / f.name
        if self.java_ids:
            table = table.cast(java_field_ids(table.schema, self.schemas[sid]))
        pq.write_table(table, path)
        empty = {"_MIN_VALUES": binary_row([], []), "_MAX_VALUES": binary_row([], []), "_NULL_COUNTS": []}
        value_stats = empty
        if f.stats is not None:
            from fieldshift.open_tables.paimon_types import field_from_json

            types = [field_from_json(x).type for x in self.schemas[sid]]
            value_stats = {"_MIN_VALUES": binary_row(f.stats[0], types), "_MAX_VALUES": binary_row(f.stats[1], types),
                           "_NULL_COUNTS": list(f.stats[2])}
        key_stats = empty
        if self.primary_keys and n:
            import pyarrow.compute as pc

            trimmed = [k for k in self.primary_keys if k not in self.partition_keys]
            cols = [f.rows.column(k) for k in trimmed]
            key_stats = {"_MIN_VALUES": binary_row([pc.min(c).as_py() for c in cols], [c.type for c in cols]),
                         "_MAX_VALUES": binary_row([pc.max(c).as_py() for c in cols], [c.type for c in cols]),
                         "_NULL_COUNTS": [c.null_count for c in cols]}
        meta = {"_FILE_NAME": f.name, "_FILE_SIZE": path.stat().st_size, "_ROW_COUNT": n,
                "_MIN_KEY": binary_row([], []), "_MAX_KEY": binary_row([], []), "_KEY_STATS": key_stats,
                "_VALUE_STATS": value_stats, "_MIN_SEQUENCE_NUMBER": lo, "_MAX_SEQUENCE_NUMBER": hi,
                "_SCHEMA_ID": sid, "_LEVEL": f.level, "_EXTRA_FILES": [], "_CREATION_TIME": None,
                "_DELETE_ROW_COUNT": 0, "_EMBEDDED_FILE_INDEX": None, "_FILE_SOURCE": 0,
                "_VALUE_STATS_COLS": None if f.stats is not None else [], "_EXTERNAL_PATH": None,
                "_FIRST_ROW_ID": None, "_WRITE_COLS": None}
        meta.update(f.extra)
        return meta

    def _avro(self, name: str, schema: dict[str, Any], records: list[dict[str, Any]]) -> str:
        with open(self.root / "manifest" / name, "wb") as out:
            fastavro.writer(out, fastavro.parse_schema(schema), records, codec="deflate")
        return name

    def commit(self, add: Sequence[DataFile] = (), delete: Sequence[tuple[DataFile, dict[str, Any]]] = (), *,
               schema_id: int | None = None, kind: str = "APPEND",
               vectors: dict[tuple[tuple[Any, ...], int], dict[str, Sequence[int]]] | None = None,
               dv_magic: int = DV_MAGIC) -> int:
        """A snapshot adding ``add``, deleting ``delete`` (files added before, with the meta ``add`` returned),
        and, with ``vectors``, a fresh index of deletion vectors per (partition, bucket): data file -> rows."""
        sid = max(self.schemas) if schema_id is None else schema_id
        entries, self.added = [], []
        types = self._partition_types(sid)
        buckets = int(self.options.get("bucket", "1"))
        for f in add:
            meta = self._write_data(f, f.schema_id if f.schema_id is not None else sid)
            self.added.append((f, meta))
            entries.append({"_VERSION": 2, "_KIND": 0, "_PARTITION": binary_row(list(f.partition), types),
                            "_BUCKET": f.bucket, "_TOTAL_BUCKETS": buckets, "_FILE": meta})
        for f, meta in delete:
            entries.append({"_VERSION": 2, "_KIND": 1, "_PARTITION": binary_row(list(f.partition), types),
                            "_BUCKET": f.bucket, "_TOTAL_BUCKETS": buckets, "_FILE": meta})
        self.snapshot_id += 1
        base = f"manifest-list-{uuid.uuid4()}-0"
        delta = f"manifest-list-{uuid.uuid4()}-1"
        empty = {"_MIN_VALUES": binary_row([], []), "_MAX_VALUES": binary_row([], []), "_NULL_COUNTS": []}
        listing = [{"_VERSION": 2, "_FILE_NAME": m, "_FILE_SIZE": 0, "_NUM_ADDED_FILES": 0, "_NUM_DELETED_FILES": 0,
                    "_PARTITION_STATS": empty, "_SCHEMA_ID": sid} for m in self.manifests]
        self._avro(base, MANIFEST_LIST, listing)
        new = []
        if entries:
            name = self._avro(f"manifest-{uuid.uuid4()}-0", MANIFEST, entries)
            new = [{**listing[0], "_FILE_NAME": name} if listing else
                   {"_VERSION": 2, "_FILE_NAME": name, "_FILE_SIZE": 0, "_NUM_ADDED_FILES": 0,
                    "_NUM_DELETED_FILES": 0, "_PARTITION_STATS": empty, "_SCHEMA_ID": sid}]
            self.manifests.append(name)
        self._avro(delta, MANIFEST_LIST, new)
        if vectors is not None:
            self.index_manifest = self._index(vectors, types, dv_magic)
        self.time_ms += 60_000
        snap = {"version": 3, "id": self.snapshot_id, "schemaId": sid, "baseManifestList": base,
                "deltaManifestList": delta, "totalRecordCount": 0, "deltaRecordCount": 0, "commitUser": "tests",
                "commitIdentifier": self.snapshot_id, "commitKind": kind, "timeMillis": self.time_ms}
        if self.index_manifest:
            snap["indexManifest"] = self.index_manifest
        (self.root / "snapshot" / f"snapshot-{self.snapshot_id}").write_text(json.dumps(snap))
        (self.root / "snapshot" / "LATEST").write_text(str(self.snapshot_id))
        return self.snapshot_id

    def _index(self, vectors: dict[tuple[tuple[Any, ...], int], dict[str, Sequence[int]]],
               types: list[pa.DataType], magic: int) -> str:
        (self.root / "index").mkdir(exist_ok=True)
        records = []
        for (partition, bucket), per_file in vectors.items():
            name = f"index-{uuid.uuid4()}-0"
            data, ranges = bytearray(b"\x01"), []
            for file_name, positions in per_file.items():
                blob = deletion_vector(positions, magic)
                ranges.append({"f0": file_name, "f1": len(data), "f2": len(blob) - 8, "_CARDINALITY": len(positions)})
                data += blob
            (self.root / "index" / name).write_bytes(bytes(data))
            records.append({"_VERSION": 1, "_KIND": 0, "_PARTITION": binary_row(list(partition), types),
                            "_BUCKET": bucket, "_INDEX_TYPE": "DELETION_VECTORS", "_FILE_NAME": name,
                            "_FILE_SIZE": len(data), "_ROW_COUNT": len(per_file),
                            "_DELETIONS_VECTORS_RANGES": ranges, "_EXTERNAL_PATH": None})
        return self._avro(f"index-manifest-{uuid.uuid4()}-0", INDEX_MANIFEST, records)
