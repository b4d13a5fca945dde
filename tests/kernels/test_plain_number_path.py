"""The text -> float / decimal validators' eight-bytes-at-a-time path for plain numbers.

``check_float_chunk`` and ``check_decimal_chunk`` first try ``_plain_number`` (``[+-]digits[.digits]``
read a word at a time) and only then the full validators; together they must judge every text as the
full validators alone do (those are tested against Arrow's cast in ``test_kernels``). The texts sit
after a random prefix in one data buffer, so every alignment and the buffer's first bytes are covered.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from fieldshift.kernels import _nb_parse_numbers as nb
from fieldshift.kernels._buffers import string_views

NUMBERISH = st.text(alphabet="0123456789.+-eE", max_size=30)
ODD = st.text(alphabet=st.sampled_from(list("0123456789.+- xinfINF/:\x00\x7f\u00e9\u0661")), max_size=30)
TEXTS = st.lists(st.one_of(NUMBERISH, NUMBERISH, ODD, st.none()), min_size=1, max_size=40)
DECIMALS = [(10, 2), (38, 0), (4, 4), (38, 38), (40, 2), (5, -2), (76, 38), (14, 2), (3, 0)]


def _buffers(prefix: str, texts: list[str | None]) -> tuple[pa.Array, np.ndarray, np.ndarray, np.ndarray, int]:
    arr = pa.array([prefix, *texts], pa.string()).slice(1)  # the texts start anywhere in the buffer
    offsets, data = string_views(arr)
    valid = np.frombuffer(arr.buffers()[0], np.uint8) if arr.null_count else np.zeros(1, np.uint8)
    return arr, offsets, data, valid, arr.offset


def _full(check, arr: pa.Array, offsets: np.ndarray, data: np.ndarray) -> list[bool]:
    return [arr[i].is_valid and not check(data, offsets[i], offsets[i + 1]) for i in range(len(arr))]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789.-x", max_size=11), TEXTS)
def test_float_validator_with_the_plain_path_judges_as_the_full_one(prefix: str, texts: list[str | None]) -> None:
    arr, offsets, data, valid, voff = _buffers(prefix, texts)
    failed = np.zeros(len(arr), dtype=bool)
    bad = nb.check_float_chunk(offsets, data, valid, voff, arr.null_count > 0, 0, len(arr), failed)
    expect = _full(nb._valid_float, arr, offsets, data)
    assert failed.tolist() == expect
    assert bad == sum(expect)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789.-x", max_size=11), TEXTS, st.sampled_from(DECIMALS))
def test_decimal_validator_with_the_plain_path_judges_as_the_full_one(prefix: str, texts: list[str | None],
                                                                     ps: tuple[int, int]) -> None:
    precision, scale = ps
    arr, offsets, data, valid, voff = _buffers(prefix, texts)
    failed = np.zeros(len(arr), dtype=bool)
    bad = nb.check_decimal_chunk(offsets, data, valid, voff, arr.null_count > 0, 0, len(arr), precision, scale,
                                 failed)
    expect = _full(lambda d, s, e: nb._valid_decimal(d, s, e, precision, scale), arr, offsets, data)
    assert failed.tolist() == expect
    assert bad == sum(expect)


def test_the_plain_path_reads_plain_numbers_and_only_them() -> None:
    texts = ["12345678.25", "0.5", "7", ".5", "5.", "123456789012345678901234", "1234567890123456789012345",
             ".", "1.2.3", "1e5", "12a4", "", "1 2"]
    _, offsets, data, _, _ = _buffers("padding to pass the buffer's first 8 bytes", texts)
    got = [nb._plain_number(data, offsets[i], offsets[i + 1]) for i in range(len(texts))]
    assert got == [8, 1, 1, 0, 1, 24, -1, -1, -1, -1, -1, -1, -1]
