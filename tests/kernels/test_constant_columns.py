"""Constant columns (defaults, partition values) equal ``pa.repeat`` of the same scalar, bit for bit."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest

from fieldshift.kernels.constants import CONSTANT_CACHE_BYTES, clear_constant_cache, constant_array

SCALARS = [
    pa.scalar(7, pa.int64()), pa.scalar(-3, pa.int8()), pa.scalar(2**64 - 1, pa.uint64()),
    pa.scalar(-0.0, pa.float64()), pa.scalar(float("nan"), pa.float32()), pa.scalar(float("-inf"), pa.float64()),
    pa.scalar(1.5, pa.float16()), pa.scalar(dt.date(1969, 12, 31), pa.date32()),
    pa.scalar(dt.date(2020, 1, 2), pa.date64()),
    pa.scalar(dt.datetime(2020, 1, 2, 3, 4, 5, 6), pa.timestamp("us", "Europe/Paris")),
    pa.scalar(dt.time(1, 2, 3), pa.time32("s")), pa.scalar(dt.timedelta(days=-5), pa.duration("ns")),
    pa.scalar((1, 2, 3), pa.month_day_nano_interval()), pa.scalar(decimal.Decimal("-1.5"), pa.decimal128(5, 1)),
    pa.scalar(True), pa.scalar("x"), pa.scalar(None, pa.int32()),
    pa.scalar({"a": 1, "b": None}, pa.struct([("a", pa.int32()), ("b", pa.string())])),
]


def _bits(arr: pa.Array) -> list[bytes | None]:
    return [b if b is None else b.to_pybytes()[: arr.nbytes] for b in arr.buffers()]


@pytest.mark.parametrize("value", SCALARS, ids=lambda v: str(v.type))
@pytest.mark.parametrize("length", [0, 1, 5, 3_000_000])
def test_constant_equals_repeat(value: pa.Scalar, length: int) -> None:
    clear_constant_cache()
    got = constant_array(value, length)
    got.validate(full=True)
    expected = pa.repeat(value, length) if value.is_valid else pa.nulls(length, value.type)
    assert got.type == expected.type and len(got) == length and got.null_count == expected.null_count
    if value.is_valid and pa.types.is_primitive(value.type):  # NaN != NaN: compare the bytes
        assert _bits(got)[1:] == _bits(expected)[1:]
    else:
        assert got.to_pylist() == expected.to_pylist()


def test_repeated_lengths_share_one_array_and_long_ones_are_not_held() -> None:
    clear_constant_cache()
    value = pa.scalar(7, pa.int64())
    assert constant_array(value, 10) is constant_array(value, 10)
    long = CONSTANT_CACHE_BYTES // 8  # too big for the cache: built anew every time, never held
    assert constant_array(value, long) is not constant_array(value, long)
