"""Runtime nodes carry only what applying them needs; the plan keeps planning's notes for explain()."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pyarrow as pa
from hypothesis import given, settings

import fieldshift as fs
from fieldshift import CastPolicy, Field, ListType, MapType, Schema, StructType
from fieldshift.planner import build_plan
from fieldshift.planner import nodes as plan_nodes
from tests.strategies import schemas


def _ids(nodes: tuple[Any, ...], fields: list[pa.Field]) -> list[int]:
    """The read field ids of every node in the plan's tree (beside the output's Arrow fields)."""
    out = []
    for n, f in zip(nodes, fields, strict=True):
        out.append(int(f.metadata[b"PARQUET:field_id"]))
        n = n.inner if isinstance(n, plan_nodes.NullCheck) else n
        if isinstance(n, plan_nodes.StructNode):
            out.extend(_ids(n.children, list(f.type)))
        elif isinstance(n, plan_nodes.ListNode):
            out.extend(_ids((n.element,), [f.type.value_field]))
        elif isinstance(n, plan_nodes.MapNode):
            out.extend(_ids((n.key, n.value), [f.type.key_field, f.type.item_field]))
    return out


def test_node_classes_hold_no_planning_notes() -> None:
    kinds = [plan_nodes.Take, plan_nodes.CastNode, plan_nodes.ConstantNode, plan_nodes.StructNode,
             plan_nodes.ListNode, plan_nodes.MapNode, plan_nodes.NullCheck]
    assert [k.__name__ for k in kinds if "note" in {f.name for f in dataclasses.fields(k)}] == []


FILE = Schema([
    Field(1, "a.b", pa.int32()),
    Field(2, "a", StructType((Field(3, "c", pa.int32()), Field(4, "keep", pa.string())))),
    Field(5, "l", ListType(Field(6, "element", pa.int32()))),
    Field(7, "m", MapType(Field(8, "key", pa.string()), Field(9, "value", pa.int32()))),
    Field(10, "n", pa.int64()),
])
READ = Schema([
    Field(1, "a.b", pa.int64()),
    Field(2, "a", StructType((Field(3, "b", pa.int64()), Field(4, "keep", pa.string())))),
    Field(5, "l", ListType(Field(6, "element", pa.int64()))),
    Field(7, "m", MapType(Field(8, "key", pa.string()), Field(9, "value", pa.int64()))),
    Field(10, "n", pa.int64(), nullable=False),
    Field(11, "new", pa.string(), initial_default="x"),
])


def test_explain_finds_each_note_by_position_even_where_paths_collide() -> None:
    """A top-level column ``a.b`` and struct ``a``'s child ``b`` share the dotted path ``a.b``: notes
    kept by path would mix them up; by field id each line keeps its own."""
    plan = fs.plan(FILE, READ, policy=CastPolicy.lossless())
    lines = plan.explain().splitlines()
    assert lines[1].startswith("  a.b: widen int -> long")
    assert lines[2] == "  a: struct"
    assert lines[3].startswith("    a.b: renamed from 'c'; widen int -> long")
    assert "keep" not in plan.explain()  # an untouched child is not listed
    assert "  n: as is; checked for nulls" in lines
    assert "  new: initial default 'x'" in lines
    assert any(line.startswith("    l.element: widen int -> long") for line in lines)
    assert any(line.startswith("    m.value: widen int -> long") for line in lines)
    assert pickle.loads(pickle.dumps(plan)).explain() == plan.explain()


@settings(max_examples=60, deadline=None)
@given(schemas(max_depth=3), schemas(max_depth=3))
def test_every_kept_node_has_its_note_and_no_note_is_orphaned(file_schema: Schema, read_schema: Schema) -> None:
    """Subtrees that collapse into a Take take their children's notes with them."""
    try:
        plan = build_plan(file_schema, read_schema, CastPolicy.hudi())
    except fs.SchemaMismatchError:
        return
    assert sorted(i for i, _ in plan.notes) == sorted(_ids(plan.nodes, list(plan.output_schema)))
    assert all(note for _, note in plan.notes)
    for node in plan.nodes:
        assert not hasattr(node, "note")
