"""String and binary chunks read as Arrow dictionaries and made dense after the deletes (``files/dictionary_read``,
``OpenScan.dictionary_strings``): the same rows in the same order, the same counts and the same errors as the
dense read, with nulls, empty and non-ASCII strings, all-deleted files, huge values and chunks whose writer fell
back from its dictionary to plain pages."""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.table.files import dictionary_read
from fieldshift.table.files.dictionary_read import (
    DICTIONARY_CHUNK_BYTES,
    DICTIONARY_MIN_ROWS,
    decoded,
    dictionary_candidates,
    dictionary_kept,
    open_parquet,
)
from tests.table.scan.scan_switches import data_path, errors_by_switch

ROWS = DICTIONARY_MIN_ROWS + 8_000
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("pre", pa.int32()), ("s", pa.string()),
                    ("b", pa.binary()), ("u", pa.string()), ("ls", pa.large_string())])


def _rows(ids: np.ndarray, pre: int) -> pa.Table:
    ids = ids.astype(np.int64)
    words = ["", "a", "é", "😀x", "longer value " * 3]
    s = [None if i % 11 == 0 else words[i % 5] + str(i % 7) for i in ids.tolist()]
    return pa.table({"id": ids, "pre": pa.array(np.full(len(ids), pre), pa.int32()),
                     "s": pa.array(s, pa.string()),
                     "b": pa.array([None if i % 13 == 0 else bytes([i % 4]) * (i % 3) for i in ids.tolist()]),
                     "u": pa.array([f"unique-{i}" for i in ids.tolist()]),  # no dictionary: the dense read
                     "ls": pa.array([f"l{i % 3}" for i in ids.tolist()], pa.large_string())})


def _compare(table: fs.Table, **switches: bool) -> pa.Table:
    """The scan with dictionaries and without (and without the other fast paths): every read path alike."""
    fast, dense, plain = table.scan(), table.scan(), table.scan()
    dense.pipeline().dictionary_strings = False
    for name, value in {"dictionary_strings": False, "fast_deletes": False, "whole_small_files": False}.items():
        setattr(plain.pipeline(), name, value)
    for name, value in switches.items():
        setattr(fast.pipeline(), name, value)
    result = fast.to_arrow()
    assert result.schema == dense.to_arrow().schema
    assert result.equals(dense.to_arrow()) and result.equals(plain.to_arrow())
    schema = result.schema
    assert pa.Table.from_batches(list(fast.to_batches()), schema=schema).equals(
        pa.Table.from_batches(list(dense.to_batches()), schema=schema))
    assert fast.count() == dense.count() == result.num_rows
    return result


def _keyed(tmp_path: Path) -> fs.Table:
    table = fs.Table.create(tmp_path / "k", SCHEMA, identifier_fields=["id"], precombine="pre", buckets=1)
    table.upsert(_rows(np.arange(ROWS), 0))
    return table


