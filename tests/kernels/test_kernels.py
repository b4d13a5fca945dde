"""Fast kernels against Arrow compute (values) and against plain Python (failure masks)."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fieldshift.kernels import (
    CastOutcome,
    get_kernel,
    get_threads,
    int_to_string,
    range_checked_cast,
    select_cast_kernel,
    set_threads,
    string_to_date32,
    string_to_decimal,
    string_to_float,
    string_to_int,
    string_to_timestamp,
)
from fieldshift.kernels.fast_casts import fast_kernel_for
from fieldshift.kernels.widen import numpy_widen, serves_numpy_widen

INT_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request: pytest.FixtureRequest) -> Iterator[int]:
    before = get_threads()
    set_threads(request.param)
    yield request.param
    set_threads(before)


@pytest.fixture(autouse=True, scope="module")
def numba_compiled() -> None:
    """These tests check the numba code: compile it first, so no call is answered by Arrow meanwhile."""
    from fieldshift.kernels.warm import warm_up

    warm_up()


@pytest.fixture(autouse=True)
def numba_formats_small_arrays_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """int -> string hands arrays under ~1,000 rows to Arrow, and text -> int / timestamp tries Arrow's
    cast first; here the numba code must see every row."""
    monkeypatch.setattr("fieldshift.kernels.numba_format._ARROW_BELOW", 0)
    monkeypatch.setattr("fieldshift.kernels.numba_parse._ARROW_FIRST", False)


def test_int_to_string_small_arrays_go_to_arrow(monkeypatch: pytest.MonkeyPatch) -> None:
    from fieldshift.kernels import numba_format

    monkeypatch.setattr(numba_format, "_ARROW_BELOW", 1_024)
    calls: list[int] = []
    real = numba_format._nb
    monkeypatch.setattr(numba_format, "_nb", lambda: calls.append(1) or real())
    small, big = random_ints(pa.int32(), 1_000), random_ints(pa.int32(), 5_000)
    assert int_to_string(small, pa.string()).values.equals(pc.cast(small, pa.string()))
    assert calls == []
    assert int_to_string(big, pa.string()).values.equals(pc.cast(big, pa.string()))
    assert calls == [1]


def int_range(t: pa.DataType) -> tuple[int, int]:
    bits = t.bit_width
    if pa.types.is_signed_integer(t):
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return 0, 2**bits - 1


def boundary_ints(t: pa.DataType) -> list[int]:
    lo, hi = int_range(t)
    values = {lo, lo + 1, hi, hi - 1, 0, 1}
    if lo < 0:
        values |= {-1, -9, -10, -11}
    for k in range(20):
        for v in (10**k - 1, 10**k, 10**k + 1, -(10**k) + 1, -(10**k), -(10**k) - 1):
            if lo <= v <= hi:
                values.add(v)
    return sorted(values)


def random_ints(t: pa.DataType, n: int, seed: int = 0, null_rate: float = 0.05) -> pa.Array:
    rng = np.random.default_rng(seed)
    lo, hi = int_range(t)
    dtype = t.to_pandas_dtype()
    values = rng.integers(lo, hi, n, dtype=dtype, endpoint=True)
    values[: len(boundary_ints(t))] = np.array(boundary_ints(t), dtype=dtype)[: n]
    return pa.array(values, type=t, mask=rng.random(n) < null_rate)


def slices(arr: pa.Array) -> list[pa.Array]:
    n = len(arr)
    return [arr, arr.slice(1), arr.slice(3, max(0, n - 5)), arr.slice(8), arr.slice(13, max(0, n // 2)),
            arr.slice(n // 3, 0)]


def arrow_per_row(values: pa.Array, target: pa.DataType) -> tuple[list[object], list[bool]]:
    """Cast each value alone with Arrow: (values with failures as None, failure flags)."""
    out: list[object] = []
    failed: list[bool] = []
    for i in range(len(values)):
        if not values[i].is_valid:
            out.append(None)
            failed.append(False)
            continue
        try:
            out.append(pc.cast(values.slice(i, 1), target, safe=True)[0])
            failed.append(False)
        except (pa.ArrowInvalid, OverflowError):
            out.append(None)
            failed.append(True)
    return out, failed


def mask_of(outcome: CastOutcome, n: int) -> list[bool]:
    assert outcome.failed is None or (outcome.failed.dtype == bool and len(outcome.failed) == n)
    return [False] * n if outcome.failed is None else outcome.failed.tolist()


def same_value(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is None and b is None
    x, y = a.as_py() if isinstance(a, pa.Scalar) else a, b.as_py() if isinstance(b, pa.Scalar) else b
    if isinstance(x, float) and isinstance(y, float) and x != x and y != y:
        return True
    return x == y and type(x) is type(y)


Kernel = Callable[[pa.Array, pa.DataType], CastOutcome]


def check_against_arrow_per_row(kernel: Kernel, strings: list[str | None],
                                target: pa.DataType) -> CastOutcome:
    """The kernel on each slice of ``strings`` agrees with Arrow casting row by row."""
    arr = pa.array(strings, pa.string())
    for part in slices(arr):
        outcome = kernel(part, target)
        outcome.values.validate(full=True)
        assert outcome.values.type == target
        expect, expect_failed = arrow_per_row(part, target)
        if pa.types.is_temporal(target):  # compare the stored numbers (year 0 has no Python date)
            got = outcome.values.cast(_storage(target)).to_pylist()
            expect = [None if e is None else e.cast(_storage(target)) for e in expect]
        else:
            got = outcome.values.to_pylist()
        bad = [(part[i].as_py(), got[i], expect[i]) for i in range(len(part))
               if not same_value(got[i], expect[i])]
        assert not bad, f"{target}: {bad[:5]}"
        assert mask_of(outcome, len(part)) == expect_failed
        assert outcome.values.null_count == part.null_count + outcome.failure_count
    return outcome


# -- int -> string -----------------------------------------------------------------------------------
@pytest.mark.parametrize("source", INT_TYPES, ids=str)
@pytest.mark.parametrize("target", [pa.string(), pa.large_string()], ids=str)
def test_int_to_string_matches_arrow(source: pa.DataType, target: pa.DataType, threads: int) -> None:
    arr = random_ints(source, 70_000 if threads == 2 else 3_000)
    for part in slices(arr):
        out = int_to_string(part, target)
        assert out.failed is None
        out.values.validate(full=True)
        assert out.values.equals(pc.cast(part, target))


def test_int_to_string_boundaries_and_python() -> None:
    values = [INT64_MIN, INT64_MIN + 1, INT64_MAX, INT32_MIN, INT32_MAX, -1, 0, 1, None, 10**18, -(10**18)]
    out = int_to_string(pa.array(values, pa.int64()), pa.string()).values
    assert out.to_pylist() == [None if v is None else str(v) for v in values]
    big = [2**64 - 1, 10**19, 10**19 - 1, 0]
    assert int_to_string(pa.array(big, pa.uint64()), pa.string()).values.to_pylist() == [str(v) for v in big]


def test_int_to_string_reuses_validity_buffer() -> None:
    arr = random_ints(pa.int32(), 1000)
    for offset in (0, 5, 16):
        part = arr.slice(offset)
        out = int_to_string(part, pa.string()).values
        assert out.buffers()[0].address == part.buffers()[0].address + offset // 8
        assert out.offset == offset % 8


@pytest.mark.parametrize("source", [pa.int32(), pa.int64()], ids=str)
def test_int_to_string_empty_all_null_no_null(source: pa.DataType) -> None:
    for arr in (pa.array([], source), pa.array([None, None], source), pa.array([5, -7, 0], source)):
        out = int_to_string(arr, pa.string())
        assert out.values.equals(pc.cast(arr, pa.string()))


def test_int_to_string_chunked() -> None:
    chunked = pa.chunked_array([[1, 2], [None, -3]], pa.int32())
    assert int_to_string(chunked, pa.string()).values.to_pylist() == ["1", "2", None, "-3"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(INT64_MIN, INT64_MAX)), max_size=80), st.integers(0, 9))
def test_int_to_string_roundtrip_property(values: list[int | None], offset: int) -> None:
    arr = pa.array(values, pa.int64()).slice(min(offset, len(values)))
    text = int_to_string(arr, pa.string()).values
    assert text.equals(pc.cast(arr, pa.string()))
    back = string_to_int(text, pa.int64())
    assert back.failed is None and back.values.equals(arr)


def _every_length(t: pa.DataType, n: int, rng: np.random.Generator) -> list[int]:
    """``n`` values of ``t`` whose decimal lengths (and signs) are spread evenly."""
    lo, hi = int_range(t)
    out = []
    for _ in range(n):
        k = int(rng.integers(0, 20))
        v = int(rng.integers(0, 2**62)) % (10 ** (k + 1)) if k else int(rng.integers(0, 10))
        v = -v if lo < 0 and rng.random() < 0.5 else v
        out.append(min(max(v, lo), hi))
    return out


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([pa.int32(), pa.int64(), pa.uint64(), pa.uint32(), pa.int16()]), st.integers(0, 3_000),
       st.sampled_from([0.0, 0.05, 0.5, 1.0]), st.integers(0, 9), st.integers(0, 2**32), st.booleans())
def test_int_to_string_every_length_property(t: pa.DataType, n: int, null_rate: float, offset: int, seed: int,
                                               huge: bool) -> None:
    """Blocks of rows with every text length, null pattern and slice offset, on both magnitude paths."""
    rng = np.random.default_rng(seed)
    values = _every_length(t, n, rng)
    if huge and values and t in (pa.int64(), pa.uint64()):
        values[int(rng.integers(0, n))] = int_range(t)[1]  # one wide value sends the array the wide way
    arr = pa.array(values, t, mask=rng.random(n) < null_rate).slice(min(offset, n))
    out = int_to_string(arr, pa.string()).values
    out.validate(full=True)
    assert out.to_pylist() == [None if v is None else str(v) for v in arr.to_pylist()]


@pytest.mark.parametrize("t", [pa.int32(), pa.uint32(), pa.int64(), pa.uint64()], ids=str)
def test_int_to_string_division_edges(t: pa.DataType) -> None:
    """Values either side of every multiple where the kernels' fast divisions could round wrongly."""
    lo, hi = int_range(t)
    edges = {hi, lo, 0, 1, 2**32 - 1, 2**32, 2**31, 2**53 + 1, 2**63 - 1, 2**64 - 1}
    edges |= {q * 10**8 + d for q in range(1, 43) for d in (-1, 0, 1)}  # narrow: u // 10**8
    edges |= {q * 10**4 + d for q in range(1, 10**4) for d in (-1, 0)}  # x // 10**4 inside eight digits
    # wide: float64 estimates of u // 10**8 one too big (below these multiples) and one too small (at
    # 100000000004 * 10**8 and 50000000002 * 10**8), each corrected
    big = (10**11, 100000000004, 50000000002, 184467440737, 92233720368, 10**10 + 7)
    edges |= {q * 10**8 + d for q in big for d in (-1, 0, 1)}
    edges |= {q * 10**16 + d for q in range(1, 1845) for d in (-1, 0)}  # wide: the second division
    values = sorted(v for e in edges for v in (e, -e) if lo <= v <= hi)
    arr = pa.array(values, t)
    assert int_to_string(arr, pa.string()).values.to_pylist() == [str(v) for v in values]


