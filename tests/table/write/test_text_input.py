"""CSV and JSON input keeps text as written: a column the table holds as string is read as string, types
can be pinned (``types=``), and the texts that read as null are the caller's choice (``null_values=``)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.streams.capture_read import DEFAULT_NULL_VALUES


def _land(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_capture_reads_the_tables_string_columns_as_text(tmp_path: Path) -> None:
    """pyarrow guesses "007" is 7 and "02134"/"2134" are one number: on a keyed table a row was lost."""
    schema = pa.schema([pa.field("zip", pa.string(), nullable=False), ("code", pa.string()), ("price", pa.string()),
                        ("n", pa.int32())])
    t = fs.Table.create(tmp_path / "t", schema, identifier_fields=["zip"])
    land = tmp_path / "land"
    _land(land, "a.csv", "zip,code,price,n\n02134,007,1.50,1\n2134,7,2,2\n")
    _land(land, "b.json", json.dumps({"zip": "00001", "code": "2024-01-01", "price": "3.10", "n": 3}) + "\n")
    done = fs.capture(land, t)
    assert done.files == 2 and done.rows == 3 and not done.schema_changes
    rows = sorted(t.to_arrow().to_pylist(), key=lambda r: r["n"])
    assert rows == [{"zip": "02134", "code": "007", "price": "1.50", "n": 1},
                    {"zip": "2134", "code": "7", "price": "2", "n": 2},
                    {"zip": "00001", "code": "2024-01-01", "price": "3.10", "n": 3}]  # JSON: not a timestamp
    assert t.schema.find("n").type == pa.int32()  # guessed numbers still fit the table's narrower type


def test_capture_types_pin_new_columns(tmp_path: Path) -> None:
    land = tmp_path / "land"
    _land(land, "a.csv", "id,zip,amount,day\n1,007,1.50,2024-02-29\n")
    _land(land, "b.json", json.dumps({"id": 2, "zip": 8, "amount": 2.25, "day": "2024-03-01"}) + "\n")
    done = fs.capture(land, tmp_path / "t", types={"zip": "string", "amount": pa.decimal128(10, 2), "day": "date"})
    assert done.rows == 2
    t = fs.Table.open(tmp_path / "t")
    assert [t.schema.find(c).type for c in ("id", "zip", "amount", "day")] == \
        [pa.int64(), pa.string(), pa.decimal128(10, 2), pa.date32()]
    assert sorted(r["zip"] for r in t.to_arrow().to_pylist()) == ["007", "8"]


def test_a_pinned_type_a_value_does_not_fit_names_the_file_and_column(tmp_path: Path) -> None:
    land = tmp_path / "land"
    _land(land, "a.csv", "id,when\n1,yesterday\n")
    with pytest.raises(fs.DataFileError, match=r"a\.csv.*column 'when'.*date32"):
        fs.capture(land, tmp_path / "t", types={"when": "date"})
    assert not (tmp_path / "t").exists()
    with pytest.raises(fs.InvalidOptionError, match="column 'when'"):
        fs.capture(land, tmp_path / "t", types={"when": "dat"})


def test_read_file_keeps_text_and_fits_numbers_to_the_table(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("k", pa.string()), ("n", pa.int16())]))
    path = _land(tmp_path, "in.csv", "k,n,extra\n007,5,9\n")
    data = fs.read_file(path, like=t)
    assert data.to_pylist() == [{"k": "007", "n": 5, "extra": 9}]
    assert data.schema.field("n").type == pa.int16() and data.schema.field("extra").type == pa.int64()
    t.append(data)
    assert t.to_arrow().column("k").to_pylist() == ["007"]
    assert fs.read_file(path, like=t, types={"extra": "string"}).column("extra").to_pylist() == ["9"]
    with pytest.raises(fs.InvalidOptionError, match="CSV and JSON"):
        import pyarrow.parquet as pq

        pq.write_table(data, tmp_path / "in.parquet")
        fs.read_file(tmp_path / "in.parquet", like=t, types={"k": "string"})


def test_null_texts_are_documented_and_chosen_by_the_caller(tmp_path: Path) -> None:
    path = _land(tmp_path, "in.csv", "n,note\n1,n/a\nn/a,\nNULL,NULL\n")
    default = fs.read_file(path, like=pa.schema([("note", pa.string())]))
    # by default: pyarrow's list (n/a, NULL, an empty field, ...) in columns not read as text; text kept
    assert "n/a" in DEFAULT_NULL_VALUES and "" in DEFAULT_NULL_VALUES
    assert default.to_pylist() == [{"n": 1, "note": "n/a"}, {"n": None, "note": ""}, {"n": None, "note": "NULL"}]
    chosen = fs.read_file(path, like=pa.schema([("note", pa.string())]), null_values=["NULL", ""])
    assert chosen.schema.field("n").type == pa.string()  # "n/a" is a value now, so n is no number column
    assert chosen.to_pylist() == [{"n": "1", "note": "n/a"}, {"n": "n/a", "note": None}, {"n": None, "note": None}]
    quoted = _land(tmp_path, "quoted.csv", 'id,note\n1,""\n2,\n3,"NULL"\n')  # as `fieldshift read -f csv` writes
    assert fs.read_file(quoted, like=pa.schema([("note", pa.string())]), null_values=[""]).column("note").to_pylist() \
        == ["", None, "NULL"]  # a quoted field is a value
    nothing = fs.read_file(path, null_values=[])
    assert nothing.column("note").to_pylist() == ["n/a", "", "NULL"]
    land = tmp_path / "land"
    _land(land, "a.csv", "id,score\n1,n/a\n2,7\n")
    fs.capture(land, tmp_path / "t", null_values=[""])  # "n/a" is no null here: score is text
    assert fs.Table.open(tmp_path / "t").to_arrow().column("score").to_pylist() == ["n/a", "7"]
