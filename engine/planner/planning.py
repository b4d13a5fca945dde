"""Planning: walk the read schema with the file schema as its partner, matching by field id.

Every mismatch is collected on the way and raised once, as a table, so a user fixes them all in
one go. Identity subtrees collapse into ``Take`` nodes, which pass arrays through untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pyarrow as pa

from fieldshift.errors import Mismatch, SchemaMismatchError
from fieldshift.gc_pause import paused_gc
from fieldshift.kernels import select_cast_kernel
from fieldshift.kernels.constants import clear_constant_cache
from fieldshift.options import MatchMode
from fieldshift.planner.cache import PlanCache, plan_key, value_key
from fieldshift.planner.evolution_plan import EvolutionPlan
from fieldshift.planner.nodes import CastNode, ConstantNode, ListNode, MapNode, Node, NullCheck, StructNode, Take
from fieldshift.planner.strategy import choose_strategy
from fieldshift.schema.defaults import default_scalar, default_scalars
from fieldshift.schema.field import Field
from fieldshift.schema.file_schema import file_schema_of
from fieldshift.schema.model import Schema
from fieldshift.schema.partner_visitor import PartnerVisitor, visit_level
from fieldshift.schema.policy import CastKind, CastPolicy
from fieldshift.schema.types import type_name

__all__ = ["PLAN_CACHE", "arrow_plan", "build_plan", "cached_plan", "clear_plan_cache", "plan_key", "value_key"]


_Context = tuple[str | None, Any, bool]
"""The planner's context per field: its dotted path (None above the top level), its Arrow target type
(the output schema above the top level) and whether it is a map key."""


class _Planner(PartnerVisitor[_Context, Node]):
    def __init__(self, policy: CastPolicy, constants: Mapping[int, Any], targets: Mapping[int, pa.DataType],
                 absent: Callable[[], Iterable[Field]] = tuple) -> None:
        """``targets``: each read field's Arrow type in the output schema, by id; ``absent``: the read fields
        with an initial default that the file schema lacks (their scalars are converted together)."""
        self.policy = policy
        self.constants = constants
        self.targets = targets
        self._absent = absent
        self.mismatches: list[Mismatch] = []
        self._decisions: dict[tuple[int, int, bool], tuple[Any, Any, tuple[str, str, str, str] | CastKind | str]] = {}
        self._defaults: dict[tuple[Any, ...], pa.Scalar] = {}
        self._converted: dict[int, pa.Scalar] | None = None  # default_scalars of the absent fields, on first need
        self.notes: dict[int, str] = {}  # read field id -> what its node does (for explain())

    # -- the walk (engine/schema/partner_visitor.py): context, then one callback per kind of pair --------
    def field_contexts(self, ctx: _Context, read_fields: tuple[Field, ...]) -> list[_Context]:
        path = ctx[0]
        targets = self.targets
        if path is None:
            return [(rf.name, targets[rf.id], False) for rf in read_fields]
        return [(f"{path}.{rf.name}", targets[rf.id], False) for rf in read_fields]

    def element_context(self, ctx: _Context, rf: Field) -> _Context:
        return f"{ctx[0]}.element", self.targets[rf.id], False

    def key_context(self, ctx: _Context, rf: Field) -> _Context:
        return f"{ctx[0]}.key", self.targets[rf.id], True

    def value_context(self, ctx: _Context, rf: Field) -> _Context:
        return f"{ctx[0]}.value", self.targets[rf.id], False

    def missing(self, rf: Field, ctx: _Context) -> Node:
        path, target, _ = ctx
        if rf.id in self.constants:
            try:
                value = pa.scalar(self.constants[rf.id], type=target)
            except (pa.ArrowException, TypeError, ValueError) as e:
                self._mismatch(path, "(constant)", rf, f"the constant does not fit: {e}",
                               "pass a constant of the column's type")
                value = pa.scalar(None, type=target)
            self.notes[rf.id] = f"constant {value.as_py()!r}"
            return ConstantNode(value, path)
        if rf.initial_default is not None:
            self.notes[rf.id] = f"initial default {rf.initial_default!r}"
            return ConstantNode(self._default(rf, target), path)
        if not rf.nullable:
            self._mismatch(path, "(missing)", rf, "required, not in the file and has no initial default",
                           "give it an initial default, or make it optional")
        self.notes[rf.id] = "null (not in the file)"
        return ConstantNode(pa.scalar(None, type=target), path)

    def _default(self, rf: Field, target: pa.DataType) -> pa.Scalar:
        """The field's initial default as a scalar; fields with equal type and default share one."""
        try:
            memo_key = (target, value_key(rf.initial_default))  # 0.0 and -0.0 are two defaults
            found = self._defaults.get(memo_key)
        except TypeError:  # an unhashable default
            return default_scalar(rf, "initial", target)
        if found is None:
            if self._converted is None:
                self._converted = default_scalars((f for f in self._absent() if f.id not in self.constants),
                                                  self.targets)
            found = self._converted.get(rf.id)
            if found is None:
                found = default_scalar(rf, "initial", target)
            self._defaults[memo_key] = found
        return found

    def mismatch(self, rf: Field, ff: Field, index: int, ctx: _Context) -> Node:
        path, target, _ = ctx
        ft = ff.type
        if isinstance(ft, pa.DataType) and pa.types.is_null(ft) and rf.nullable:  # an all-null column
            self.notes[rf.id] = "null (a null-typed column)"
            return ConstantNode(pa.scalar(None, type=target), path)
        self._mismatch(path, ff, rf, "a nested type cannot change shape (struct, list, map, primitive)",
                       "add a new column of the new shape instead")
        self.notes[rf.id] = "unreadable"
        return ConstantNode(pa.scalar(None, type=target), path)

    def struct(self, rf: Field, ff: Field | None, index: int, ctx: _Context, children: list[Node]) -> Node:
        path, target, _ = ctx
        renamed = _renamed(ff, rf)
        if _passes_through(children, len(ff.type.fields)):
            self._collapsed(rf.type.fields, rf, renamed)
            return _null_checked(Take(index, target, path), ff, rf)
        self.notes[rf.id] = renamed or "struct"
        return _null_checked(StructNode(index, tuple(children), target, path), ff, rf)

    def list(self, rf: Field, ff: Field | None, index: int, ctx: _Context, element: Node) -> Node:
        path, target, _ = ctx
        renamed = _renamed(ff, rf)
        if isinstance(element, Take):
            self._collapsed((rf.type.element,), rf, renamed)
            return _null_checked(Take(index, target, path), ff, rf)
        self.notes[rf.id] = renamed or "list"
        return _null_checked(ListNode(index, element, target, path), ff, rf)

    def map(self, rf: Field, ff: Field | None, index: int, ctx: _Context, key: Node, value: Node) -> Node:
        path, target, _ = ctx
        renamed = _renamed(ff, rf)
        if isinstance(key, Take) and isinstance(value, Take):
            self._collapsed((rf.type.key, rf.type.value), rf, renamed)
            return _null_checked(Take(index, target, path), ff, rf)
        self.notes[rf.id] = renamed or "map"
        return _null_checked(MapNode(index, key, value, target, path), ff, rf)

    def primitive(self, rf: Field, ff: Field | None, index: int, ctx: _Context) -> Node:
        path, target, key = ctx
        ft, rt = ff.type, rf.type
        found = self._decisions.get((id(ft), id(rt), key))  # _decide's memo, inline: the common case
        decision = found[2] if found is not None and found[0] is ft and found[1] is rt else \
            self._decide(ft, rt, target, key)
        if decision.__class__ is tuple:
            kernel, source_name, target_name, how = decision
            node: Node = CastNode(index, target, kernel, source_name, target_name, path)
            if ff.name == rf.name:
                self.notes[rf.id] = how
            else:
                renamed = _renamed(ff, rf)
                self.notes[rf.id] = f"{renamed}; {how}" if renamed else how
        elif decision is CastKind.IDENTITY:
            node = Take(index, target, path)
            self.notes[rf.id] = "as is" if ff.name == rf.name else _renamed(ff, rf) or "as is"
        else:
            self._refuse(decision, ft, rf, path)
            node = Take(index, target, path)
        if ff.nullable and not rf.nullable:  # inline: the common case (no narrowing) calls nothing
            return NullCheck(node, path)
        return node

    def _collapsed(self, children: tuple[Field, ...], rf: Field, renamed: str) -> None:
        """A subtree that passes through as one Take: its children's notes go (theirs went when they
        collapsed), its own says it is taken as is."""
        for c in children:
            self.notes.pop(c.id, None)
        self.notes[rf.id] = renamed or "as is"

    def _refuse(self, decision: str, ft: pa.DataType, rf: Field, path: str) -> None:
        if decision == "key":
            self._mismatch(path, ft, rf, "map keys may only widen losslessly",
                           "keep the key type, or widen it losslessly (e.g. int -> long)")
        elif decision == "arrow":
            self._mismatch(path, ft, rf, "Arrow has no cast between these types",
                           "cast the data to another type first, or read the column as its file type")
        else:
            self._mismatch(path, ft, rf, f"CastPolicy.{self.policy.name} does not allow this change",
                           self.policy.suggest(ft, rf.type, map_key=decision == "policy-key"))

    def _decide(self, ft: pa.DataType, rt: pa.DataType, target: pa.DataType,
                key: bool) -> tuple[str, str, str, str] | CastKind | str:
        """A cast's (kernel, type names, note), IDENTITY, or why it is refused; once per type pair."""
        memo_key = (id(ft), id(rt), key)  # the types live as long as the planner: ids stay theirs
        found = self._decisions.get(memo_key)
        if found is None or found[0] is not ft or found[1] is not rt:
            found = self._decisions[memo_key] = (ft, rt, _decision(self.policy, ft, rt, target, key))
        return found[2]

    def _mismatch(self, path: str, ff: Field | str | pa.DataType, rf: Field, why: str, fix: str) -> None:
        file_type = ff if isinstance(ff, str) else type_name(ff.type if isinstance(ff, Field) else ff)
        self.mismatches.append(Mismatch(path, file_type, type_name(rf.type), why, fix))


