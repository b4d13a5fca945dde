"""Regression tests of an adversarial review of issue 12: each asserts the right behaviour where a
hostile new user found a wrong answer, lost data or a raw error.

Real tables in tmp_path, real Parquet files; no mocks. One test per finding, named after what a user
would hit.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs


def test_explicit_policy_append_of_wider_int_widens_the_table(tmp_path: Path) -> None:
    """A wider incoming type widens the table (README: on-write evolution) under every policy that allows it.

    onehouse widens int -> long for 2**40; explicit(), which allows everything onehouse does, instead
    narrows the incoming long to the table's int and fails the append on the value.
    """
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("v", pa.int32())]), policy="explicit")
    t.append(pa.table({"id": [1], "v": pa.array([1], pa.int32())}))
    result = t.append(pa.table({"id": [2], "v": pa.array([2**40], pa.int64())}))
    assert result.schema_evolved
    assert t.schema.find("v").type == pa.int64()
    assert t.to_arrow().column("v").to_pylist() == [1, 2**40]


def test_own_catalog_table_cannot_be_created_in_a_shared_catalog_tables_directory(tmp_path: Path) -> None:
    """Item 12 closed the door for two tables of one shared catalog, but a table with its own catalog can
    still be created in the directory of a shared-catalog table; either vacuum then deletes the other's
    files (data loss). The create must be refused (TableError) and the shared table keep its rows."""
    cat = str(tmp_path / "cat.db")
    a = fs.Table.create(tmp_path / "a", pa.schema([("x", pa.int64())]), catalog=cat, name="a")
    a.append(pa.table({"x": [1]}))
    with pytest.raises(fs.TableError):
        fs.Table.create(tmp_path / "a", pa.schema([("x", pa.int64())]))
    assert a.to_arrow().column("x").to_pylist() == [1]


def test_table_cannot_be_created_around_an_existing_table(tmp_path: Path) -> None:
    """refuse_nested looks only at the new location's parents: a table created in the parent directory
    of an existing table (here the inner one lives at t/data) is accepted, and the outer table's
    vacuum then deletes the inner table's catalog (data/fieldshift.db): the whole inner table is lost.
    The outer create must be refused, as the inner one would be in the other order."""
    inner = fs.Table.create(tmp_path / "t" / "data", pa.schema([("x", pa.int64())]))
    inner.append(pa.table({"x": [1]}))
    with pytest.raises(fs.TableError):
        outer = fs.Table.create(tmp_path / "t", pa.schema([("x", pa.int64())]))
        outer.vacuum(older_than=dt.timedelta(0))
    assert fs.Table.open(tmp_path / "t" / "data").to_arrow().column("x").to_pylist() == [1]


def test_append_missing_required_struct_child_is_refused_not_filled_with_zero(tmp_path: Path) -> None:
    """A required struct child (no write default) missing from the input is written as 0: a fabricated
    value, silently. A missing required top-level column is refused (RequiredFieldWithoutDefaultError);
    a nested one must be too (or quarantined), and nothing committed."""
    req = pa.field("a", pa.int32(), nullable=False)
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("s", pa.struct([req, ("c", pa.string())]))]))
    with pytest.raises((fs.SchemaEvolutionError, fs.TableError), match=r"s\.a"):
        t.append(pa.table({"id": [1], "s": pa.array([{"c": "x"}])}))
    assert t.to_arrow().num_rows == 0


@pytest.mark.parametrize("column", ["s", "l", "m"])
def test_all_null_column_appends_into_nested_column(tmp_path: Path, column: str) -> None:
    """pa.table({"s": [None]}) infers Arrow's null type (so do pandas/polars for an all-None column).
    Into a primitive column it appends as nulls (rule null_to_any); into a struct, list or map column it
    fails: "incoming unknown ... a struct and a non-struct never share a type"."""
    schema = pa.schema([("id", pa.int64()), ("s", pa.struct([("k", pa.int32())])), ("l", pa.list_(pa.int32())),
                        ("m", pa.map_(pa.string(), pa.int32()))])
    t = fs.Table.create(tmp_path / "t", schema)
    t.append(pa.table({"id": [1], column: [None]}))
    assert t.to_arrow().to_pylist() == [{"id": 1, "s": None, "l": None, "m": None}]


def test_identifier_field_inside_optional_struct_is_refused(tmp_path: Path) -> None:
    """Iceberg refuses an identifier field nested in an optional struct (the key would be null when the
    struct is). Here it is accepted, and rows whose key is null are then committed."""
    st = pa.struct([pa.field("k", pa.int32(), nullable=False)])
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("s", st)])
    with pytest.raises((fs.SchemaEvolutionError, fs.TableError), match="s"):
        fs.Table.create(tmp_path / "t", schema, identifier_fields=["id", "s.k"])


def test_ddl_fixed_width_beyond_int32_is_a_syntax_error(tmp_path: Path) -> None:
    """Item 14 refused fixed[0]; fixed[2147483648] still escapes as a raw OverflowError (a traceback from
    `fieldshift alter`). It must be a DDLSyntaxError naming the width, like decimal(0,0) is."""
    from fieldshift.ddl.alter import DDLSyntaxError, parse_columns

    with pytest.raises(DDLSyntaxError):
        parse_columns("f fixed[2147483648]")


def test_field_ids_beyond_int32_are_refused(tmp_path: Path) -> None:
    """Iceberg and Parquet field ids are int32. Id 2**31 is accepted, committed, and written to Parquet as
    field_id=-1 (no id at all): fss.read (Spark native field-id scan) then fails with FAILED_READ_FILE.
    Adding a column after id 2**31-1 likewise takes 2**31. Both must raise InvalidFieldIdError."""
    big = pa.schema([pa.field("a", pa.int32(), metadata={b"PARQUET:field_id": str(2**31).encode()})])
    with pytest.raises((fs.SchemaEvolutionError, fs.TableError), match="2147483648"):
        fs.Schema.from_arrow(big)
    edge = fs.Schema.from_arrow(pa.schema([pa.field("a", pa.int32(), metadata={b"PARQUET:field_id": b"2147483647"})]))
    with pytest.raises((fs.SchemaEvolutionError, fs.TableError)):
        edge.update().add_column("b", pa.int32()).apply()


def test_quarantine_of_far_second_timestamps_does_not_crash(tmp_path: Path) -> None:
    """Item 19 again, on the quarantine file: a timestamp[s] row beyond the ns range is set aside, but
    writing the quarantine file (Parquet has no seconds unit, so pyarrow coerces to ms) overflows and
    the append fails with a raw ArrowInvalid. The row must be quarantined and the good row written."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("ts", pa.timestamp("ns"))]))
    result = t.append(pa.table({"id": [1, 2], "ts": pa.array([2**62, 5], pa.timestamp("s"))}),
                      on_incompatible="quarantine")
    assert (result.rows_written, result.rows_quarantined) == (1, 1)
    assert t.quarantine().num_rows == 1


