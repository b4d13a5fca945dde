"""Iceberg manifests read through PyIceberg's Avro reader, into plain rows a planner can use.

PyIceberg 0.12 reads manifests with its v2 entry schema, which has no v3 fields: a deletion vector's
``referenced_data_file``, ``content_offset`` and ``content_size_in_bytes`` come back missing. So the
manifests are read here with PyIceberg's Avro reader and a v3 read schema projected to the fields a scan
needs, and entries inherit their
snapshot id and sequence numbers from the manifest as the spec says ("Sequence Number Inheritance").
Rows of status DELETED are dropped: they are not part of the snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["CONTENT_DATA", "CONTENT_EQUALITY_DELETES", "CONTENT_POSITION_DELETES", "ManifestRow", "read_manifest"]

CONTENT_DATA, CONTENT_POSITION_DELETES, CONTENT_EQUALITY_DELETES = 0, 1, 2
_ADDED, _DELETED = 1, 2


@dataclass(frozen=True, slots=True)
class ManifestRow:
    """One live file of a manifest (data, position deletes, a deletion vector or equality deletes), with
    its statistics still in Iceberg's binary form (decoded only for the columns a filter names)."""

    content: int
    path: str
    file_format: str
    partition: tuple[Any, ...]
    record_count: int
    file_size: int
    spec_id: int
    sequence_number: int
    snapshot_id: int | None
    value_counts: dict[int, int] | None
    null_counts: dict[int, int] | None
    nan_counts: dict[int, int] | None
    lower_bounds: dict[int, bytes] | None
    upper_bounds: dict[int, bytes] | None
    key_metadata: bytes | None
    equality_ids: tuple[int, ...] | None
    first_row_id: int | None
    referenced_data_file: str | None
    content_offset: int | None
    content_size: int | None


def _read_schema() -> Any:
    from pyiceberg.manifest import DATA_FILE_TYPE
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, LongType, NestedField, StructType

    data_file = StructType(*DATA_FILE_TYPE[3].fields)  # PyIceberg's resolver cannot skip a map or list field
    return Schema(
        NestedField(0, "status", IntegerType(), required=True),
        NestedField(1, "snapshot_id", LongType(), required=False),
        NestedField(3, "sequence_number", LongType(), required=False),
        NestedField(4, "file_sequence_number", LongType(), required=False),
        NestedField(2, "data_file", data_file, required=True),
    )


_SCHEMA: list[Any] = []  # built on first use: PyIceberg is an optional import


def read_manifest(manifest: Any, open_input: Callable[[str], Any]) -> list[ManifestRow]:
    """The live rows of one manifest (a PyIceberg ``ManifestFile`` from the snapshot's manifest list);
    ``open_input(path)`` is the table's FileIO ``new_input``."""
    from pyiceberg.avro.file import AvroFile

    if not _SCHEMA:
        _SCHEMA.append(_read_schema())
    schema = _SCHEMA[0]
    pos = {f.name: i for i, f in enumerate(schema.find_field(2).field_type.fields)}
    m_seq = manifest.sequence_number
    spec_id = manifest.partition_spec_id
    rows = []
    with AvroFile(open_input(manifest.manifest_path), schema) as reader:
        for entry in reader:
            status = entry[0]
            if status == _DELETED:
                continue
            snapshot_id = entry[1] if entry[1] is not None else manifest.added_snapshot_id
            seq = entry[2]
            if seq is None and (m_seq == 0 or status == _ADDED):
                seq = m_seq
            d = entry[4]
            eq = d[pos["equality_ids"]]
            rows.append(ManifestRow(
                content=int(d[pos["content"]]), path=d[pos["file_path"]],
                file_format=str(d[pos["file_format"]]).lower(),
                partition=tuple(d[pos["partition"]] or ()), record_count=d[pos["record_count"]],
                file_size=d[pos["file_size_in_bytes"]], spec_id=spec_id, sequence_number=int(seq or 0),
                snapshot_id=snapshot_id, value_counts=d[pos["value_counts"]], null_counts=d[pos["null_value_counts"]],
                nan_counts=d[pos["nan_value_counts"]], lower_bounds=d[pos["lower_bounds"]],
                upper_bounds=d[pos["upper_bounds"]], key_metadata=d[pos["key_metadata"]],
                equality_ids=tuple(int(i) for i in eq) if eq is not None else None,
                first_row_id=d[pos["first_row_id"]], referenced_data_file=d[pos["referenced_data_file"]],
                content_offset=d[pos["content_offset"]], content_size=d[pos["content_size_in_bytes"]]))
    return rows