def _decision(policy: CastPolicy, ft: pa.DataType, rt: pa.DataType, target: pa.DataType,
              key: bool) -> tuple[str, str, str, str] | CastKind | str:
    kind = policy.classify(ft, rt)
    if key and kind is not CastKind.IDENTITY and CastPolicy.lossless().classify(ft, rt) is not CastKind.WIDEN:
        return "key"  # before the policy: no policy reads a map key otherwise, so none is advised
    if kind is None:
        return "policy-key" if key else "policy"
    if kind is CastKind.IDENTITY:
        return kind
    checked = kind is CastKind.CHECKED
    kernel = select_cast_kernel(ft, target, checked)
    if kernel is None:
        return "arrow"
    source_name, target_name = type_name(ft), type_name(rt)
    return kernel, source_name, target_name, \
        f"{'checked cast' if checked else 'widen'} {source_name} -> {target_name} ({kernel})"


def _null_checked(node: Node, ff: Field, rf: Field) -> Node:
    """Nullability by data: a nullable file column read as required reads while it holds no nulls
    (checked per batch)."""
    return NullCheck(node, node.path) if ff.nullable and not rf.nullable else node


def _renamed(ff: Field, rf: Field) -> str:
    """The explain note of a field the file names otherwise (list elements and map entries never count)."""
    return "" if ff.name == rf.name or ff.name in ("element", "key", "value") else f"renamed from {ff.name!r}"


