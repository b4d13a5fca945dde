"""The scan-planning fast paths for integer statistics give exactly what the general paths give:
``load_value`` without a JSON parse, ``read_bounds`` without an Arrow round trip."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fieldshift.planner.nodes import Take
from fieldshift.table.catalog.sql import dump_value, load_value
from fieldshift.table.expressions.filters import sort_keys
from fieldshift.table.files.stats import decode_value, read_bounds

INT_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]


@settings(max_examples=300, deadline=None)
@given(st.integers(-(2**70), 2**70) | st.sampled_from([0, -1, 2**63 - 1, -(2**63), 2**64 - 1]))
def test_integers_load_as_the_json_path_loads_them(v: int) -> None:
    text = dump_value(v)
    assert load_value(text) == decode_value(json.loads(text)) == v and type(load_value(text)) is int


@pytest.mark.parametrize("v", [True, False, 1.5, "12", '{"int": "1"}', b"\x00", decimal.Decimal("1.10"),
                               dt.date(2024, 2, 29), dt.datetime(2024, 1, 1, 1, 2, 3), [1, "a"], {"k": 2}])
def test_other_values_take_the_json_path(v: object) -> None:
    text = dump_value(v)
    assert load_value(text) == decode_value(json.loads(text)) and type(load_value(text)) is type(v)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(INT_TYPES), st.integers(-(2**65), 2**65), st.integers(-(2**65), 2**65))
def test_integer_bounds_read_as_arrow_reads_them(t: pa.DataType, lo: int, hi: int) -> None:
    try:  # what the general path computes: the bounds as an array of the file type, as sort keys
        expected = tuple(sort_keys(pa.array([lo, hi], t)))
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        expected = None
    assert read_bounds(Take(0, t, "x"), t, lo, hi) == expected
