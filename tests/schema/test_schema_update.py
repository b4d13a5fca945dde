"""SchemaUpdate and the schema model: every refusal (class + the path in the message) and the rules
that must hold when changes succeed (ids, versions, placement, nesting)."""

from __future__ import annotations

import pickle
import re

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift import CastPolicy, Field, ListType, MapType, Schema, StructType


@pytest.fixture
def schema() -> Schema:
    return Schema([
        Field(1, "id", pa.int64(), nullable=False),
        Field(2, "name", pa.string()),
        Field(3, "t", StructType((Field(4, "x", pa.int32()), Field(5, "y", pa.string())))),
        Field(6, "l", ListType(Field(7, "element", StructType((Field(8, "a", pa.int32()),))))),
        Field(9, "m", MapType(Field(10, "key", pa.string()),
                              Field(11, "value", StructType((Field(12, "b", pa.int32()),))))),
        Field(13, "qty", pa.int32(), initial_default=0),
    ], schema_id=7, identifier_field_ids=[1])


def _raises(exc: type[Exception], *fragments: str):
    """pytest.raises(exc) whose message contains every fragment (literally)."""
    return pytest.raises(exc, match="(?s)" + "".join(f"(?=.*{re.escape(f)})" for f in fragments))


# -- refusals ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("op", "path", "suggestion"), [
    (lambda u: u.drop_column("nmae"), "nmae", "name"),
    (lambda u: u.rename_column("t.xx", "z"), "t.xx", "x"),
    (lambda u: u.update_column("t.yy", pa.int64()), "t.yy", "y"),
    (lambda u: u.move_first("l.element.aa"), "l.element.aa", "a"),
    (lambda u: u.add_column("m.vlue.c", pa.int32()), "m.vlue", "value"),
    (lambda u: u.add_column("t.z", pa.int32(), after="t.xx"), "t.xx", "x"),
], ids=["drop", "rename-nested", "update-nested", "move-in-list", "add-in-map", "add-after"])
def test_unknown_path_names_it_and_the_closest_names(schema: Schema, op, path: str, suggestion: str) -> None:
    with _raises(fs.UnknownFieldError, repr(path), f"Did you mean {suggestion!r}"):
        op(schema.update())
    assert issubclass(fs.UnknownFieldError, KeyError)


def test_unknown_path_is_raised_by_find(schema: Schema) -> None:
    with _raises(fs.UnknownFieldError, "'t.q'"):
        schema.find("t.q")


@pytest.mark.parametrize(("op", "path"), [
    (lambda u: u.add_column("name", pa.int32()), "name"),
    (lambda u: u.add_column("t.x", pa.int32()), "t.x"),
    (lambda u: u.add_column("l.element.a", pa.int32()), "l.element.a"),
    (lambda u: u.rename_column("t.x", "y"), "t.x"),
    (lambda u: u.rename_column("name", "qty"), "name"),
], ids=["add-top", "add-struct", "add-list-element", "rename-struct", "rename-top"])
def test_duplicate_name_at_a_level(schema: Schema, op, path: str) -> None:
    with _raises(fs.DuplicateFieldError, repr(path)):
        op(schema.update())


def test_duplicate_names_and_ids_in_a_schema_are_refused() -> None:
    with _raises(fs.DuplicateFieldError, "'s.a'"):
        Schema([Field(1, "s", StructType((Field(2, "a", pa.int8()), Field(3, "a", pa.int8()))))])
    with _raises(fs.DuplicateFieldError, "field id 2", "'a'", "'s.b'"):
        Schema([Field(2, "a", pa.int8()), Field(1, "s", StructType((Field(2, "b", pa.int8()),)))])


@pytest.mark.parametrize("path", ["z", "t.z", "l.element.z", "m.value.z"])
def test_required_column_without_default(schema: Schema, path: str) -> None:
    with _raises(fs.RequiredFieldWithoutDefaultError, repr(path), "default="):
        schema.update().add_column(path, pa.int32(), nullable=False)



def test_required_struct_default_needs_defaults_for_required_children(schema: Schema) -> None:
    struct = StructType((Field(0, "a", pa.int32(), nullable=False),))
    with _raises(fs.RequiredFieldWithoutDefaultError, "'z.a'"):
        schema.update().add_column("z", struct, nullable=False, default={})


