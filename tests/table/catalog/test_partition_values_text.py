"""A file's partition values as the catalog stores them (a JSON list per file): a snapshot's texts decoded at
once equal each decoded alone, and a corrupt text is refused by name whatever its neighbours."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from fieldshift.errors import CatalogFormatError
from fieldshift.table.catalog.specs import decode_partition, decode_partitions, encode_partition


def test_texts_decoded_at_once_equal_each_decoded_alone() -> None:
    values = [(1, None), (), ("a", dt.date(2024, 1, 2)), (decimal.Decimal("1.50"), True, b"x"),
              (dt.datetime(2024, 1, 1, 5), -3), (None,)]
    texts = [encode_partition(v) for v in values] + [None]
    assert decode_partitions(texts) == [decode_partition(t) for t in texts]
    assert decode_partitions([]) == []


@pytest.mark.parametrize("texts", [["[1],[3", "4]"], ["[1]", "nope"], ["[1],[2]", "[3]"], ["[1]", "5"]])
def test_a_corrupt_text_is_refused_even_where_the_joined_texts_would_parse(texts: list[str]) -> None:
    with pytest.raises(CatalogFormatError, match="corrupt"):
        decode_partitions(texts)