def test_far_second_timestamp_in_a_seconds_column_is_a_named_error(tmp_path: Path) -> None:
    """A table column of timestamp[s] takes 2**62 s (a valid Arrow value) but the Parquet writer coerces
    to ms and raises a raw ArrowInvalid. The append must fail with a fieldshift error naming the column
    (or store it), and commit nothing."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("ts", pa.timestamp("s"))]))
    with pytest.raises((fs.SchemaEvolutionError, fs.TableError), match="ts"):
        t.append(pa.table({"id": [1], "ts": pa.array([2**62], pa.timestamp("s"))}))
    assert len(t.history()) == 1


def test_date_to_microsecond_timestamp_out_of_range_is_a_cast_error() -> None:
    """date -> timestamp is lossless and README says it is range-checked, but for a microsecond target
    the plan uses an unchecked Arrow cast: a date32 of 2**30 days raises raw ArrowInvalid from apply,
    apply_split and even on_error='null'. It must be a CastValueError (apply) / a split-out row."""
    v1 = fs.Schema.from_arrow(pa.schema([("d", pa.date32())]), assign_ids=True)
    v2 = v1.update().update_column("d", pa.timestamp("us")).apply()
    batch = pa.RecordBatch.from_pydict({"d": pa.array([2**30, 0], pa.date32())}, schema=v1.to_arrow())
    with pytest.raises(fs.CastValueError):
        fs.plan(v1, v2).apply(batch)
    good, bad = fs.plan(v1, v2).apply_split(batch)
    assert (good.num_rows, bad.num_rows) == (1, 1)


def test_scan_arguments_of_the_wrong_kind_get_a_clear_error(tmp_path: Path) -> None:
    """Item 8 validated filter literals, but scan's own arguments are not: columns="id" is iterated into
    'i', 'd' ("no field at path 'i'"), and schema_id="0" says "no schema 0; schema ids are [0]". Both
    must say what kind of argument is expected (a list of names, an int)."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
    t.append(pa.table({"id": [1]}))
    with pytest.raises((TypeError, fs.SchemaEvolutionError), match="list"):
        t.scan(columns="id")
    with pytest.raises((TypeError, fs.SchemaEvolutionError), match="int"):
        t.scan(schema_id="0")