def _passes_through(children: tuple[Node, ...], file_width: int) -> bool:
    return len(children) == file_width and all(
        isinstance(c, Take) and c.index == i for i, c in enumerate(children)
    )


def build_plan(file_schema: Schema, read_schema: Schema, policy: CastPolicy | None = None,
               constants: Mapping[int, Any] | None = None, file_arrow: pa.Schema | None = None) -> EvolutionPlan:
    """Plan the evolution of data written with ``file_schema`` into ``read_schema`` (uncached).

    ``file_arrow`` is the data's own Arrow schema when the file schema was recovered from it."""
    policy = policy or CastPolicy.lossless()
    with paused_gc():  # thousands of nodes, no cycles: collections would only walk the heap (gc_pause)
        output = read_schema.to_arrow()
        planner = _Planner(policy, constants or {}, read_schema.arrow_types(), lambda: (
            f for f in read_schema.all_fields() if f.initial_default is not None and not file_schema.has_field(f.id)))
        nodes = tuple(visit_level(planner, read_schema.fields, file_schema.fields, (None, output, False)))
    if planner.mismatches:
        raise SchemaMismatchError(
            planner.mismatches,
            f"from file schema {file_schema.schema_id} into read schema {read_schema.schema_id}",
        )
    with paused_gc():
        file_arrow = file_schema.to_arrow() if file_arrow is None else file_arrow
        strategy, steps = choose_strategy(nodes, read_schema, file_arrow, output)
    return EvolutionPlan(strategy=strategy, nodes=nodes, output_schema=output, input_schema=file_arrow,
                         policy=policy, steps=steps, notes=tuple(planner.notes.items()),
                         columns=1 + file_schema.field_count + read_schema.field_count)


PLAN_CACHE = PlanCache()
"""Every plan fieldshift makes through ``cached_plan`` and ``arrow_plan``: the one plan cache."""


def cached_plan(file_schema: Schema, read_schema: Schema, policy: CastPolicy | None = None,
                constants: Mapping[int, Any] | None = None) -> EvolutionPlan:
    """``build_plan`` through the plan cache, keyed by ``plan_key``."""
    policy = policy or CastPolicy.lossless()
    key = plan_key(file_schema.fingerprint(), read_schema, policy, constants)
    return PLAN_CACHE.get(key, lambda: build_plan(file_schema, read_schema, policy, constants))


def arrow_plan(file_arrow: pa.Schema, read_schema: Schema, policy: CastPolicy,
               constants: Mapping[int, Any], name_mapping: Any = None, match: MatchMode = "id") -> EvolutionPlan:
    """The plan for data of this Arrow schema (ids from ``PARQUET:field_id``, else the name mapping).

    Keyed by the schema's IPC bytes: ``pa.Schema`` equality ignores field metadata, i.e. the ids. The
    batches of one stream find their plan by pointer, recovering neither the file schema nor the key."""
    rest = plan_key(None, read_schema, policy, constants, name_mapping, match)[1:]
    hit = PLAN_CACHE.recent_arrow(file_arrow, rest)
    if hit is not None:
        return hit

    def build() -> EvolutionPlan:
        with paused_gc():  # a wide file schema is thousands of cycle-free objects too (gc_pause)
            schema = file_schema_of(file_arrow, read_schema, name_mapping=name_mapping, match=match)
        return build_plan(schema, read_schema, policy, constants, file_arrow)

    return PLAN_CACHE.get((file_arrow.serialize().to_pybytes(), *rest), build, arrow=file_arrow)


def clear_plan_cache() -> None:
    """Forget every cached plan (benchmarks of cold planning, tests)."""
    clear_constant_cache()
    PLAN_CACHE.clear()
