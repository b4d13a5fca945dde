"""Issue 17: `SchemaUpdate` edits the top level in place (schema_draft.TopLevel) and builds the schema once.

A long run of calls in one builder must give exactly what the same calls give one builder at a time
(each starting from a fully built schema), including after renames, moves and drops that reorder the
indexes; errors must come from the same call.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.errors import DuplicateFieldError, FieldshiftError, UnknownFieldError


def _base(n: int = 30) -> fs.Schema:
    fields = [fs.Field(i + 1, f"c{i}", pa.int32()) for i in range(n)]
    fields.append(fs.Field(n + 1, "s", fs.StructType((fs.Field(n + 2, "x", pa.int32()),
                                                        fs.Field(n + 3, "y", pa.string())))))
    return fs.Schema(fields)


def _random_ops(rng: random.Random, count: int) -> list[tuple]:
    ops: list[tuple] = []
    for i in range(count):
        kind = rng.choice(["add", "add_first", "add_after", "add_nested", "rename", "update", "drop", "move",
                           "move_after", "doc", "rename_nested", "update_nested"])
        ops.append((kind, i, rng.random(), rng.random()))
    return ops


def _apply(u: fs.SchemaUpdate, schema: fs.Schema, op: tuple) -> None:
    """One operation, its target chosen from the schema as it stands (names picked by position)."""
    kind, i, a, b = op
    top = [f.name for f in schema.fields if f.name != "s"]
    pick = top[int(a * len(top))] if top else None
    other = top[int(b * len(top))] if top else None
    if kind == "add":
        u.add_column(f"n{i}", pa.int64())
    elif kind == "add_first":
        u.add_column(f"n{i}", pa.string(), first=True)
    elif kind == "add_after" and pick:
        u.add_column(f"n{i}", pa.float64(), after=pick)
    elif kind == "add_nested":
        u.add_column(f"s.z{i}", pa.int64())
    elif kind == "rename" and pick:
        u.rename_column(pick, f"r{i}")
    elif kind == "update" and pick and schema.find(pick).type == pa.int32():
        u.update_column(pick, pa.int64())
    elif kind == "drop" and pick and len(top) > 3:
        u.drop_column(pick)
    elif kind == "move" and pick:
        u.move_first(pick)
    elif kind == "move_after" and pick and other and pick != other:
        u.move_after(pick, other)
    elif kind == "doc" and pick:
        u.update_column(pick, doc=f"doc {i}")
    elif kind == "rename_nested":
        u.rename_column(f"s.{schema.find('s').type.fields[0].name}", f"sx{i}")
    elif kind == "update_nested" and schema.find("s").type.fields[0].type == pa.int32():
        u.update_column(f"s.{schema.find('s').type.fields[0].name}", pa.int64())


@pytest.mark.parametrize("seed", range(12))
def test_one_builder_equals_one_builder_per_call(seed: int) -> None:
    rng = random.Random(seed)
    ops = _random_ops(rng, 60)
    one_at_a_time = _base()
    u = _base().update()
    for op in ops:
        step = one_at_a_time.update()
        _apply(step, one_at_a_time, op)
        _apply(u, one_at_a_time, op)  # targets chosen from the same schema (the builder holds it too)
        one_at_a_time = step.apply()
    result = u.apply()
    assert result.fields == one_at_a_time.fields
    assert result.highest_field_id == one_at_a_time.highest_field_id
    assert result.schema_id == 1


def test_errors_come_from_the_call_that_causes_them() -> None:
    u = _base().update()
    for i in range(200):
        u.add_column(f"n{i}", pa.int64())
    with pytest.raises(DuplicateFieldError):
        u.add_column("n7", pa.int64())
    u.rename_column("n8", "renamed")
    with pytest.raises(DuplicateFieldError):
        u.rename_column("n9", "renamed")
    with pytest.raises(UnknownFieldError):
        u.update_column("n8", pa.int64())  # renamed away
    u.drop_column("renamed")
    with pytest.raises(UnknownFieldError):
        u.drop_column("renamed")
    schema = u.apply()
    assert "renamed" not in schema.names and "n9" in schema.names and len(schema.fields) == 31 + 199


def test_a_too_deep_new_column_is_refused_at_once() -> None:
    deep: pa.DataType = pa.int32()
    for _ in range(200):
        deep = pa.struct([("a", deep)])
    u = _base().update()
    with pytest.raises(FieldshiftError):
        u.add_column("deep", deep)
    assert u.apply().fields == _base().fields  # nothing was added


def test_identifier_fields_survive_top_level_edits() -> None:
    base = fs.Schema([fs.Field(1, "id", pa.int64(), nullable=False), fs.Field(2, "v", pa.int32())],
                     identifier_field_ids=[1])
    u = base.update()
    for i in range(50):
        u.add_column(f"n{i}", pa.int64())
    u.rename_column("v", "value").move_first("value")
    result = u.apply()
    assert result.identifier_field_ids == (1,)
    assert result.names[:3] == ["value", "id", "n0"]
    with pytest.raises(FieldshiftError):
        base.update().drop_column("id")