@pytest.mark.parametrize("mode", ["fail", "quarantine"])
def test_append_of_an_unstorable_new_column_names_it(tmp_path: Path, mode: str) -> None:
    """Table.create names the column of a type Parquet cannot store ("column 'dur' has Arrow type
    duration[s] ..."); an append that would add one raises a bare TypeError without the column
    ("fieldshift has no name for Arrow type duration[s]"). It must be a fieldshift error naming 'dur'."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
    with pytest.raises((fs.SchemaEvolutionError, fs.TableError), match="dur"):
        t.append(pa.table({"id": [1], "dur": pa.array([5], pa.duration("s"))}), on_incompatible=mode)


def test_table_created_with_a_uuid_column_accepts_uuid_rows(tmp_path: Path) -> None:
    """Table.create accepts an arrow.uuid column (stored as fixed[16]), but appending the very data it was
    made for fails: "incoming extension<arrow.uuid> cannot be written into table type fixed[16]". An
    append adding a uuid column fails with a bare TypeError. Both must take the rows."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("u", pa.uuid())]))
    t.append(pa.table({"u": pa.array([b"0123456789abcdef"], pa.uuid())}))
    value = pa.scalar(b"0123456789abcdef", pa.uuid()).as_py()
    assert t.to_arrow().column("u").to_pylist() in ([b"0123456789abcdef"], [value])
    t2 = fs.Table.create(tmp_path / "t2", pa.schema([("id", pa.int64())]))
    t2.append(pa.table({"id": [1], "u": pa.array([b"0123456789abcdef"], pa.uuid())}))
    assert t2.to_arrow().num_rows == 1


def test_cli_json_output_is_strict_json_for_nan_and_infinity(tmp_path: Path) -> None:
    """`fieldshift read -f json` prints a double NaN as a bare NaN (and inf as Infinity): not JSON, so jq
    and JSON.parse reject the line. The quarantine listing renders them as the strings "NaN"/"Infinity";
    read must print valid JSON too (a string or null)."""
    import json

    from typer.testing import CliRunner

    from fieldshift.cli import app

    t = fs.Table.create(tmp_path / "t", pa.schema([("v", pa.float64())]))
    t.append(pa.table({"v": [float("nan"), float("inf"), 1.0]}))
    result = CliRunner().invoke(app, ["read", str(tmp_path / "t"), "-f", "json"])
    assert result.exit_code == 0, result.output

    def refuse(name: str) -> None:
        raise ValueError(f"not JSON: {name}")

    rows = [json.loads(line, parse_constant=refuse) for line in result.stdout.splitlines() if line.strip()]
    assert len(rows) == 3