@pytest.mark.parametrize(("path", "new_type", "preset"), [
    ("t.x", pa.int16(), "CastPolicy.explicit()"),
    ("t.x", pa.string(), "CastPolicy.hudi()"),
    ("name", pa.int32(), "CastPolicy.explicit()"),
    ("qty", pa.float32(), "CastPolicy.hudi()"),
    ("l.element.a", pa.int8(), "CastPolicy.explicit()"),
    ("m.value.b", pa.date32(), "CastPolicy.explicit()"),
])
def test_forbidden_type_change_names_the_preset_that_allows_it(
    schema: Schema, path: str, new_type: pa.DataType, preset: str
) -> None:
    with _raises(fs.TypeChangeNotAllowedError, repr(path), "CastPolicy.lossless()", preset):
        schema.update().update_column(path, new_type)


def test_no_preset_allows_it(schema: Schema) -> None:
    with _raises(fs.TypeChangeNotAllowedError, "'name'", "no preset allows it"):
        schema.update().update_column("name", pa.time64("us"))



def test_explicit_allows_integer_to_narrow_decimal(schema: Schema) -> None:
    assert CastPolicy.explicit().classify(pa.int32(), pa.decimal128(5, 0)) is fs.CastKind.CHECKED
    v2 = schema.update(policy=CastPolicy.explicit()).update_column("t.x", pa.decimal128(5, 0)).apply()
    assert v2.find("t.x").type == pa.decimal128(5, 0)


def test_nested_type_cannot_be_replaced_wholesale(schema: Schema) -> None:
    with _raises(fs.TypeChangeNotAllowedError, "'t'", "update_column('s.x'"):
        schema.update().update_column("t", "struct<x: bigint>")
    with _raises(fs.TypeChangeNotAllowedError, "'name'"):
        schema.update().update_column("name", "list<string>")


def test_policy_given_to_update_allows_its_changes(schema: Schema) -> None:
    v2 = schema.update(policy=CastPolicy.hudi()).update_column("t.x", pa.string()).apply()
    assert v2.find("t.x").type == pa.string()
    assert v2.find("qty").initial_default == 0
    v3 = schema.update(policy=CastPolicy.hudi()).update_column("qty", pa.string()).apply()
    assert v3.find("qty").initial_default == "0"  # the default follows the column's new type



@pytest.mark.parametrize("new_type", [pa.float32(), pa.string()])
def test_map_keys_widen_only_losslessly(new_type: pa.DataType) -> None:
    schema = Schema([Field(1, "m", MapType(Field(2, "key", pa.int32()), Field(3, "value", pa.int32())))])
    with _raises(fs.TypeChangeNotAllowedError, "'m.key'"):
        schema.update(policy=CastPolicy.hudi()).update_column("m.key", new_type)


@pytest.mark.parametrize("path", ["name", "t.y", "l.element.a", "m.value"])
def test_nullable_cannot_become_required(schema: Schema, path: str) -> None:
    with _raises(fs.NullabilityTighteningError, repr(path)):
        schema.update().update_column(path, nullable=False)


@pytest.mark.parametrize(("op", "verb"), [
    (lambda u: u.drop_column("id"), "drop"),
    (lambda u: u.rename_column("id", "pk"), "rename"),
    (lambda u: u.update_column("id", pa.decimal128(38, 0)), "retype"),
])
def test_identifier_field_cannot_change(schema: Schema, op, verb: str) -> None:
    with _raises(fs.IdentifierFieldChangeError, f"cannot {verb} 'id'", "identifier"):
        op(schema.update())


def test_nested_identifier_field_cannot_change() -> None:
    schema = Schema([Field(1, "k", StructType((Field(2, "a", pa.int32(), nullable=False),)), nullable=False)],
                    identifier_field_ids=[2])
    with _raises(fs.IdentifierFieldChangeError, "'k.a'"):
        schema.update().rename_column("k.a", "b")


