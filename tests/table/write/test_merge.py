"""``Table.merge`` (MERGE INTO) on keyed and unkeyed tables, partial-column upserts and the counts writes return."""

from __future__ import annotations

import decimal
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import fieldshift as fs
from fieldshift.table import records as fs_records
from fieldshift.table.write import merge_commit, row_ops
from fieldshift.table.write.merge_builder import MergeBuilder, MergeSpec

KEYED = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("n", pa.int64())])
PLAIN = pa.schema([("id", pa.int64()), ("v", pa.string()), ("n", pa.int64())])


def _rows(t: fs.Table) -> list[dict[str, Any]]:
    return sorted(t.to_arrow().to_pylist(), key=lambda r: (r["id"] is None, r["id"] or 0, str(r.get("v"))))


def _keyed(tmp_path: Path, **kw: Any) -> fs.Table:
    t = fs.Table.create(tmp_path / "k", KEYED, identifier_fields=["id"], **kw)
    t.append({"id": [1, 2, 3], "v": ["a", "b", "c"], "n": [10, 20, 30]})
    return t


def _plain(tmp_path: Path) -> fs.Table:
    t = fs.Table.create(tmp_path / "u", PLAIN)
    t.append({"id": [1, 2], "v": ["a", "b"], "n": [10, 20]})
    t.append({"id": [3, None], "v": ["c", "z"], "n": [30, 0]})  # two files
    return t


@pytest.mark.parametrize("kind", ["keyed", "plain"])
def test_merge_clauses_in_order_with_counts(tmp_path: Path, kind: str) -> None:
    t = _keyed(tmp_path) if kind == "keyed" else _plain(tmp_path)
    source = {"id": [2, 3, 4, 5], "v": ["B", "C", "D", "E"], "op": ["u", "d", "i", "skip"]}
    result = (t.merge(source, on="id")
              .when_matched_delete(condition="source.op = 'd'")
              .when_matched_update(set={"v": "source.v"})
              .when_not_matched_insert(values={"id": "source.id", "v": "source.v", "n": 0},
                                       condition="source.op = 'i'")
              .execute())
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (1, 1, 1)
    assert result.snapshot_id == t.current_snapshot.snapshot_id and t.current_snapshot.operation == "merge"
    expected = [{"id": 1, "v": "a", "n": 10}, {"id": 2, "v": "B", "n": 20}, {"id": 4, "v": "D", "n": 0}]
    if kind == "plain":
        expected.append({"id": None, "v": "z", "n": 0})
    assert _rows(t) == expected
    assert "op" not in t.schema.names  # no clause wrote whole source rows: nothing evolved


@pytest.mark.parametrize("kind", ["keyed", "plain"])
def test_star_evolves_and_keeps_columns_the_source_lacks(tmp_path: Path, kind: str) -> None:
    t = _keyed(tmp_path) if kind == "keyed" else _plain(tmp_path)
    source = pa.table({"id": pa.array([1, 9], pa.int64()), "v": ["A", "I"], "extra": [True, False]})
    result = t.merge(source, on="id").when_matched_update().when_not_matched_insert().execute()
    assert result.schema_evolved and "extra" in t.schema.names
    rows = {r["id"]: r for r in t.to_arrow().to_pylist()}
    assert rows[1] == {"id": 1, "v": "A", "n": 10, "extra": True}  # n kept: the source has no n
    assert rows[9] == {"id": 9, "v": "I", "n": None, "extra": False}
    assert rows[2]["extra"] is None


def test_null_keys_never_match_and_a_double_match_is_refused(tmp_path: Path) -> None:
    t = _plain(tmp_path)
    before = _rows(t)
    r = t.merge({"id": [None], "v": ["N"], "n": [1]}, on="id").when_matched_delete().when_not_matched_insert() \
        .execute()
    assert (r.rows_inserted, r.rows_deleted) == (1, 0)  # the target's null-id row was not matched either
    assert len(_rows(t)) == len(before) + 1
    snapshot = t.current_snapshot.snapshot_id
    with pytest.raises(fs.MergeMatchError, match="matched by 2 source rows"):
        t.merge({"id": [1, 1], "v": ["x", "y"]}, on="id").when_matched_update(set={"v": "source.v"}).execute()
    assert t.current_snapshot.snapshot_id == snapshot
    # only insert clauses: two source rows of one key are no ambiguity for the target
    r = t.merge({"id": [1, 1, 7], "v": ["x", "y", "s"]}, on="id").when_not_matched_insert().execute()
    assert r.rows_inserted == 1