def test_a_keyed_table_upserted_at_random_and_by_a_range_reads_alike(tmp_path: Path) -> None:
    table = _keyed(tmp_path)
    (base,) = table.scan().live_files()
    with pq.ParquetFile(data_path(table, base)) as pf:
        kept = dictionary_kept(pf.metadata, pf.schema_arrow, dictionary_candidates(pf.schema_arrow))
        assert {"s", "b"} <= set(kept) and "u" not in kept
    table.upsert(_rows(np.random.default_rng(5).choice(ROWS, ROWS // 10, replace=False), 1))  # scattered
    table.upsert(_rows(np.arange(1_000, 9_000), 2))  # a range
    table.update_schema().add_column("e", pa.int32()).commit()
    result = _compare(table)
    assert result.num_rows == ROWS
    assert result.column("s").null_count == len([i for i in range(ROWS) if i % 11 == 0])
    _compare(table, fast_deletes=False)
    filtered = table.scan(filter="s = 'é2'")
    dense = table.scan(filter="s = 'é2'")
    dense.pipeline().dictionary_strings = False
    assert filtered.to_arrow().equals(dense.to_arrow()) and filtered.count() == dense.count() > 0


def test_the_dictionary_read_is_used_and_made_dense(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _keyed(tmp_path)
    table.upsert(_rows(np.arange(0, ROWS, 3), 1))
    calls: list[list[int]] = []
    original = dictionary_read.decoded

    def spy(batch: pa.RecordBatch, positions: list[int], types: list[pa.DataType]) -> list[pa.RecordBatch]:
        assert all(pa.types.is_dictionary(batch.column(i).type) for i in positions)
        calls.append(list(positions))
        return original(batch, positions, types)

    monkeypatch.setattr("fieldshift.table.scan.open_scan.decoded", spy)
    got = _compare(table)
    # s, b and ls (a large string column is a string one in a table); never u (no dictionary page)
    assert calls and all(c == [2, 3, 5] for c in calls)
    assert got.schema.field("s").type == got.schema.field("ls").type == pa.string()  # fieldshift keeps strings


def test_every_row_of_the_file_deleted_and_all_null_strings(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("s", pa.string())])
    table = fs.Table.create(tmp_path / "n", schema)
    table.append(pa.table({"id": np.arange(ROWS, dtype=np.int64), "s": pa.nulls(ROWS, pa.string())}))
    table.append(pa.table({"id": np.arange(ROWS, 2 * ROWS, dtype=np.int64), "s": [""] * ROWS}))
    assert _compare(table).column("s").null_count == ROWS
    table.delete(filter=f"id < {ROWS}")
    got = _compare(table)
    assert got.num_rows == ROWS and got.column("s").to_pylist() == [""] * ROWS
    table.delete(filter="id >= 0")
    assert _compare(table).num_rows == 0


def _file(table: pa.Table, **options: object) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, **options)  # type: ignore[arg-type]
    return sink.getvalue()


def test_a_chunk_that_fell_back_to_plain_pages() -> None:
    """A writer that gave up on the dictionary: past the size limit the chunk is read dense; under it (a writer with
    a tiny ``dictionary_pagesize_limit``) as a dictionary, with the same values either way."""
    n = DICTIONARY_MIN_ROWS + 100
    long = pa.array([None if i % 17 == 0 else f"value-{i}-{'x' * (i % 40)}" for i in range(n)])
    short = pa.array([None if i % 17 == 0 else f"v{i}" for i in range(n)])
    for values, qualifies in ((long, False), (short, True)):
        data = _file(pa.table({"s": values}), dictionary_pagesize_limit=64)
        pf = pq.ParquetFile(pa.BufferReader(data))
        chunk = pf.metadata.row_group(0).column(0)
        assert chunk.has_dictionary_page  # the dictionary page is there, the later pages are plain
        assert (chunk.total_uncompressed_size <= DICTIONARY_CHUNK_BYTES) == qualifies
        kept = dictionary_kept(pf.metadata, pf.schema_arrow, ["s"])
        assert kept == (["s"] if qualifies else [])
        read = open_parquet(pa.BufferReader(data), read_dictionary=["s"])
        assert pa.types.is_dictionary(read.schema_arrow.field("s").type) == qualifies
        at, types = ([0], [pa.string()]) if kept else ([], [])
        batches = [b for batch in read.iter_batches(1 << 20) for b in decoded(batch, at, types)]
        assert pa.Table.from_batches(batches).column("s").combine_chunks().equals(values)


def test_a_table_whose_file_fell_back_reads_alike(tmp_path: Path) -> None:
    """A table file rewritten (same rows, same columns and ids) by a writer that fell back to plain pages."""
    table = fs.Table.create(tmp_path / "f", pa.schema([pa.field("id", pa.int64(), nullable=False),
                                                      ("s", pa.string())]))
    ids = np.arange(ROWS, dtype=np.int64)
    table.append(pa.table({"id": ids, "s": [f"v{i % 2_000}" if i % 5 else None for i in ids.tolist()]}))
    (f,) = table.scan().live_files()
    path = data_path(table, f)
    pq.write_table(pq.read_table(path), path, dictionary_pagesize_limit=256, compression="none")
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(1)
    assert chunk.has_dictionary_page and chunk.total_uncompressed_size <= DICTIONARY_CHUNK_BYTES
    table.delete(filter=" or ".join(f"(id >= {s} and id < {s + 40})" for s in range(3, ROWS, 700)))
    got = _compare(table)
    assert got.num_rows == ROWS - 40 * len(range(3, ROWS, 700))


def test_values_that_would_pass_2_gib_are_made_dense_in_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    indices = pa.array([0, 1, None, 2, 1, 0, 2, 2, 1, None], pa.int32())
    values = pa.array(["", "a" * 300, "é" * 50])
    batch = pa.RecordBatch.from_arrays([pa.array(range(10)), pa.DictionaryArray.from_arrays(indices, values)],
                                       names=["i", "s"])
    whole = decoded(batch, [1], [pa.string()])
    assert len(whole) == 1 and whole[0].column(1).equals(pa.array([values[i].as_py() if i is not None else None
                                                                   for i in indices.to_pylist()], pa.string()))
    monkeypatch.setattr(dictionary_read, "_OFFSET_LIMIT", 1_000)  # 300-byte values: at most 3 rows a slice
    parts = decoded(batch, [1], [pa.string()])
    assert [p.num_rows for p in parts] == [3, 3, 3, 1]
    assert pa.Table.from_batches(parts).equals(pa.Table.from_batches(whole))
    assert decoded(batch.slice(0, 0), [1], [pa.string()])[0].column(1).type == pa.string()


def test_a_replaced_file_is_the_same_error_either_way(tmp_path: Path) -> None:
    table = _keyed(tmp_path)
    (f,) = table.scan().live_files()
    path = data_path(table, f)
    rows = pq.read_table(path)
    i = rows.schema.get_field_index("s")
    pq.write_table(rows.set_column(i, rows.schema.field(i).with_type(pa.int64()),
                                   pa.array(np.arange(rows.num_rows))), path)
    messages = errors_by_switch(table, "dictionary_strings", (True, False))
    assert messages[0] == messages[1] and "is int64, not string" in messages[0]


def test_candidates_are_flat_string_and_binary_columns() -> None:
    flat = pa.schema([("a", pa.string()), ("b", pa.binary()), ("c", pa.int64()), ("d", pa.large_string()),
                      ("e", pa.string_view())])
    assert dictionary_candidates(flat) == ("a", "b")
    assert dictionary_candidates(flat.append(pa.field("n", pa.struct([("x", pa.string())])))) == ()
    small = _file(pa.table({"s": ["a", "b"] * 10}))
    pf = pq.ParquetFile(pa.BufferReader(small))
    assert dictionary_kept(pf.metadata, pf.schema_arrow, ["s"]) == []  # too few rows to earn the set-up
    assert open_parquet(pa.BufferReader(small), read_dictionary=["s"]).schema_arrow.field("s").type == pa.string()


def test_a_scan_shipped_to_an_executor_reads_alike(tmp_path: Path) -> None:
    """A pickled scan has no source's ``parquet_file``: it opens files itself, through ``open_parquet``."""
    table = _keyed(tmp_path)
    table.upsert(_rows(np.random.default_rng(8).choice(ROWS, 2_000, replace=False), 1))
    pipeline = table.scan().pipeline()
    expected = pipeline.to_arrow()
    for on in (True, False):
        shipped = pickle.loads(pickle.dumps(pipeline))
        shipped.dictionary_strings = on
        tasks = [pickle.loads(pickle.dumps(t.shipped())) for t in pipeline.tasks()]
        got = pa.Table.from_batches([shipped.finish(b) for t in tasks for b in shipped.task_batches(t)],
                                    schema=expected.schema)
        assert got.sort_by("id").equals(expected.sort_by("id"))


@pytest.mark.parametrize("kwargs", [{"columns": ["id", "s"]}, {"columns": ["b"]}, {"limit": 1_000},
                                    {"filter": "b is null", "columns": ["id"]}])
def test_projections_limits_and_filters_read_alike(tmp_path: Path, kwargs: dict[str, object]) -> None:
    table = _keyed(tmp_path)
    table.upsert(_rows(np.arange(0, ROWS, 5), 1))
    fast, dense = table.scan(**kwargs), table.scan(**kwargs)  # type: ignore[arg-type]
    dense.pipeline().dictionary_strings = False
    got = fast.to_arrow()
    assert got.equals(dense.to_arrow()) and got.num_rows > 0
    assert fast.count() == dense.count() == got.num_rows


def test_row_groups_with_their_own_dictionaries_read_alike(tmp_path: Path) -> None:
    """Batches that span row groups, each group with its own dictionary (other values in each)."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("s", pa.string())])
    table = fs.Table.create(tmp_path / "g", schema, properties={"fieldshift.write.row-group-rows": "40000"})
    n = 3 * 40_000
    ids = np.arange(n, dtype=np.int64)
    table.append(pa.table({"id": ids, "s": [f"g{i // 40_000}-{i % 13}" if i % 10 else None for i in ids.tolist()]}))
    (f,) = table.scan().live_files()
    path = data_path(table, f)
    pf = pq.ParquetFile(path)
    assert pf.metadata.num_row_groups == 3 and dictionary_kept(pf.metadata, pf.schema_arrow, ["s"]) == ["s"]
    table.delete(filter="id >= 39990 and id < 40010")
    got = _compare(table)
    assert got.num_rows == n - 20
    for size in (25_000, 65_536):  # streamed batches that start and end inside groups
        fast, dense = table.scan(), table.scan()
        fast.pipeline().batch_size = dense.pipeline().batch_size = size
        dense.pipeline().dictionary_strings = False
        assert pa.Table.from_batches(list(fast.to_batches())).equals(pa.Table.from_batches(list(dense.to_batches())))


@pytest.mark.parametrize("change", ["missing", "renamed", "nested"])
def test_a_replaced_file_without_the_string_column_is_a_data_file_error(tmp_path: Path, change: str) -> None:
    """A file replaced by one whose string column is gone, renamed or nested: the columns the scan asks for as
    dictionaries are not its leaves (pyarrow's reader refuses them with a bare ``KeyError``); the scan fails as the
    dense read does, with the ``DataFileError`` naming the file and the column."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("s", pa.string())])
    table = fs.Table.create(tmp_path / "r", schema)
    ids = np.arange(ROWS, dtype=np.int64)
    table.append(pa.table({"id": ids, "s": [f"v{i % 9}" for i in ids.tolist()]}, schema=schema))
    (f,) = table.scan().live_files()
    path = data_path(table, f)
    rows = pq.read_table(path)
    if change == "missing":
        rows = rows.drop_columns(["s"])
    elif change == "renamed":
        rows = rows.rename_columns(["id", "s2"])
    else:
        nested = pa.StructArray.from_arrays([rows.column("s").combine_chunks()], names=["x"])
        rows = rows.set_column(1, rows.schema.field(1).with_type(nested.type), nested)
    pq.write_table(rows, path)
    messages = errors_by_switch(table, "dictionary_strings", (True, False))
    assert messages[0] == messages[1] and "column 's'" in messages[0]
