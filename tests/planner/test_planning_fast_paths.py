"""Cold planning's fast paths, each compared with the same operation without it.

* ``file_schema_of`` recovers a file schema from Arrow data carrying ids in one depth-checked walk
  (``arrow_conversion.fields_from_arrow``); with that walk switched off it takes the general one
  (depth check, id check, ``field_from_arrow`` per column). Both give the same schema or the same error.
* ``Schema.arrow_types()`` keeps the Arrow type of every field as ``to_arrow()`` built it: the types
  the Arrow schema holds.
* A plan counts its columns on its schemas (``EvolutionPlan.columns``), not by walking its Arrow schemas.
* ``Schema`` walks its paths and parents on first need, not while indexing.
* Planning converts the initial defaults of the columns a file lacks together (``default_scalars``).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fieldshift as fs
from fieldshift import Field, Schema
from fieldshift.planner import build_plan, planning
from fieldshift.planner.cache import plan_columns, value_key
from fieldshift.planner.nodes import ConstantNode
from fieldshift.schema import file_schema as file_schema_module
from fieldshift.schema.defaults import default_scalar, default_scalars
from fieldshift.schema.file_schema import file_schema_of
from fieldshift.schema.formats.arrow_conversion import FIELD_ID_KEY, field_from_arrow, fields_from_arrow
from fieldshift.schema.types import MAX_NESTING_DEPTH

try:
    from tests.engine_strategies import histories
    from tests.strategies import schemas
except ImportError:  # pytest run without the repo root on sys.path
    from tests.engine_strategies import histories
    from tests.strategies import schemas

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- Arrow schemas as data arrives: ids missing or wrong here and there, encodings, odd types --------
def _meta(draw: st.DrawFn, f: pa.Field) -> dict[bytes, bytes] | None:
    meta = dict(f.metadata or {})
    change = draw(st.sampled_from(["keep"] * 6 + ["drop", "zero", "negative", "text", "spaces", "doc"]))
    if change == "drop":
        meta.pop(FIELD_ID_KEY, None)
    elif change == "zero":
        meta[FIELD_ID_KEY] = b"0"
    elif change == "negative":
        meta[FIELD_ID_KEY] = b"-3"
    elif change == "text":
        meta[FIELD_ID_KEY] = b"x1"
    elif change == "spaces":
        meta[FIELD_ID_KEY] = b" 7 "
    elif change == "doc":
        meta[b"doc"] = "é doc".encode()
    return meta or None


def _retype(draw: st.DrawFn, t: pa.DataType) -> pa.DataType:
    """``t`` with its children perturbed, sometimes wrapped (dictionary, run-end encoded) or replaced."""
    if pa.types.is_struct(t):
        t = pa.struct([_perturb(draw, t.field(i)) for i in range(t.num_fields)])
    elif pa.types.is_map(t):
        t = pa.map_(_perturb(draw, t.key_field), _perturb(draw, t.item_field), keys_sorted=t.keys_sorted)
    elif pa.types.is_fixed_size_list(t):
        t = pa.list_(_perturb(draw, t.value_field), t.list_size)
    elif pa.types.is_large_list(t):
        t = pa.large_list(_perturb(draw, t.value_field))
    elif pa.types.is_list_view(t):
        t = pa.list_view(_perturb(draw, t.value_field))
    elif pa.types.is_large_list_view(t):
        t = pa.large_list_view(_perturb(draw, t.value_field))
    elif pa.types.is_list(t):
        element = _perturb(draw, t.value_field)
        if draw(st.integers(0, 5)) == 0:
            element = element.with_name("item")  # Parquet's other element name
        t = pa.list_(element)
    wrap = draw(st.sampled_from(["none"] * 8 + ["dictionary", "run_end", "uuid", "union", "struct"]))
    if wrap == "dictionary":
        return pa.dictionary(pa.int32(), t)
    if wrap == "run_end":
        return pa.run_end_encoded(pa.int32(), t)
    if wrap == "uuid":
        return pa.uuid()  # an extension type: its values are its storage type
    if wrap == "union":
        return pa.dense_union([pa.field("u", pa.int8())])  # Parquet does not store it
    if wrap == "struct":
        return pa.struct([pa.field("w", t, metadata={FIELD_ID_KEY: str(draw(st.integers(1, 40))).encode()})])
    return t


def _perturb(draw: st.DrawFn, f: pa.Field) -> pa.Field:
    name = draw(st.sampled_from([f.name] * 12 + [""]))
    return pa.field(name, _retype(draw, f.type), f.nullable, _meta(draw, f))


def _deep(levels: int, kind: str) -> pa.Field:
    """A column nesting ``levels`` structs (or lists) over a leaf, ids on every field."""
    ids = itertools.count(1000)
    t: pa.DataType = pa.int32()
    for _ in range(levels):
        child = pa.field("c" if kind == "struct" else "element", t, metadata={FIELD_ID_KEY: str(next(ids)).encode()})
        t = pa.struct([child]) if kind == "struct" else pa.list_(child)
    return pa.field("deep", t, metadata={FIELD_ID_KEY: b"999"})


@st.composite
def arrow_schemas(draw: st.DrawFn) -> pa.Schema:
    schema = draw(schemas(max_depth=3, defaults=False))
    fields = [_perturb(draw, f) if draw(st.booleans()) else f for f in schema.to_arrow()]
    extra = draw(st.sampled_from(["none"] * 6 + ["duplicate", "deep_ok", "deep_struct", "deep_list",
                                                   "no_ids", "deep_and_bad_id"]))
    if extra == "duplicate" and fields:
        fields.append(fields[0].with_name(fields[0].name + "_again"))  # the same id twice
    elif extra == "deep_ok":
        fields.insert(draw(st.integers(0, len(fields))), _deep(MAX_NESTING_DEPTH - 1, "struct"))
    elif extra == "deep_struct":
        fields.insert(draw(st.integers(0, len(fields))), _deep(MAX_NESTING_DEPTH, "struct"))
    elif extra == "deep_list":
        fields.insert(draw(st.integers(0, len(fields))), _deep(50, "list"))
    elif extra == "no_ids":
        fields = [pa.field(f.name, f.type, f.nullable) for f in fields]
    elif extra == "deep_and_bad_id":  # the depth error wins, wherever the bad id is
        fields.insert(0, pa.field("bad", pa.int8(), metadata={FIELD_ID_KEY: b"-1"}))
        fields.append(_deep(120, "struct"))
    return pa.schema(fields)


def _outcome(make: Any) -> tuple[Any, ...]:
    try:
        schema = make()
    except Exception as e:  # the error itself is what is compared
        return ("error", type(e), str(e))
    return ("schema", schema, schema.unmapped_ids, schema.highest_field_id, schema.fingerprint())


def _general(monkeypatch: pytest.MonkeyPatch, make: Any) -> tuple[Any, ...]:
    with monkeypatch.context() as m:
        m.setattr(file_schema_module, "fields_from_arrow", lambda *args: None)
        return _outcome(make)


@PROPERTY
@given(arrow=arrow_schemas())
def test_file_schema_of_fast_walk_matches_the_general_one(arrow: pa.Schema) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast = _outcome(lambda: file_schema_of(arrow))
        general = _general(monkeypatch, lambda: file_schema_of(arrow))
    assert fast == general


@PROPERTY
@given(arrow=arrow_schemas())
def test_fields_from_arrow_matches_field_from_arrow(arrow: pa.Schema) -> None:
    """Same fields, same numbering of id-less fields; None (or an error met first) when a column is too deep."""
    fast_ids, general_ids = itertools.count(-1, -1), itertools.count(-1, -1)
    try:
        fast: Any = fields_from_arrow(arrow, fast_ids.__next__, MAX_NESTING_DEPTH)
    except (fs.FieldshiftError, TypeError, ValueError):
        fast = "error"
    try:
        fs.types.check_arrow_depth(arrow)
    except fs.FieldshiftError:
        assert fast is None or fast == "error"
        return
    try:
        general: Any = [field_from_arrow(f, f.name, lambda _path: next(general_ids)) for f in arrow]
    except (fs.FieldshiftError, TypeError, ValueError):
        general = "error"
    assert fast == general


def test_fast_walk_keeps_the_general_errors() -> None:
    """Errors name the column, as the general walk's do (the fast walk builds no paths)."""
    bad = pa.schema([pa.field("a", pa.int8(), metadata={FIELD_ID_KEY: b"1"}),
                     pa.field("s", pa.struct([pa.field("x", pa.int8(), metadata={FIELD_ID_KEY: b"-2"})]),
                              metadata={FIELD_ID_KEY: b"2"})])
    with pytest.raises(fs.InvalidFieldIdError, match=r"'s\.x'"):
        file_schema_of(bad)
    union = pa.schema([pa.field("u", pa.dense_union([pa.field("i", pa.int8())]), metadata={FIELD_ID_KEY: b"1"})])
    with pytest.raises(TypeError, match="column 'u'"):
        file_schema_of(union)


