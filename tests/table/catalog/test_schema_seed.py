"""A committed schema is kept for its JSON text only when parsing the text gives the same schema.

The catalog remembers the object it serialised (the next update of a wide table then starts without
parsing what it just wrote); these tests hold that shortcut to what a fresh process reads.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings

import fieldshift as fs
from fieldshift import Field, Schema
from fieldshift.schema.formats.iceberg_json import reads_back_exactly
from fieldshift.table.catalog.metadata_cache import clear_schema_cache, parsed_schema

try:
    from tests.strategies import ALL, schemas, walk_fields
except ImportError:  # pytest run without the repo root on sys.path
    from tests.strategies import ALL, schemas, walk_fields


def _details(schema: Schema) -> dict[int, tuple[object, ...]]:
    return {f.id: (f.name, f.type, f.nullable, f.doc, f.initial_default, f.write_default)
            for f in walk_fields(schema.fields)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas(profile=ALL, defaults=True))
def test_a_schema_said_to_read_back_exactly_does(schema: Schema) -> None:
    text = schema.to_json()
    back = Schema.from_json(text)
    if reads_back_exactly(schema):
        assert back == schema
        assert _details(back) == _details(schema)
        assert back.to_json() == text
    else:  # refused only where the JSON loses something (a variant, or a default such as NaN)
        assert back != schema or _details(back) != _details(schema) or _has_nan(schema)


def _has_nan(schema: Schema) -> bool:
    return any(isinstance(v, float) and math.isnan(v)
               for f in walk_fields(schema.fields) for v in (f.initial_default, f.write_default))


@pytest.mark.parametrize("field", [
    Field(1, "t", pa.time64("us"), initial_default=dt.time(1, 2, 3, 4)),
    Field(1, "t", pa.timestamp("s", tz="Europe/Paris"), initial_default=dt.datetime(1900, 1, 1, tzinfo=dt.UTC)),
    Field(1, "d", pa.decimal128(10, 2), initial_default="1.50", write_default="2.25"),
], ids=["time", "zoned_timestamp", "decimal"])
def test_defaults_that_read_back_are_kept(field: Field) -> None:
    schema = Schema([field])
    assert reads_back_exactly(schema)
    assert _details(Schema.from_json(schema.to_json())) == _details(schema)


@pytest.mark.parametrize("field", [
    Field(1, "a", pa.large_string()),
    Field(1, "a", fs.ListType(Field(2, "element", pa.int32()), "large_list")),
    Field(1, "a", pa.float64(), initial_default=math.nan),  # NaN != NaN: not provably the same
], ids=["large_string", "large_list", "nan_default"])
def test_what_json_cannot_hold_exactly_is_not_kept(field: Field) -> None:
    assert not reads_back_exactly(Schema([field]))


def test_a_schema_doc_is_not_kept() -> None:
    assert reads_back_exactly(Schema([Field(1, "a", pa.int32())]))
    assert not reads_back_exactly(Schema([Field(1, "a", pa.int32())], doc="the JSON has no place for this"))


def _table(tmp_path: Path) -> fs.Table:
    return fs.Table.create(tmp_path / "t", pa.schema([pa.field("a", pa.int32()), pa.field("s", pa.string())]))


def test_the_committed_object_serves_the_next_update(tmp_path: Path) -> None:
    t = _table(tmp_path)
    u = t.update_schema()
    u.add_column("b", pa.int64(), default=7)
    committed = u.commit()
    text = committed.to_json()
    assert parsed_schema(text) is committed  # no parse: the writer's own object
    clear_schema_cache()
    fresh = fs.Table.open(tmp_path / "t").schema
    assert fresh == committed and _details(fresh) == _details(committed)


def test_a_variant_the_json_loses_is_read_back_as_a_fresh_process_would(tmp_path: Path) -> None:
    t = _table(tmp_path)
    u = t.update_schema()
    u.add_column("b", pa.large_string())
    committed = u.commit()
    assert committed.find("b").type == pa.large_string()
    reopened = fs.Table.open(tmp_path / "t").schema  # same process, caches warm
    clear_schema_cache()
    fresh = fs.Table.open(tmp_path / "t").schema
    assert reopened == fresh
    assert reopened.find("b").type == pa.string()
