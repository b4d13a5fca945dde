"""merge_rows against a plain-Python merge: every key kind (dense ints counted by value, sparse ints
sorted, strings and composite keys through Arrow) gives the newest version of every key."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from fieldshift.table.keyed.keys import KeySpec
from fieldshift.table.keyed.merge import merge_rows

KEY_KINDS = {
    "dense": lambda k: k,
    "sparse": lambda k: k * 2**40 - 2**50,
    "string": lambda k: f"k{k}",
}
FILE = st.lists(st.tuples(st.integers(0, 9), st.none() | st.integers(0, 3), st.integers(-2**62, 2**62)), max_size=12)


def _expected(files: list[list[tuple[int, Any, int]]], deletes: list[tuple[int, list[int]]]) -> dict[Any, int]:
    """Key -> value of the winning row: a delete of sequence s removes the key's rows of sequence < s,
    then the highest (precombine, sequence, position) of the rows left wins."""
    best: dict[int, tuple[tuple[int, int, int, int], int]] = {}
    for seq, rows in enumerate(files):
        for pos, (k, pre, v) in enumerate(rows):
            if any(k in keys and dseq > seq for dseq, keys in deletes):
                continue
            rank = (pre is not None, pre if pre is not None else 0, seq, pos)
            if k not in best or rank > best[k][0]:
                best[k] = (rank, v)
    return {k: v for k, (_, v) in best.items()}


@settings(max_examples=150, deadline=None)
@given(st.lists(FILE, min_size=1, max_size=4), st.lists(st.tuples(st.integers(0, 5), st.lists(st.integers(0, 9))),
                                                      max_size=2),
       st.sampled_from(sorted(KEY_KINDS)), st.booleans())
def test_merge_rows_matches_a_plain_merge(files: list, deletes: list, kind: str, composite: bool) -> None:
    to_key = KEY_KINDS[kind]
    key_type = pa.string() if kind == "string" else pa.int64()
    # within one data file a key occurs once (writers dedupe a batch): keep each file's last row per key
    files = [list({k: (k, p, v) for k, p, v in rows}.values()) for rows in files]
    names = ("k", "k2") if composite else ("k",)
    spec = KeySpec(tuple(range(1, len(names) + 1)), names, 3, "pre", 4)

    def table(keys: list[int], extra: dict[str, Any] | None = None) -> pa.Table:
        cols = {"k": pa.array([to_key(k) for k in keys], key_type)}
        if composite:
            cols["k2"] = pa.array([k % 3 for k in keys], pa.int32())
        return pa.table({**cols, **(extra or {})})

    data = [(seq, table([k for k, _, _ in rows], {"pre": pa.array([p for _, p, _ in rows], pa.int64()),
                                                   "v": pa.array([v for _, _, v in rows], pa.int64())}))
            for seq, rows in enumerate(files)]
    removed = [(seq, table(keys)) for seq, keys in deletes]
    got = merge_rows(data, removed, spec).to_pylist()
    want = _expected(files, deletes)
    assert {r["k"]: r["v"] for r in got} == {to_key(k): v for k, v in want.items()}
    assert len(got) == len(want)
