"""Read a real PyIceberg table's data files with fieldshift and compare with PyIceberg's own scan.

PyIceberg is the reference reader here: it writes the tables (its own Parquet writer, its own schema
updates, its own metadata) and its ``scan().to_arrow()`` is the expected answer. fieldshift sees only
what an engine would see: the table's schema as Iceberg JSON and each data file with the field ids
in its Parquet footer.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.table import Table as IcebergTable

import fieldshift as fs
from fieldshift.schema.file_schema import file_schema_of

FIELD_ID_KEY = b"PARQUET:field_id"
NAME_MAPPING_PROPERTY = "schema.name-mapping.default"

__all__ = [
    "Reading",
    "append_rows",
    "assert_all_snapshots_conform",
    "assert_conforms",
    "fieldshift_read",
    "logical_arrow_type",
    "name_mapping_of",
    "read_schema_of",
]


# -- schemas ----------------------------------------------------------------------------------------
def read_schema_of(tbl: IcebergTable, snapshot_id: int | None = None) -> fs.Schema:
    """The table's schema (or a snapshot's) as fieldshift parses the Iceberg JSON PyIceberg stores."""
    iceberg_schema = _iceberg_schema(tbl, snapshot_id)
    return fs.Schema.from_json(iceberg_schema.model_dump_json(by_alias=True))


def _iceberg_schema(tbl: IcebergTable, snapshot_id: int | None) -> Any:
    if snapshot_id is None:
        return tbl.schema()
    snapshot = tbl.snapshot_by_id(snapshot_id)
    assert snapshot is not None and snapshot.schema_id is not None, f"snapshot {snapshot_id} has no schema id"
    return tbl.schemas()[snapshot.schema_id]


def logical_arrow_type(t: pa.DataType) -> Any:
    """A hashable description of an Arrow type that ignores physical variants and field metadata.

    large/view strings and binaries read as string/binary, every list layout as ``list`` (the
    element's name, ``element`` or ``item``, is dropped), map entries by key/value; struct children
    keep their names, order and nullability. Extension types (Iceberg's uuid) compare by their storage
    type: fieldshift reads a uuid column as the fixed[16] bytes Parquet stores.
    """
    if isinstance(t, pa.BaseExtensionType):
        return logical_arrow_type(t.storage_type)
    if pa.types.is_struct(t):
        return ("struct", tuple((f.name, f.nullable, logical_arrow_type(f.type)) for f in t))
    if pa.types.is_map(t):
        return ("map", logical_arrow_type(t.key_type), t.item_field.nullable, logical_arrow_type(t.item_type))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) \
            or pa.types.is_large_list_view(t):
        return ("list", t.value_field.nullable, logical_arrow_type(t.value_type))
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return "binary"
    return str(t)


def _logical_schema(schema: pa.Schema) -> list[Any]:
    return [(f.name, f.nullable, logical_arrow_type(f.type)) for f in schema]


# -- writing ----------------------------------------------------------------------------------------
def append_rows(tbl: IcebergTable, rows: list[dict[str, Any]]) -> None:
    """Append Python rows under the table's current schema (one new data file)."""
    tbl.append(pa.Table.from_pylist(rows, schema=tbl.schema().as_arrow()))


# -- reading with fieldshift ------------------------------------------------------------------------
@dataclass
class Reading:
    """fieldshift's answer for one snapshot, and what it was computed from."""

    table: pa.Table
    read_schema: fs.Schema
    file_schemas: list[fs.Schema]
    plans: list[fs.EvolutionPlan]


def data_file_paths(tbl: IcebergTable, snapshot_id: int | None = None) -> list[str]:
    """Local paths of the snapshot's data files (none of these tables has delete files)."""
    paths = []
    for task in tbl.scan(snapshot_id=snapshot_id).plan_files():
        assert not task.delete_files, "the conformance tables are append-only; delete files are not modelled"
        assert task.file.file_path.startswith("file://"), task.file.file_path
        paths.append(task.file.file_path.removeprefix("file://"))
    return paths


def name_mapping_of(tbl: IcebergTable) -> fs.NameMapping | None:
    """The table's ``schema.name-mapping.default`` (set by ``add_files``), parsed by fieldshift."""
    text = tbl.properties.get(NAME_MAPPING_PROPERTY)
    return fs.NameMapping.from_json(text) if text else None


def _has_ids(schema: pa.Schema) -> bool:
    return all(f.metadata and FIELD_ID_KEY in f.metadata for f in schema)


def fieldshift_read(tbl: IcebergTable, snapshot_id: int | None = None) -> Reading:
    """Every data file read with pyarrow and evolved by id into the (snapshot's) table schema.

    Files with ids in their footer are read by those ids; id-less files (added with ``add_files``)
    through the table's current name mapping, as the spec says.
    """
    read_schema = read_schema_of(tbl, snapshot_id)
    mapping = name_mapping_of(tbl)
    parts, file_schemas, plans = [], [], []
    for path in data_file_paths(tbl, snapshot_id):
        data = pq.read_table(path)
        if _has_ids(data.schema):
            file_schema = fs.Schema.from_arrow(data.schema)  # ids from the footer's PARQUET:field_id
            plan = fs.plan(file_schema, read_schema, policy=fs.CastPolicy.iceberg())
        else:  # the public path for id-less data: fs.plan(arrow_schema, ..., name_mapping=...)
            assert mapping is not None, f"{path} has no field ids and the table has no name mapping"
            file_schema = file_schema_of(data.schema, read_schema, name_mapping=mapping)  # for messages
            plan = fs.plan(data.schema, read_schema, policy=fs.CastPolicy.iceberg(), name_mapping=mapping)
        out = plan.apply(data)
        # the convenience entry point takes the same path: file schema from the data's ids (or mapping)
        evolved = fs.evolve(data, read_schema, policy=fs.CastPolicy.iceberg(), name_mapping=mapping)
        assert evolved.equals(out), f"fs.evolve and plan.apply disagree on {path}"
        parts.append(out)
        file_schemas.append(file_schema)
        plans.append(plan)
    out_schema = read_schema.to_arrow()
    table = pa.concat_tables(parts) if parts else out_schema.empty_table()
    return Reading(table, read_schema, file_schemas, plans)


# -- comparing --------------------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """Python values with uuids as their 16 bytes (fieldshift reads uuid columns as fixed[16])."""
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _sorted_rows(table: pa.Table, key: str) -> list[dict[str, Any]]:
    return sorted((_plain(r) for r in table.to_pylist()), key=lambda row: row[key])


def _explain(reading: Reading) -> str:
    pairs = zip(reading.file_schemas, reading.plans, strict=True)
    return "\n\n".join(f"file schema:\n{fsch}\nplan:\n{p.explain()}" for fsch, p in pairs)


def assert_conforms(tbl: IcebergTable, snapshot_id: int | None = None, *, key: str = "id",
                    check_ids: bool = True) -> Reading:
    """fieldshift's reading of the snapshot's files equals PyIceberg's scan: rows and logical types.

    ``check_ids=False`` skips only the check that the output carries the read schema's field ids
    (see test_identity_plan_output_carries_field_ids for why id-less files need it).
    """
    expected = tbl.scan(snapshot_id=snapshot_id).to_arrow()
    reading = fieldshift_read(tbl, snapshot_id)
    actual = reading.table
    where = f"snapshot {snapshot_id if snapshot_id is not None else 'current'}"

    # 1. the JSON round trip: fieldshift's schema is the one PyIceberg hands to its own writer
    iceberg_arrow = _iceberg_schema(tbl, snapshot_id).as_arrow()  # carries PARQUET:field_id
    assert fs.Schema.from_arrow(iceberg_arrow).logically_equal(reading.read_schema), (
        f"{where}: fieldshift parsed the Iceberg JSON into\n{reading.read_schema}\n"
        f"but PyIceberg's Arrow schema is\n{iceberg_arrow}"
    )
    # 2. our output is exactly the read schema (ids included)
    assert actual.schema.equals(reading.read_schema.to_arrow(), check_metadata=check_ids), (
        f"{where}: the output schema is not the read schema\n{actual.schema}"
    )
    # 3. the same columns, logical types and nullability as PyIceberg's scan
    assert _logical_schema(actual.schema) == _logical_schema(expected.schema), (
        f"{where}: types differ\nfieldshift: {actual.schema}\npyiceberg:  {expected.schema}"
    )
    # 4. the same rows
    assert actual.num_rows == expected.num_rows, where
    got, want = _sorted_rows(actual, key), _sorted_rows(expected, key)
    if got != want:
        diffs = [(g, w) for g, w in zip(got, want, strict=True) if g != w]
        raise AssertionError(
            f"{where}: {len(diffs)} row(s) differ; first:\nfieldshift: {diffs[0][0]}\npyiceberg:  {diffs[0][1]}\n"
            f"{_explain(reading)}"
        )
    return reading


def assert_all_snapshots_conform(tbl: IcebergTable, *, key: str = "id", check_ids: bool = True) -> int:
    """Time travel: every snapshot read with its own schema agrees with PyIceberg. Returns the count."""
    snapshots = tbl.snapshots()
    for snapshot in snapshots:
        assert_conforms(tbl, snapshot.snapshot_id, key=key, check_ids=check_ids)
    return len(snapshots)
