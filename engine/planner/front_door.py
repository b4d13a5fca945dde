"""The front door (re-exported by ``fieldshift``): ``plan()`` for a file schema, ``evolve()`` for any Arrow data."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa

from fieldshift.options import MatchMode
from fieldshift.planner.evolution_plan import EvolutionPlan
from fieldshift.planner.planning import arrow_plan, cached_plan
from fieldshift.schema.file_schema import has_field_ids
from fieldshift.schema.model import Schema
from fieldshift.schema.name_mapping import NameMapping
from fieldshift.schema.policy import CastPolicy

__all__ = ["evolve", "plan"]


def _constants_by_id(read_schema: Schema, constants: Mapping[Any, Any] | None) -> dict[int, Any]:
    if not constants:
        return {}
    return {(k if isinstance(k, int) else read_schema.find(k).id): v for k, v in constants.items()}


def plan(
    file_schema: Schema | pa.Schema,
    read_schema: Schema,
    *,
    policy: CastPolicy | None = None,
    name_mapping: Any = None,
    constants: Mapping[Any, Any] | None = None,
    match: MatchMode = "id",
) -> EvolutionPlan:
    """Plan how data written with ``file_schema`` reads as ``read_schema`` (cached).

    ``file_schema`` may be an Arrow schema (ids from ``PARQUET:field_id``, else the name mapping).
    ``constants`` (by field id or path) fill columns the file lacks before defaults do, e.g.
    identity-partition values. Raises one ``SchemaMismatchError`` listing every mismatch.
    """
    policy = policy or CastPolicy.lossless()
    by_id = _constants_by_id(read_schema, constants)
    if isinstance(file_schema, pa.Schema):
        return arrow_plan(file_schema, read_schema, policy, by_id, name_mapping, match)
    return cached_plan(file_schema, read_schema, policy, by_id)


def evolve(
    data: Any,
    read_schema: Schema,
    *,
    file_schema: Schema | None = None,
    policy: CastPolicy | None = None,
    name_mapping: Any = None,
    constants: Mapping[Any, Any] | None = None,
    match: MatchMode = "id",
) -> Any:
    """Evolve ``data`` into ``read_schema``, returning the same kind of object.

    ``file_schema`` is the schema the data was written with: data without field ids (polars, DuckDB)
    takes its ids from it by column name, never from the read schema (a renamed column would read NULL).

    ``data`` is a RecordBatch, Table, RecordBatchReader, or any object with ``__arrow_c_stream__``
    (polars and DuckDB results); streams stay lazy and come back as a RecordBatchReader.
    """
    if isinstance(data, (pa.RecordBatch, pa.Table)):
        p = plan(_source(data.schema, file_schema, name_mapping), read_schema, policy=policy,
                 name_mapping=_mapping(data.schema, file_schema, name_mapping), constants=constants, match=match)
        return p.apply(data)
    if not isinstance(data, pa.RecordBatchReader):
        if not hasattr(data, "__arrow_c_stream__"):
            raise TypeError(
                f"evolve() takes a pyarrow RecordBatch, Table or RecordBatchReader, or an object with "
                f"__arrow_c_stream__; got {type(data).__name__}"
            )
        data = pa.RecordBatchReader.from_stream(data)
    p = plan(_source(data.schema, file_schema, name_mapping), read_schema, policy=policy,
             name_mapping=_mapping(data.schema, file_schema, name_mapping), constants=constants, match=match)
    return pa.RecordBatchReader.from_batches(p.output_schema, _stream(p, data))


def _source(arrow: pa.Schema, file_schema: Schema | None, name_mapping: Any) -> Schema | pa.Schema:
    """What to plan from: the data's own Arrow schema unless the caller's file schema must supply the
    ids of data that carries them (the data's types always come from the data itself otherwise)."""
    if file_schema is None or (name_mapping is None and not has_field_ids(arrow)):
        return arrow
    return file_schema


def _mapping(arrow: pa.Schema, file_schema: Schema | None, name_mapping: Any) -> Any:
    """Id-less data (polars, DuckDB) written with ``file_schema``: its columns map by that schema's
    names, so types come from the data and ids from the schema it was written with."""
    if file_schema is not None and name_mapping is None and not has_field_ids(arrow):
        return NameMapping.from_schema(file_schema)
    return name_mapping


def _stream(p: EvolutionPlan, reader: pa.RecordBatchReader) -> Iterator[pa.RecordBatch]:
    for batch in reader:
        yield p.apply(batch)
