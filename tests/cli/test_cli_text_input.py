"""First-hour defects of the command line (issue 27): CSV/JSON text kept as written and pinned types,
the advice of a duplicate-key append, shared-catalog tables named and found without LOCATION, null
texts of CSV input and the confirmation of ``read -o``."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

import fieldshift as fs
from tests.cli.test_cli import cli, invoke, json_lines


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_append_and_upsert_keep_text_and_take_pinned_types(tmp_path: Path) -> None:
    created = invoke(tmp_path, "create", "t", "--schema", "zip string NOT NULL, day string, n int", "--key", "zip")
    assert created.code == 0, created
    (tmp_path / "a.csv").write_text("zip,day,n,code\n02134,2024-01-01,1,007\n")
    _jsonl(tmp_path / "b.json", [{"zip": "2134", "day": "2024-01-02", "n": 2, "code": "8"}])
    assert invoke(tmp_path, "append", "t", "a.csv", "--type", "code=string").code == 0
    upserted = invoke(tmp_path, "upsert", "t", "b.json", "--type", "code=string")
    assert upserted.code == 0, upserted
    rows = sorted(json_lines(invoke(tmp_path, "read", "t", "--format", "json").out), key=lambda r: r["n"])
    assert rows == [{"zip": "02134", "day": "2024-01-01", "n": 1, "code": "007"},
                    {"zip": "2134", "day": "2024-01-02", "n": 2, "code": "8"}]  # JSON dates stay text too
    table = fs.Table.open(tmp_path / "t")
    assert table.schema.find("code").type == pa.string() and table.schema.find("n").type == pa.int32()
    bad = invoke(tmp_path, "append", "t", "a.csv", "--type", "code")
    assert bad.code == 2 and "COL=TYPE" in bad.err
    bad = invoke(tmp_path, "append", "t", "a.csv", "--type", "code=strang")
    assert bad.code == 2 and "unknown type 'strang'" in bad.err


def test_capture_takes_pinned_types_and_null_values(tmp_path: Path) -> None:
    land = tmp_path / "land"
    land.mkdir()
    (land / "a.csv").write_text("id,zip,score\n1,007,n/a\n2,,3\n")
    done = invoke(tmp_path, "capture", "land", "t", "--type", "zip=string", "--null-values", "")
    assert done.code == 0, done
    rows = fs.Table.open(tmp_path / "t").to_arrow().to_pylist()
    assert rows == [{"id": 1, "zip": "007", "score": "n/a"}, {"id": 2, "zip": None, "score": "3"}]


def test_null_values_replace_the_default_list(tmp_path: Path) -> None:
    assert invoke(tmp_path, "create", "t", "--schema", "n bigint, note string").code == 0
    (tmp_path / "a.csv").write_text("n,note\n1,n/a\nNULL,NULL\n")
    assert invoke(tmp_path, "append", "t", "a.csv").code == 0  # default: text kept in text columns
    assert invoke(tmp_path, "append", "t", "a.csv", "--null-values", "NULL").code == 0
    notes = [r["note"] for r in json_lines(invoke(tmp_path, "read", "t", "--format", "json").out)]
    assert notes == ["n/a", "NULL", "n/a", None]
    (tmp_path / "a.json").write_text('{"n": 1}\n')
    refused = invoke(tmp_path, "append", "t", "a.json", "--null-values", "NULL")
    assert refused.code == 2 and "CSV" in refused.err


def test_duplicate_key_append_advises_the_upsert_command(tmp_path: Path) -> None:
    assert invoke(tmp_path, "create", "k", "--schema", "id bigint NOT NULL, v string", "--key", "id").code == 0
    _jsonl(tmp_path / "dup.json", [{"id": 1, "v": "a"}, {"id": 1, "v": "b"}])
    for _ in range(2):  # a key twice in the file; then (after an upsert) a key the table holds
        refused = invoke(tmp_path, "append", "k", "dup.json")
        said = " ".join(refused.err.split())
        assert refused.code == 1 and "Use `fieldshift upsert k dup.json`" in said, refused
        assert "table.upsert()" not in said and "--quarantine" not in said, refused
        assert invoke(tmp_path, "upsert", "k", "dup.json").code == 0
    land = tmp_path / "land"
    land.mkdir()
    _jsonl(land / "a.json", [{"id": 2, "v": "a"}, {"id": 2, "v": "b"}])
    captured = invoke(tmp_path, "capture", "land", "k")
    said = " ".join(captured.err.split())
    assert captured.code == 1 and "Capture with --operation upsert" in said and "table.upsert()" not in said


def test_shared_catalog_tables_are_named_and_found_without_location(tmp_path: Path) -> None:
    catalog = str(tmp_path / "shared.db")
    home = tmp_path / "lake" / "events"
    created = invoke(tmp_path, "--catalog", catalog, "create", str(home), "--schema", "id bigint NOT NULL, v string",
                     "--key", "id")
    assert created.code == 0 and "as table 'events'" in created.out, created
    assert fs.Table.open(catalog=catalog, name="events").location == home
    _jsonl(tmp_path / "rows.json", [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}])
    (tmp_path / "land").mkdir()
    _jsonl(tmp_path / "land" / "more.json", [{"id": 3, "v": "c"}])
    named = ("--catalog", catalog, "--table", "events")
    for command in (("append", "rows.json"), ("upsert", "rows.json"), ("capture", "land"),
                    ("alter", "ALTER TABLE events ADD COLUMNS (note string)"), ("delete", "--where", "id = 2"),
                    ("schema", "show"), ("schema", "log"), ("schema", "diff", "0"), ("explain",),
                    ("policy", "hudi"), ("policy",), ("quarantine",), ("compact",),
                    ("expire", "--older-than", "0"), ("vacuum",), ("read", "--format", "json")):
        done = invoke(tmp_path, *named, *command)
        assert done.code == 0, (command, done)
    assert sorted(r["id"] for r in json_lines(done.out)) == [1, 3]
    table = fs.Table.open(home, catalog=catalog)  # by its location, whatever its name
    assert table.name == "events" and table.policy == fs.CastPolicy.hudi() and "note" in table.schema.names
    # a LOCATION given as well still works (as before), and `create` still needs one
    assert invoke(tmp_path, *named, "read", str(home), "--format", "json").code == 0
    nowhere = invoke(tmp_path, *named, "create", "--schema", "id bigint")
    assert nowhere.code == 2 and "LOCATION" in nowhere.err


def test_read_to_a_file_says_what_it_wrote(tmp_path: Path) -> None:
    fs.Table.create(tmp_path / "t", pa.schema([("a", pa.int64())])).append({"a": [1, 2, 3]})
    done = cli(tmp_path, "read", "t", "--format", "parquet", "--output", "out.parquet")  # the real command
    assert done.code == 0 and done.out == "wrote 3 row(s) to out.parquet (parquet)\n", done
    for fmt in ("csv", "json", "table"):
        done = invoke(tmp_path, "read", "t", "--format", fmt, "--output", f"out.{fmt}")
        assert done.code == 0 and done.out == f"wrote 3 row(s) to out.{fmt} ({fmt})\n", done
        assert "3" in (tmp_path / f"out.{fmt}").read_text()
    assert invoke(tmp_path, "read", "t", "--format", "json").out.count("\n") == 3  # to stdout: only the rows