# -- string -> integers ------------------------------------------------------------------------------
INT_TEXT = [
    "12", "+12", "-12", " 12", "  12", "12 ", "0x1F", "0X1f", "-0x1F", "1e3", "", "-0", "+0", "00012", "-",
    "+", "1_000", "１２", "12.0", None, "0x80", "0xFF", "0x7F", "0x100", "0x0FF", "0x00FF", "-00", "0", "00",
    "0x-1", "0xabcdef", "0x", "0x0", "0x00000000000000001", "0x0000000000000001", "-128", "-129", "255",
    "256", "127", "-32768", "32767", "32768", "65535", "65536", str(INT32_MAX), str(INT32_MAX + 1),
    str(INT32_MIN), str(INT32_MIN - 1), "4294967295", "4294967296", str(INT64_MAX), str(INT64_MAX + 1),
    str(INT64_MIN), str(INT64_MIN - 1), "18446744073709551615", "18446744073709551616",
    "99999999999999999999", "0000000000000000000000000000018446744073709551615", "-18446744073709551615",
    "0xFFFFFFFFFFFFFFFF", "0xffffffff", "0x7fffffff", "0x80000000", "1a", "0x1g", "--1", "9" * 25, None,
    "7",
]


def python_int(text: str, t: pa.DataType) -> int | None:
    """Arrow's integer syntax in plain Python (None = the cast fails)."""
    bits, signed = t.bit_width, pa.types.is_signed_integer(t)
    lo, hi = int_range(t)
    m = re.fullmatch(r"0[xX]([0-9a-fA-F]+)", text)
    if m:
        if len(m.group(1)) > bits // 4:
            return None
        v = int(m.group(1), 16)
        return v - 2**bits if signed and v > hi else v
    m = re.fullmatch(r"(-?)([0-9]+)", text)
    if not m or (m.group(1) and not signed):
        return None
    v = int(text)
    return v if lo <= v <= hi else None