@pytest.mark.parametrize(("op", "path"), [
    (lambda u: u.move_after("t.x", "name"), "t.x"),
    (lambda u: u.move_before("name", "t.y"), "name"),
    (lambda u: u.move_after("l.element.a", "t.x"), "l.element.a"),
    (lambda u: u.add_column("z", pa.int32(), after="t.x"), "z"),
    (lambda u: u.add_column("t.z", pa.int32(), before="l.element.a"), "t.z"),
], ids=["struct-to-top", "top-to-struct", "list-to-struct", "add-top-after-nested", "add-nested-elsewhere"])
def test_moving_to_another_nesting_level(schema: Schema, op, path: str) -> None:
    with _raises(fs.NestingLevelMoveError, repr(path)):
        op(schema.update())


@pytest.mark.parametrize(("t", "value"), [
    (pa.int32(), "abc"),
    (pa.int8(), 1000),
    (pa.uint8(), -1),
    (pa.string(), 5),
    (pa.bool_(), "true"),
    (pa.int32(), True),
    (pa.date32(), "not a date"),
    (pa.decimal128(4, 2), "123.45"),
    (pa.binary(2), b"abc"),
    ("list<int>", ["a"]),
    ("map<string, int>", 5),
])
def test_invalid_default_for_type(schema: Schema, t, value) -> None:
    with _raises(fs.InvalidDefaultError, "'z'", "default"):
        schema.update().add_column("z", t, default=value)



def test_fractional_default_for_an_integer_column_is_refused(schema: Schema) -> None:
    with _raises(fs.InvalidDefaultError, "'z'"):
        schema.update().add_column("z", pa.int32(), default=1.5)


@pytest.mark.parametrize("value", [{"a": 1}, {"a": None}, [], "x"])
def test_struct_default_is_none_or_empty(schema: Schema, value) -> None:
    with _raises(fs.InvalidDefaultError, "'z'", "None or {}"):
        schema.update().add_column("z", "struct<a: int>", default=value)


def test_struct_default_empty_is_accepted(schema: Schema) -> None:
    v2 = schema.update().add_column("z", "struct<a: int>", default={}).apply()
    assert v2.find("z").initial_default == {} and v2.find("z").write_default == {}


@pytest.mark.parametrize(("op", "fragment"), [
    (lambda u: u.drop_column("l.element"), "'l.element'"),
    (lambda u: u.drop_column("l.element.a"), "'l.element.a'"),
    (lambda u: u.rename_column("m.key", "k"), "'m.key'"),
    (lambda u: u.add_column("name.z", pa.int32()), "'name.z'"),
    (lambda u: u.add_column("l.z", pa.int32()), "'l.z'"),
    (lambda u: u.move_after("name", "name"), "'name'"),
])
def test_other_structural_refusals(schema: Schema, op, fragment: str) -> None:
    with _raises(fs.SchemaEvolutionError, fragment):
        op(schema.update())


def test_identifier_fields_must_be_required_primitives(schema: Schema) -> None:
    with _raises(fs.SchemaEvolutionError, "'name'", "required primitive"):
        schema.update().set_identifier_fields("name")
    with _raises(fs.SchemaEvolutionError, "'l.element.a'", "inside a list or map"):
        Schema(list(schema.fields), identifier_field_ids=[8])


def test_commit_without_a_table_is_refused(schema: Schema) -> None:
    with _raises(fs.SchemaEvolutionError, "apply()"):
        schema.update().commit()


# -- what succeeds ----------------------------------------------------------------------------------
def test_ids_are_never_reused_after_drop_and_re_add(schema: Schema) -> None:
    v2 = schema.update().drop_column("name").apply()
    v3 = v2.update().add_column("name", pa.string()).apply()
    assert v3.find("name").id == 14 != schema.find("name").id
    assert not v3.has_field(2)
    in_one = schema.update().drop_column("t.y").add_column("t.y", pa.string()).apply()
    assert in_one.find("t.y").id == 14


def test_highest_field_id_tracks_every_id_ever_used(schema: Schema) -> None:
    assert schema.highest_field_id == 13
    v2 = schema.update().drop_column("qty").apply()
    assert v2.highest_field_id == 13
    v3 = v2.update().add_column("n", "struct<a: int, b: list<map<string, int>>>").apply()
    assert [f.id for f in v3.all_fields() if f.id > 13] == [14, 15, 16, 17, 18, 19]
    assert v3.highest_field_id == 19
    assert v3.update().drop_column("n").apply().highest_field_id == 19


