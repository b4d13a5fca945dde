"""Read one Parquet file straight into a read schema, decoding only the columns the plan reads.

``fs.evolve(pq.read_table(path), schema)`` decodes every column, then evolves the table. Here the
file is read through Arrow's dataset scanner with a decode schema of only the columns the plan
reads (dropped ones are never decoded), then the table is evolved (its heavy columns on threads).

Two other shapes measured slower on W1's file (benchmarks/README.md, issue 17): evolving each batch
as the scanner yields it (the Python loop between batches costs more than the overlap gains), and
letting the scanner widen numbers while decoding (Arrow's cast is slower than the numpy widening,
even on its own threads); ``decode_schema(widen=True)`` keeps the latter for a caller who wants it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from fieldshift.planner import plan
from fieldshift.schema.formats.arrow_conversion import FIELD_ID_KEY
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy

__all__ = ["decode_schema", "read_parquet"]


def decode_schema(file_schema: pa.Schema, read_schema: Schema, *, policy: CastPolicy | None = None,
                  constants: Mapping[Any, Any] | None = None, name_mapping: Any = None,
                  widen: bool = False) -> pa.Schema:
    """The file's columns the read needs (with ``widen``, exact widenings already in their read type).

    Only for files whose every top-level column carries a field id: without ids, columns match by
    name mapping (or not at all), and a projection could change which of them match; such files
    are decoded whole, as ``pq.read_table`` would."""
    if not all(f.metadata and FIELD_ID_KEY in f.metadata for f in file_schema):
        return file_schema
    full = plan(file_schema, read_schema, policy=policy, constants=constants, name_mapping=name_mapping)
    needed = set(full.needed_input_columns())
    wider = full.widened_on_read() if widen else {}
    fields = [f.with_type(wider[i]) if i in wider else f for i, f in enumerate(file_schema) if f.name in needed]
    if not fields and len(file_schema):  # only new columns: one column read still counts the rows
        fields = [file_schema.field(0)]
    return pa.schema(fields, metadata=file_schema.metadata)


def read_parquet(path: str | Path, read_schema: Schema, *, policy: CastPolicy | None = None,
                 constants: Mapping[Any, Any] | None = None, name_mapping: Any = None) -> pa.Table:
    """The Parquet file at ``path`` as a Table of ``read_schema`` (the same answer as
    ``fs.evolve(pq.read_table(path), read_schema, ...)``, with the unread columns never decoded)."""
    schema = decode_schema(pq.read_schema(path), read_schema, policy=policy, constants=constants,
                           name_mapping=name_mapping)
    p = plan(schema, read_schema, policy=policy, constants=constants, name_mapping=name_mapping)
    import pyarrow.dataset as ds  # here, not at import: it loads pandas, which a scan or a commit never needs

    return p.apply(ds.dataset(path, schema=schema, format="parquet").to_table(use_threads=True))
