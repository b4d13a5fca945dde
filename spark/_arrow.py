"""Giving Arrow batches exactly the schema Spark expects (names, types, nullability), cheaply.

Spark checks the batches a Python data source yields against ``to_arrow_schema(schema)`` exactly,
nullability included, and ``mapInArrow`` (with schema validation on) checks its output too. The
engine's plans already produce the right values in a Spark-compatible schema; what may still
differ is labels (field names, nullability, metadata, a timestamp's zone) — fixed with a zero-copy
``view`` — or, for types Spark has no counterpart for, the physical type — fixed with a cast.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["BatchConformer", "same_layout", "spark_arrow_schema"]

T = pa.types


def spark_arrow_schema(struct_type: Any, timezone: str = "UTC") -> pa.Schema:
    """The Arrow schema Spark expects for ``struct_type`` (what its Python workers compare against)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(struct_type, timezone=timezone)


def same_layout(a: pa.DataType, b: pa.DataType) -> bool:
    """True when an array of ``a`` can be relabelled as ``b`` without touching a byte.

    Names, nullability, metadata and a timestamp's zone may differ; widths and units may not.
    """
    if a.id != b.id:
        return False
    if T.is_timestamp(a):
        return a.unit == b.unit
    if T.is_struct(a):
        return a.num_fields == b.num_fields and all(
            same_layout(a.field(i).type, b.field(i).type) for i in range(a.num_fields))
    if T.is_map(a):
        return same_layout(a.key_type, b.key_type) and same_layout(a.item_type, b.item_type)
    if T.is_list(a) or T.is_large_list(a) or T.is_list_view(a) or T.is_large_list_view(a):
        return same_layout(a.value_type, b.value_type)
    if T.is_fixed_size_list(a):
        return a.list_size == b.list_size and same_layout(a.value_type, b.value_type)
    return a.equals(b)


def _labels_equal(a: pa.DataType, b: pa.DataType) -> bool:
    """Type equality including nested field names and nullability (metadata ignored)."""
    return a.equals(b)


class BatchConformer:
    """Turns batches of one source schema into ``target`` (per-column plan decided once)."""

    __slots__ = ("_actions", "_source", "target")

    def __init__(self, target: pa.Schema) -> None:
        self.target = target
        self._source: pa.Schema | None = None
        self._actions: list[str] = []

    def _decide(self, source: pa.Schema) -> None:
        if len(source) != len(self.target):
            raise ValueError(f"cannot give a batch of {len(source)} columns {source.names} the schema "
                             f"{self.target.names} ({len(self.target)} columns)")
        actions = []
        for s, t in zip(source, self.target, strict=True):
            if _labels_equal(s.type, t.type):
                actions.append("keep")
            elif same_layout(s.type, t.type):
                actions.append("view")
            else:
                actions.append("cast")
        self._source = source
        self._actions = actions

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        if batch.schema.equals(self.target, check_metadata=True):
            return batch
        if self._source is None or not batch.schema.equals(self._source):
            self._decide(batch.schema)
        columns = []
        for col, action, field in zip(batch.columns, self._actions, self.target, strict=True):
            if action == "view":
                col = col.view(field.type)
            elif action == "cast":
                col = _cast(col, field.type)
            columns.append(col)
        return pa.RecordBatch.from_arrays(columns, schema=self.target)


def _cast(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """A value-preserving cast into a Spark type (timestamps lose sub-microsecond digits, as in Spark)."""
    if T.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    try:
        return pc.cast(arr, target, safe=True)
    except pa.ArrowInvalid:
        if _has_timestamp(target):
            return pc.cast(arr, target, safe=False)
        raise


def _has_timestamp(t: pa.DataType) -> bool:
    if T.is_timestamp(t) or T.is_time(t):
        return True
    if T.is_struct(t):
        return any(_has_timestamp(t.field(i).type) for i in range(t.num_fields))
    if T.is_map(t):
        return _has_timestamp(t.key_type) or _has_timestamp(t.item_type)
    if hasattr(t, "value_type") and not T.is_dictionary(t):
        return _has_timestamp(t.value_type)
    return False
