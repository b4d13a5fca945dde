"""``fieldshift merge LOCATION SOURCE_FILE --on ...``: MERGE INTO from a file, clauses as options."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

import fieldshift as fs
from tests.cli.test_cli import invoke, json_lines


def _rows(tmp_path: Path) -> list[dict]:
    return sorted(json_lines(invoke(tmp_path, "read", "t", "--format", "json").out), key=lambda r: r["id"])


def test_merge_clauses_from_options(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    t.append({"id": [1, 2, 4], "v": ["a", "b", "d"]})
    (tmp_path / "s.csv").write_text("id,v,op\n2,B,u\n3,C,i\n1,,d\n")
    run = invoke(tmp_path, "merge", "t", "s.csv", "--on", "id", "--delete-if", "source.op = 'd'",
                 "--set", "v = source.v", "--set", "v = 'lit'", "--insert-if", "source.op = 'i'")
    assert run.code == 0 and "1 inserted, 1 updated, 1 deleted" in run.out, run
    assert _rows(tmp_path) == [{"id": 2, "v": "lit", "op": None}, {"id": 3, "v": "C", "op": "i"},
                               {"id": 4, "v": "d", "op": None}]  # the insert wrote whole rows: op evolved in


def test_merge_defaults_to_an_upsert_and_evolves(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())]),
                        identifier_fields=["id"])
    t.append({"id": [1, 2], "v": ["a", "b"]})
    (tmp_path / "s.jsonl").write_text('{"id": 2, "v": "B", "w": 1}\n{"id": 5, "v": "E", "w": 2}\n')
    run = invoke(tmp_path, "merge", "t", "s.jsonl", "--on", "id", "--delete-missing")
    assert run.code == 0 and "1 inserted, 1 updated, 1 deleted" in run.out and "schema evolved" in run.out, run
    assert _rows(tmp_path) == [{"id": 2, "v": "B", "w": 1}, {"id": 5, "v": "E", "w": 2}]
    bad = invoke(tmp_path, "merge", "t", "s.jsonl", "--on", "v")
    assert bad.code == 1 and "on=['id']" in bad.err
    bad = invoke(tmp_path, "merge", "t", "s.jsonl", "--on", "id", "--set", "v = nope")
    assert bad.code == 2 and "--set" in bad.err


def test_partial_upsert_and_counts(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                                                   ("n", pa.int64())]), identifier_fields=["id"])
    t.append({"id": [1, 2], "v": ["a", "b"], "n": [1, 2]})
    (tmp_path / "p.jsonl").write_text('{"id": 2, "n": 20}\n{"id": 3, "n": 30}\n')
    run = invoke(tmp_path, "upsert", "t", "p.jsonl", "--partial")
    assert run.code == 0 and "rows inserted" in run.out and "rows updated" in run.out, run
    assert _rows(tmp_path) == [{"id": 1, "v": "a", "n": 1}, {"id": 2, "v": "b", "n": 20}, {"id": 3, "v": None, "n": 30}]


def test_set_names_a_column_with_a_space_quoted(tmp_path: Path) -> None:
    """Found by adv34: --set "`my col` = source.x" looked for a column named with the backticks."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("my col", pa.string())]))
    t.append({"id": [1], "my col": ["a"]})
    (tmp_path / "s.csv").write_text("id,x\n1,B\n")
    for name in ("`my col`", '"my col"'):
        run = invoke(tmp_path, "merge", "t", "s.csv", "--on", "id", "--set", f"{name} = source.x")
        assert run.code == 0 and "1 updated" in run.out, run
    assert fs.Table.open(tmp_path / "t").to_arrow().to_pylist() == [{"id": 1, "my col": "B"}]
