"""Partition transforms match PyIceberg's (a test peer) value for value, including before the epoch."""

from __future__ import annotations

import datetime as dt
import decimal
import random

import pyarrow as pa
import pytest
from pyiceberg import transforms as it
from pyiceberg import types as ityp

from fieldshift.errors import PartitionSpecError
from fieldshift.table.partitions.transforms import Transform, parse_transform

RNG = random.Random(15)
N = 400
EPOCH = dt.datetime(1970, 1, 1)


def _ints(bits: int) -> list[int | None]:
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    vals = [RNG.randint(lo, hi) for _ in range(N)] + [RNG.randint(-1000, 1000) for _ in range(N)]
    return [*vals, 0, -1, 1, None]


def _check(transform: Transform, peer: it.Transform, arrow_type: pa.DataType, iceberg_type: ityp.IcebergType,
           values: list, to_peer=lambda v: v) -> None:
    arr = pa.array(values, arrow_type)
    ours = transform.keys(arr).to_pylist()
    fn = peer.transform(iceberg_type)
    theirs = [None if v is None else fn(to_peer(v)) for v in values]
    assert ours == theirs, [(v, a, b) for v, a, b in zip(values, ours, theirs, strict=True) if a != b][:5]


@pytest.mark.parametrize("n", [1, 7, 16, 1000])
def test_bucket_on_ints_longs_and_their_arrow_cousins(n: int) -> None:
    _check(Transform("bucket", n), it.BucketTransform(n), pa.int32(), ityp.IntegerType(), _ints(32))
    _check(Transform("bucket", n), it.BucketTransform(n), pa.int64(), ityp.LongType(), _ints(64))
    _check(Transform("bucket", n), it.BucketTransform(n), pa.int16(), ityp.IntegerType(), _ints(16))
    _check(Transform("bucket", n), it.BucketTransform(n), pa.uint32(), ityp.LongType(),
           [RNG.randint(0, 2**32 - 1) for _ in range(N)])


def test_bucket_on_strings_binary_decimals() -> None:
    words = ["", "a", "iceberg", "ünïcödé", "日本語テキスト", "🙂x", *("".join(chr(RNG.randint(32, 0x2FFF))
             for _ in range(RNG.randint(0, 12))) for _ in range(N)), None]
    for t in (pa.string(), pa.large_string(), pa.string_view()):
        _check(Transform("bucket", 16), it.BucketTransform(16), t, ityp.StringType(), words)
    blobs = [bytes(RNG.randrange(256) for _ in range(RNG.randint(0, 20))) for _ in range(N)] + [None]
    for t in (pa.binary(), pa.large_binary()):
        _check(Transform("bucket", 16), it.BucketTransform(16), t, ityp.BinaryType(), blobs)
    decs = [decimal.Decimal(RNG.randint(-10**12, 10**12)).scaleb(-4) for _ in range(N)] + [None]
    _check(Transform("bucket", 32), it.BucketTransform(32), pa.decimal128(18, 4), ityp.DecimalType(18, 4), decs)


def _timestamps() -> list[dt.datetime | None]:
    return [EPOCH + dt.timedelta(microseconds=RNG.randint(-(10**16), 10**16)) for _ in range(N)] + \
        [EPOCH, EPOCH - dt.timedelta(microseconds=1), EPOCH + dt.timedelta(hours=1) - dt.timedelta(microseconds=1),
         dt.datetime(1969, 12, 31, 23), dt.datetime(1, 1, 1), None]


def _micros(v: dt.datetime) -> int:
    return (v - EPOCH) // dt.timedelta(microseconds=1)


