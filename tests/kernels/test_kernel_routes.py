"""Each kernel's fast route gives exactly what its other route gives on the same input.

Checked integer narrowing answers failures with one numba pass (``range_checked_cast``) instead of
bisecting Arrow casts (``checked_cast``); string -> decimal trusts Arrow's cast on text too short to
wrap and validates first otherwise. Both routes run here on the same values: nulls, slices at odd
offsets, the target's edge values and failing values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fieldshift.kernels import (
    checked_cast,
    range_checked_cast,
    string_to_decimal,
    string_to_int,
    string_to_timestamp,
)
from fieldshift.kernels.warm import warm_up

NARROWINGS = [(pa.int64(), pa.int32()), (pa.int64(), pa.int16()), (pa.int64(), pa.uint32()),
              (pa.int32(), pa.int8()), (pa.uint64(), pa.int64()), (pa.int64(), pa.uint64()),
              (pa.int16(), pa.uint8()), (pa.uint32(), pa.int32())]


@pytest.fixture(scope="module", autouse=True)
def _numba() -> None:
    warm_up()  # the numba route, not Arrow's answer while numba compiles


def _same(fast: object, slow: object) -> None:
    assert fast.values.equals(slow.values)  # type: ignore[attr-defined]
    f, s = fast.failed, slow.failed  # type: ignore[attr-defined]
    assert (f is None) == (s is None) or (f is not None and not f.any()) or (s is not None and not s.any())
    if f is not None and s is not None:
        assert f.tolist() == s.tolist()


def _edges(source: pa.DataType, target: pa.DataType) -> list[int]:
    s, t = np.iinfo(source.to_pandas_dtype()), np.iinfo(target.to_pandas_dtype())
    out = [0, 1, -1, int(t.min), int(t.max), int(t.min) - 1, int(t.max) + 1, int(s.min), int(s.max)]
    return [v for v in out if s.min <= v <= s.max]


@pytest.mark.parametrize(("source", "target"), NARROWINGS, ids=[f"{a}->{b}" for a, b in NARROWINGS])
def test_narrowing_routes_agree_on_edges(source: pa.DataType, target: pa.DataType) -> None:
    values = _edges(source, target) * 5
    arr = pa.array([None if i % 7 == 3 else v for i, v in enumerate(values)], source)
    for start in (0, 1, 3, 8, 11):
        part = arr.slice(start)
        fast = range_checked_cast(part, target)
        _same(fast, checked_cast(part, target))
        assert fast.failed is not None and fast.failed.any()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), max_size=80),
       st.integers(0, 9), st.sampled_from(NARROWINGS[:5]))
def test_narrowing_routes_agree(values: list[int | None], start: int, pair: tuple[pa.DataType, pa.DataType]) -> None:
    source, target = pair
    info = np.iinfo(source.to_pandas_dtype())
    arr = pa.array([v if v is None or info.min <= v <= info.max else v % int(info.max) for v in values], source)
    part = arr.slice(min(start, len(arr)))
    _same(range_checked_cast(part, target), checked_cast(part, target))


DECIMAL_TEXT = ["1.25", "-0.00", "+1.5", ".5", "5.", "1E5", "9.99e9", "1e-3", "1e10", "0e50", "1.234", "1.2.3",
                "", " 1", "abc", "-", "99999999999.99", "999999999999.99", "12345678901234567890", None, "7"]
LONG = "1234567890123456789012345678901234567"  # 37 digits: Arrow wraps it rescaled to scale 10


@pytest.mark.parametrize("target", [pa.decimal128(12, 2), pa.decimal128(38, 10), pa.decimal128(20, 0),
                                    pa.decimal128(5, 5)])
def test_decimal_trusted_route_equals_validated_route(target: pa.DataType) -> None:
    short = pa.array(DECIMAL_TEXT, pa.string())
    trusted = string_to_decimal(short, target)  # no text long enough to wrap: Arrow first
    validated = string_to_decimal(pa.array([*DECIMAL_TEXT, LONG], pa.string()), target)  # validator first
    assert trusted.values.equals(validated.values.slice(0, len(short)))
    assert trusted.failed is not None and validated.failed is not None
    assert trusted.failed.tolist() == validated.failed[:-1].tolist()
    _same(trusted, checked_cast(short, target))


def test_decimal_long_text_is_refused_not_wrapped() -> None:
    out = string_to_decimal(pa.array([LONG, "1.5", None]), pa.decimal128(38, 10))
    assert out.failed is not None and out.failed.tolist() == [True, False, False]
    assert out.values.to_pylist()[0] is None


INT_TEXT = ["0", "-1", "127", "-128", "128", "-129", "255", "256", "65535", "-32768", "0x7f", "1.5", "", "+7",
            " 1", "12a", None, "007", "-0", "4294967295", "4294967296", "9223372036854775807",
            "18446744073709551615", "18446744073709551616", "-9223372036854775808", "00000000000000000000001"]


def _by_numba(monkeypatch: pytest.MonkeyPatch, kernel: Any, values: pa.Array, target: pa.DataType) -> Any:
    with monkeypatch.context() as m:
        m.setattr("fieldshift.kernels.numba_parse._ARROW_FIRST", False)
        return kernel(values, target)


def _same_outcome(a: Any, b: Any) -> None:
    assert a.values.equals(b.values)
    assert (a.failed is None) == (b.failed is None or not b.failed.any())
    if a.failed is not None:
        assert a.failed.tolist() == b.failed.tolist()


@pytest.mark.parametrize("target", [pa.int8(), pa.uint8(), pa.int16(), pa.uint16(), pa.int32(), pa.uint32(),
                                    pa.int64(), pa.uint64()])
@pytest.mark.parametrize("good_only", [True, False])
def test_int_from_text_by_arrow_first_equals_numba(target: pa.DataType, good_only: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Arrow's cast answers first; it must accept and refuse exactly what the numba parser does."""
    text = [t for t in INT_TEXT if t is None or checked_cast(pa.array([t]), target).failed is None] \
        if good_only else INT_TEXT
    values = pa.array(text * 3, pa.string())
    by_arrow_first = string_to_int(values, target)
    _same_outcome(by_arrow_first, _by_numba(monkeypatch, string_to_int, values, target))
    _same(by_arrow_first, checked_cast(values, target))