@PROPERTY
@given(schema=schemas(max_depth=3))
def test_arrow_types_are_the_types_of_the_arrow_schema(schema: Schema) -> None:
    found: dict[int, pa.DataType] = {}

    def walk(f: pa.Field) -> None:
        found[int(f.metadata[FIELD_ID_KEY])] = f.type
        t = f.type
        children = [t.field(i) for i in range(t.num_fields)] if pa.types.is_struct(t) else \
            [t.key_field, t.item_field] if pa.types.is_map(t) else \
            [t.value_field] if hasattr(t, "value_field") else []
        for c in children:
            walk(c)

    for f in schema.to_arrow():
        walk(f)
    assert schema.arrow_types() == found
    assert len(found) == schema.field_count


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories())
def test_plan_columns_counted_on_the_schemas_match_the_arrow_count(history: Any) -> None:
    read = history.final
    for version in history.schemas:
        try:
            plan = build_plan(version, read, fs.CastPolicy.hudi())
        except fs.SchemaMismatchError:
            continue
        assert plan.columns == plan_columns(dataclasses.replace(plan, columns=0))


def test_plan_columns_of_a_plan_from_arrow() -> None:
    schema = Schema([Field(1, "a", pa.int32()), Field(2, "s", fs.StructType((Field(3, "x", pa.string()),)))])
    plan = fs.plan(schema.to_arrow(), schema)
    assert plan_columns(plan) == plan_columns(dataclasses.replace(plan, columns=0)) == 1 + 2 * 3


