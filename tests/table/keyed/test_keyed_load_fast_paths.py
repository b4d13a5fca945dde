"""The keyed bulk load's fast paths (issue 35) give exactly what the paths without them give: the hashed
uniqueness check answers and refuses as the exact group-by does (also for keys whose hashes collide),
the remembered key hash is never another table's, string hashing without the large_binary copy hashes
the same, and bucket files written in parallel hold what the one-after-another writes hold."""

from __future__ import annotations

import decimal
import functools
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.errors import DuplicateKeyError
from fieldshift.kernels import threads as threads_module
from fieldshift.kernels.murmur3 import iceberg_hash
from fieldshift.kernels.threads import split_range
from fieldshift.table.files import data_files
from fieldshift.table.keyed import keyed_write, keys
from fieldshift.table.keyed.keys import KeySpec, bucket_of, bucket_order, forget_key_hash, key_hash, remembering_keys
from fieldshift.table.partitions import partition_write
from fieldshift.table.write import write_commit

ONE = KeySpec((1,), ("k",), None, None, 4)
TWO = KeySpec((1, 2), ("k", "j"), None, None, 4)


@functools.cache
def colliding_strings() -> list[tuple[str, str]]:
    """Pairs of different strings whose Iceberg hashes are equal (found among 300,000 short strings)."""
    words = np.array([f"c{i}" for i in range(300_000)])
    h = iceberg_hash(pa.array(words)).to_numpy()
    order = np.argsort(h, kind="stable")
    same = np.flatnonzero(h[order][1:] == h[order][:-1])
    pairs = [(str(words[order[i]]), str(words[order[i + 1]])) for i in same]
    assert pairs  # ~10 expected
    return pairs


def outcome(check: object, data: pa.Table, spec: KeySpec) -> str | None:
    forget_key_hash()
    try:
        check(data, spec, "append")  # type: ignore[operator]
    except DuplicateKeyError as e:
        return str(e)
    return None


def both(data: pa.Table, spec: KeySpec) -> str | None:
    hashed, exact = outcome(keyed_write.check_unique, data, spec), outcome(keyed_write.check_unique_exact, data, spec)
    assert hashed == exact
    return hashed


def test_colliding_keys_are_different_keys_with_equal_hashes() -> None:
    a, b = colliding_strings()[0]
    assert a != b
    assert iceberg_hash(pa.array([a])).to_pylist() == iceberg_hash(pa.array([b])).to_pylist()


def test_hash_collisions_alone_are_no_duplicates() -> None:
    pairs = colliding_strings()
    data = pa.table({"k": [w for p in pairs for w in p] + [f"u{i}" for i in range(1000)]})
    h = key_hash(data, ONE)
    assert len(np.unique(h)) < data.num_rows  # the fast path's suspects are real here
    assert both(data, ONE) is None


def test_a_real_duplicate_among_collisions_is_refused_naming_the_same_key() -> None:
    pairs = colliding_strings()
    (a, b), (c, d) = pairs[0], pairs[1]
    data = pa.table({"k": [f"u{i}" for i in range(500)] + [a, b, c, "u7", d, c, "u7"]})
    message = both(data, ONE)
    assert message is not None and "k='u7'" in message and "2 duplicated key(s)" in message


def test_composite_keys_colliding_in_the_combined_hash() -> None:
    (a, b) = colliding_strings()[0]
    data = pa.table({"k": [a, b, a, "x"], "j": pa.array([1, 1, 2, 1], pa.int64())})
    assert both(data, TWO) is None
    assert both(pa.concat_tables([data, data.slice(2, 1)]), TWO) is not None


