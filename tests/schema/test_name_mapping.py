"""Iceberg name mapping: JSON both ways, from_schema, update() (renames, adds, drops), apply() to Arrow."""

from __future__ import annotations

import json
import re

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift import Field, ListType, MapType, Schema, StructType
from fieldshift.schema.name_mapping import MappedField, NameMapping, NameMappingError

ID = b"PARQUET:field_id"


def table_schema() -> Schema:
    loc = StructType((Field(4, "lat", pa.float64()), Field(5, "long", pa.float64())))
    return Schema(
        [
            Field(1, "id", pa.int64(), False),
            Field(2, "data", pa.string()),
            Field(3, "location", loc),
            Field(6, "tags", ListType(Field(7, "element", pa.string()))),
            Field(8, "props", MapType(Field(9, "key", pa.string(), False),
                                      Field(10, "value", StructType((Field(11, "v", pa.int32()),))))),
        ]
    )


def ids_of(schema: pa.Schema) -> dict[str, int | None]:
    """Dotted path -> id for every Arrow field at every depth (element/key/value by position)."""
    out: dict[str, int | None] = {}

    def walk(f: pa.Field, path: str) -> None:
        raw = (f.metadata or {}).get(ID)
        out[path] = int(raw) if raw is not None else None
        t = f.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(t.field(i), f"{path}.{t.field(i).name}")
        elif pa.types.is_map(t):
            walk(t.key_field, f"{path}.key")
            walk(t.item_field, f"{path}.value")
        elif hasattr(t, "value_field"):
            walk(t.value_field, f"{path}.element")

    for f in schema:
        walk(f, f.name)
    return out


# -- JSON and from_schema --------------------------------------------------------------------------


def test_from_schema_to_json_is_icebergs_format() -> None:
    mapping = NameMapping.from_schema(table_schema())
    assert json.loads(mapping.to_json()) == [
        {"field-id": 1, "names": ["id"]},
        {"field-id": 2, "names": ["data"]},
        {"field-id": 3, "names": ["location"], "fields": [
            {"field-id": 4, "names": ["lat"]}, {"field-id": 5, "names": ["long"]}]},
        {"field-id": 6, "names": ["tags"], "fields": [{"field-id": 7, "names": ["element"]}]},
        {"field-id": 8, "names": ["props"], "fields": [
            {"field-id": 9, "names": ["key"]},
            {"field-id": 10, "names": ["value"], "fields": [{"field-id": 11, "names": ["v"]}]}]},
    ]


def test_iceberg_spec_example_round_trips() -> None:
    text = json.dumps([
        {"field-id": 1, "names": ["id", "record_id"]},
        {"field-id": 2, "names": ["data"]},
        {"field-id": 3, "names": ["location"], "fields": [
            {"field-id": 4, "names": ["latitude", "lat"]},
            {"field-id": 5, "names": ["longitude", "long"]}]},
        {"names": ["unmapped"]},
    ])
    mapping = NameMapping.from_json(text)
    assert mapping.find("location", "lat") == MappedField(4, ("latitude", "lat"))
    assert mapping.find("unmapped") == MappedField(None, ("unmapped",))
    assert NameMapping.from_json(mapping.to_json()) == mapping
    assert json.loads(mapping.to_json()) == json.loads(text)