def test_append_cast_failure_hint_is_about_appending(tmp_path: Path) -> None:
    """An append whose value fails the policy's cast raises CastValueError with the read-side hint "Use
    CastPolicy.explicit(on_error='null') to read it as null, or ... plan.apply_split()", even when that
    already is the table's policy. An append's error must point at the append's remedies
    (on_incompatible='quarantine', cast the input)."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("v", pa.int32())]), policy="explicit-null")
    with pytest.raises((fs.SchemaEvolutionError, fs.TableError)) as info:
        t.append(pa.table({"id": [1], "v": ["abc"]}))
    assert "quarantine" in str(info.value)
    assert "apply_split" not in str(info.value)


def test_required_child_read_over_optional_file_child_is_writable_parquet(tmp_path: Path) -> None:
    """Item 24 (DuckDB/Spark files mark every column optional): reading struct s {x optional} as
    s {x required} passes because x is null only under a null s. The evolved batch keeps that hidden
    null in the now non-nullable child, so writing it on (pq.write_table, a compaction, a copy into
    another table's Parquet) fails "Column 'x' is declared non-nullable but contains nulls". The plan
    must hand back valid children under null structs, as on-write does since item 15."""
    import pyarrow.parquet as pq

    def fid(i: int) -> dict[bytes, bytes]:
        return {b"PARQUET:field_id": str(i).encode()}

    child = pa.field("x", pa.int32(), metadata=fid(2))
    file_schema = fs.Schema.from_arrow(pa.schema([pa.field("s", pa.struct([child]), metadata=fid(1))]))
    read_schema = fs.Schema.from_arrow(pa.schema([pa.field("s", pa.struct([child.with_nullable(False)]),
                                                           metadata=fid(1))]))
    structs = pa.StructArray.from_arrays([pa.array([1, None], pa.int32())], fields=[child],
                                         mask=pa.array([False, True]))
    batch = pa.RecordBatch.from_arrays([structs], schema=file_schema.to_arrow())
    out = fs.plan(file_schema, read_schema).apply(batch)
    assert out.to_pylist() == [{"s": {"x": 1}}, {"s": None}]
    pq.write_table(pa.Table.from_batches([out]), tmp_path / "out.parquet")
    assert pq.read_table(tmp_path / "out.parquet").to_pylist() == [{"s": {"x": 1}}, {"s": None}]


def test_column_named_like_a_quarantine_column_does_not_break_quarantine(tmp_path: Path) -> None:
    """Table.create accepts a column named _fieldshift_reason. A quarantined row of that table is then
    written with two _fieldshift_reason columns, and t.quarantine() (and `fieldshift quarantine`) fail
    for every row with "unreadable (corrupt or not Parquet): Multiple matches for FieldRef". Either
    create refuses the reserved prefix, or the listing keeps both columns apart."""
    schema = pa.schema([("id", pa.int64()), ("_fieldshift_reason", pa.string())])
    try:
        t = fs.Table.create(tmp_path / "t", schema)
    except (fs.SchemaEvolutionError, fs.TableError):
        return  # refused up front: fine
    t.append(pa.table({"id": ["x"], "_fieldshift_reason": ["mine"]}), on_incompatible="quarantine")
    assert t.quarantine().num_rows == 1


def test_schema_from_json_too_deep_is_a_nesting_error() -> None:
    """Item 13 bounded nesting in from_arrow and DDL, but Schema.from_json of a struct nested 1,500 deep
    escapes as a raw RecursionError from the json module. It must be the same NestingDepthError."""
    inner = '"int"'
    for i in range(1500):
        inner = f'{{"type":"struct","fields":[{{"id":{i + 2},"name":"x","required":false,"type":{inner}}}]}}'
    text = f'{{"type":"struct","schema-id":0,"fields":[{{"id":1,"name":"d","required":false,"type":{inner}}}]}}'
    with pytest.raises((fs.SchemaEvolutionError, fs.TableError)):
        fs.Schema.from_json(text)


def test_vacuum_never_deletes_a_shared_catalog_kept_under_data(tmp_path: Path) -> None:
    """vacuum deletes every unreferenced regular file under data/, whatever it is: a shared catalog kept
    at <table>/data/cat.db is deleted (every table of that catalog is lost). Refuse such a catalog path
    at create, or let vacuum delete only files it could have written (its own data file names)."""
    (tmp_path / "a" / "data").mkdir(parents=True)
    cat = str(tmp_path / "a" / "data" / "cat.db")
    try:
        a = fs.Table.create(tmp_path / "a", pa.schema([("x", pa.int64())]), catalog=cat, name="a")
    except (fs.SchemaEvolutionError, fs.TableError):
        return  # refused up front: fine
    a.append(pa.table({"x": [1]}))
    a.vacuum(older_than=dt.timedelta(0))
    assert fs.Table.open(tmp_path / "a", catalog=cat, name="a").to_arrow().column("x").to_pylist() == [1]


@pytest.mark.spark
def test_spark_count_of_a_table_with_a_time_column(tmp_path: Path) -> None:
    """The Spark schema maps time64 to Spark 4's TimeType: collect() works, but df.count() (and any
    aggregate) fails with AnalysisException UNSUPPORTED_TIME_TYPE, for both the data source and
    fss.read. Either the session fss.session() makes enables the type, or the column maps to a type
    Spark supports, or the read is refused up front with a named error."""
    import datetime

    pytest.importorskip("pyspark")
    import fieldshift.spark as fss

    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("t", pa.time64("us"))]))
    t.append(pa.table({"id": [1, 2], "t": pa.array([datetime.time(1, 2, 3), None], pa.time64("us"))}))
    spark = fss.session(master="local[2]", **{"spark.sql.shuffle.partitions": "2"})
    assert spark.read.format("fieldshift").load(str(tmp_path / "t")).count() == 2
    assert fss.read(spark, str(tmp_path / "t")).count() == 2


def test_run_end_encoded_input_appends_into_an_existing_column(tmp_path: Path) -> None:
    """Item 20 wants run-end-encoded input supported or refused, never half-supported. A new REE column
    is decoded and added ('add ree string'), but REE data for an existing column is refused with
    "incoming run_end_encoded<...> cannot be written into table type long ... no rule of the policy
    widens either type", a misleading hint. It must append like the decoded values would."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("b", pa.string())]))
    t.append(pa.table({"id": pa.RunEndEncodedArray.from_arrays([2], pa.array([5], pa.int64())),
                       "b": pa.RunEndEncodedArray.from_arrays([1, 2], ["a", None])}))
    assert t.to_arrow().to_pylist() == [{"id": 5, "b": "a"}, {"id": 5, "b": None}]


