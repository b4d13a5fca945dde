"""Identity plans: a batch already in the read schema (names, child names, field ids) comes back as the
very object; one that differs only in names or metadata comes back relabelled, the same values."""

from __future__ import annotations

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift import Field, ListType, MapType, StructType

SCHEMA = fs.Schema([
    Field(1, "a", pa.int32()),
    Field(2, "li", ListType(Field(5, "element", pa.int64()))),
    Field(3, "m", MapType(Field(6, "key", pa.string(), nullable=False), Field(7, "value", pa.int32()))),
    Field(4, "st", StructType((Field(8, "inner", ListType(Field(9, "element", pa.string()))),))),
])
ARROW = SCHEMA.to_arrow()


def _batch(schema: pa.Schema) -> pa.RecordBatch:
    data = [pa.array([1, None], pa.int32()), pa.array([[1, 2], None], pa.list_(pa.int64())),
            pa.array([[("k", 1)], []], pa.map_(pa.string(), pa.int32())),
            pa.array([{"inner": ["x"]}, None], pa.struct([pa.field("inner", pa.list_(pa.string()))]))]
    return pa.RecordBatch.from_arrays(data, schema=ARROW).cast(schema) if schema is not ARROW else \
        pa.RecordBatch.from_arrays([d.cast(f.type) for d, f in zip(data, ARROW, strict=True)], schema=ARROW)


def _renamed(path: str) -> pa.Schema:
    fields = list(ARROW)
    if path == "list item":
        fields[1] = fields[1].with_type(pa.list_(pa.field("item", pa.int64())))
    elif path == "map key":
        fields[2] = fields[2].with_type(pa.map_(pa.field("k", pa.string(), nullable=False), fields[2].type.item_field))
    elif path == "nested list item":
        fields[3] = fields[3].with_type(pa.struct([pa.field("inner", pa.list_(pa.field("item", pa.string())))]))
    elif path == "field id":
        fields[0] = fields[0].with_metadata({b"PARQUET:field_id": b"1", b"other": b"x"})
    schema = pa.schema(fields)
    return schema.with_metadata({b"writer": b"test"}) if path == "schema metadata" else schema


def test_exact_batch_is_returned_as_is() -> None:
    plan = fs.plan(SCHEMA, SCHEMA)
    batch = _batch(ARROW)
    assert plan.identity and plan.apply(batch) is batch


@pytest.mark.parametrize("path", ["list item", "map key", "nested list item", "field id", "schema metadata"])
def test_batch_differing_in_names_or_metadata_is_relabelled(path: str) -> None:
    plan = fs.plan(SCHEMA, SCHEMA)
    exact = _batch(ARROW)
    other = pa.RecordBatch.from_arrays([c.view(f.type) for c, f in zip(exact.columns, _renamed(path), strict=True)],
                                       schema=_renamed(path))
    out = plan.apply(other)
    assert out.schema.remove_metadata().equals(plan.output_schema, check_metadata=True)
    assert [c.to_pylist() for c in out.columns] == [c.to_pylist() for c in exact.columns]
    if path not in ("schema metadata", "field id"):
        assert out is not other and out.schema.equals(plan.output_schema, check_metadata=True)