def test_unkeyed_target_rows_of_equal_on_values_all_match(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "d", PLAIN)
    t.append({"id": [1, 1, 2], "v": ["a", "b", "c"], "n": [1, 2, 3]})
    r = t.merge({"id": [1], "n": [9]}, on="id").when_matched_update(set={"n": "source.n"}).execute()
    assert r.rows_updated == 2
    assert sorted((x["v"], x["n"]) for x in t.to_arrow().to_pylist()) == [("a", 9), ("b", 9), ("c", 3)]


def test_by_source_delete_and_column_comparisons(tmp_path: Path) -> None:
    t = _plain(tmp_path)
    r = (t.merge({"id": [1, 2], "n": [5, 50]}, on="id")
         .when_matched_update(set={"n": "source.n"}, condition=pc.field("source", "n") > pc.field("target", "n"))
         .when_not_matched_by_source_delete(condition="target.n >= 30")
         .execute())
    assert (r.rows_updated, r.rows_deleted) == (1, 1)
    assert _rows(t) == [{"id": 1, "v": "a", "n": 10}, {"id": 2, "v": "b", "n": 50}, {"id": None, "v": "z", "n": 0}]


def test_keyed_by_source_delete(tmp_path: Path) -> None:
    t = _keyed(tmp_path)
    r = t.merge({"id": [2], "v": ["B"], "n": [20]}, on="id").when_matched_update() \
        .when_not_matched_by_source_delete().execute()
    assert (r.rows_inserted, r.rows_updated, r.rows_deleted) == (0, 1, 2)
    assert _rows(t) == [{"id": 2, "v": "B", "n": 20}]
    t.upsert({"id": [1], "v": ["back"], "n": [1]})  # a later upsert brings a deleted key back
    assert [r["id"] for r in _rows(t)] == [1, 2]


def test_bad_values_are_named_and_write_nothing(tmp_path: Path) -> None:
    t = _keyed(tmp_path, precombine="n")
    snapshot = t.current_snapshot.snapshot_id
    with pytest.raises(fs.CastValueError, match="'n'"):
        t.merge({"id": [1]}, on="id").when_matched_update(set={"n": "lots"}).execute()
    with pytest.raises(fs.InvalidOptionError, match="nope"):
        t.merge({"id": [1]}, on="id").when_matched_update(set={"nope": 1}).execute()
    with pytest.raises(fs.InvalidOptionError, match=r"on=\['id'\]"):
        t.merge({"id": [1], "v": ["a"]}, on="v").when_matched_delete().execute()
    with pytest.raises(fs.IdentifierFieldChangeError):
        t.merge({"id": [1]}, on="id").when_matched_update(set={"id": 5}).execute()
    with pytest.raises(fs.PrecombineLoweredError, match="lower than its current 10"):
        t.merge({"id": [1], "n": [3]}, on="id").when_matched_update(set={"n": "source.n"}).execute()
    with pytest.raises(fs.InvalidOptionError, match="at least one"):
        t.merge({"id": [1]}, on="id").execute()
    assert t.current_snapshot.snapshot_id == snapshot
    assert _rows(t) == [{"id": 1, "v": "a", "n": 10}, {"id": 2, "v": "b", "n": 20}, {"id": 3, "v": "c", "n": 30}]


@pytest.mark.parametrize("kind", ["keyed", "plain"])
def test_values_and_keys_that_would_change_on_the_way_in_are_refused(tmp_path: Path, kind: str) -> None:
    """Found by adv34: a merge wrote 1.5 into a long column as 1, parsed "20" of a text column into 20, and
    matched the text key "02" with the row of id 2."""
    t = _keyed(tmp_path) if kind == "keyed" else _plain(tmp_path)
    head, before = t.current_snapshot.snapshot_id, _rows(t)
    for value in (1.5, decimal.Decimal("2.5"), "source.text", "source.flag"):
        source = {"id": [1], "text": ["20"], "flag": [True]}
        with pytest.raises(fs.CastValueError, match=r"'n'.*nothing was written"):
            t.merge(source, on="id").when_matched_update(set={"n": value}).execute()
    with pytest.raises(fs.InvalidOptionError, match="text is not parsed"):
        t.merge({"id": ["02"], "v": ["x"]}, on="id").when_matched_update(set={"v": "source.v"}).execute()
    assert t.current_snapshot.snapshot_id == head and _rows(t) == before
    t.merge({"id": [1]}, on="id").when_matched_update(set={"n": 7.0}).execute()  # a whole number fits
    assert next(r["n"] for r in _rows(t) if r["id"] == 1) == 7