@pytest.mark.parametrize("seed", range(6))
def test_random_batches_answer_as_the_exact_check(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 3000))
    span = int(rng.choice([n * 1000, n, max(1, n // 3)]))
    ints = rng.integers(0, span, n)
    data = pa.table({"k": pa.array([f"k{v}" for v in ints]), "j": pa.array(rng.integers(0, 3, n))})
    both(data, ONE)
    both(data, TWO)
    both(pa.table({"k": pa.array(ints, pa.int64())}), ONE)
    chunked = pa.Table.from_batches(data.to_batches(max_chunksize=max(1, n // 5)))
    both(chunked, TWO)


def test_the_remembered_hash_is_never_another_tables() -> None:
    a = pa.table({"k": ["a", "b", "c", "d"]})
    b = pa.table({"k": ["e", "f", "g", "h"]})
    fresh = [iceberg_hash(t.column("k")).to_numpy().view(np.uint32) for t in (a, b, a.slice(1), a.take([3, 2]))]
    with remembering_keys():  # inside a write
        for t, expected in zip((a, b, a.slice(1), a.take([3, 2])), fresh, strict=True):
            assert np.array_equal(key_hash(t, ONE), expected)
        assert key_hash(a.select(["k"]), ONE) is key_hash(a, ONE)  # the same columns: computed once
        indices = pa.array([0, 1, 0, 1], pa.int32())
        d1 = pa.table({"k": pa.DictionaryArray.from_arrays(indices, pa.array(["a", "b"]))})
        d2 = pa.table({"k": pa.DictionaryArray.from_arrays(indices, pa.array(["c", "d"]))})
        for d in (d1, d2, d1):  # the same indices buffer, other dictionaries
            assert np.array_equal(key_hash(d, ONE), iceberg_hash(d.column("k")).to_numpy().view(np.uint32))
        assert not key_hash(a, ONE).flags.writeable
        assert keys._LAST_HASH
    assert not keys._LAST_HASH  # the block's end let go


@pytest.mark.parametrize("arr", [
    pa.array(["", "a", "hello world", "ü", None, "x" * 300]),
    pa.array(["", "a", "hello world", "ü", None, "x" * 300]).slice(2, 3),
    pa.array([b"", b"\x00\xff", None, b"bytes"], pa.binary()).slice(1),
    pa.array(["a", "bb", None], pa.large_string()),
    pa.array(["", ""]),
])
def test_strings_hash_as_their_large_binary_copy_did(arr: pa.Array) -> None:
    assert iceberg_hash(arr).equals(iceberg_hash(arr.cast(pa.large_binary())))


@pytest.mark.parametrize("column", [
    pa.chunked_array([[f"s{i}" for i in range(700)], [f"t{i}" for i in range(1300)], ["", "é"]]),
    pa.chunked_array([pa.array(np.arange(-1000, 1000)), pa.array(np.arange(5))]),
    pa.chunked_array([pa.array([b"\x00" * (i % 9) for i in range(999)], pa.large_binary())]),
    pa.chunked_array([pa.array([decimal.Decimal(i) / 100 for i in range(-500, 500)], pa.decimal128(9, 2))]),
    pa.chunked_array([pa.array([f"x{i}" for i in range(3001)], pa.large_string()).slice(17)]),
])
@pytest.mark.parametrize("threads", [2, 3])
def test_hashing_row_ranges_on_threads_is_the_whole_column_hash(column: pa.ChunkedArray, threads: int,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keys, "_PARALLEL_ROWS", 100)
    monkeypatch.setattr(threads_module, "_threads", threads)
    assert len(split_range(len(column), 100)) == threads  # the ranges path runs
    whole = iceberg_hash(column.combine_chunks()).to_numpy().view(np.uint32)
    assert np.array_equal(keys._column_hash(column), whole)
    forget_key_hash()
    data = pa.table({"k": column, "j": pa.array(np.arange(len(column)) % 7)})
    monkeypatch.setattr(keys, "_PARALLEL_ROWS", 1 << 40)
    serial = key_hash(data, TWO).copy()
    forget_key_hash()
    monkeypatch.setattr(keys, "_PARALLEL_ROWS", 100)
    assert np.array_equal(key_hash(data, TWO), serial)
    forget_key_hash()


def test_bucket_order_is_remembered_per_columns_and_bucket_count() -> None:
    data = pa.table({"k": [f"k{i}" for i in range(5000)]})
    with remembering_keys():
        buckets, order = bucket_order(data, ONE)
        assert np.array_equal(buckets, bucket_of(data, ONE))
        assert np.array_equal(order, np.argsort(buckets, kind="stable"))
        assert bucket_order(data.select(["k"]), ONE)[1] is order  # the same columns: computed once
        eight = KeySpec((1,), ("k",), None, None, 8)
        assert np.array_equal(bucket_order(data, eight)[0], bucket_of(data, eight))  # another count: computed anew
        other = pa.table({"k": [f"j{i}" for i in range(5000)]})
        assert np.array_equal(bucket_order(other, ONE)[0], bucket_of(other, ONE))
        assert not order.flags.writeable
        runs = np.split(order, np.flatnonzero(np.diff(buckets[order])) + 1)
        assert all(np.all(np.diff(r) > 0) for r in runs)  # each bucket's rows ascending (lookups rely on it)
        forget_key_hash()
        assert not keys._LAST_ORDER and not keys._LAST_HASH


def test_keys_are_remembered_only_while_a_write_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write's key hash and bucket order serve its own steps (hashed once) and are let go when it ends; a
    bucket split outside any write (a Spark task writing a batch's bucket files) remembers nothing, so a
    long-lived worker holds no batch's key columns."""
    data = rows(5000)
    plain = fs.Table.create(tmp_path / "plain", SCHEMA)
    metadata = plain.io.metadata()
    written: list[str] = []
    partition_write.write_partitioned(plain.storage, metadata.current_schema, metadata.spec, data, written, keys=ONE)
    assert len(written) == 4
    assert not keys._LAST_ORDER and not keys._LAST_HASH  # the worker keeps none of the batch's keys
    with remembering_keys(), remembering_keys():  # nested: the outer block's end lets go
        bucket_order(data, ONE)
    assert not keys._LAST_ORDER and not keys._LAST_HASH
    hashed: list[int] = []
    real = keys._column_hash
    monkeypatch.setattr(keys, "_column_hash", lambda c: hashed.append(len(c)) or real(c))
    monkeypatch.setattr(write_commit, "_OVERLAP_ROWS", 1)
    t = fs.Table.create(tmp_path / "t", SCHEMA, identifier_fields=["k"], buckets=4)
    t.append(rows(3000))
    assert hashed == [3000]  # uniqueness, lookup and bucket split shared one hash of the key column
    assert not keys._LAST_ORDER and not keys._LAST_HASH
    hashed.clear()
    t.upsert(rows(500, 2990))
    assert hashed and set(hashed) == {500}  # the upserted keys hashed once (the live files' keys apart)
    assert not keys._LAST_ORDER and not keys._LAST_HASH
    with pytest.raises(DuplicateKeyError):
        t.merge(pa.concat_tables([rows(5, 9000), rows(5, 9000)]), on="k").when_not_matched_insert().execute()
    assert not keys._LAST_ORDER and not keys._LAST_HASH  # a refused merge lets go too


def test_bucket_numbers_of_a_power_of_two_count_are_the_modulo() -> None:
    h = np.random.default_rng(3).integers(0, 2**32, 20_000, dtype=np.uint32)
    h[:4] = [0, 2**31 - 1, 2**31, 2**32 - 1]
    for buckets in [1, 2, 3, 4, 7, 8, 16, 100, 512, 1023, 1024]:
        got = keys.bucket_numbers(h, buckets)
        assert got.dtype == np.int32
        assert np.array_equal(got, ((h & np.uint32(0x7FFFFFFF)) % np.uint32(buckets)).astype(np.int32)), buckets


def test_radix_order_of_buckets_is_the_stable_order() -> None:
    data = pa.table({"k": pa.array(np.arange(50_000))})
    b = bucket_of(data, KeySpec((1,), ("k",), None, None, 1024))
    assert np.array_equal(np.argsort(b.astype(np.int16), kind="stable"), np.argsort(b, kind="stable"))


SCHEMA = pa.schema([pa.field("k", pa.string(), nullable=False), ("n", pa.int64()), ("s", pa.string())])


def rows(n: int, offset: int = 0) -> pa.Table:
    ids = np.random.default_rng(n).permutation(n) + offset
    return pa.table({"k": [f"k{i:07d}" for i in ids], "n": pa.array(ids, pa.int64()),
                     "s": [f"v{i % 97}" for i in ids]}, schema=SCHEMA)


def load(path: Path, batches: list[pa.Table]) -> tuple[fs.Table, list[str | None]]:
    t = fs.Table.create(path, SCHEMA, identifier_fields=["k"], buckets=4)
    errors = []
    for b in batches:
        try:
            t.append(b)
            errors.append(None)
        except DuplicateKeyError as e:
            errors.append(str(e))
    return t, errors


def files_by_bucket(t: fs.Table) -> list[tuple[int | None, list[dict]]]:
    found = [(f.bucket, pq.read_table(t.storage.display(f.path)).to_pylist()) for f in t.scan().live_files()]
    return sorted(found, key=lambda b: (b[0], [r["k"] for r in b[1]]))


def test_keyed_loads_with_and_without_the_fast_paths_are_the_same(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (a, b) = colliding_strings()[0]
    extra = pa.table({"k": [a, b], "n": pa.array([1, 2], pa.int64()), "s": ["x", "y"]}, schema=SCHEMA)
    batches = [rows(5000), pa.concat_tables([rows(300, 10_000), extra]), rows(10, 10_000),  # already there
               pa.concat_tables([rows(40, 20_000), rows(40, 20_000).slice(7, 1)]),  # twice in the batch
               pa.concat_tables([extra, extra.slice(1, 1)]), rows(3000, 30_000)]
    monkeypatch.setattr(threads_module, "_threads", 2)
    monkeypatch.setattr(write_commit, "_OVERLAP_ROWS", 1)  # key checks while the files are written, every batch
    fast, fast_errors = load(tmp_path / "fast", batches)
    monkeypatch.setattr(write_commit, "OVERLAP_KEY_CHECKS", False)
    monkeypatch.setattr(write_commit, "check_unique", keyed_write.check_unique_exact)
    monkeypatch.setattr(partition_write, "write_bucketed", functools.partial(keyed_write.write_bucketed,
                                                                              parallel=False))
    monkeypatch.setattr(keys, "_LAST_HASH", _NoMemory())
    monkeypatch.setattr(keys, "_LAST_ORDER", _NoMemory())
    monkeypatch.setattr(keys, "_PARALLEL_ROWS", 1 << 40)  # every column hashed on one thread
    monkeypatch.setattr(data_files, "FOOTER_STATS", False)
    slow, slow_errors = load(tmp_path / "slow", batches)
    assert fast_errors == slow_errors and fast_errors.count(None) == 3
    assert fast.scan().to_arrow().sort_by("k").equals(slow.scan().to_arrow().sort_by("k"))
    assert files_by_bucket(fast) == files_by_bucket(slow)
    assert catalog_stats(fast) == catalog_stats(slow)


def catalog_stats(t: fs.Table) -> list[tuple[int | None, int, dict]]:
    files = t.scan().live_files()
    stats = t.io.catalog.file_stats([f.file_id for f in files])
    return sorted((f.bucket, f.record_count, stats[f.file_id]) for f in files)


class _NoMemory(list):  # type: ignore[type-arg]
    """A remembered-hash slot that forgets at once: every call hashes anew."""

    def __setitem__(self, index: object, value: object) -> None:
        return None


@pytest.mark.parametrize("over_cores", [0, 1, 3])
def test_parallel_bucket_writes_land_in_bucket_order_and_a_failure_leaves_no_file(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                                   over_cores: int) -> None:
    monkeypatch.setattr(threads_module, "_threads", 2)
    monkeypatch.setattr(keyed_write, "WRITE_THREADS_OVER_CORES", over_cores)
    t = fs.Table.create(tmp_path / "t", SCHEMA, identifier_fields=["k"], buckets=8)
    data = rows(4000)
    schema = t.schema
    written: list[str] = []
    spec = t.keys
    assert spec is not None
    par = keyed_write.write_bucketed(t.storage, schema, data, spec, written, max_rows=300)
    seq = keyed_write.write_bucketed(t.storage, schema, data, spec, [], max_rows=300, parallel=False)
    assert [(f.bucket, f.record_count) for f in par] == [(f.bucket, f.record_count) for f in seq]
    for f in par:  # every file holds rows of the bucket it is recorded in, none twice, none missing
        keys_in = pq.read_table(t.storage.display(f.path), columns=["k"])
        assert set(bucket_of(keys_in, spec).tolist()) == {f.bucket}
    assert sum(f.record_count for f in par) == data.num_rows and len({f.bucket for f in par}) == 8
    assert sorted(written) == sorted(f.path for f in par)
    calls = []
    real = keyed_write.write_data_file

    def failing(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 5:
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(keyed_write, "write_data_file", failing)
    before = sorted(p.name for p in (tmp_path / "t").rglob("*.parquet"))
    with pytest.raises(OSError, match="disk full"):
        partition_write.write_partitioned(t.storage, schema, t.spec, data, [], 300, keys=spec)
    assert sorted(p.name for p in (tmp_path / "t").rglob("*.parquet")) == before


@pytest.mark.parametrize("overlap", [True, False])
def test_a_refused_append_leaves_the_table_and_its_files_as_they_were(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      overlap: bool) -> None:
    monkeypatch.setattr(threads_module, "_threads", 2)
    monkeypatch.setattr(write_commit, "_OVERLAP_ROWS", 100)
    monkeypatch.setattr(write_commit, "OVERLAP_KEY_CHECKS", overlap)
    calls: list[int] = []
    real = write_commit.write_partitioned

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(write_commit, "write_partitioned", counted)
    t, errors = load(tmp_path / "t", [rows(3000)])
    assert errors == [None] and len(calls) == 1
    before = sorted(p.name for p in (tmp_path / "t").rglob("*.parquet"))
    head = t.current_snapshot.snapshot_id
    again = rows(500, 2990)  # keys 2990..2999 are in the table
    twice = pa.concat_tables([rows(500, 5000), rows(500, 5000).slice(3, 1)])
    for bad, message in ((again, "already in the table"), (twice, "more than once")):
        with pytest.raises(DuplicateKeyError, match=message):
            t.append(bad)
        assert not keys._LAST_HASH and not keys._LAST_ORDER  # a refused append holds no key columns either
    # with the overlap the refused appends wrote their files (then removed them); without, they wrote nothing
    assert len(calls) == (3 if overlap else 1)
    assert sorted(p.name for p in (tmp_path / "t").rglob("*.parquet")) == before
    assert t.current_snapshot.snapshot_id == head
    assert t.scan().to_arrow().num_rows == 3000
    forget_key_hash()