@pytest.mark.parametrize("target", INT_TYPES, ids=str)
def test_string_to_int_matches_arrow_and_python(target: pa.DataType) -> None:
    outcome = check_against_arrow_per_row(string_to_int, INT_TEXT, target)
    arr = pa.array(INT_TEXT, pa.string())
    outcome = string_to_int(arr, target)
    expect = [None if s is None else python_int(s, target) for s in INT_TEXT]
    assert outcome.values.to_pylist() == expect
    expect_failed = [s is not None and e is None for s, e in zip(INT_TEXT, expect, strict=True)]
    assert mask_of(outcome, len(arr)) == expect_failed


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(INT_TYPES), st.lists(st.one_of(st.none(), st.text("-+0123456789xXaf ", max_size=22)),
                                            min_size=1, max_size=40))
def test_string_to_int_short_text_equals_python(target: pa.DataType, texts: list[str | None]) -> None:
    """Up to 8 characters are parsed digit by digit, up to 19 eight at a time, longer ones by the general
    parser; all agree
    with Arrow's syntax written in Python, row by row (signs, leading zeros, hex, limits, junk)."""
    outcome = string_to_int(pa.array(texts, pa.string()), target)
    expect = [None if s is None else python_int(s, target) for s in texts]
    assert outcome.values.to_pylist() == expect
    assert mask_of(outcome, len(texts)) == [s is not None and e is None for s, e in zip(texts, expect, strict=True)]


@pytest.mark.parametrize("target", INT_TYPES, ids=str)
@pytest.mark.parametrize("source", [pa.string(), pa.large_string()], ids=str)
def test_string_to_int_random_equals_arrow(source: pa.DataType, target: pa.DataType, threads: int) -> None:
    values = random_ints(target, 70_000 if threads == 2 else 2_000, seed=3)
    text = pc.cast(values, source)
    for part in slices(text):
        outcome = string_to_int(part, target)
        assert outcome.failed is None
        outcome.values.validate(full=True)
        assert outcome.values.equals(pc.cast(part, target))