def test_a_dictionary_encoded_text_source_is_text(tmp_path: Path) -> None:
    """A categorical of text matches and writes text columns (and is refused for a long column, as text is)."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.string()), ("n", pa.int64()), ("v", pa.string())]))
    t.append({"id": ["a", "b"], "n": [1, 2], "v": ["x", "y"]})
    source = pa.table({"id": pa.array(["a", "c"]).dictionary_encode(), "v": pa.array(["X", "Z"]).dictionary_encode(),
                       "n": pa.array(["5", "6"]).dictionary_encode()})
    assert t.merge(source, on="id").when_matched_update(set={"v": "source.v"}).execute().rows_updated == 1
    with pytest.raises(fs.CastValueError, match="text is not parsed"):
        t.merge(source, on="id").when_matched_update(set={"n": "source.n"}).execute()
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == [{"id": "a", "n": 1, "v": "X"},
                                                                      {"id": "b", "n": 2, "v": "y"}]


@pytest.mark.parametrize("condition", [None, "target.v != 'zz'"])
def test_a_source_widening_the_on_column_matches_and_inserts(tmp_path: Path, condition: str | None) -> None:
    """Found by adv34: an upsert-shaped merge (no conditions: the target's on columns alone are read) whose
    source widens the on column int -> long refused the source ("do not fit the table's int32"), while the same
    merge with a condition widened the column and inserted the row."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int32()), ("v", pa.string())]))
    t.append({"id": pa.array([1, 2], pa.int32()), "v": ["a", "b"]})
    source = pa.table({"id": pa.array([2, 2**40], pa.int64()), "v": ["B", "BIG"]})
    r = t.merge(source, on="id").when_matched_update(condition=condition).when_not_matched_insert().execute()
    assert (r.rows_updated, r.rows_inserted, r.schema_evolved) == (1, 1, True)
    assert sorted(t.to_arrow().to_pylist(), key=lambda x: x["id"]) == [
        {"id": 1, "v": "a"}, {"id": 2, "v": "B"}, {"id": 2**40, "v": "BIG"}]


def test_an_arrow_expression_naming_no_column_is_named(tmp_path: Path) -> None:
    """Found by adv34: a pyarrow.compute expression over a missing column raised Arrow's raw ArrowInvalid
    (mentioning the merge's internal index column)."""
    t = _plain(tmp_path)
    head = t.current_snapshot.snapshot_id
    with pytest.raises(fs.InvalidOptionError, match=r"condition .*'source' and 'target'.*nothing was written"):
        t.merge({"id": [1]}, on="id").when_matched_delete(condition=pc.field("source", "nope") > 1).execute()
    with pytest.raises(fs.InvalidOptionError, match=r"value for column 'v'.*source: \['id'\]"):
        t.merge({"id": [1]}, on="id").when_matched_update(set={"v": pc.field("source", "nope")}).execute()
    assert t.current_snapshot.snapshot_id == head


@pytest.mark.parametrize("kind", ["keyed", "plain"])
def test_inserts_naming_some_columns_take_write_defaults(tmp_path: Path, kind: str) -> None:
    """Found by adv34: on a table with a required column with a write default, a partial upsert of a new key
    failed with Arrow's raw "declared non-nullable but contains nulls", and a merge insert by a dict with a
    NullInRequiredFieldError; an append fills the column with its default, and so do they now."""
    t = _keyed(tmp_path) if kind == "keyed" else _plain(tmp_path)
    t.update_schema().add_column("status", pa.string(), nullable=False, default="new", write_default="new").commit()
    t.update_schema().add_column("note", pa.string(), write_default="-").commit()
    r = t.merge({"id": [8], "v": ["h"]}, on="id").when_not_matched_insert(values={"id": "source.id"}).execute()
    assert r.rows_inserted == 1
    rows = {x["id"]: x for x in t.to_arrow().to_pylist()}
    assert rows[8] == {"id": 8, "v": None, "n": None, "status": "new", "note": "-"}
    if kind == "keyed":
        t.upsert({"id": [9, 1], "v": ["i", "A"]}, partial=True)
        rows = {x["id"]: x for x in t.to_arrow().to_pylist()}
        assert rows[9] == {"id": 9, "v": "i", "n": None, "status": "new", "note": "-"}  # a new key: defaults
        assert rows[1] == {"id": 1, "v": "A", "n": 10, "status": "new", "note": None}  # the live row's values


@pytest.mark.parametrize("name", ["__fs_s", "__fs_t"])
def test_on_columns_named_like_the_joins_own(tmp_path: Path, name: str) -> None:
    """Found by adv34: an on column named "__fs_s" or "__fs_t" (the names match_rows gave its row indices)
    failed with a raw KeyError / ArrowInvalid."""
    schema = pa.schema([(name, pa.string()), ("w", pa.string())])
    t = fs.Table.create(tmp_path / "t", schema)
    t.append(pa.table({name: ["a", "b"], "w": ["1", "2"]}, schema=schema))
    r = t.merge({name: ["a", "c"], "w": ["X", "Y"]}, on=name).when_matched_update(condition="target.w = '1'") \
        .when_not_matched_insert().execute()
    assert (r.rows_updated, r.rows_inserted) == (1, 1)
    assert sorted(t.to_arrow().to_pylist(), key=lambda x: x[name]) == [
        {name: "a", "w": "X"}, {name: "b", "w": "2"}, {name: "c", "w": "Y"}]


def test_a_source_column_whose_name_holds_a_dot(tmp_path: Path) -> None:
    """Found by adv34: "source.a.b" looked for a nested field b of a column a, so a top-level "a.b" was unreachable."""
    t = _plain(tmp_path)
    r = t.merge({"id": [1], "a.b": [99]}, on="id").when_matched_update(set={"n": "source.a.b"}).execute()
    assert r.rows_updated == 1 and next(x["n"] for x in _rows(t) if x["id"] == 1) == 99


def test_on_a_struct_column_and_nested_values_are_named(tmp_path: Path) -> None:
    """Found by adv34: merge on a struct column failed with Arrow's "not supported in join key field", and a
    list literal [1, 2.5] went into a list of longs as [1, 2]."""
    schema = pa.schema([("id", pa.int64()), ("s", pa.struct([("a", pa.int64())])), ("l", pa.list_(pa.int64()))])
    t = fs.Table.create(tmp_path / "n", schema)
    t.append(pa.table({"id": [1], "s": [{"a": 1}], "l": [[1]]}, schema=schema))
    head = t.current_snapshot.snapshot_id
    with pytest.raises(fs.InvalidOptionError, match="cannot be matched on"):
        t.merge(pa.table({"s": [{"a": 1}]}), on="s").when_matched_delete().execute()
    for set_ in ({"l": [1, 2.5]}, {"s": {"a": 1.5}}):
        with pytest.raises(fs.CastValueError, match="not a whole number"):
            t.merge({"id": [1]}, on="id").when_matched_update(set=set_).execute()
        with pytest.raises(fs.CastValueError, match="not a whole number"):
            t.update(set_, where="id = 1")
    assert t.current_snapshot.snapshot_id == head
    t.update({"l": [1, 2.0], "s": {"a": 3}}, where="id = 1")
    assert t.to_arrow().to_pylist() == [{"id": 1, "s": {"a": 3}, "l": [1, 2]}]


def test_nothing_to_do_commits_nothing(tmp_path: Path) -> None:
    t = _plain(tmp_path)
    snapshot = t.current_snapshot.snapshot_id
    r = t.merge({"id": [42], "v": ["x"]}, on="id").when_matched_delete().execute()
    assert (r.rows_inserted, r.rows_updated, r.rows_deleted, r.snapshot_id) == (0, 0, 0, None)
    assert t.current_snapshot.snapshot_id == snapshot


@pytest.mark.parametrize("kind", ["keyed", "plain"])
def test_a_concurrent_commit_makes_the_merge_retry(tmp_path: Path, kind: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    t = _keyed(tmp_path) if kind == "keyed" else _plain(tmp_path)
    real = merge_commit.plan_merge
    calls: list[int] = []
    racers: list[int] = []

    def racing(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:  # another writer commits a row the merge could match, after it read
            fs.Table.open(t.location).append({"id": [9 if racers else 8], "v": ["other"], "n": [80]})
            racers.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(merge_commit, "plan_merge", racing)
    r = t.merge({"id": [8], "v": ["mine"]}, on="id").when_matched_update(set={"v": "source.v"}) \
        .when_not_matched_insert().execute()
    assert len(calls) == 2 and (r.rows_updated, r.rows_inserted) == (1, 0)  # the retry saw the new row
    assert [x["v"] for x in t.to_arrow().to_pylist() if x["id"] == 8] == ["mine"]
    calls.clear()
    monkeypatch.setenv("FIELDSHIFT_COMMIT_RETRIES", "1")
    with pytest.raises(fs.CommitConflictError):
        t.merge({"id": [9], "v": ["x"]}, on="id").when_not_matched_insert().execute()
    assert [r["v"] for r in t.to_arrow().to_pylist() if r["id"] == 9] == ["other"]  # only the racer's row
    assert not t.vacuum(older_than=0)  # the lost attempt's files were removed


@pytest.mark.parametrize("by_source", [False, True])
def test_an_added_file_outside_the_on_range_does_not_conflict(tmp_path: Path, by_source: bool,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Delete's and update's conflict rule: an added file whose statistics exclude every ``on`` value of the
    source cannot change what matched (a by-source clause reads every row: then any added file conflicts)."""
    t = _plain(tmp_path)
    real = merge_commit.plan_merge
    calls: list[int] = []

    def racing(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            fs.Table.open(t.location).append({"id": [100], "v": ["far"], "n": [1]})
        return real(*args, **kw)

    monkeypatch.setattr(merge_commit, "plan_merge", racing)
    builder = t.merge({"id": [2, 3], "v": ["B", "C"]}, on="id").when_matched_update(set={"v": "source.v"})
    if by_source:
        builder = builder.when_not_matched_by_source_delete(condition="target.n = 1")
    r = builder.execute()
    assert len(calls) == (2 if by_source else 1) and r.rows_updated == 2
    assert r.rows_deleted == (1 if by_source else 0)  # the retry saw the added row
    assert {x["id"]: x["v"] for x in t.to_arrow().to_pylist()}.get(100) == (None if by_source else "far")


def test_unkeyed_merge_removes_rows_as_a_delete_does(tmp_path: Path) -> None:
    """Matched rows go to deletion vectors; a file that would keep fewer than REWRITE_FRACTION of its rows is
    rewritten without them (the rule of delete and update)."""
    t = fs.Table.create(tmp_path / "u", PLAIN)
    t.append({"id": list(range(10)), "v": ["a"] * 10, "n": list(range(10))})
    t.append({"id": list(range(10, 20)), "v": ["b"] * 10, "n": list(range(10))})
    before = {f.file_id for f in t.scan().live_files()}
    r = t.merge({"id": [1, 2]}, on="id").when_matched_delete().execute()
    assert r.rows_deleted == 2 and {f.file_id for f in t.scan().live_files()} == before
    assert sorted(v.cardinality for v in t.scan().deletion_vectors().values()) == [2]
    r = t.merge({"id": [10, 11, 12, 13, 14, 15], "v": ["B"] * 6}, on="id") \
        .when_matched_update(set={"v": "source.v"}).execute()
    assert r.rows_updated == 6
    live = {f.file_id for f in t.scan().live_files()}
    assert min(before) in live and max(before) not in live  # the second file kept 4 of 10: rewritten
    assert sorted(x["id"] for x in t.to_arrow().to_pylist()) == [i for i in range(20) if i not in (1, 2)]
    assert sorted((x["id"], x["v"]) for x in t.to_arrow().to_pylist() if x["id"] >= 10) == \
        [(i, "B" if i < 16 else "b") for i in range(10, 20)]


@pytest.mark.parametrize("kind", ["keyed", "plain"])
def test_a_concurrent_schema_change_does_not_conflict(tmp_path: Path, kind: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    t = _keyed(tmp_path) if kind == "keyed" else _plain(tmp_path)
    real = merge_commit.plan_merge
    calls: list[int] = []

    def racing(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:  # another writer adds a column: no row changes, the merge commits as planned
            fs.Table.open(t.location).update_schema().add_column("later", pa.string()).commit()
        return real(*args, **kw)

    monkeypatch.setattr(merge_commit, "plan_merge", racing)
    monkeypatch.setenv("FIELDSHIFT_COMMIT_RETRIES", "1")
    r = t.merge({"id": [1, 7], "v": ["one", "seven"]}, on="id").when_matched_update(set={"v": "source.v"}) \
        .when_not_matched_insert(values={"id": "source.id", "v": "source.v"}).execute()
    assert len(calls) == 1 and (r.rows_updated, r.rows_inserted) == (1, 1)
    rows = {x["id"]: x for x in t.to_arrow().to_pylist()}
    assert rows[1]["v"] == "one" and rows[7] == {"id": 7, "v": "seven", "n": None, "later": None}


def test_partial_upsert_keeps_what_the_data_does_not_carry(tmp_path: Path) -> None:
    t = _keyed(tmp_path)
    r = t.upsert({"id": [1, 2, 9], "n": [11, None, 99]}, partial=True)
    assert (r.rows_inserted, r.rows_updated, r.rows_deleted) == (1, 2, 0)
    assert _rows(t) == [{"id": 1, "v": "a", "n": 11}, {"id": 2, "v": "b", "n": None},
                        {"id": 3, "v": "c", "n": 30}, {"id": 9, "v": None, "n": 99}]
    r = t.upsert({"id": [3], "v": ["C"], "new": [1.5]}, partial=True)  # evolves like any upsert
    assert r.schema_evolved and _rows(t)[2] == {"id": 3, "v": "C", "n": 30, "new": 1.5}


def test_a_partial_upsert_never_writes_back_a_stale_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by adv34: a partial upsert reads the columns it keeps, then writes them back; on its last attempt
    (committed without a lookup) it overwrote a concurrent upsert's change to such a column (a lost update).
    It now conflicts with any concurrent commit, as a keyed update does, and re-reads on the retry."""
    from fieldshift.table import table as table_module

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.string()), ("b", pa.string())])
    t = fs.Table.create(tmp_path / "k", schema, identifier_fields=["id"])
    t.append({"id": [1], "a": ["a1"], "b": ["b1"]})
    real, races = table_module.fill_partial, ["b2", "b3"]

    def racing(*args: Any, **kw: Any) -> Any:
        out = real(*args, **kw)
        if races:  # another writer changes b after this upsert read it
            fs.Table.open(t.location).upsert({"id": [1], "a": ["a1"], "b": [races.pop(0)]})
        return out

    monkeypatch.setattr(table_module, "fill_partial", racing)
    monkeypatch.setenv("FIELDSHIFT_COMMIT_RETRIES", "1")
    with pytest.raises(fs.CommitConflictError):
        t.upsert({"id": [1], "a": ["A"]}, partial=True)
    assert t.to_arrow().to_pylist() == [{"id": 1, "a": "a1", "b": "b2"}]
    monkeypatch.setenv("FIELDSHIFT_COMMIT_RETRIES", "3")
    t.upsert({"id": [1], "a": ["A"]}, partial=True)  # races once more: the retry reads b3 and keeps it
    assert not races and t.to_arrow().to_pylist() == [{"id": 1, "a": "A", "b": "b3"}]


def test_partial_upsert_precombine_still_decides(tmp_path: Path) -> None:
    t = _keyed(tmp_path, precombine="n")
    r = t.upsert({"id": [1, 2], "n": [5, 25]}, partial=True)  # id 1 loses: its n is lower
    assert (r.rows_written, r.rows_updated, r.rows_inserted) == (1, 1, 0)
    assert _rows(t)[:2] == [{"id": 1, "v": "a", "n": 10}, {"id": 2, "v": "b", "n": 25}]


def test_upsert_and_append_counts(tmp_path: Path) -> None:
    t = _keyed(tmp_path)
    r = t.upsert({"id": [3, 4, 5], "v": ["x", "y", "z"], "n": [1, 2, 3]})
    assert (r.rows_inserted, r.rows_updated, r.rows_deleted) == (2, 1, 0)
    r = t.append({"id": [6], "v": ["w"], "n": [4]})
    assert (r.rows_inserted, r.rows_updated, r.rows_deleted) == (1, 0, 0)
    r = t.overwrite({"id": [1], "v": ["o"], "n": [0]})
    assert r.rows_deleted is None and r.rows_updated is None


def test_a_null_for_a_required_column_is_named(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "r", pa.schema([pa.field("id", pa.int64(), nullable=False),
                                                   pa.field("r", pa.string(), nullable=False)]))
    t.append({"id": [1], "r": ["x"]})
    with pytest.raises(fs.NullInRequiredFieldError, match="'r'"):
        t.merge({"id": [2]}, on="id").when_not_matched_insert(values={"id": "source.id"}).execute()
    with pytest.raises(fs.NullInRequiredFieldError, match="'r'"):
        t.merge({"id": [1]}, on="id").when_matched_update(set={"r": None}).execute()
    assert t.to_arrow().to_pylist() == [{"id": 1, "r": "x"}] and len(t.history()) == 2


@pytest.mark.parametrize("kind", ["keyed", "plain"])
def test_a_published_table_reads_the_merge_through_pyiceberg(tmp_path: Path, kind: str) -> None:
    pytest.importorskip("pyiceberg")
    from tests.table.publish_helpers import fieldshift_rows, pyiceberg_rows

    t = _keyed(tmp_path) if kind == "keyed" else fs.Table.create(tmp_path / "u", PLAIN)
    if kind == "plain":
        t.append({"id": [1, 2, 3], "v": ["a", "b", "c"], "n": [10, 20, 30]})
    t.set_publish("iceberg")
    r = t.merge({"id": [2, 4], "v": ["B", "D"]}, on="id").when_matched_update().when_not_matched_insert() \
        .when_not_matched_by_source_delete(condition="target.n > 20").execute()
    assert (r.rows_inserted, r.rows_updated, r.rows_deleted) == (1, 1, 1)
    head = t.current_snapshot.snapshot_id
    assert pyiceberg_rows(t, head) == fieldshift_rows(t, head)
    assert pyiceberg_rows(t, head - 1) == fieldshift_rows(t, head - 1)


def test_null_keys_of_the_source_are_ignored_unless_inserted(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "k2", pa.schema([pa.field("id", pa.string(), nullable=False),
                                                    pa.field("d", pa.int32(), nullable=False), ("v", pa.string())]),
                        identifier_fields=["id", "d"])
    t.append({"id": ["a", "b"], "d": [1, 2], "v": ["x", "y"]})
    source = {"id": ["a", "b", None], "d": [1, 3, 1], "v": ["X", "Y", "N"]}
    r = t.merge(source, on=["d", "id"]).when_matched_update().execute()  # a two-column key, in another order
    assert (r.rows_updated, r.rows_inserted) == (1, 0)
    with pytest.raises(fs.NullInRequiredFieldError):  # inserted, the null key would break the key
        t.merge(source, on=["id", "d"]).when_not_matched_insert().execute()
    assert sorted(t.to_arrow().to_pylist(), key=lambda x: x["id"]) == [{"id": "a", "d": 1, "v": "X"},
                                                                        {"id": "b", "d": 2, "v": "y"}]


def test_star_without_evolution_writes_the_columns_the_table_has(tmp_path: Path) -> None:
    t = _plain(tmp_path)
    source = {"id": [1, 5], "v": ["A", "E"], "op": ["u", "i"]}
    r = t.merge(source, on="id", evolve=False).when_matched_update(condition="source.op = 'u'") \
        .when_not_matched_insert().execute()
    assert (r.rows_updated, r.rows_inserted, r.schema_evolved) == (1, 1, False)
    assert t.schema.names == ["id", "v", "n"]
    assert [x for x in _rows(t) if x["id"] in (1, 5)] == [{"id": 1, "v": "A", "n": 10}, {"id": 5, "v": "E", "n": None}]


@pytest.mark.parametrize("kind", ["keyed", "plain"])
def test_every_row_change_reports_the_same_counts(tmp_path: Path, kind: str) -> None:
    """delete, update, merge and upsert/append results all carry rows_inserted, rows_updated and rows_deleted;
    a delete keeps keys_deleted."""
    t = _keyed(tmp_path) if kind == "keyed" else _plain(tmp_path)
    u = t.update({"v": "U"}, where="id = 1")
    assert (u.rows_inserted, u.rows_updated, u.rows_deleted) == (0, 1, 0)
    d = t.delete(filter="id = 2")
    assert (d.rows_inserted, d.rows_updated, d.rows_deleted) == (0, 0, 1)
    assert d.keys_deleted == (1 if kind == "keyed" else 0)  # the old name still works
    m = t.merge({"id": [3, 7], "v": ["M", "N"]}, on="id").when_matched_update(set={"v": "source.v"}) \
        .when_not_matched_insert(values={"id": "source.id", "v": "source.v"}).execute()
    assert (m.rows_inserted, m.rows_updated, m.rows_deleted) == (1, 1, 0)
    a = t.append({"id": [8], "v": ["w"], "n": [4]})
    assert (a.rows_inserted, a.rows_updated, a.rows_deleted) == (1, 0, 0)



def _distributed(t: fs.Table, source: pa.Table, clauses: Any) -> fs.MergeResult:
    """A merge as ``fieldshift.spark.merge`` runs it, without Spark: the source in two shares by ``id``
    (``merge_part``), the by-source pass per target unit anti-joined in Arrow (``by_source_candidates`` /
    ``by_source_part``), one ``commit_parts`` at the snapshot they read."""
    captured: list[MergeSpec] = []
    clauses(MergeBuilder(lambda spec: captured.append(spec), source, "id")).execute()  # type: ignore[arg-type]
    spec = captured[0]
    io, metadata = t.io, t.io.metadata()
    rest = merge_commit.without_by_source(spec)
    ids = pc.fill_null(source.column("id"), 0)
    shares = [source.filter(pc.equal(pc.bit_wise_and(ids, 1), h)) for h in (0, 1)]
    parts = [merge_commit.merge_part(io, metadata, replace(rest, source=share)) for share in shares]
    keys = source.select(["id"]).filter(pc.is_valid(source.column("id")))
    for unit in merge_commit.target_units(io, metadata):
        rows = merge_commit.by_source_candidates(io, metadata, spec, unit)
        parts.append(merge_commit.by_source_part(io, metadata, spec, rows.join(keys, "id", join_type="left anti")))
    return merge_commit.commit_parts(io, metadata, spec, parts)


@pytest.mark.parametrize("kind", ["keyed", "plain"])
def test_a_merge_in_parts_with_a_by_source_pass_equals_table_merge(tmp_path: Path, kind: str) -> None:
    """The engine steps of a distributed merge (what Spark's tasks run) give Table.merge's rows and counts."""
    ours, theirs = ((_keyed(tmp_path / n) if kind == "keyed" else _plain(tmp_path / n)) for n in ("a", "b"))
    for t in (ours, theirs):
        t.append({"id": [7, 8, 9], "v": ["x", "y", "z"], "n": [70, 80, 90]})
    source = pa.table({"id": pa.array([2, 3, None, 5, 9], pa.int64()), "v": ["B", "C", "N", "E", "Z"]})

    def clauses(b: Any) -> Any:
        return (b.when_matched_update(set={"v": "source.v"}, condition="target.n > 20")
                .when_not_matched_insert(values={"id": "source.id", "v": "source.v"}, condition="source.v != 'N'")
                .when_not_matched_by_source_delete(condition="target.n >= 80")
                .when_not_matched_by_source_delete(condition="target.v = 'a'"))

    got = _distributed(ours, source, clauses)
    want = clauses(theirs.merge(source, on="id")).execute()
    assert (got.rows_inserted, got.rows_updated, got.rows_deleted) == \
        (want.rows_inserted, want.rows_updated, want.rows_deleted) == (1, 2, 2)  # 5; 3, 9; 8, 1
    assert _rows(ours) == _rows(theirs)
    empty = source.slice(0, 0)
    got = _distributed(ours, empty, lambda b: b.when_not_matched_by_source_delete(condition="target.n < 25"))
    want = theirs.merge(empty, on="id").when_not_matched_by_source_delete(condition="target.n < 25").execute()
    assert got.rows_deleted == want.rows_deleted and _rows(ours) == _rows(theirs)


@pytest.mark.parametrize("kind", ["keyed", "plain"])
def test_a_by_source_unit_whose_file_a_commit_removed_is_a_conflict(tmp_path: Path, kind: str) -> None:
    """A unit carries its files (no lookup by path per unit); read at a snapshot where a compaction removed
    them it is a ``CommitConflictError`` naming the file, not a bare StopIteration or KeyError."""
    t = _keyed(tmp_path) if kind == "keyed" else _plain(tmp_path)
    t.append({"id": [7, 8], "v": ["x", "y"], "n": [70, 80]})
    captured: list[MergeSpec] = []
    source = pa.table({"id": pa.array([2], pa.int64()), "v": ["B"]})
    MergeBuilder(lambda spec: captured.append(spec), source, "id").when_not_matched_by_source_delete().execute()  # type: ignore[arg-type]
    spec = captured[0]
    before = t.io.metadata()
    units = merge_commit.target_units(t.io, before)
    assert units and all(all(isinstance(f, fs_records.DataFile) for f in u) for u in units)
    want = 5 if kind == "keyed" else 6  # every live row (the anti-join with the source comes after)
    assert sum(merge_commit.by_source_candidates(t.io, before, spec, u).num_rows for u in units) == want
    t.compact()
    after = t.io.metadata()
    live = {f.file_id for f in t.scan().live_files()}
    gone = [u for u in units if any(f.file_id not in live for f in u)]
    assert gone  # the compaction rewrote at least one unit's files
    for unit in gone:
        with pytest.raises(fs.CommitConflictError, match="not live at snapshot") as e:
            merge_commit.by_source_candidates(t.io, after, spec, unit)
        assert next(f.path for f in unit if f.file_id not in live) in str(e.value)
    if kind == "keyed":
        for unit in row_ops.keyed_update_units(t.io, before, None):
            if any(f.file_id not in live for f in unit):
                with pytest.raises(fs.CommitConflictError, match="of the update is not live"):
                    row_ops.update_unit(t.io, after, {"v": "q"}, None, unit, [])