def test_append_of_decimals_widens_to_the_decimal_holding_both(tmp_path: Path) -> None:
    """On-write widening tries only "one side holds the other" and fixed meeting points (int16..double),
    so decimal(10,0) arriving in a decimal(5,2) column fails "no rule of the policy widens either type",
    although decimal(12,2) holds both exactly and every policy allows decimal widening (Spark's and
    Hudi's wider-decimal rule). The table must widen to decimal(12,2) and keep every value."""
    import decimal

    t = fs.Table.create(tmp_path / "t", pa.schema([("d", pa.decimal128(5, 2))]), policy="lossless")
    t.append(pa.table({"d": pa.array([decimal.Decimal("123.45")], pa.decimal128(5, 2))}))
    t.append(pa.table({"d": pa.array([decimal.Decimal("1234567890")], pa.decimal128(10, 0))}))
    assert t.schema.find("d").type == pa.decimal128(12, 2)
    assert t.to_arrow().column("d").to_pylist() == [decimal.Decimal("123.45"), decimal.Decimal("1234567890.00")]


def test_append_of_nanoseconds_never_strands_far_microsecond_rows(tmp_path: Path) -> None:
    """A default append of a timestamp[ns] batch widens the table's timestamp (us) column to ns. The
    commit check is type-level only, so a committed file holding 3000-01-01 (fine in us, beyond ns's
    year 2262) is stranded: every later t.to_arrow() raises CastValueError. The table must stay
    readable: refuse/quarantine the widening (the file stats show the range), or keep the column in us."""
    import datetime

    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us"))]))
    t.append(pa.table({"id": [1], "ts": pa.array([datetime.datetime(3000, 1, 1)], pa.timestamp("us"))}))
    try:
        t.append(pa.table({"id": [2], "ts": pa.array([0], pa.timestamp("ns"))}))
    except (fs.SchemaEvolutionError, fs.TableError):
        pass  # refusing the widening is fine
    rows = t.to_arrow().to_pylist()
    assert rows[0]["id"] == 1


