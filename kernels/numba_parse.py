"""Text -> integer / float / decimal / date32 / timestamp casts that return a per-row failure mask.

Arrow's cast raises on the first value it cannot parse and says nothing about the others, yet the
explicit-null mode and quarantine need exactly the failing rows. These kernels accept exactly what
Arrow's cast accepts and give the same values for it; rows they cannot cast become null and are
marked in ``CastOutcome.failed`` (``None`` when no row failed).

- integers and dates are parsed in numba (faster than Arrow's cast, mask included), except uint8,
  uint16 and timestamps, which Arrow parses as fast or faster: there numba parses only when Arrow's
  cast raises (and first when a probe of the first 1,024 rows already fails: Arrow parses every row
  before it raises);
- floats and decimals are cast by Arrow after numba validates the text and masks out the rows
  Arrow would refuse. For floats the validator runs only when Arrow's cast of the first 1,024
  rows, then of all rows, raises; for decimals also first when some text is longer than
  ``38 - scale`` bytes or has an exponent, because Arrow silently wraps such out-of-range text
  instead of raising.

The output's validity reuses the input's bitmap when nothing failed (as in ``numba_format``, the
output keeps the input's bit offset within its first byte). Numba loads on the first call; until
it has compiled (in the background, ``kernels.warm``) the integer, date, timestamp and float
kernels answer arrays of up to 65,536 rows with Arrow's cast, which accepts the same text (failing
rows found by bisection within 256 casts; beyond that numba answers).
The decimal kernel always waits for numba: Arrow alone wraps some out-of-range decimal text.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.kernels._buffers import packed_validity, string_views, validity_view
from fieldshift.kernels.casts import bounded_checked_cast, checked_cast
from fieldshift.kernels.outcome import CAST_ERRORS, CastOutcome
from fieldshift.kernels.registry import (
    STRING_TO_DATE32,
    STRING_TO_DECIMAL,
    STRING_TO_FLOAT,
    STRING_TO_INT,
    STRING_TO_TIMESTAMP,
    kernel,
)
from fieldshift.kernels.threads import run_parallel, split_range
from fieldshift.kernels.warm import numba_ready

__all__ = [
    "STRING_TO_DATE32",
    "STRING_TO_DECIMAL",
    "STRING_TO_FLOAT",
    "STRING_TO_INT",
    "STRING_TO_TIMESTAMP",
    "is_text",
    "string_to_date32",
    "string_to_decimal",
    "string_to_float",
    "string_to_int",
    "string_to_timestamp",
]

_MIN_CHUNK = 32_768
_PROBE_ROWS = 1_024
_ARROW_FIRST_ROWS = 65_536
_BISECT_CASTS = 256
_ARROW_FIRST = True  # text -> uint8, uint16, timestamp: Arrow first (the numba parsers' tests turn it off)
_ARROW_PARSES_FASTER = frozenset((pa.uint8(), pa.uint16()))  # short unsigned text: every other integer, numba
_DECIMAL_DIGITS = 38  # what a 128-bit rescale holds without wrapping
_UNIT_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


# The numba code is imported (so compiled or loaded from cache) only when a kernel first runs.
@functools.cache
def _numbers() -> ModuleType:
    from fieldshift.kernels import _nb_parse_numbers

    return _nb_parse_numbers


@functools.cache
def _times() -> ModuleType:
    from fieldshift.kernels import _nb_parse_times

    return _nb_parse_times


def is_text(t: pa.DataType) -> bool:
    """Types these kernels read: string and large_string (binary views go through Arrow)."""
    return pa.types.is_string(t) or pa.types.is_large_string(t)


class _Text:
    """The buffers of a (possibly sliced) string array, as numpy views."""

    __slots__ = ("arr", "data", "has_nulls", "n", "offsets", "shift", "valid", "voff")

    def __init__(self, arr: pa.Array) -> None:
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        self.arr = arr
        self.n = len(arr)
        self.offsets, self.data = string_views(arr)
        self.valid, self.voff, self.has_nulls = validity_view(arr)
        self.shift = arr.offset % 8 if self.has_nulls else 0

    def run(self, fn: Callable[..., int], *args: Any) -> int:
        """Run a ``*_chunk`` function over all rows, split across the kernel threads."""
        head = (self.offsets, self.data, self.valid, self.voff, self.has_nulls)
        chunks = split_range(self.n, _MIN_CHUNK)
        return int(sum(run_parallel(fn, [(*head, lo, hi, *args) for lo, hi in chunks])))

    def validity(self, failed: np.ndarray | None, bad: int) -> tuple[pa.Buffer | None, int]:
        """(validity bitmap for the output rows from bit ``shift``, null count)."""
        arr = self.arr
        if not bad:
            buf = arr.buffers()[0].slice(arr.offset // 8) if self.has_nulls else None
            return buf, arr.null_count
        bitmap = packed_validity(self.valid, self.voff, self.has_nulls, failed, self.shift)
        return bitmap, arr.null_count + bad

    def primitive(self, target: pa.DataType, out_dtype: np.dtype,
                  parse: Callable[[np.ndarray, np.ndarray], int]) -> CastOutcome:
        """Allocate the output, let ``parse(out, failed)`` fill it, and wrap it as ``target``."""
        buf = pa.allocate_buffer((self.shift + self.n) * np.dtype(out_dtype).itemsize)
        out = np.frombuffer(buf, dtype=out_dtype)
        failed = np.zeros(self.n, dtype=bool)
        bad = parse(out, failed)
        validity, nulls = self.validity(failed, bad)
        arr = pa.Array.from_buffers(target, self.n, [validity, buf], null_count=nulls, offset=self.shift)
        return CastOutcome(arr, failed if bad else None)

    def masked(self, failed: np.ndarray, bad: int) -> pa.Array:
        """The input with the failed rows turned null (same offsets and data buffers)."""
        arr = self.arr
        validity, nulls = self.validity(failed, bad)
        width = 8 if pa.types.is_large_string(arr.type) else 4
        offsets = arr.buffers()[1].slice((arr.offset - self.shift) * width)
        return pa.Array.from_buffers(arr.type, self.n, [validity, offsets, arr.buffers()[2]],
                                     null_count=nulls, offset=self.shift)


def _arrow_meanwhile(values: pa.Array, target: pa.DataType) -> CastOutcome | None:
    """Arrow's answer while numba compiles (``kernels.warm``), or None: then numba answers.

    Arrow casts the whole array in one call; when some rows fail it finds them by bisection, which
    is quick for a few failing rows only, so past a budget of casts numba answers instead.
    """
    if len(values) > _ARROW_FIRST_ROWS or numba_ready():
        return None
    return bounded_checked_cast(values, target, _BISECT_CASTS)


def _empty(values: pa.Array, target: pa.DataType) -> CastOutcome | None:
    if len(values) == 0 or values.null_count == len(values):
        return CastOutcome(pa.nulls(len(values), type=target))
    return None


def _arrow_first(values: pa.Array, target: pa.DataType) -> CastOutcome | None:
    """Arrow's cast of the whole array when it succeeds, else None (then numba parses and reports the rows).

    For text -> timestamp and text -> uint8/uint16 Arrow's parser is as fast as numba's or faster on clean
    text and accepts exactly the same text (the numba parsers are tested against it row by row). Arrow
    parses every row before it raises, so a failed try costs a whole cast: a probe of the first rows skips
    it when bad rows are common.
    """
    if not _ARROW_FIRST or not _probe_passes(values, target):
        return None
    try:
        return CastOutcome(pc.cast(values, target, safe=True))
    except CAST_ERRORS:
        return None


@kernel(STRING_TO_INT)
def string_to_int(values: pa.Array, target: pa.DataType) -> CastOutcome:
    """Text -> any integer type in Arrow's syntax (decimal with optional '-', or 0x hex)."""
    done = _empty(values, target)
    if done is not None:
        return done
    meanwhile = _arrow_meanwhile(values, target)
    if meanwhile is not None:
        return meanwhile
    if target in _ARROW_PARSES_FASTER:
        done = _arrow_first(values, target)
        if done is not None:
            return done
    bits = target.bit_width
    signed = pa.types.is_signed_integer(target)
    max_pos = np.uint64(2 ** (bits - 1) - 1 if signed else 2**bits - 1)
    max_neg = np.uint64(2 ** (bits - 1) if signed else 0)
    text = _Text(values)
    nb = _numbers()

    def parse(out: np.ndarray, failed: np.ndarray) -> int:
        return text.run(nb.parse_int_chunk, signed, bits // 4, max_pos, max_neg, out.view(np.uint8),
                        bits // 8, text.shift, failed)

    return text.primitive(target, np.dtype(f"uint{bits}"), parse)


@kernel(STRING_TO_DATE32)
def string_to_date32(values: pa.Array, target: pa.DataType) -> CastOutcome:
    """Text ``YYYY-MM-DD`` -> date32."""
    done = _empty(values, target)
    if done is not None:
        return done
    meanwhile = _arrow_meanwhile(values, target)
    if meanwhile is not None:
        return meanwhile
    text = _Text(values)
    nb = _times()

    def parse(out: np.ndarray, failed: np.ndarray) -> int:
        return text.run(nb.parse_date_chunk, out, text.shift, failed)

    return text.primitive(target, np.dtype(np.int32), parse)


@kernel(STRING_TO_TIMESTAMP)
def string_to_timestamp(values: pa.Array, target: pa.DataType) -> CastOutcome:
    """ISO-8601 text -> timestamp (a zone is required for zoned targets and refused otherwise)."""
    done = _empty(values, target)
    if done is not None:
        return done
    meanwhile = _arrow_meanwhile(values, target)
    if meanwhile is not None:
        return meanwhile
    done = _arrow_first(values, target)
    if done is not None:
        return done
    digits = _UNIT_DIGITS[target.unit]
    text = _Text(values)
    nb = _times()

    def parse(out: np.ndarray, failed: np.ndarray) -> int:
        return text.run(nb.parse_timestamp_chunk, digits, 10**digits, (2**63 - 1) // 10**digits,
                        target.tz is not None, out, text.shift, failed)

    return text.primitive(target, np.dtype(np.int64), parse)


def _probe_passes(values: pa.Array, target: pa.DataType) -> bool:
    """Does Arrow cast the first rows? If not, skip trying the whole array (the try would cost as
    much as a cast before raising) and validate first."""
    if len(values) <= 2 * _PROBE_ROWS:
        return True
    try:
        pc.cast(values.slice(0, _PROBE_ROWS), target, safe=True)
    except CAST_ERRORS:
        return False
    return True


def _arrow_with_mask(values: pa.Array, target: pa.DataType, check: Callable[[_Text, np.ndarray], int],
                     trust_arrow: bool = True) -> CastOutcome:
    if trust_arrow and _probe_passes(values, target):
        try:
            return CastOutcome(pc.cast(values, target, safe=True))
        except CAST_ERRORS:  # Arrow parses every row before it raises: a failed try costs a cast
            pass
    text = _Text(values)
    failed = np.zeros(text.n, dtype=bool)
    bad = check(text, failed)
    masked = text.masked(failed, bad)
    try:
        out = pc.cast(masked, target, safe=True)
    except CAST_ERRORS:  # a row the validator let through; find it the slow way
        rest = checked_cast(masked, target)
        out = rest.values
        if rest.failed is not None:
            failed |= rest.failed
            bad = int(failed.sum())
    return CastOutcome(out, failed if bad else None)


@kernel(STRING_TO_FLOAT)
def string_to_float(values: pa.Array, target: pa.DataType) -> CastOutcome:
    """Text -> float16/32/64 by Arrow, with the rows Arrow would reject masked out first."""
    done = _empty(values, target)
    if done is not None:
        return done
    meanwhile = _arrow_meanwhile(values, target)
    if meanwhile is not None:
        return meanwhile
    return _arrow_with_mask(values, target, lambda text, failed: text.run(_numbers().check_float_chunk, failed))


def _no_wrap(values: pa.Array, target: pa.DataType) -> bool:
    """Can Arrow's decimal cast be trusted without the validator? Its silent wrap needs more digits
    than 38 once rescaled to the target's scale: text without an exponent and no longer than
    ``38 - scale`` bytes cannot have them (one pass over the offsets and a word-at-a-time search for
    ``e``, against a validator pass over the text); ``9e33`` is short and has 34 digits."""
    if isinstance(values, pa.ChunkedArray) or not pa.types.is_string(values.type) or not len(values):
        return False
    offsets, data = string_views(values)
    if int(np.max(offsets[1:] - offsets[:-1])) > _DECIMAL_DIGITS - target.scale:
        return False
    return not _numbers().has_exponent(data, int(offsets[0]), int(offsets[-1]))


@kernel(STRING_TO_DECIMAL)
def string_to_decimal(values: pa.Array, target: pa.DataType) -> CastOutcome:
    """Text -> decimal by Arrow; rows with bad syntax or digits the type cannot hold are masked.

    The validator runs first unless ``_no_wrap`` proves it unneeded: Arrow 26 casts some too-large
    values (e.g. 38 integer digits, or ``9e33``, to ``decimal128(38, 10)``) to wrapped garbage instead
    of failing.
    """
    done = _empty(values, target)
    if done is not None:
        return done

    def check(text: _Text, failed: np.ndarray) -> int:
        return text.run(_numbers().check_decimal_chunk, target.precision, target.scale, failed)

    outcome = _arrow_with_mask(values, target, check, trust_arrow=_no_wrap(values, target))
    numba_ready()  # the other kernels compile in the background
    return outcome