@pytest.mark.parametrize("target", [pa.timestamp("s"), pa.timestamp("ns"), pa.timestamp("us", "UTC")], ids=str)
def test_timestamp_from_text_by_arrow_first_equals_numba(target: pa.DataType,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    text = ["2020-01-01", "2020-01-01T12:34:56.123456789", "2020-01-01 12:34", "1677-09-21T00:12:43",
            "2262-04-11T23:47:16.854775807", "9999-12-31T23:59:59", "0001-01-01T00:00:00", None]
    if target.tz is not None:
        text = [t if t is None else t + "Z" for t in text] + ["2020-01-01T12:34:56+01:30"]
    for rows in (text, [*text, "2020-13-01", "x", "2020-01-01T12:34:56+01:00"]):
        values = pa.array(rows * 2)
        _same_outcome(string_to_timestamp(values, target), _by_numba(monkeypatch, string_to_timestamp, values, target))


def test_bad_rows_in_the_probe_skip_the_arrow_try(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long array whose first rows fail goes straight to numba (Arrow would parse it all, then raise)."""
    calls: list[int] = []
    real = pc.cast
    monkeypatch.setattr("fieldshift.kernels.numba_parse.pc.cast",
                        lambda *a, **k: calls.append(len(a[0])) or real(*a, **k))
    values = pa.array(["x"] + [str(i % 60_000) for i in range(20_000)])
    out = string_to_int(values, pa.uint16())  # a type Arrow parses first
    assert out.failed is not None and out.failed[0] and not out.failed[1:].any()
    assert calls == [1_024]  # the probe only