def test_alter_binary_to_string_never_strands_invalid_utf8(tmp_path: Path) -> None:
    """Under the default policy, ALTER binary -> string (a checked cast the policy allows) commits
    although a data file holds b'\\xff'; from then on every scan of the table raises CastValueError.
    Item 10's promise (nothing committed that the table cannot read back) must hold at value level for
    the policy's checked casts too: refuse the commit, naming the file, and leave the table readable."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("b", pa.binary())]))
    t.append(pa.table({"b": [b"\xff", b"ok"]}))
    try:
        t.update_schema().update_column("b", pa.string()).commit()
    except (fs.SchemaEvolutionError, fs.TableError):
        pass  # refused: fine
    assert t.to_arrow().num_rows == 2


def test_float_literal_on_a_decimal_column_matches_like_pyarrow_pyiceberg_and_the_cli(tmp_path: Path) -> None:
    """("d", ">=", 0.1) on a decimal(10,2) column holding 0.10 drops that row: the float 0.1 is compared
    as its exact binary value 0.1000000000000000055..., above 0.10. pyarrow (pc.equal(d, 0.1) is true),
    PyIceberg (literal(0.1).to(DecimalType(10, 2)) is 0.10), Spark, and `fieldshift read -w "d >= 0.1"`
    all keep the row; the Python API must agree (read a float literal as its shortest decimal repr)."""
    import decimal

    t = fs.Table.create(tmp_path / "t", pa.schema([("d", pa.decimal128(10, 2))]))
    t.append(pa.table({"d": pa.array([decimal.Decimal("0.10"), decimal.Decimal("2.50")], pa.decimal128(10, 2))}))
    assert t.scan(filter=("d", ">=", 0.1)).to_arrow().num_rows == 2
    assert t.scan(filter=("d", "==", 0.1)).to_arrow().num_rows == 1


def test_cli_reads_a_table_of_a_shared_catalog(tmp_path: Path) -> None:
    """The CLI opens only tables with their own catalog: for a table of a shared catalog, `fieldshift
    read LOCATION` says "no fieldshift table ... make one with `fieldshift create LOCATION`", which would
    put a second table in that directory (see the vacuum findings above). The Spark source takes
    `catalog`/`table` options; the CLI opens the table by the marker its directory keeps."""
    from typer.testing import CliRunner

    from fieldshift.cli import app

    cat = str(tmp_path / "cat.db")
    a = fs.Table.create(tmp_path / "a", pa.schema([("x", pa.int64())]), catalog=cat, name="a")
    a.append(pa.table({"x": [41]}))
    result = CliRunner().invoke(app, ["read", str(tmp_path / "a"), "-f", "csv"])  # found by its directory
    assert result.exit_code == 0, result.output
    assert "41" in result.stdout


def test_append_of_records_keeps_keys_that_first_appear_in_later_records(tmp_path: Path) -> None:
    """append() takes a list of dicts through pa.Table.from_pylist, which infers the columns from the
    first record only: t.append([{"a": 1}, {"b": 2}]) writes a = [1, None] and silently drops b = 2,
    exactly the drifting JSON records on-write evolution exists for. Every key must arrive (b added)."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("a", pa.int64())]))
    t.append([{"a": 1}, {"b": 2}])
    assert t.to_arrow().to_pylist() == [{"a": 1, "b": None}, {"a": None, "b": 2}]


def test_vacuum_takes_seconds_and_says_what_it_wants(tmp_path: Path) -> None:
    """vacuum(older_than=0) raised a raw AttributeError; a number is seconds, anything else a TypeError."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("x", pa.int64())]))
    t.append(pa.table({"x": [1]}))
    assert t.vacuum(older_than=0) == []
    with pytest.raises(TypeError, match="timedelta"):
        t.vacuum(older_than="1h")
    assert t.to_arrow().column("x").to_pylist() == [1]