@pytest.mark.parametrize("kind", ["year", "month", "day", "hour"])
def test_time_transforms_floor_before_the_epoch(kind: str) -> None:
    peer = {"year": it.YearTransform(), "month": it.MonthTransform(), "day": it.DayTransform(),
            "hour": it.HourTransform()}[kind]
    ts = _timestamps()
    _check(Transform(kind), peer, pa.timestamp("us"), ityp.TimestampType(), ts, _micros)
    _check(Transform(kind), peer, pa.timestamp("us", "UTC"), ityp.TimestamptzType(),
           [None if v is None else v.replace(tzinfo=dt.UTC) for v in ts],
           lambda v: _micros(v.replace(tzinfo=None)))
    _check(Transform(kind), peer, pa.timestamp("ms", "America/New_York"), ityp.TimestamptzType(),
           [None if v is None else v.replace(microsecond=v.microsecond // 1000 * 1000, tzinfo=dt.UTC) for v in ts],
           lambda v: _micros(v.replace(tzinfo=None)))
    ns = [None if v is None else RNG.randint(-(2**62), 2**62) for v in ts]
    _check(Transform(kind), peer, pa.timestamp("ns"), ityp.TimestampNanoType(), ns)
    if kind != "hour":
        days = [EPOCH.date() + dt.timedelta(days=RNG.randint(-700_000, 700_000)) for _ in range(N)] + \
            [dt.date(1969, 12, 31), dt.date(1970, 1, 1), None]
        to_days = lambda d: (d - EPOCH.date()).days  # noqa: E731
        _check(Transform(kind), peer, pa.date32(), ityp.DateType(), days, to_days)
        _check(Transform(kind), peer, pa.date64(), ityp.DateType(), days, to_days)


def test_bucket_on_dates_times_timestamps() -> None:
    ts = _timestamps()
    _check(Transform("bucket", 10), it.BucketTransform(10), pa.timestamp("us"), ityp.TimestampType(), ts, _micros)
    _check(Transform("bucket", 10), it.BucketTransform(10), pa.timestamp("s"), ityp.TimestampType(),
           [None if v is None else v.replace(microsecond=0) for v in ts], _micros)
    ns = [RNG.randint(-(2**62), 2**62) for _ in range(N)] + [-1, 0, 999, -1000, -1001]
    _check(Transform("bucket", 10), it.BucketTransform(10), pa.timestamp("ns"), ityp.TimestampNanoType(), ns)
    days = [EPOCH.date() + dt.timedelta(days=RNG.randint(-700_000, 700_000)) for _ in range(N)]
    _check(Transform("bucket", 10), it.BucketTransform(10), pa.date32(), ityp.DateType(), days,
           lambda d: (d - EPOCH.date()).days)
    times = [dt.time(RNG.randrange(24), RNG.randrange(60), RNG.randrange(60), RNG.randrange(10**6)) for _ in range(N)]
    to_us = lambda t: ((t.hour * 60 + t.minute) * 60 + t.second) * 10**6 + t.microsecond  # noqa: E731
    _check(Transform("bucket", 10), it.BucketTransform(10), pa.time64("us"), ityp.TimeType(), times, to_us)
    _check(Transform("bucket", 10), it.BucketTransform(10), pa.time32("ms"), ityp.TimeType(),
           [t.replace(microsecond=t.microsecond // 1000 * 1000) for t in times], to_us)


@pytest.mark.parametrize("width", [1, 3, 10, 1000])
def test_truncate_ints_decimals_strings_binary(width: int) -> None:
    peer = it.TruncateTransform(width)
    _check(Transform("truncate", width), peer, pa.int32(), ityp.IntegerType(),
           [RNG.randint(-(2**30), 2**30) for _ in range(N)] + [-1, 0, None])
    _check(Transform("truncate", width), peer, pa.int64(), ityp.LongType(),
           [RNG.randint(-(2**62), 2**62) for _ in range(N)] + [-1, 0, -width, -width - 1, None])
    decs = [decimal.Decimal(RNG.randint(-10**12, 10**12)).scaleb(-3) for _ in range(N)] + [None]
    _check(Transform("truncate", width), peer, pa.decimal128(16, 3), ityp.DecimalType(16, 3), decs)
    words = ["", "ab", "ünïcödé", "日本語テキスト", "🙂🙂🙂🙂", *("".join(chr(RNG.randint(32, 0x1FFFF))
             for _ in range(RNG.randint(0, 15))) for _ in range(N)), None]
    words = [w for w in words if w is None or not any(0xD800 <= ord(c) <= 0xDFFF for c in w)]
    for t in (pa.string(), pa.large_string(), pa.string_view()):
        _check(Transform("truncate", width), peer, t, ityp.StringType(), words)
    blobs = [bytes(RNG.randrange(256) for _ in range(RNG.randint(0, 20))) for _ in range(N)] + [None]
    for t in (pa.binary(), pa.large_binary()):
        _check(Transform("truncate", width), peer, t, ityp.BinaryType(), blobs)


@pytest.mark.parametrize("width", [3, 10, 1000, 2**31 - 1])
def test_truncate_near_the_minimum_is_exact_as_the_specification_defines(width: int) -> None:
    """Issue 27: the floor of a value near the type's minimum lies below it; it is recorded exactly
    (as PyIceberg computes it), not wrapped to a huge positive number as Java's int arithmetic does."""
    peer = it.TruncateTransform(width)
    for bits, t, ityp_ in ((32, pa.int32(), ityp.IntegerType()), (64, pa.int64(), ityp.LongType()),
                           (16, pa.int16(), ityp.IntegerType()), (8, pa.int8(), ityp.IntegerType())):
        lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        edge = [lo, lo + 1, lo + 2, lo + width - 1, lo + width, -1, 0, hi, hi - 1, None]
        _check(Transform("truncate", width), peer, t, ityp_, [v for v in edge if v is None or lo <= v <= hi])
    got = Transform("truncate", width).values(pa.array([-(2**63), 2**63 - 1], pa.int64()))
    assert got[0] <= -(2**63) < got[0] + width and got[0] % width == 0 and type(got[0]) is int
    assert got[1] <= 2**63 - 1


def _cents(n: int) -> decimal.Decimal:
    """``n / 100`` exactly (Decimal arithmetic would round to 28 digits)."""
    return decimal.Decimal((int(n < 0), tuple(int(c) for c in str(abs(n))), -2))


def test_truncate_of_a_decimal_may_need_more_digits_than_its_column() -> None:
    """Issue 27: truncate[100] of -9999999.99 in a decimal(9,2) is -10000000.00 (precision 10)."""
    peer = it.TruncateTransform(100)
    values = [decimal.Decimal("-9999999.99"), decimal.Decimal("9999999.99"), decimal.Decimal("-0.01"), None]
    _check(Transform("truncate", 100), peer, pa.decimal128(9, 2), ityp.DecimalType(9, 2), values)
    big = [decimal.Decimal("-" + "9" * 36 + ".99"), decimal.Decimal("0.00"),
           *(_cents(RNG.randint(-(10**38) + 1, 10**38 - 1)) for _ in range(50))]
    for width in (7, 1000):  # exact past the 28 digits of Python's default decimal context
        _check(Transform("truncate", width), it.TruncateTransform(width), pa.decimal128(38, 2), ityp.DecimalType(38, 2),
               big)
    assert Transform("truncate", 100).values(pa.array(values, pa.decimal128(9, 2)))[0] == decimal.Decimal("-10000000")
    widest = decimal.Decimal("-" + "9" * 76)  # its floor has 77 digits, more than any Arrow decimal holds
    assert Transform("truncate", 10).values(pa.array([widest, None], pa.decimal256(76, 0))) == [widest - 1, None]
    assert Transform("truncate", 10**40).values(pa.array([-1, 5], pa.int64())) == [-(10**40), 0]


def test_identity_records_values_and_timestamps_as_nanoseconds() -> None:
    arr = pa.array([dt.datetime(1969, 12, 31, 23, 59, 59), None], pa.timestamp("s"))
    assert Transform("identity").values(arr) == [-10**9, None]
    assert Transform("identity").values(arr.cast(pa.timestamp("us"))) == [-10**9, None]
    assert Transform("identity").values(pa.array(["x", None], pa.string_view())) == ["x", None]
    assert Transform("void").values(pa.array([1, 2])) == [None, None]


@pytest.mark.parametrize(("transform", "t"), [
    ("bucket[4]", pa.uint64()), ("bucket[4]", pa.float64()), ("bucket[4]", pa.bool_()), ("bucket[4]", pa.float16()),
    ("truncate[4]", pa.float32()), ("truncate[4]", pa.uint64()), ("truncate[2]", pa.binary(4)),
    ("hour", pa.date32()), ("day", pa.int64()), ("year", pa.string()), ("identity", pa.duration("s")),
    ("identity", pa.list_(pa.int32())),
])
def test_undefined_types_are_refused_with_the_reason(transform: str, t: pa.DataType) -> None:
    with pytest.raises(PartitionSpecError, match=f"{transform.split('[')[0]}.*not defined for"):
        parse_transform(transform).check(t, "column 'c'")


def test_parse_names() -> None:
    assert parse_transform("days") == Transform("day")
    assert str(parse_transform("bucket[16]")) == "bucket[16]"
    with pytest.raises(PartitionSpecError, match="positive"):
        parse_transform("bucket[0]")
    with pytest.raises(PartitionSpecError, match="unknown partition transform"):
        parse_transform("weeks")