def test_apply_bumps_the_schema_id_and_leaves_the_base_alone(schema: Schema) -> None:
    before = pickle.dumps(schema)
    v2 = schema.update().add_column("z", pa.int32()).apply()
    assert v2.schema_id == schema.schema_id + 1 == 8
    assert pickle.dumps(schema) == before
    assert v2.update().apply() is v2  # an empty update is no new version (issue 12 item 25)
    assert v2.identifier_field_ids == (1,)


def test_add_in_list_element_struct_and_map_value_struct(schema: Schema) -> None:
    v2 = (schema.update()
          .add_column("l.element.x", pa.int32())
          .add_column("m.value.x", pa.string(), default="d")
          .apply())
    assert [c.name for c in v2.find("l.element").children()] == ["a", "x"]
    assert v2.find("l.element.x").id == 14
    assert v2.find("l.item.x").id == 14  # Parquet's `item` names the element too
    assert v2.find("m.value.x").id == 15
    assert v2.find("m.value.x").initial_default == "d"
    assert v2.path_of(15) == "m.value.x"


def test_add_positions(schema: Schema) -> None:
    v2 = (schema.update()
          .add_column("t.first", pa.int32(), first=True)
          .add_column("t.after_x", pa.int32(), after="x")
          .add_column("t.before_y", pa.int32(), before="t.y")
          .add_column("top", pa.int8(), after="id")
          .apply())
    assert [c.name for c in v2.find("t").children()] == ["first", "x", "after_x", "before_y", "y"]
    assert v2.names[:3] == ["id", "top", "name"]
    assert v2.names[-1] == "qty"


def test_moves(schema: Schema) -> None:
    v2 = (schema.update()
          .move_first("t.y")
          .move_after("name", "qty")
          .move_before("m", "t")
          .apply())
    assert [c.name for c in v2.find("t").children()] == ["y", "x"]
    assert v2.names == ["id", "m", "t", "l", "qty", "name"]
    assert {f.id for f in v2.all_fields()} == {f.id for f in schema.all_fields()}


def test_rename_then_retype_by_the_new_name(schema: Schema) -> None:
    v2 = schema.update().rename_column("t.x", "xx").update_column("t.xx", pa.int64()).apply()
    assert v2.find("t.xx") == Field(4, "xx", pa.int64())
    with _raises(fs.UnknownFieldError, "'t.x'"):
        v2.find("t.x")


def test_required_column_with_default_and_relaxing_nullability(schema: Schema) -> None:
    v2 = schema.update().add_column("t.z", pa.int64(), nullable=False, default=5).apply()
    z = v2.find("t.z")
    assert (z.nullable, z.initial_default, z.write_default) == (False, 5, 5)
    v3 = v2.update().update_column("t.z", nullable=True).apply()
    assert v3.find("t.z").nullable
    assert v3.update().update_column("id", pa.int64()).apply().find("id") == schema.find("id")


def test_widening_carries_the_defaults(schema: Schema) -> None:
    v2 = schema.update().update_column("qty", pa.int64()).apply()
    assert v2.find("qty").type == pa.int64() and v2.find("qty").initial_default == 0


def test_field_and_schema_pickle_and_hash(schema: Schema) -> None:
    for f in schema.all_fields():
        back = pickle.loads(pickle.dumps(f))
        assert back == f and hash(back) == hash(f)
    back = pickle.loads(pickle.dumps(schema))
    assert back == schema and hash(back) == hash(schema)
    assert back.identifier_field_ids == (1,) and back.schema_id == 7
    assert {schema: 1}[back] == 1
    other = Schema(list(schema.fields), schema_id=8, identifier_field_ids=[1])
    assert other != schema and other.same_structure(schema)


def test_field_with_dict_default_is_hashable() -> None:
    map_type = MapType(Field(2, "key", pa.string()), Field(3, "value", pa.int32()))
    f = Field(1, "m", map_type, initial_default={"a": 1})
    g = Field(1, "m", map_type, initial_default={"a": 1})
    assert f == g and hash(f) == hash(g)
    assert f != f.with_(initial_default={"a": 2})
