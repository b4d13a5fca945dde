"""Iceberg's bucket hash: the spec's worked examples, and agreement with PyIceberg's transforms (a test
peer, hashing one Python value at a time through mmh3) on random values of every hashable type."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyiceberg.transforms import BucketTransform
from pyiceberg.types import (
    BinaryType,
    DateType,
    DecimalType,
    FixedType,
    IntegerType,
    LongType,
    StringType,
    TimestampType,
    TimeType,
    UUIDType,
)

from fieldshift.kernels.murmur3 import UnhashableTypeError, bucket, iceberg_hash

N = 1_000_003  # a large prime: bucket numbers then differ whenever the hashes differ


def test_spec_examples() -> None:
    """Appendix B of the Iceberg table spec lists these hashes."""
    cases = [
        (pa.array([34], pa.int32()), 2017239379),
        (pa.array([34], pa.int64()), 2017239379),
        (pa.array([decimal.Decimal("14.20")], pa.decimal128(4, 2)), -500754589),
        (pa.array([dt.date(2017, 11, 16)]), -653330422),
        (pa.array([dt.time(22, 31, 8)]), -662762989),
        (pa.array([dt.datetime(2017, 11, 16, 22, 31, 8)], pa.timestamp("us")), -2047944441),
        (pa.array([dt.datetime(2017, 11, 16, 22, 31, 8)], pa.timestamp("us", tz="UTC")), -2047944441),
        (pa.array(["iceberg"]), 1210000089),
        (pa.array([uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7").bytes], pa.binary(16)), 1488055340),
        (pa.array([b"\x00\x01\x02\x03"], pa.binary(4)), -188683207),
        (pa.array([b"\x00\x01\x02\x03"]), -188683207),
    ]
    for arr, expected in cases:
        assert iceberg_hash(arr).to_pylist() == [expected], arr.type


def _peer(values: list, iceberg_type: object) -> list:
    transform = BucketTransform(N).transform(iceberg_type)
    return [transform(v) for v in values]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)), max_size=40), st.integers(0, 5))
def test_longs_and_slices(values: list, offset: int) -> None:
    arr = pa.array([0] * offset + values, pa.int64()).slice(offset)
    assert bucket(arr, N).to_pylist() == _peer(values, LongType())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-2**31, 2**31 - 1)), max_size=40))
def test_ints_hash_as_longs(values: list) -> None:
    for t in (pa.int32(), pa.int64()):
        assert bucket(pa.array(values, t), N).to_pylist() == _peer(values, IntegerType())
    small = [v if v is None else v % 128 for v in values]
    assert bucket(pa.array(small, pa.int8()), N).to_pylist() == _peer(small, IntegerType())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=12)), max_size=30), st.integers(0, 3))
def test_strings(values: list, offset: int) -> None:
    for t in (pa.string(), pa.large_string(), pa.string_view()):
        arr = pa.array(["x"] * offset + values, t).slice(offset)
        expected = _peer([None if v is None else v for v in values], StringType())
        assert bucket(arr, N).to_pylist() == expected, t


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=12)), max_size=30))
def test_binary(values: list) -> None:
    assert bucket(pa.array(values, pa.binary()), N).to_pylist() == _peer(values, BinaryType())
    fixed = [None if v is None else (v + b"\x00" * 5)[:5] for v in values]
    assert bucket(pa.array(fixed, pa.binary(5)), N).to_pylist() == _peer(fixed, FixedType(5))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-10**37, 10**37),
                          st.sampled_from([0, -1, 1, 127, 128, -128, -129, 255, 256, -256, -257, 2**63, -2**63])),
                max_size=30), st.integers(0, 6))
def test_decimals(unscaled: list, scale: int) -> None:
    values = [None if u is None else decimal.Decimal(f"{u}E-{scale}") for u in unscaled]  # exponent -scale
    arr = pa.array(values, pa.decimal128(38, scale))
    assert bucket(arr, N).to_pylist() == _peer(values, DecimalType(38, scale))
    wide = pa.array(values, pa.decimal256(40, scale))
    assert bucket(wide, N).to_pylist() == _peer(values, DecimalType(38, scale))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-2**62 // 1000, 2**62 // 1000)), max_size=30))
def test_timestamps_in_every_unit_hash_their_microseconds(micros: list) -> None:
    peer = _peer(micros, TimestampType())
    assert bucket(pa.array(micros, pa.timestamp("us")), N).to_pylist() == peer
    nanos = [None if m is None else m * 1000 + 999 for m in micros]  # floors to the same microsecond
    assert bucket(pa.array(nanos, pa.timestamp("ns")), N).to_pylist() == peer
    millis = [None if m is None else m // 1000 for m in micros]
    assert bucket(pa.array(millis, pa.timestamp("ms")), N).to_pylist() == \
        _peer([None if m is None else m * 1000 for m in millis], TimestampType())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-10**6, 10**6)), max_size=30))
def test_dates_and_times(days: list) -> None:
    assert bucket(pa.array(days, pa.date32()), N).to_pylist() == _peer(days, DateType())
    ms = [None if d is None else d * 86_400_000 for d in days]
    assert bucket(pa.array(ms, pa.date64()), N).to_pylist() == _peer(days, DateType())
    micros = [None if d is None else abs(d) * 1000 % 86_400_000_000 for d in days]
    assert bucket(pa.array(micros, pa.time64("us")), N).to_pylist() == _peer(micros, TimeType())


def test_uuid_extension() -> None:
    u = uuid.uuid4()
    assert bucket(pa.array([u.bytes], pa.uuid()), N).to_pylist() == _peer([u], UUIDType())


@pytest.mark.parametrize("t", [pa.float32(), pa.float64(), pa.bool_(), pa.uint64(), pa.list_(pa.int32())])
def test_types_without_an_iceberg_hash_are_refused(t: pa.DataType) -> None:
    with pytest.raises(UnhashableTypeError):
        iceberg_hash(pa.array([], t))


def test_bucket_count_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        bucket(pa.array([1]), 0)