def test_string_to_int_many_failures_parallel(threads: int) -> None:
    rng = np.random.default_rng(5)
    n = 80_000
    good = rng.integers(-(10**12), 10**12, n)
    bad = rng.random(n) < 0.1
    strings = [("x" + str(v) if b else str(v)) for v, b in zip(good, bad, strict=True)]
    arr = pa.array(strings).slice(7)
    outcome = string_to_int(arr, pa.int64())
    assert np.array_equal(outcome.failed, bad[7:])
    expect = pa.array([None if b else int(v) for v, b in zip(good[7:], bad[7:], strict=True)], pa.int64())
    assert outcome.values.equals(expect)


def test_string_to_int_empty_and_all_null() -> None:
    for arr in (pa.array([], pa.string()), pa.array([None, None], pa.string())):
        outcome = string_to_int(arr, pa.int32())
        assert outcome.failed is None
        assert outcome.values.equals(pa.nulls(len(arr), pa.int32()))


# -- string -> float -----------------------------------------------------------------------------------
FLOAT_TEXT = [
    "1.5", "+1.5", "-1.5", ".5", "5.", "1e5", "1E5", "1e+5", "1e-5", "inf", "-inf", "+inf", "Inf", "INF",
    "infinity", "Infinity", "-Infinity", "nan", "NaN", "-nan", "+nan", "NAN", "1e400", "-1e400", "1e-400",
    "", " 1.5", "  12", "1.5 ", "0x1p3", "1.5f", "1d", "e5", ".", "-.5", "+.e1", "1e", "1e+", "1_0",
    "0.000000000000000000000000000000000001", "12345678901234567890123", "4.9e-324", "2.5e-324",
    "1.7976931348623157e308", "1.7976931348623159e308", None, "nan(123)", "nan()", "nan(1 2)", "infinit",
    "infinityy", "in", "iNfInItY", "1.5e5.5", "1.5E-0005", "..5", "1.", "-.", "+", "-", "0e0", "-0",
    "1e99999999999999999999", "1.5e-99999999999", "+-1", "--1", "1e-", "snan", "0.1", "3.14159", "1,5",
]


@pytest.mark.parametrize("target", [pa.float32(), pa.float64()], ids=str)
def test_string_to_float_matches_arrow(target: pa.DataType) -> None:
    check_against_arrow_per_row(string_to_float, FLOAT_TEXT, target)


def test_string_to_float_random_with_failures(threads: int) -> None:
    rng = np.random.default_rng(7)
    n = 70_000
    floats = rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)
    bad = rng.random(n) < 0.05
    text = [("?" if b else repr(float(v))) for v, b in zip(floats, bad, strict=True)]
    arr = pa.array(text).slice(3)
    outcome = string_to_float(arr, pa.float64())
    assert np.array_equal(outcome.failed, bad[3:])
    expect = np.where(bad[3:], np.nan, floats[3:])
    got = outcome.values.to_numpy(zero_copy_only=False)
    assert np.array_equal(np.isnan(got), bad[3:]) and np.array_equal(got[~bad[3:]], expect[~bad[3:]])
    good = pa.array(text[3:], pa.string()).filter(pa.array(~bad[3:]))
    assert outcome.values.filter(pa.array(~bad[3:])).equals(pc.cast(good, pa.float64()))


# -- string -> decimal ---------------------------------------------------------------------------------
DECIMAL_TEXT = [
    "1.23", "+1.23", "-1.23", "1.2", "1.234", "1.230", "1.2300000", "12345678.9", "123456789", "1e2",
    "1E-2", "1.5e1", "0.001", ".5", "5.", "-.5", "", "-", "1,5", " 1", "1 ", "nan", "inf",
    "00000000000000000001.5", "99999999.99", "-99999999.99", "100000000", "1.23e-1", "1.235e0", "0.0000",
    "-0", "1e38", "0e100", "1.23e+1", "1e", "1e+", None, "9" * 38, "-" + "9" * 38, "0." + "0" * 37 + "1",
    "1." + "0" * 40,
]
DECIMAL_TYPES = [pa.decimal128(10, 2), pa.decimal128(38, 0), pa.decimal128(4, 4), pa.decimal128(38, 38),
                 pa.decimal256(40, 2), pa.decimal128(5, -2), pa.decimal256(76, 38)]


@pytest.mark.parametrize("target", DECIMAL_TYPES, ids=str)
def test_string_to_decimal_matches_arrow(target: pa.DataType) -> None:
    check_against_arrow_per_row(string_to_decimal, DECIMAL_TEXT, target)


def test_string_to_decimal_refuses_what_arrow_silently_wraps() -> None:
    # Arrow 26 casts this 38-digit integer to decimal128(38, 10) as garbage instead of failing.
    text = pa.array(["12345678901234567890123456789012345678", "1.5"])
    outcome = string_to_decimal(text, pa.decimal128(38, 10))
    assert mask_of(outcome, 2) == [True, False]
    assert outcome.values.to_pylist()[1] == pc.cast(text.slice(1), pa.decimal128(38, 10))[0].as_py()