# -- Schema's paths and parents, walked on first need rather than while indexing -------------------
def _places(fields: Any, prefix: tuple[str, ...] = (), parent: int | None = None, container: Any = None) -> Any:
    for f in fields:
        name = f.name if not isinstance(container, (fs.ListType, fs.MapType)) else \
            "element" if isinstance(container, fs.ListType) else "key" if container.key.id == f.id else "value"
        yield f.id, (*prefix, name), parent
        yield from _places(f.children(), (*prefix, name), f.id, f.type)


@PROPERTY
@given(schema=schemas(max_depth=3))
def test_paths_and_parents_walked_on_first_need(schema: Schema) -> None:
    for fid, path, parent in _places(schema.fields):
        assert schema.path_of(fid) == fs.schema.join_path(path)
        assert schema.parent_id(fid) == parent


def test_a_duplicate_id_names_both_places() -> None:
    inner = Field(3, "x", fs.StructType((Field(4, "y", pa.int8()),)))
    with pytest.raises(fs.DuplicateFieldError, match=r"field id 4 is used by both 's\.x\.y' and 'l\.element'"):
        Schema([Field(1, "s", fs.StructType((inner,))), Field(2, "l", fs.ListType(Field(4, "element", pa.int8())))])
    with pytest.raises(fs.DuplicateFieldError, match=r"field id 1 is used by both 'a' and 'm\.value'"):
        Schema([Field(1, "a", pa.int8()),
                Field(2, "m", fs.MapType(Field(3, "key", pa.int8()), Field(1, "value", pa.int8())))])


# -- initial defaults converted together, one Arrow conversion per type ------------------------------
@PROPERTY
@given(schema=schemas(max_depth=2))
def test_default_scalars_match_default_scalar(schema: Schema) -> None:
    fields = [f for f in schema.all_fields() if f.initial_default is not None]
    together = default_scalars(fields, schema.arrow_types())
    for f in fields:
        alone = default_scalar(f, "initial")
        if f.id not in together:
            continue
        got = together[f.id]
        assert got.type == alone.type and got.is_valid == alone.is_valid
        assert value_key(got.as_py()) == value_key(alone.as_py())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories())
def test_plans_with_defaults_converted_together_match_one_by_one(history: Any) -> None:
    def comparable(node: Any) -> Any:
        if isinstance(node, ConstantNode):
            return ("constant", node.path, node.value.type, node.value.is_valid, value_key(node.value.as_py()))
        return tuple(comparable(v) if dataclasses.is_dataclass(v) else
                     tuple(map(comparable, v)) if isinstance(v, tuple) else v
                     for v in (getattr(node, f.name) for f in dataclasses.fields(node)))

    read = history.final
    for version in history.schemas:
        try:
            together = build_plan(version, read, fs.CastPolicy.hudi())
        except fs.SchemaMismatchError:
            continue
        with pytest.MonkeyPatch.context() as m:
            m.setattr(planning, "default_scalars", lambda *args: {})
            alone = build_plan(version, read, fs.CastPolicy.hudi())
        assert [comparable(n) for n in together.nodes] == [comparable(n) for n in alone.nodes]
        assert together.notes == alone.notes and together.strategy is alone.strategy
