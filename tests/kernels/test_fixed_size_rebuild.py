"""``layout.rebuild_as`` into a fixed-size list from a variable-length one (a file that lost its stored Arrow
schema reads a ``fixed_size_list`` column back as a list): a null entry holds no values in a list but the
list size's slots in a fixed-size list, and a value of another length is refused, never regrouped."""

from __future__ import annotations

import pyarrow as pa
import pytest

from fieldshift.kernels.layout import rebuild_as

FIXED = pa.list_(pa.int16(), 2)


@pytest.mark.parametrize("kind", [pa.list_(pa.int16()), pa.large_list(pa.int16()), pa.list_view(pa.int16())])
def test_null_entries_get_their_slots(kind: pa.DataType) -> None:
    rows = [[1, 2], None, [3, 4], None, [None, 5]]
    source = pa.array(rows, kind)
    assert rebuild_as(source, FIXED).to_pylist() == rows
    assert rebuild_as(source.slice(1, 3), pa.list_(pa.int64(), 2)).to_pylist() == rows[1:4]
    assert rebuild_as(pa.array([None, None], kind), FIXED).to_pylist() == [None, None]


@pytest.mark.parametrize("rows", [[[1, 2, 9, 9], None], [[1, 2], None, [3]], [[1, 2, 9], [3]]])
def test_a_value_of_another_length_is_refused_not_regrouped(rows: list) -> None:
    with pytest.raises(pa.ArrowInvalid, match="does not fit fixed_size_list of 2"):
        rebuild_as(pa.array(rows, pa.list_(pa.int16())), FIXED)