def _python_decimal(text: str, target: pa.DataType) -> object:
    """What the cast must give: the exact value when it has at most ``scale`` fraction digits and fits
    ``precision`` digits, else a failure (``FAILED``)."""
    import decimal

    with decimal.localcontext() as ctx:
        ctx.prec = 200
        value = decimal.Decimal(text)
        scaled = value.scaleb(target.scale)
        if scaled != scaled.to_integral_value() or abs(scaled) >= decimal.Decimal(10) ** target.precision:
            return FAILED
        return value.quantize(decimal.Decimal(1).scaleb(-target.scale))


FAILED = object()


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([pa.decimal128(38, 10), pa.decimal128(38, 0), pa.decimal128(38, 20), pa.decimal128(20, 5)]),
       st.from_regex(r"[+-]?[0-9]{1,23}(\.[0-9]{0,3})?[eE][+-]?[0-9]{1,2}", fullmatch=True))
@example(pa.decimal128(38, 10), "9e33")
@example(pa.decimal128(38, 20), "9e24")
@example(pa.decimal128(38, 0), "99999999999999999999e21")
@example(pa.decimal128(38, 0), "12345678901234567890123e18")
def test_short_exponent_text_to_decimal_never_wraps(target: pa.DataType, text: str) -> None:
    """Text short enough for Arrow's cast to be trusted by its length, but whose exponent scales it past
    38 digits (``9e33``): Arrow wraps some of it silently. The kernel fails every row that does not fit,
    gives the exact value of every row it keeps, and fails a row that fits only where Arrow refuses it
    too (Arrow refuses zeros with large exponents, ``0E40``). One row a call: a batch with a row that
    Arrow refuses is validated row by row anyway."""
    outcome = string_to_decimal(pa.array([text]), target)
    [fail], [value] = mask_of(outcome, 1), outcome.values.to_pylist()
    expect = _python_decimal(text, target)
    if expect is FAILED:
        assert fail and value is None
    elif fail:
        with pytest.raises(pa.ArrowInvalid):
            pc.cast(pa.array([text]), target)
    else:
        assert value == expect


# -- string -> date32 / timestamp ----------------------------------------------------------------------
DATE_TEXT = [
    "2020-01-01", "2020-1-1", "20200101", "2020-01-01T00:00", " 2020-01-01", "+2020-01-01", "-0001-01-01",
    "10000-01-01", "2020-02-30", "2020-02-29", "2019-02-29", "0000-01-01", "1969-12-31", "2020-01-01 ",
    "2020-13-01", "2020-00-10", "2020-01-00", "2020/01/01", "9999-12-31", "1900-02-29", "2000-02-29",
    "2020-01-01Z", "2020-01", None, "0001-01-01", "0000-02-29", "0000-12-31", "0000-02-30", "1600-02-29",
    "1700-02-29", "2020-04-31", "2020-12-31", "1970-01-01", "1234-05-06", "2020-0a-01", "", "1582-10-10",
    "2020-06-31", "2021-11-30",
]


def python_days(text: str) -> int | None:
    """Days since 1970-01-01 of strict ``YYYY-MM-DD`` (year 0 included, as Arrow accepts it)."""
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        return None
    y, m, d = (int(p) for p in text.split("-"))
    cycles = 1 if y == 0 else 0  # a 400-year cycle is 146097 days: moves year 0 into Python's range
    try:
        return dt.date(y + 400 * cycles, m, d).toordinal() - 146097 * cycles - dt.date(1970, 1, 1).toordinal()
    except ValueError:
        return None


def test_string_to_date32_matches_arrow_and_python() -> None:
    check_against_arrow_per_row(string_to_date32, DATE_TEXT, pa.date32())
    outcome = string_to_date32(pa.array(DATE_TEXT), pa.date32())
    expect = [None if s is None else python_days(s) for s in DATE_TEXT]
    assert outcome.values.cast(pa.int32()).to_pylist() == expect
    assert mask_of(outcome, len(DATE_TEXT)) == [s is not None and e is None
                                                for s, e in zip(DATE_TEXT, expect, strict=True)]


def test_string_to_date32_every_day_equals_arrow(threads: int) -> None:
    days = pa.array(np.arange(-719528, 2932897, 37, dtype=np.int32)).cast(pa.date32())  # 0000..9999
    text = pc.cast(days, pa.string())
    for part in slices(text):
        outcome = string_to_date32(part, pa.date32())
        assert outcome.failed is None and outcome.values.equals(pc.cast(part, pa.date32()))


