"""Differences between two schema versions, matched by field id (a rename is not a drop plus an add)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema
from fieldshift.schema.types import ListType, MapType, StructType, type_name

__all__ = ["FieldChange", "diff_schemas"]

_CONTAINERS = (StructType, ListType, MapType)


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One difference: ``kind`` is added, dropped, renamed, retyped, nullability, default, doc or moved."""

    kind: str
    field_id: int
    old_path: str | None
    new_path: str | None
    detail: str


def _shape(t: object) -> str:
    return {StructType: "struct", ListType: "list", MapType: "map"}.get(type(t)) or type_name(t)  # type: ignore[arg-type]


def _field_changes(fid: int, a: Schema, b: Schema) -> list[FieldChange]:
    fa, fb = a.field(fid), b.field(fid)
    pa_, pb = a.path_of(fid), b.path_of(fid)
    out = []

    def add(kind: str, detail: str) -> None:
        out.append(FieldChange(kind, fid, pa_, pb, detail))

    if fa.name != fb.name:
        add("renamed", f"{fa.name} -> {fb.name}")
    containers = isinstance(fa.type, _CONTAINERS) and type(fa.type) is type(fb.type)
    if not containers and _shape(fa.type) != _shape(fb.type):
        add("retyped", f"{_shape(fa.type)} -> {_shape(fb.type)}")
    if fa.nullable != fb.nullable:
        add("nullability", "required -> optional" if fb.nullable else "optional -> required")
    for kind in ("initial_default", "write_default"):
        old, new = getattr(fa, kind), getattr(fb, kind)
        if old != new:
            add("default", f"{kind.replace('_', ' ')} {old!r} -> {new!r}")
    if (fa.doc or None) != (fb.doc or None):
        add("doc", f"{fa.doc!r} -> {fb.doc!r}")
    return out


def _children(schema: Schema, parent: int | None) -> list[Field]:
    return list(schema.fields if parent is None else schema.field(parent).children())


def _moves(a: Schema, b: Schema, common: set[int]) -> list[FieldChange]:
    out = []
    for fid in sorted(common):
        if a.parent_id(fid) != b.parent_id(fid):
            out.append(FieldChange("moved", fid, a.path_of(fid), b.path_of(fid), "to another struct"))
    parents = {None} | {p for p in (b.parent_id(f) for f in common) if p is not None}
    for parent in parents:
        if parent is not None and parent not in common:
            continue
        seq_a = [f.id for f in _children(a, parent)
                 if f.id in common and a.parent_id(f.id) == b.parent_id(f.id)]
        seq_b = [f.id for f in _children(b, parent) if f.id in seq_a]
        if seq_a == seq_b:
            continue
        matcher = difflib.SequenceMatcher(a=seq_a, b=seq_b, autojunk=False)
        kept = {seq_b[m.b + k] for m in matcher.get_matching_blocks() for k in range(m.size)}
        for i, fid in enumerate(seq_b):
            if fid not in kept:
                where = "first" if i == 0 else f"after {b.field(seq_b[i - 1]).name}"
                out.append(FieldChange("moved", fid, a.path_of(fid), b.path_of(fid), where))
    return out


def diff_schemas(a: Schema, b: Schema) -> list[FieldChange]:
    """What changed from ``a`` to ``b``, parents before children, in ``b``'s order."""
    ids_a = {f.id for f in a.all_fields()}
    ids_b = {f.id for f in b.all_fields()}
    order = [f.id for f in b.all_fields()]
    changes: list[FieldChange] = []
    for fid in [f.id for f in a.all_fields() if f.id not in ids_b]:
        f = a.field(fid)
        changes.append(FieldChange("dropped", fid, a.path_of(fid), None, _shape(f.type)))
    for fid in order:
        if fid not in ids_a:
            f = b.field(fid)
            null = "" if f.nullable else " not null"
            default = "" if f.initial_default is None else f" default {f.initial_default!r}"
            detail = f"{_shape(f.type)}{null}{default}"
            changes.append(FieldChange("added", fid, None, b.path_of(fid), detail))
        else:
            changes.extend(_field_changes(fid, a, b))
    common = ids_a & ids_b
    changes.extend(_moves(a, b, common))
    return changes
