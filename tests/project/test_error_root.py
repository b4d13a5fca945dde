"""Every refusal fieldshift makes lives in errors.py under one root, and the package exports it."""

from __future__ import annotations

import inspect

import pytest

import fieldshift as fs
from fieldshift import errors
from fieldshift.ddl.alter import parse_alter
from fieldshift.schema.formats.avro import schema_from_avro
from fieldshift.schema.name_mapping import NameMapping
from fieldshift.schema.type_text import parse_type

ERROR_CLASSES = [c for _, c in inspect.getmembers(errors, inspect.isclass)
                 if issubclass(c, BaseException) and c.__module__ == errors.__name__]


def test_every_error_class_is_under_the_root_and_exported() -> None:
    assert len(ERROR_CLASSES) > 30
    for cls in ERROR_CLASSES:
        assert issubclass(cls, fs.FieldshiftError), cls
        assert getattr(fs, cls.__name__) is cls, cls
        assert cls.__name__ in fs.__all__, cls


def test_the_two_branches_keep_their_builtin_bases() -> None:
    """Code catching ValueError (schema refusals) or RuntimeError (table failures) still catches them."""
    assert issubclass(fs.SchemaEvolutionError, ValueError)
    assert issubclass(fs.TableError, RuntimeError)
    assert issubclass(fs.UnknownFieldError, KeyError)
    assert issubclass(fs.UnsupportedSparkTypeError, TypeError)
    assert not issubclass(fs.TableError, fs.SchemaEvolutionError)


@pytest.mark.parametrize(("parse", "bad", "error"), [
    (parse_type, "map<int", fs.TypeSyntaxError),
    (parse_alter, "ADD COLUMN", fs.DDLSyntaxError),
    (NameMapping.from_json, '[{"field-id": 1}]', fs.NameMappingError),
    (schema_from_avro, '{"type": "record", "name": "r", "fields": [{"name": "a", "type": ["int", "string"]}]}',
     fs.AvroSchemaError),
    (fs.Schema.from_json, '{"type": "list", "fields": []}', fs.SchemaJSONError),
    (fs.Schema.from_json, '{"type": "struct", "fields": [{"id": 1, "name": "a", "required": false, '
                          '"type": {"type": "tuple"}}]}', fs.SchemaJSONError),
])
def test_bad_input_raises_a_fieldshift_error(parse: object, bad: str, error: type[Exception]) -> None:
    with pytest.raises(error) as info:
        parse(bad)  # type: ignore[operator]
    assert isinstance(info.value, fs.SchemaEvolutionError) and isinstance(info.value, ValueError)
    assert str(info.value)