TIMESTAMP_TEXT = [
    "2020-01-01", "2020-01-01T12", "2020-01-01T12:34", "2020-01-01T12:34:56", "2020-01-01 12:34:56",
    "2020-01-01T12:34:56.1", "2020-01-01T12:34:56.123", "2020-01-01T12:34:56.1234",
    "2020-01-01T12:34:56.123456", "2020-01-01T12:34:56.123456789", "2020-01-01T12:34:56.1234567891",
    "2020-01-01T12:34:56Z", "2020-01-01T12:34:56+01:00", "2020-01-01T12:34:56+0100",
    "2020-01-01T12:34:56+01", "2020-01-01T12:34:56-01:30", "2020-01-01T24:00:00", "2020-01-01T23:59:60",
    "2020-01-01T12:34:56.", "2020-01-01T1234", "2020-01-01T12:3", "2020-01-01t12:34", "1677-09-21T00:12:43",
    "1677-09-21T00:12:44", "2262-04-12T00:00:00", "2262-04-11T23:47:16", "2020-01-01T12:34:56,5",
    "2020-01-01T12:34:56.123Z", "20200101T123456", "2020-01-01T12:34:56 ", "2020-01-01T", "2020-01-01T12Z",
    "2020-01-01T12:34Z", "2020-01-01T12:34:56+1", "2020-01-01T12:34:56+01:0", "2020-01-01T12:34:56+24:00",
    "2020-01-01T12:34:56+23:59", "2020-01-01T12:34:56-00:00", "2020-01-01T12:34:56z",
    "2020-01-01T12:34:56+01:60", "2020-01-01T12:34:56+0160", "2020-01-01 12:34:56Z",
    "2020-01-01T12:34:56.123+01:00", "2020-01-01T12+01", "2020-01-01Z", "1677-09-21T00:12:43.145224192Z",
    "2262-04-11T23:47:16.854775807Z", "2262-04-11T23:47:16.854775808Z",
    "2262-04-12T00:47:16.854775807+01:00", "0001-01-01T00:00:00Z", "0001-01-01T00:00:00",
    "9999-12-31T23:59:59.999999999", "9999-12-31T23:59:59.999999", "1969-12-31T23:59:59.5",
    "1969-12-31T23:59:59.5Z", None, "2262-04-11T23:47:16.854775807", "2262-04-11T23:47:16.854775808",
    "1677-09-21T00:12:44.145224192", "1900-01-01T00:00:00-23:59", "1900-01-01T00:00:00.0a",
    "2020-02-30T00:00", "1960-05-05T05:05:05.000001", "2020-01-01T12:34:5", "2020-01-01T12:34:56.12x",
]
TIMESTAMP_TYPES = [pa.timestamp("s"), pa.timestamp("ms"), pa.timestamp("us"), pa.timestamp("ns"),
                   pa.timestamp("s", "UTC"), pa.timestamp("ns", "UTC"), pa.timestamp("us", "Europe/Paris")]


@pytest.mark.parametrize("target", TIMESTAMP_TYPES, ids=str)
def test_string_to_timestamp_matches_arrow(target: pa.DataType) -> None:
    text = TIMESTAMP_TEXT
    if target.tz is not None:  # zoned targets need a zone: also try every string with 'Z' appended
        text = text + [s + "Z" for s in text if s is not None]
    arr = pa.array(text)
    for part in slices(arr):
        outcome = string_to_timestamp(part, target)
        outcome.values.validate(full=True)
        expect, expect_failed = arrow_per_row(part, target)
        got = outcome.values.cast(pa.int64()).to_pylist()
        assert got == [None if e is None else e.cast(pa.int64()).as_py() for e in expect]
        assert mask_of(outcome, len(part)) == expect_failed


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_string_to_timestamp_random_equals_arrow(unit: str, threads: int) -> None:
    rng = np.random.default_rng(11)
    n = 70_000 if threads == 2 else 3_000
    secs = rng.integers(-(2**33), 2**33, n) if unit != "ns" else rng.integers(-(2**32), 2**32, n)
    micros = pa.array(secs * 1_000_000 + rng.integers(0, 1_000_000, n), mask=rng.random(n) < 0.05)
    ts = micros.cast(pa.timestamp("us"))
    if unit in ("s", "ms"):  # whole seconds ('T'); else microsecond fractions (' ')
        text = pc.strftime(ts.cast(pa.timestamp("s"), safe=False), "%Y-%m-%dT%H:%M:%S")
    else:
        text = pc.strftime(ts, "%Y-%m-%d %H:%M:%S")
    for part in slices(text):
        outcome = string_to_timestamp(part, pa.timestamp(unit))
        assert outcome.failed is None
        assert outcome.values.equals(pc.cast(part, pa.timestamp(unit)))


