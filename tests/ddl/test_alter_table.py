"""ALTER TABLE parsing and applying: every statement form in the Hudi and DuckLake seeds, on real schemas."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.ddl.alter import (
    AddColumn,
    DDLSyntaxError,
    DropColumn,
    MoveColumn,
    RenameColumn,
    SetComment,
    SetDefault,
    SetNullable,
    SetType,
    apply_alter,
    parse_alter,
    parse_columns,
    parse_predicate,
)
from fieldshift.errors import (
    NullabilityTighteningError,
    RequiredFieldWithoutDefaultError,
    TypeChangeNotAllowedError,
    UnknownFieldError,
)

# A table shaped for the seeds' examples: Hudi's col1 / a.b.c / col_struct / member map, DuckLake's
# col1 / nested_column, and the int8 and float columns of DuckLake's promotion table.
BASE = parse_columns(
    "col1 int, a struct<b: struct<c: int not null, d: string>>, x int, y string, "
    "col_struct struct<col_from_col_struct: string>, member map<string, struct<n: string, a: int>>, "
    "nested_column struct<existing: int>, tiny int8, f float"
)


def run(statement: str) -> fs.Schema:
    return apply_alter(BASE.update(), statement).apply()


def names(schema: fs.Schema, path: str | None = None) -> list[str]:
    fields = schema.fields if path is None else schema.find(path).children()
    return [f.name for f in fields]


# -- Hudi ------------------------------------------------------------------------------------------
def test_hudi_add_columns_appends_a_nullable_column_with_a_fresh_id() -> None:
    new = run("ALTER TABLE h0 ADD COLUMNS(ext0 string);")
    ext0 = new.find("ext0")
    assert names(new)[-1] == "ext0" and ext0.nullable and ext0.type == pa.string()
    assert ext0.id == BASE.highest_field_id + 1 and new.schema_id == BASE.schema_id + 1


def test_hudi_add_not_null_column_parses_but_needs_a_default() -> None:
    statement = "ALTER TABLE h0 ADD COLUMNS(new_col int not null comment 'add new column' AFTER col1);"
    assert parse_alter(statement) == [AddColumn("new_col", pa.int32(), nullable=False, doc="add new column",
                                                after="col1")]
    with pytest.raises(RequiredFieldWithoutDefaultError) as info:
        run(statement)
    note = "\n".join(info.value.__notes__)
    assert "new_col int not null" in note and "^^^" in note  # points at the column spec
    new = run("ALTER TABLE h0 ADD COLUMNS(new_col int not null default 0 comment 'add new column' "
              "AFTER col1)")
    col = new.find("new_col")
    assert names(new)[:2] == ["col1", "new_col"]
    assert (col.nullable, col.initial_default, col.write_default, col.doc) == (False, 0, 0, "add new column")


def test_hudi_add_columns_into_a_struct_after_a_sibling() -> None:
    new = run("ALTER TABLE complex_table ADD COLUMNS(col_struct.col_name string comment "
              "'add new column to a struct col' AFTER col_from_col_struct);")
    assert names(new, "col_struct") == ["col_from_col_struct", "col_name"]
    assert new.find("col_struct.col_name").doc == "add new column to a struct col"


def test_hudi_add_columns_several_at_once_and_into_a_map_value() -> None:
    new = run("ALTER TABLE t ADD COLUMNS(member.value.col1 string FIRST, z1 bigint, z2 decimal(10, 2))")
    assert names(new, "member.value") == ["col1", "n", "a"]
    assert new.find("z2").type == pa.decimal128(10, 2) and names(new)[-2:] == ["z1", "z2"]


def test_hudi_alter_column_type_keeps_the_id() -> None:
    new = run("ALTER TABLE table1 ALTER COLUMN a.b.c TYPE bigint")
    assert new.find("a.b.c").type == pa.int64() and new.find("a.b.c").id == BASE.find("a.b.c").id


def test_hudi_alter_column_comment_first_after_and_drop_not_null() -> None:
    commented = run("ALTER TABLE table1 ALTER COLUMN a.b.c COMMENT 'new comment'")
    assert commented.find("a.b.c").doc == "new comment"
    assert names(run("ALTER TABLE table1 ALTER COLUMN a.b.d FIRST"), "a.b") == ["d", "c"]
    assert names(run("ALTER TABLE table1 ALTER COLUMN a.b.c AFTER d"), "a.b") == ["d", "c"]
    assert names(run("ALTER TABLE table1 ALTER COLUMN y AFTER col1"))[:2] == ["col1", "y"]
    assert run("ALTER TABLE table1 ALTER COLUMN a.b.c DROP NOT NULL").find("a.b.c").nullable


def test_hudi_alter_column_verbatim_forms_parse() -> None:
    assert parse_alter("ALTER TABLE table1 ALTER COLUMN a.b.c FIRST") == [MoveColumn("a.b.c", first=True)]
    assert parse_alter("ALTER TABLE table1 ALTER COLUMN a.b.c AFTER x") == [MoveColumn("a.b.c", after="x")]
    with pytest.raises(UnknownFieldError):  # x is not a sibling of a.b.c: fields move only in their struct
        run("ALTER TABLE table1 ALTER COLUMN a.b.c AFTER x")


def test_hudi_alter_column_with_several_clauses() -> None:
    statement = "ALTER TABLE t ALTER COLUMN x TYPE bigint COMMENT 'wide' AFTER y"
    expected = [SetType("x", pa.int64()), SetComment("x", "wide"), MoveColumn("x", after="y")]
    assert parse_alter(statement) == expected
    new = run(statement)
    assert new.find("x").type == pa.int64() and new.find("x").doc == "wide"
    assert names(new).index("x") == names(new).index("y") + 1


def test_hudi_drop_column_and_columns() -> None:
    assert "c" not in names(run("ALTER TABLE table1 DROP COLUMN a.b.c"), "a.b")
    new = run("ALTER TABLE table1 DROP COLUMNS a.b.c, x, y")
    assert names(new, "a.b") == ["d"] and "x" not in names(new) and "y" not in names(new)


def test_hudi_rename_column() -> None:
    new = run("ALTER TABLE table1 RENAME COLUMN a.b.c TO x")
    assert names(new, "a.b") == ["x", "d"] and new.find("a.b.x").id == BASE.find("a.b.c").id


# -- DuckLake --------------------------------------------------------------------------------------
def test_ducklake_add_column_with_and_without_default() -> None:
    new = run("ALTER TABLE tbl ADD COLUMN new_column INTEGER;")
    assert new.find("new_column").type == pa.int32() and new.find("new_column").initial_default is None
    new = run("ALTER TABLE tbl ADD COLUMN new_column VARCHAR DEFAULT 'my_default';")
    col = new.find("new_column")
    assert (col.type, col.initial_default, col.write_default) == (pa.string(), "my_default", "my_default")


def test_ducklake_nested_add_drop_rename() -> None:
    added = run("ALTER TABLE tbl ADD COLUMN nested_column.new_field INTEGER;")
    assert names(added, "nested_column") == ["existing", "new_field"]
    renamed = apply_alter(added.update(), "ALTER TABLE tbl RENAME nested_column.new_field TO new_name;")
    renamed = renamed.apply()
    assert names(renamed, "nested_column") == ["existing", "new_name"]
    dropped = apply_alter(added.update(), "ALTER TABLE tbl DROP COLUMN nested_column.new_field;").apply()
    assert names(dropped, "nested_column") == ["existing"]


def test_ducklake_top_level_rename_and_drop() -> None:
    added = run("ALTER TABLE tbl ADD COLUMN new_column INTEGER")
    renamed = apply_alter(added.update(), "ALTER TABLE tbl RENAME new_column TO new_name;").apply()
    assert "new_name" in names(renamed) and renamed.find("new_name").id == added.find("new_column").id
    dropped = apply_alter(added.update(), "ALTER TABLE tbl DROP COLUMN new_column;").apply()
    assert "new_column" not in names(dropped)


def test_ducklake_type_promotions() -> None:
    assert run("ALTER TABLE tbl ALTER col1 SET TYPE BIGINT;").find("col1").type == pa.int64()
    nested = run("ALTER TABLE tbl ADD COLUMN nested_column.new_field INTEGER")
    promoted = apply_alter(nested.update(), "ALTER TABLE tbl ALTER nested_column.new_field SET TYPE BIGINT;")
    assert promoted.apply().find("nested_column.new_field").type == pa.int64()
    chain = run("ALTER tiny SET TYPE SMALLINT; ALTER tiny SET TYPE INTEGER; ALTER tiny SET TYPE BIGINT; "
                "ALTER f SET TYPE DOUBLE")
    assert chain.find("tiny").type == pa.int64() and chain.find("f").type == pa.float64()
    with pytest.raises(TypeChangeNotAllowedError):  # only promotions: never narrower
        run("ALTER col1 SET TYPE TINYINT")


def test_table_store_drop_then_add_makes_a_new_column() -> None:
    new = run("ALTER TABLE T DROP COLUMN y; ALTER TABLE T ADD COLUMN y STRING;")
    assert new.find("y").id != BASE.find("y").id and names(new)[-1] == "y"


# -- other forms -----------------------------------------------------------------------------------
def test_set_default_drop_default_and_nullability() -> None:
    new = run("ALTER COLUMN col1 SET DEFAULT 7")
    assert new.find("col1").write_default == 7 and new.find("col1").initial_default is None
    dropped = run("ALTER COLUMN col1 SET DEFAULT 7; ALTER COLUMN col1 DROP DEFAULT")
    assert dropped.find("col1").write_default is None
    with pytest.raises(NullabilityTighteningError):
        run("ALTER COLUMN col1 SET NOT NULL")
    assert parse_alter("ALTER x SET NOT NULL") == [SetNullable("x", False)]


def test_postgres_style_comma_separated_actions() -> None:
    changes = parse_alter("ALTER TABLE t ADD COLUMN p int, DROP COLUMN x, RENAME y TO why")
    assert changes == [AddColumn("p", pa.int32()), DropColumn("x"), RenameColumn("y", "why")]


@pytest.mark.parametrize(("literal", "sql_type", "expected"), [
    ("42", "bigint", 42),
    ("-3", "int", -3),
    ("1.5", "double", 1.5),
    ("-1.25", "decimal(10,2)", decimal.Decimal("-1.25")),
    ("'it''s'", "varchar", "it's"),
    ("TRUE", "boolean", True),
    ("false", "boolean", False),
    ("NULL", "int", None),
    ("DATE '2020-01-01'", "date", dt.date(2020, 1, 1)),
    ("TIMESTAMP '2020-01-01 10:30:00'", "timestamp", dt.datetime(2020, 1, 1, 10, 30)),
    ("TIMESTAMP '2020-01-01 10:30:00'", "timestamptz", dt.datetime(2020, 1, 1, 10, 30, tzinfo=dt.UTC)),
    ("'2020-01-02'", "date", dt.date(2020, 1, 2)),
])
def test_default_literals(literal: str, sql_type: str, expected: object) -> None:
    (change,) = parse_alter(f"ADD COLUMN v {sql_type} DEFAULT {literal}")
    assert change.default == expected
    assert run(f"ADD COLUMN v {sql_type} DEFAULT {literal}").find("v").initial_default == expected


def test_types_sql_names_and_nested() -> None:
    new = run("ADD COLUMN s struct<p: varchar, q: array<bigint>>, ADD COLUMN m map<string, int>, "
              "ADD COLUMN l INTEGER[], ADD COLUMN v VARCHAR(20), ADD COLUMN n NUMERIC(5, 1)")
    assert new.find("s.q.element").type == pa.int64() and new.find("m.value").type == pa.int32()
    assert new.find("l.element").type == pa.int32() and new.find("v").type == pa.string()
    assert new.find("n").type == pa.decimal128(5, 1)
    ids = [f.id for f in new.all_fields()]
    assert len(ids) == len(set(ids)) and max(ids) == new.highest_field_id


def test_quoted_identifiers_comments_and_case() -> None:
    changes = parse_alter('-- rename it\nalter table "db"."tbl" rename column `a.b` to "new name";')
    assert changes == [RenameColumn("`a.b`", "new name")]


def test_every_change_renders_back_to_equal_sql() -> None:
    statement = ("ADD COLUMNS(z int NOT NULL DEFAULT 1 COMMENT 'it''s' FIRST, "
                 "w date DEFAULT DATE '2020-01-01'); ALTER COLUMN x TYPE bigint COMMENT 'c' AFTER y; "
                 "ALTER x DROP NOT NULL; ALTER x SET DEFAULT 3; ALTER x DROP DEFAULT; DROP COLUMNS a, b; "
                 "RENAME s.t TO u; ALTER COLUMN q BEFORE r")
    changes = parse_alter(statement)
    assert len(changes) == 12
    assert parse_alter("; ".join(c.sql() for c in changes)) == changes
    assert isinstance(changes[6], SetDefault) and str(changes[6]) == "ALTER COLUMN x SET DEFAULT 3"


def test_parse_columns_assigns_ids_like_iceberg() -> None:
    schema = parse_columns("id bigint NOT NULL, s struct<a: int, b: list<string>>, "
                           "name varchar COMMENT 'who'")
    assert [(f.name, f.id) for f in schema.fields] == [("id", 1), ("s", 2), ("name", 3)]
    assert [schema.find(p).id for p in ("s.a", "s.b", "s.b.element")] == [4, 5, 6]
    assert schema.schema_id == 0 and not schema.find("id").nullable and schema.find("name").doc == "who"


def test_parse_columns_refuses_paths_and_positions() -> None:
    with pytest.raises(DDLSyntaxError) as info:
        parse_columns("id int, s.x int")
    assert caret_column(str(info.value)) == len("id int, ")


def test_parse_predicate() -> None:
    assert parse_predicate("a.b >= -3")[:2] == ("a.b", ">=")
    assert parse_predicate("x <> 'q'")[1] == "!="
    assert parse_predicate("x IS NOT NULL") == ("x", "not_null", None)
    path, op, values = parse_predicate("x not in (1, 2)")
    assert (path, op, [v.value for v in values]) == ("x", "not in", ["1", "2"])


# -- syntax errors: the caret sits under the offending word -----------------------------------------
def caret_column(message: str) -> int:
    line = next(ln for ln in message.splitlines() if ln.strip() and set(ln.strip()) == {"^"})
    return line.index("^") - 2


@pytest.mark.parametrize(("statement", "word", "expected"), [
    ("ALTER TABLE t ADD COLUMNS(x foo)", "foo", "a type such as int"),
    ("ALTER TABLE t ADD COLUMNS(x)", ")", "a column type"),
    ("ALTER TABLE t ADD COLUMNS(a int, b)", ")", "a column type"),
    ("ALTER TABLE t ALTER COLUMN x TYPE struct<a: int, b: blah>", "blah", "a type such as"),
    ("ALTER TABLE t FROB x", "FROB", "ADD, DROP, RENAME or ALTER"),
    ("ALTER TABLE ADD COLUMN x int", "ADD", "a table name"),
    ("ALTER TABLE t ADD COLUMN x int DEFAULT 'abc'", "'abc'", "a default of type int"),
    ("ALTER TABLE t ADD COLUMN x int DEFAUL 5", "DEFAUL", "NOT NULL, DEFAULT, COMMENT"),
    ("ALTER TABLE t ADD COLUMN x int NOT NULL NOT NULL", "NOT NULL NOT", "at most one NULL"),
    ("ALTER TABLE t ALTER x SET FOO", "FOO", "TYPE, DATA TYPE, NOT NULL or DEFAULT"),
    ("ALTER TABLE t ALTER x TYPE int BAR", "BAR", "TYPE, SET TYPE"),
    ("ALTER TABLE t ALTER COLUMN x DROP NULL", "NULL", "NOT NULL or DEFAULT"),
    ("ALTER TABLE t RENAME COLUMN a b", "b", "TO"),
    ("ALTER TABLE t RENAME TO u", "TO", "a column to rename (renaming the table itself is not supported)"),
    ("ALTER TABLE t RENAME s.a TO t.b", "t.b", "a new name without a struct path"),
    ("ALTER TABLE t DROP COLUMN", None, "a column to drop"),
    ("ALTER TABLE t ADD COLUMN x int COMMENT oops", "oops", "a 'comment' in quotes"),
    ("ALTER TABLE t ADD COLUMN d date DEFAULT DATE '2020-13-01'", "'2020-13-01'", "an ISO date"),
    ("ALTER TABLE t ADD COLUMN x int 'unterminated", "'unterminated", "a closing '"),
    ("ALTER TABLE t ADD COLUMN x int @", "@", "a word, a number"),
])
def test_syntax_error_points_at_the_offending_word(statement: str, word: str | None, expected: str) -> None:
    with pytest.raises(DDLSyntaxError) as info:
        parse_alter(statement)
    message = str(info.value)
    where = len(statement) if word is None else statement.index(word) + (word.rfind(" ") + 1)
    assert caret_column(message) == where == info.value.position, message
    assert f"expected {expected}" in message and statement in message
    assert isinstance(info.value, ValueError)


def test_syntax_error_on_a_later_line_says_which_line() -> None:
    statement = "ALTER TABLE t\n  ADD COLUMN x int,\n  DROP COLUMN"
    with pytest.raises(DDLSyntaxError) as info:
        parse_alter(statement)
    message = str(info.value)
    assert "line 3" in message and "  DROP COLUMN" in message and "found the end of the statement" in message


def test_applying_an_unknown_column_notes_where_it_is() -> None:
    with pytest.raises(UnknownFieldError) as info:
        run("ALTER TABLE t ADD COLUMN ok int; ALTER TABLE t DROP COLUMN nope")
    note = info.value.__notes__[0]
    assert "DROP COLUMN nope" in note and caret_column(note) == note.splitlines()[1].index("nope") - 2
