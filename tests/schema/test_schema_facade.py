"""``Schema`` delegates its conversions, ``update()`` and ``str()`` to modules below it, which never import
``fieldshift.schema.model``: they build every schema as the class they are given, so what comes back is the
caller's class (a subclass included, as ``from_arrow`` always did), and the old import paths still work."""

from __future__ import annotations

import pyarrow as pa

import fieldshift as fs
from fieldshift.schema.model import Schema


class _Tagged(Schema):
    """A subclass: every schema the delegates build from one must be one too."""

    __slots__ = ()


def _schema(cls: type[Schema] = Schema) -> Schema:
    return cls([fs.Field(1, "id", pa.int64(), nullable=False),
                fs.Field(2, "s", fs.StructType((fs.Field(3, "x", pa.string(), initial_default="a"),)))],
               identifier_field_ids=[1])


def test_the_delegates_build_the_class_they_are_given() -> None:
    tagged = _schema(_Tagged)
    assert type(_Tagged.from_json(tagged.to_json())) is _Tagged
    assert type(_Tagged.from_avro(tagged.to_avro())) is _Tagged
    assert type(_Tagged.from_arrow(tagged.to_arrow())) is _Tagged
    changed = tagged.update().add_column("s.y", "list<int>").rename_column("s", "t").apply()
    assert type(changed) is _Tagged and changed.schema_id == 1 and changed.find("t.y").id == 4


def test_schema_conversions_give_schemas_by_every_path() -> None:
    from fieldshift.schema.formats.avro import schema_from_avro, schema_to_avro

    schema = _schema()
    for back in (Schema.from_json(schema.to_json()), schema_from_avro(schema_to_avro(schema)),
                 fs.Schema.from_avro(schema.to_avro())):
        assert type(back) is Schema
    assert Schema.from_json(schema.to_json()) == schema
    assert schema_from_avro(schema_to_avro(schema)).logically_equal(schema.update().set_identifier_fields().apply())
    assert str(schema).splitlines()[0] == "schema 0 (highest field id 3)"
    assert type(schema.update().apply()) is Schema


def test_paths_and_type_text_keep_their_import_paths() -> None:
    from fieldshift.schema.field_paths import join_path as moved_join
    from fieldshift.schema.model import join_path, split_path
    from fieldshift.schema.type_text import PLACEHOLDER_ID, parse_type

    assert join_path is moved_join and split_path("`a.b`.c") == ("a.b", "c")
    assert parse_type("list<int>").element.id == PLACEHOLDER_ID