# -- range-checked casts -------------------------------------------------------------------------------
def range_cases() -> list[tuple[pa.DataType, pa.DataType, list[object]]]:
    cases: list[tuple[pa.DataType, pa.DataType, list[object]]] = []
    for source in (pa.int64(), pa.int32(), pa.uint64(), pa.int16(), pa.uint32()):
        for target in INT_TYPES:
            values: list[object] = [*boundary_ints(source), None]
            cases.append((source, target, values))
    ints = [2**53, 2**53 + 1, -(2**53), -(2**53) - 1, 2**24, 2**24 + 1, -(2**24) - 1, INT64_MAX, INT64_MIN, 0,
            None]
    cases += [(pa.int64(), pa.float64(), ints), (pa.int64(), pa.float32(), ints)]
    floats = [2.0**63, -(2.0**63), 9.223372036854775e18, float("nan"), float("inf"), float("-inf"), 1.5, -0.0,
              2.0**31, -(2.0**31), -(2.0**31) - 1, 2.0**31 - 1, 1e-300, -1.0, 255.0, 256.0, -0.5, 2.0**64,
              None,
              65535.0, 65536.0, -129.0, -128.0, 127.0, 128.0, 4294967295.0, 4294967296.0]
    for source in (pa.float64(), pa.float32()):
        for target in INT_TYPES:
            cases.append((source, target, floats))
    units = (("s", "ns"), ("ms", "us"), ("s", "ms"), ("ns", "us"), ("us", "s"), ("ns", "s"))
    for src_unit, dst_unit in units:
        bound = (2**63 - 1) // 10**9
        vals: list[object] = [bound, bound + 1, -bound, -bound - 1, 0, 1, -1, 999, 1000, -1000, 1500,
                              INT64_MAX,
                              INT64_MIN + 1, 9223372036854775, 9223372036854776, None]
        cases.append((pa.timestamp(src_unit), pa.timestamp(dst_unit), vals))
    days: list[object] = [106751, 106752, -106751, -106752, 0, -1, 2932896, -719162, None]
    cases += [(pa.date32(), pa.timestamp("ns"), days), (pa.date32(), pa.timestamp("s", "UTC"), days)]
    ms: list[object] = [106751 * 86_400_000, 106752 * 86_400_000, -106752 * 86_400_000, 9223372036854,
                        9223372036855, 1500, 1000, -1500, None]
    cases += [(pa.date64(), pa.timestamp("ns"), ms), (pa.date64(), pa.timestamp("s"), ms)]
    return cases


def _storage(t: pa.DataType) -> pa.DataType:
    return pa.int32() if pa.types.is_date32(t) else pa.int64() if pa.types.is_temporal(t) else t


@pytest.mark.parametrize(("source", "target", "values"), range_cases(),
                         ids=lambda v: str(v) if isinstance(v, pa.DataType) else "")
def test_range_checked_cast_matches_arrow(source: pa.DataType, target: pa.DataType,
                                          values: list[object]) -> None:
    if pa.types.is_temporal(source):
        arr = pa.array(values, _storage(source)).cast(source)
    else:
        arr = pa.array(values, source)
    arr = pa.concat_arrays([arr, arr, arr])
    # exact widenings among the cases cannot fail: plans give them the numpy kernel instead
    assert fast_kernel_for(source, target, True) == ("cast.numpy.widen" if serves_numpy_widen(source, target)
                                                     else "cast.checked.range")
    for part in slices(arr):
        outcome = range_checked_cast(part, target)
        outcome.values.validate(full=True)
        expect, expect_failed = arrow_per_row(part, target)
        got = outcome.values.cast(_storage(target)).to_pylist()
        want = [None if e is None else e.cast(_storage(target)).as_py() for e in expect]
        assert all(same_value(g, w) for g, w in zip(got, want, strict=True)), (got, want)
        assert mask_of(outcome, len(part)) == expect_failed


def test_range_checked_int_narrowing_against_python(threads: int) -> None:
    rng = np.random.default_rng(2)
    values = rng.integers(INT32_MIN * 2, INT32_MAX * 2, 50_000)
    nulls = rng.random(len(values)) < 0.05
    arr = pa.array(values, mask=nulls).slice(5)
    outcome = range_checked_cast(arr, pa.int32())
    expect_failed = [(not n) and not (INT32_MIN <= v <= INT32_MAX) for v, n in zip(values[5:], nulls[5:],
                                                                                 strict=True)]
    assert mask_of(outcome, len(arr)) == expect_failed
    assert outcome.values.to_pylist() == [None if (n or f) else int(v) for v, n, f in
                                          zip(values[5:], nulls[5:], expect_failed, strict=True)]


def test_range_checked_all_good_is_one_arrow_cast() -> None:
    arr = pa.array([1, None, -5], pa.int64())
    outcome = range_checked_cast(arr, pa.int8())
    assert outcome.failed is None and outcome.values.equals(pc.cast(arr, pa.int8()))


