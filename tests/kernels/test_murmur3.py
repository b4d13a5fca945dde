"""Iceberg's bucket hash: the spec's worked examples, and agreement with PyIceberg's transforms (a test
peer, hashing one Python value at a time through mmh3) on random values of every hashable type."""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
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

from fieldshift.kernels.murmur3 import (
    NUMPY_MAX_BYTES,
    NUMPY_MAX_ROWS,
    UnhashableTypeError,
    bucket,
    hash_var_numpy,
    iceberg_hash,
)

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


@contextlib.contextmanager
def _numba_unloaded() -> Iterator[None]:
    """As in a fresh process: the numba kernel module not imported, so short values hash with numpy."""
    name = "fieldshift.kernels._nb_murmur3"
    saved = sys.modules.pop(name, None)
    try:
        yield
        assert name not in sys.modules  # the numpy path ran, not an import of the kernel
    finally:
        if saved is not None:
            sys.modules[name] = saved


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=12)), max_size=30), st.integers(0, 3))
def test_strings_hashed_with_numpy_before_numba_is_loaded(values: list, offset: int) -> None:
    expected = _peer(values, StringType())
    for t in (pa.string(), pa.large_string()):
        with _numba_unloaded():
            assert bucket(pa.array(["x"] * offset + values, t).slice(offset), N).to_pylist() == expected, t
    raw = [None if v is None else v.encode() for v in values]
    with _numba_unloaded():
        assert bucket(pa.array(raw, pa.binary()), N).to_pylist() == _peer(raw, BinaryType())


@pytest.mark.parametrize("gather", [1 << 20, 50])
@pytest.mark.parametrize("lengths", [[0], [10], [1, 2, 3, 4, 5, 8, 9], list(range(65)), [64, 0, 7]])
def test_numpy_hash_is_the_kernels_hash(lengths: list[int], gather: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from fieldshift.kernels import murmur3
    from fieldshift.kernels._nb_murmur3 import hash_var_values

    monkeypatch.setattr(murmur3, "_GATHER_INDICES", gather)  # 50: gathers of a few rows at a time

    rng = np.random.default_rng(len(lengths))
    values = [bytes(rng.integers(0, 256, lengths[i % len(lengths)], dtype=np.uint8)) for i in range(3000)]
    for arr in (pa.array(values, pa.binary()), pa.array(values, pa.large_binary()).slice(7, 2000)):
        _, offsets_buf, data_buf = arr.buffers()
        wide = np.int32 if arr.type == pa.binary() else np.int64
        offsets = np.frombuffer(offsets_buf, wide)[arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
        data = np.frombuffer(data_buf, np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
        kernel = np.empty(len(arr), np.int32)
        hash_var_values(offsets, data, kernel)
        assert np.array_equal(hash_var_numpy(offsets, data), kernel)


def test_long_or_many_values_load_the_kernel() -> None:
    for arr in (pa.array(["y" * (NUMPY_MAX_BYTES + 1), "a"]), pa.array(["a"] * (NUMPY_MAX_ROWS + 1))):
        name = "fieldshift.kernels._nb_murmur3"
        saved = sys.modules.pop(name, None)
        try:
            hashed = iceberg_hash(arr)
            assert name in sys.modules
        finally:
            if saved is not None:
                sys.modules[name] = saved
        assert hashed.equals(iceberg_hash(arr))


def test_a_fresh_process_keyed_append_of_short_keys_imports_no_numba(tmp_path: Path) -> None:
    script = (
        "import sys, pyarrow as pa, fieldshift as fs\n"
        "schema = pa.schema([pa.field('k', pa.string(), nullable=False), ('v', pa.int64())])\n"
        f"t = fs.Table.create({str(tmp_path / 't')!r}, schema, identifier_fields=['k'], buckets=4)\n"
        "t.append(pa.table({'k': [f'k{i}' for i in range(5000)], 'v': list(range(5000))}, schema=schema))\n"
        "assert t.scan().to_arrow().num_rows == 5000\n"
        "print('numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr
