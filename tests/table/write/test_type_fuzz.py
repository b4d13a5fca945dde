"""Random nested schemas of every type fieldshift accepts, written to a table and read back unchanged.

The engine's fuzzing runs in memory; this one goes through Parquet files and the catalog, where a
layout Parquet cannot hold (a 64-bit date, a seconds unit, a view string) must still come back as
the recorded type with the same values.
"""

from __future__ import annotations

import math
import tempfile
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fieldshift as fs
from tests.strategies import arrow_data, schemas


def _same(a: Any, b: Any) -> bool:
    """Equal values, NaN equal to NaN (at any depth)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_schemas_round_trip_through_a_table(data: st.DataObject) -> None:
    schema = data.draw(schemas(defaults=False, docs=False, identifier_fields=False))
    rows = data.draw(arrow_data(schema))
    with tempfile.TemporaryDirectory() as d:
        table = fs.Table.create(f"{d}/t", schema.to_arrow())
        table.append(rows)
        got = table.scan().to_arrow()
    recorded = fs.Schema.from_arrow(got.schema)  # physical variants (large, view) are recorded logically
    assert recorded.logically_equal(schema), (got.schema, rows.schema)
    assert got.num_rows == rows.num_rows
    assert _same(got.to_pylist(), rows.to_pylist())