# -- selection, registry, laziness, threads ------------------------------------------------------------
@pytest.mark.parametrize(("source", "target", "checked", "key"), [
    (pa.int32(), pa.string(), False, "cast.numba.int_to_string"),
    (pa.uint64(), pa.large_string(), True, "cast.numba.int_to_string"),
    (pa.int8(), pa.string(), False, "cast.numba.int_to_string"),
    (pa.int32(), pa.string_view(), False, None),
    (pa.float64(), pa.string(), False, None),
    (pa.string(), pa.int64(), True, "cast.numba.string_to_int"),
    (pa.large_string(), pa.uint8(), True, "cast.numba.string_to_int"),
    (pa.string(), pa.date32(), True, "cast.numba.string_to_date32"),
    (pa.string(), pa.timestamp("us", "UTC"), True, "cast.numba.string_to_timestamp"),
    (pa.string(), pa.float64(), True, "cast.masked.string_to_float"),
    (pa.string(), pa.float64(), False, None),
    (pa.string(), pa.decimal128(10, 2), True, "cast.masked.string_to_decimal"),
    (pa.string_view(), pa.int64(), True, None),
    (pa.binary(), pa.int64(), True, None),
    (pa.int64(), pa.int32(), True, "cast.checked.range"),
    (pa.int64(), pa.int32(), False, None),
    (pa.int32(), pa.int64(), False, "cast.numpy.widen"),
    (pa.int32(), pa.int64(), True, "cast.numpy.widen"),
    (pa.float32(), pa.float64(), False, "cast.numpy.widen"),
    (pa.int64(), pa.float64(), False, None),
    (pa.float64(), pa.int64(), True, "cast.checked.range"),
    (pa.int64(), pa.float64(), True, "cast.checked.range"),
    (pa.timestamp("s"), pa.timestamp("ns"), True, "cast.checked.range"),
    (pa.date32(), pa.timestamp("ns"), True, "cast.checked.range"),
    (pa.float64(), pa.float32(), True, None),
    (pa.decimal128(10, 2), pa.int64(), True, None),
])
def test_fast_kernel_selection(source: pa.DataType, target: pa.DataType, checked: bool,
                               key: str | None) -> None:
    assert fast_kernel_for(source, target, checked) == key
    chosen = select_cast_kernel(source, target, checked)
    assert chosen == (key or ("cast.checked" if checked else "cast.arrow"))
    assert callable(get_kernel(chosen))


def test_import_does_not_load_numba() -> None:
    code = ("import sys, fieldshift, fieldshift.kernels as k; "
            "assert 'cast.numba.int_to_string' in k.kernel_names(); print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_set_threads() -> None:
    before = get_threads()
    try:
        set_threads(3)
        assert get_threads() == 3
        set_threads(None)
        assert get_threads() >= 1
        with pytest.raises(ValueError):
            set_threads(-1)
    finally:
        set_threads(before)


def test_run_parallel_keeps_order_uses_at_most_the_set_threads_and_reraises() -> None:
    import threading
    import time

    from fieldshift.kernels.threads import run_parallel

    before = get_threads()
    try:
        set_threads(2)
        seen: set[int] = set()

        def work(i: int) -> int:
            seen.add(threading.get_ident())
            time.sleep(0.002)  # long enough that a second thread takes items too
            return i * i

        assert run_parallel(work, [(i,) for i in range(40)]) == [i * i for i in range(40)]
        assert len(seen) == 2

        def fails(i: int) -> int:
            if i == 17:
                raise ValueError("item 17")
            return i

        with pytest.raises(ValueError, match="item 17"):
            run_parallel(fails, [(i,) for i in range(40)])
        set_threads(1)
        seen.clear()
        assert run_parallel(work, [(i,) for i in range(5)]) == [0, 1, 4, 9, 16]
        assert seen == {threading.get_ident()}
    finally:
        set_threads(before)


_NUMERIC_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
                  pa.float32(), pa.float64()]


def _boundary_values(t: pa.DataType) -> list[object]:
    if pa.types.is_floating(t):
        return [0.0, -0.0, 1.5, -2.25, float("nan"), float("inf"), float("-inf"), 3.4e38, -1e-40]
    info = np.iinfo(t.to_pandas_dtype())
    return [int(info.min), int(info.max), 0, 1, -1 if info.min < 0 else 2, int(info.max) - 1]


def test_numpy_widen_serves_exact_widenings_only() -> None:
    served = {(str(s), str(t)) for s in _NUMERIC_TYPES for t in _NUMERIC_TYPES if serves_numpy_widen(s, t)}
    assert {("int32", "int64"), ("uint32", "int64"), ("float", "double"), ("int32", "double"),
            ("int16", "float"), ("uint8", "uint64")} <= served
    # these can round or overflow: Arrow's (checked) cast keeps them
    assert not served & {("int64", "double"), ("int32", "float"), ("uint64", "int64"), ("int64", "int32"),
                         ("int8", "uint16"), ("double", "float"), ("int64", "int64")}


_WIDENINGS = [(s, t) for s in _NUMERIC_TYPES for t in _NUMERIC_TYPES if serves_numpy_widen(s, t)]


@pytest.mark.parametrize(("source", "target"), _WIDENINGS, ids=str)
def test_numpy_widen_equals_arrow_cast(source: pa.DataType, target: pa.DataType) -> None:
    values = _boundary_values(source) * 5
    full = pa.array([None if i % 7 == 3 else v for i, v in enumerate(values)], type=source)
    for arr in (full, full.slice(3), full.slice(5, 11), full.slice(0, 0), pa.nulls(9, source),
                pa.array(values, type=source)):
        got = numpy_widen(arr, target)
        assert got.failed is None
        want = pc.cast(arr, target, safe=False)
        assert got.values.type == target
        assert got.values.null_count == arr.null_count
        assert got.values.to_pylist() == want.to_pylist() or \
            np.array_equal(got.values.to_numpy(zero_copy_only=False), want.to_numpy(zero_copy_only=False),
                           equal_nan=True)
        got.values.validate(full=True)
        if arr.null_count:  # the input's validity bitmap is reused, not copied
            assert got.values.buffers()[0].address == arr.buffers()[0].address + arr.offset // 8