def test_from_json_accepts_parsed_lists_and_null_fields() -> None:
    mapping = NameMapping.from_json([{"field-id": 1, "names": ["a"], "fields": None}])
    assert mapping == NameMapping((MappedField(1, ("a",)),))
    assert len(mapping) == 1 and next(iter(mapping)).names == ("a",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[{", "not valid JSON"),
        ('{"field-id": 1}', "expected a JSON list of fields, got dict"),
        ("[1]", "name mapping[0]: expected an object"),
        ('[{"field-id": 1}]', "name mapping[0]: 'names' must be a list of strings"),
        ('[{"field-id": 1, "names": "a"}]', "name mapping[0]: 'names' must be a list of strings"),
        ('[{"field-id": 1, "names": [1]}]', "name mapping[0]: 'names' must be a list of strings"),
        ('[{"field-id": "1", "names": ["a"]}]', "name mapping[0]: 'field-id' must be an integer"),
        ('[{"field-id": true, "names": ["a"]}]', "name mapping[0]: 'field-id' must be an integer"),
        ('[{"field-id": 1, "names": ["a"], "fields": {}}]',
         "name mapping[0] (a).fields: expected a JSON list"),
        ('[{"field-id": 1, "names": ["a"], "fields": [{"field-id": 2, "names": ["b"]}, {"names": [3]}]}]',
         "name mapping[0] (a).fields[1]: 'names' must be a list of strings"),
        ('[{"field-id": 1, "names": ["a", "b"]}, {"field-id": 2, "names": ["b"]}]',
         "'b' is mapped twice under the top level"),
        ('[{"field-id": 1, "names": ["s"], "fields": [{"field-id": 2, "names": ["x"]}, '
         '{"field-id": 3, "names": ["x"]}]}]', "'x' is mapped twice under field id 1 (s)"),
    ],
)
def test_malformed_json_is_refused_with_its_location(text: str, message: str) -> None:
    with pytest.raises(NameMappingError, match=re.escape(message)):
        NameMapping.from_json(text)


def test_name_mapping_error_is_a_schema_evolution_error() -> None:
    assert issubclass(NameMappingError, fs.SchemaEvolutionError)
    assert fs.NameMapping is NameMapping


# -- apply -----------------------------------------------------------------------------------------


def test_apply_restores_the_ids_of_an_id_less_copy() -> None:
    schema = table_schema()
    bare = pa.schema([f.remove_metadata() for f in schema.to_arrow()])
    bare = pa.schema([pa.field(f.name, _strip(f.type), f.nullable) for f in bare])
    assert set(ids_of(bare).values()) == {None}
    tagged = NameMapping.from_schema(schema).apply(bare)
    assert Schema.from_arrow(tagged).same_structure(schema)


def _strip(t: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(t):
        return pa.struct([pa.field(c.name, _strip(c.type), c.nullable) for c in t])
    if pa.types.is_map(t):
        return pa.map_(pa.field("key", _strip(t.key_type), False), pa.field("value", _strip(t.item_type)))
    if pa.types.is_list(t):
        return pa.list_(pa.field("element", _strip(t.value_type)))
    return t


@pytest.mark.parametrize(
    "list_type",
    [
        pa.list_(pa.field("item", pa.struct([("x", pa.int32())]))),
        pa.large_list(pa.field("element", pa.struct([("x", pa.int32())]))),
        pa.list_(pa.field("item", pa.struct([("x", pa.int32())])), 2),
        pa.list_view(pa.field("item", pa.struct([("x", pa.int32())]))),
    ],
)
def test_apply_maps_list_elements_whatever_their_arrow_name_and_layout(list_type: pa.DataType) -> None:
    element = MappedField(2, ("element",), (MappedField(3, ("x",)),))
    mapping = NameMapping((MappedField(1, ("l",), (element,)),))
    out = mapping.apply(pa.schema([pa.field("l", list_type)]))
    assert list(ids_of(out).values()) == [1, 2, 3]
    assert type(out.field("l").type) is type(list_type)


def test_apply_maps_map_keys_and_values_by_position() -> None:
    mapping = NameMapping((MappedField(1, ("m",), (MappedField(2, ("key",)), MappedField(3, ("value",)))),))
    arrow = pa.schema([pa.field("m", pa.map_(pa.field("k", pa.string(), False), pa.field("v", pa.int64())))])
    assert ids_of(mapping.apply(arrow)) == {"m": 1, "m.key": 2, "m.value": 3}


def test_apply_resolves_aliases_and_leaves_unknown_fields_without_ids() -> None:
    mapping = NameMapping.from_json(json.dumps([
        {"field-id": 1, "names": ["id", "record_id"]},
        {"field-id": 3, "names": ["location"], "fields": [{"field-id": 4, "names": ["latitude", "lat"]}]},
        {"names": ["no_id"]},
    ]))
    arrow = pa.schema([
        pa.field("record_id", pa.int64()),
        pa.field("location", pa.struct([("lat", pa.float64()), ("alt", pa.float64())])),
        pa.field("no_id", pa.int32()),
        pa.field("stale", pa.struct([("x", pa.int32())]), metadata={ID: b"99", b"keep": b"me"}),
    ])
    out = mapping.apply(arrow)
    assert ids_of(out) == {"record_id": 1, "location": 3, "location.lat": 4, "location.alt": None,
                           "no_id": None, "stale": None, "stale.x": None}
    assert out.field("stale").metadata == {b"keep": b"me"}


def test_dotted_names_are_literal_names_not_paths() -> None:
    mapping = NameMapping((MappedField(1, ("a.b",)), MappedField(2, ("a",), (MappedField(3, ("b",)),))))
    nested = pa.struct([("b", pa.int32()), ("a.b", pa.int8())])
    arrow = pa.schema([pa.field("a.b", pa.int32()), pa.field("a", nested)])
    out = mapping.apply(arrow)
    assert out.field("a.b").metadata == {ID: b"1"} and out.field("a").metadata == {ID: b"2"}
    assert [c.metadata for c in out.field("a").type] == [{ID: b"3"}, None]


def test_apply_keeps_other_metadata_and_schema_metadata() -> None:
    mapping = NameMapping((MappedField(7, ("a",)),))
    field = pa.field("a", pa.int32(), False, metadata={b"doc": b"x", ID: b"1"})
    arrow = pa.schema([field], metadata={b"k": b"v"})
    out = mapping.apply(arrow)
    assert out.metadata == {b"k": b"v"}
    assert out.field("a").metadata == {b"doc": b"x", ID: b"7"}
    assert not out.field("a").nullable


# -- update ----------------------------------------------------------------------------------------


def base() -> Schema:
    return Schema([Field(1, "a", pa.int32()), Field(2, "b", pa.string()),
                   Field(3, "s", StructType((Field(4, "x", pa.int32()),)))])


def test_rename_keeps_the_old_name_as_an_alias() -> None:
    v1 = base()
    v2 = v1.update().rename_column("a", "a2").rename_column("s.x", "x2").apply()
    mapping = NameMapping.from_schema(v1).update(v1, v2)
    assert mapping.find("a").names == ("a", "a2") and mapping.find("a2").field_id == 1
    assert mapping.find("s", "x").names == ("x", "x2")
    v3 = v2.update().rename_column("a2", "a3").apply()
    assert mapping.update(v2, v3).find("a3").names == ("a", "a2", "a3")


def test_old_and_new_files_resolve_after_a_rename() -> None:
    v1 = base()
    v2 = v1.update().rename_column("b", "label").apply()
    mapping = NameMapping.from_schema(v1).update(v1, v2)
    old_file = pa.schema([("a", pa.int32()), ("b", pa.string())])
    new_file = pa.schema([("a", pa.int32()), ("label", pa.string())])
    assert ids_of(mapping.apply(old_file)) == {"a": 1, "b": 2}
    assert ids_of(mapping.apply(new_file)) == {"a": 1, "label": 2}


def test_added_fields_get_entries_at_every_depth() -> None:
    v1 = base()
    v2 = (v1.update().add_column("c", pa.int64()).add_column("s.y", pa.string())
          .add_column("p", pa.struct([("q", pa.int32())])).apply())
    mapping = NameMapping.from_schema(v1).update(v1, v2)
    assert mapping == NameMapping.from_schema(v2)
    assert mapping.find("p", "q").field_id == v2.find("p.q").id


def test_a_name_moves_to_the_field_that_takes_it() -> None:
    v1 = base()
    v2 = v1.update().rename_column("a", "z").apply()
    v3 = v2.update().add_column("a", pa.int64()).apply()
    mapping = NameMapping.from_schema(v1).update(v1, v2).update(v2, v3)
    assert mapping.find("z").names == ("z",)
    assert mapping.find("a").field_id == v3.find("a").id != 1


def test_drop_then_re_add_gives_the_name_to_the_new_field() -> None:
    v1 = base()
    v2 = v1.update().drop_column("b").apply()
    mapping = NameMapping.from_schema(v1).update(v1, v2)
    assert mapping.find("b").field_id == 2  # a dropped field keeps its entry: old files still map it
    v3 = v2.update().add_column("b", pa.string()).apply()
    mapping = mapping.update(v2, v3)
    assert mapping.find("b").field_id == v3.find("b").id == 5
    assert all(f.field_id != 2 for f in mapping)  # no names left: the old entry is gone


def test_swapped_names_each_move() -> None:
    v1 = Schema([Field(1, "a", pa.int32()), Field(2, "b", pa.int32())])
    v2 = Schema([Field(1, "b", pa.int32()), Field(2, "a", pa.int32())])
    mapping = NameMapping.from_schema(v1).update(v1, v2)
    assert mapping.find("a").field_id == 2 and mapping.find("b").field_id == 1
    assert [f.names for f in mapping] == [("b",), ("a",)]


def test_update_inside_lists_and_maps() -> None:
    el = StructType((Field(3, "x", pa.int32()),))
    val = StructType((Field(6, "v", pa.int32()),))
    v1 = Schema([Field(1, "l", ListType(Field(2, "element", el))),
                 Field(4, "m", MapType(Field(5, "key", pa.string(), False), Field(7, "value", val)))])
    v2 = v1.update().rename_column("l.element.x", "x2").add_column("m.value.w", pa.int64()).apply()
    mapping = NameMapping.from_schema(v1).update(v1, v2)
    assert mapping.find("l", "element", "x").names == ("x", "x2")
    assert mapping.find("m", "value", "w").field_id == v2.find("m.value.w").id


def test_update_catches_up_a_stale_mapping() -> None:
    v1 = base()
    v2 = v1.update().add_column("c", pa.int64()).rename_column("a", "a2").apply()
    v3 = v2.update().add_column("d", pa.int64()).apply()
    mapping = NameMapping.from_schema(v1).update(v2, v3)  # the v1 -> v2 step was never applied
    assert mapping.find("c").field_id == v3.find("c").id
    assert mapping.find("a").names == ("a", "a2")
    assert mapping.find("d").field_id == v3.find("d").id


def test_update_is_idempotent() -> None:
    v1 = base()
    v2 = v1.update().rename_column("a", "a2").add_column("c", pa.int64()).apply()
    once = NameMapping.from_schema(v1).update(v1, v2)
    assert once.update(v1, v2) == once


def test_update_keeps_unmapped_entries() -> None:
    v1 = Schema([Field(1, "a", pa.int32())])
    v2 = Schema([Field(1, "a", pa.int32()), Field(2, "b", pa.int32())])
    mapping = NameMapping((MappedField(1, ("a",)), MappedField(None, ("legacy",))))
    assert [f.names for f in mapping.update(v1, v2)] == [("a",), ("legacy",), ("b",)]


def test_update_result_serialises() -> None:
    v1 = base()
    v2 = v1.update().rename_column("s", "t").apply()
    mapping = NameMapping.from_schema(v1).update(v1, v2)
    assert NameMapping.from_json(mapping.to_json(indent=2)) == mapping


def test_evolve_reads_an_id_less_file_through_the_mapping() -> None:
    v1 = Schema([Field(1, "a", pa.int32()), Field(2, "b", pa.string())])
    v2 = v1.update().rename_column("b", "label").add_column("c", pa.int64()).apply()
    mapping = NameMapping.from_schema(v1).update(v1, v2)
    old_file = pa.table({"a": pa.array([1, 2], pa.int32()), "b": ["x", "y"], "junk": [0, 0]})
    out = fs.evolve(old_file, v2, name_mapping=mapping)
    assert out.column_names == ["a", "label", "c"]
    assert out.column("label").to_pylist() == ["x", "y"] and out.column("c").null_count == 2
