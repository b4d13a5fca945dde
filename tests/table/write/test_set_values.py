"""``set_values.fit_column``'s error names the first value that does not fit, wherever it lies (the search
casts chunks and halves the failing one; it used to look at the first 100,000 rows only and say row 0)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from fieldshift.errors import CastValueError, IncompatibleTypeError
from fieldshift.table.write import set_values
from fieldshift.table.write.set_values import fit_column


def _ints(n: int, bad: list[int]) -> np.ndarray:
    values = np.arange(n, dtype=np.int64)
    for i in bad:
        values[i] = (1 << 40) + i  # does not fit an int32
    return values


@pytest.mark.parametrize("bad", [[250_000], [250_000, 299_999], [0], [65_535], [65_536], [299_999],
                                 [131_071, 200_000]])
@pytest.mark.parametrize("chunked", [False, True])
def test_the_error_names_the_first_bad_row(bad: list[int], chunked: bool) -> None:
    values = _ints(300_000, bad)
    arr: pa.Array | pa.ChunkedArray = pa.array(values)
    if chunked:
        arr = pa.chunked_array([arr.slice(0, 100_001), arr.slice(100_001)])
    with pytest.raises(CastValueError, match=f"row {bad[0]}\\b") as e:
        fit_column(arr, pa.int32(), "n", "column big")  # type: ignore[arg-type]
    assert e.value.row == bad[0] and e.value.value == (1 << 40) + bad[0]


def test_nulls_and_fractions_find_the_first_bad_row_without_a_row_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    floats = pa.array([None if i % 7 == 0 else float(i) for i in range(300_000)])
    floats = pa.concat_arrays([floats.slice(0, 250_000), pa.array([0.5]), floats.slice(250_001)])
    casts: list[int] = []
    real = set_values._fails
    monkeypatch.setattr(set_values, "_fails", lambda a, t: casts.append(len(a)) or real(a, t))
    with pytest.raises(CastValueError) as e:
        set_values.fit_column(floats, pa.int64(), "n", "column f")
    assert (e.value.row, e.value.value) == (250_000, 0.5)
    assert len(casts) < 40 and sum(casts) < 2 * len(floats)  # chunks in order, then halving: no per-row loop


def test_a_cast_that_fails_only_as_a_whole_names_no_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every value casts alone but the whole does not (a string cast past 2 GiB of text): the error says so and
    names no row (the search used to name a row whose value casts)."""
    monkeypatch.setattr(set_values, "_fails", lambda arr, t: len(arr) > 1_000)  # a whole fails, no value alone
    values = pa.array(_ints(5_000, [3_000]))  # the first cast fails (as the real case's does)
    assert set_values._first_bad(values, pa.int32()) is None
    with pytest.raises(IncompatibleTypeError, match="all at once, though each value does"):
        fit_column(values, pa.int32(), "c", "source.c")


@pytest.mark.slow
def test_text_past_2_gib_going_into_a_string_column_names_no_row() -> None:
    """The real case: 65,536 values of 33,000 bytes (2.16 GB) as large_string into a string column."""
    value = "x" * 33_000
    arr = pa.array([value] * 65_536, pa.large_string())
    with pytest.raises(IncompatibleTypeError, match="2 GiB"):
        fit_column(arr, pa.string(), "s", "source.s")
