"""`SchemaUpdate`: a builder of schema changes applied in order; ``apply()`` gives the next version.

Each call resolves its path against the schema as changed so far, so ``rename_column("a", "b")``
followed by ``update_column("b", ...)`` works. New fields take ``highest_field_id + 1``; ids are never
reused, so dropping and re-adding a name makes a new column that old files do not have.

``Schema.update()`` hands the builder its schema; the builder reads it through its interface
(``SchemaLike``) and builds every schema as that schema's own class, so this module never imports
``fieldshift.schema.model``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import pyarrow as pa

from fieldshift.errors import (
    DuplicateFieldError,
    IdentifierFieldChangeError,
    InvalidNameError,
    NestingLevelMoveError,
    NullabilityTighteningError,
    RequiredFieldWithoutDefaultError,
    SchemaEvolutionError,
    TypeChangeNotAllowedError,
    UnknownFieldError,
)
from fieldshift.schema.field import Field
from fieldshift.schema.field_paths import join_path, split_path
from fieldshift.schema.formats.arrow_conversion import field_from_arrow
from fieldshift.schema.formats.arrow_form import type_to_arrow
from fieldshift.schema.policy import CastKind, CastPolicy
from fieldshift.schema.schema_draft import FreshIds, TopLevel, recast_default
from fieldshift.schema.schema_like import SchemaLike
from fieldshift.schema.type_text import parse_type
from fieldshift.schema.type_visitor import visit_type
from fieldshift.schema.types import FieldType, ListType, MapType, StructType, check_arrow_depth, is_nested, type_name

__all__ = ["SchemaUpdate"]

S = TypeVar("S", bound=SchemaLike)
"""The class of the schema a builder starts from, and of those it builds (``Schema``)."""

TypeLike = pa.DataType | FieldType | str
PathLike = str | Sequence[str]
"""A dotted string (```a.b`.c`` quotes a name holding dots) or a list/tuple of names."""


def _shown(path: PathLike) -> str:
    """A path as messages and ``changes`` show it (quoted where needed)."""
    return path if isinstance(path, str) else join_path(path)


class SchemaUpdate(Generic[S]):
    """Chainable schema changes; nothing changes until :meth:`apply` (or a table's ``commit``).

    ``S`` is the class of the schema it starts from (``Schema``): every schema it builds is one too."""

    def __init__(self, base: S, *, policy: CastPolicy | None = None,
                 on_apply: Callable[[S], Any] | None = None, table_policy: CastPolicy | None = None) -> None:
        self._base = base
        self._make: type[S] = type(base)  # every schema built here is of the base's class
        self._top = TopLevel(base.fields)  # the working top level; nested edits replace a top-level field
        self._ident = base.identifier_field_ids
        self._schema: S | None = base  # the working schema, built from _top when a lookup needs it
        self._policy = policy or CastPolicy.lossless()
        self._next_id = base.highest_field_id + 1
        self._on_apply = on_apply
        self._table_policy = table_policy  # a table's builder: its commit reads every file under this policy
        self.changes: list[str] = []

    def _advice(self, old: Any, new: Any, map_key: bool) -> str:
        """A preset that makes the type change and reads old data after it; on a table, the commit
        checks every file under the table's own policy, so the advice is to make it the table's."""
        preset = self._policy.suggested_preset(old, new, map_key=map_key, keeping=self._table_policy)
        if preset is None:
            return "no preset allows it: rewrite the data or add a new column"
        if self._table_policy is None:
            return f"use CastPolicy.{preset.call}"
        return (f"make CastPolicy.{preset.call} the table's policy first (table.set_policy(CastPolicy.{preset.call}) "
                f"or `fieldshift policy LOCATION {preset.option_name}`): the commit reads every data file under "
                "the table's policy")

    # -- public operations ----------------------------------------------------------------------
    def add_column(
        self,
        path: PathLike,
        type: TypeLike,
        *,
        nullable: bool = True,
        default: Any = None,
        write_default: Any = None,
        doc: str | None = None,
        first: bool = False,
        after: PathLike | None = None,
        before: PathLike | None = None,
    ) -> SchemaUpdate:
        """Add a column (``"t.z"`` adds ``z`` inside struct ``t``; ``"l.element.x"``, ``"m.value.x"``;
        ``["a.b"]`` or ``"`a.b`"`` adds a top-level column named ``a.b``)."""
        parts = split_path(path)
        path = join_path(parts)
        parent_path, name = parts[:-1], parts[-1]
        parent = self._struct_at(parent_path, path)
        taken = any(f.name == name for f in parent.fields) if isinstance(parent, StructType) else \
            self._top.named(name) is not None
        if taken:
            raise DuplicateFieldError(
                f"cannot add {path!r}: a field with that name already exists at that level; "
                "rename or drop it first, or pick another name"
            )
        if not nullable and default is None:
            raise RequiredFieldWithoutDefaultError(
                f"cannot add required column {path!r} without a default: rows written before it "
                "existed would have no value. Pass default=..., or add it as nullable."
            )
        field_id = self._take_id()
        new_type = self._fresh_type(self._parse_type(type))
        if not nullable and default == {}:
            _require_child_defaults(new_type, path)
        field = Field(
            field_id, name, new_type, nullable=nullable, doc=doc, initial_default=default,
            write_default=write_default if write_default is not None else default,
        )
        if not parent_path:
            self._make([field])  # checks the new column alone (nesting depth, ids): the rest is unchanged
        if not parent_path and not first and after is None and before is None:
            self._top.append(field)
            self._schema = None
        else:
            self._edit_children(parent_path, lambda fs: self._place(fs, field, first, after, before, path))
        self.changes.append(f"add {path} {type_name(new_type)}")
        return self

    def drop_column(self, path: PathLike) -> SchemaUpdate:
        """Drop a field at any depth; its id is never reused, so old files' values for it are never read again.

        Raises:
            IdentifierFieldChangeError: the field is, or holds, a primary-key field.
            SchemaEvolutionError: a list element, a map key or value, or a struct's last field.
        """
        field = self._find(path)
        path = _shown(path)
        self._refuse_identifier(field, "drop", path)
        inside = [i for i in self._ident if is_nested(field.type) and self._is_ancestor(field.id, i)]
        if inside:
            raise IdentifierFieldChangeError(
                f"cannot drop {path!r}: it holds identifier (primary-key) field "
                f"{self._current.path_of(inside[0])!r}; change the identifier fields first "
                "(set_identifier_fields)"
            )
        parent_path = self._parent_path(field)
        if parent_path is not None:
            parent = self._find(parent_path) if parent_path else None
            if parent is not None and not isinstance(parent.type, StructType):
                raise SchemaEvolutionError(
                    f"cannot drop {path!r}: a list element or map key/value is part of its container; "
                    "drop the list or map itself"
                )
            if parent is not None and len(parent.type.fields) == 1:
                raise SchemaEvolutionError(
                    f"cannot drop {path!r}: it is the last field of struct {parent_path!r} and "
                    "Parquet cannot store an empty struct; drop the struct instead"
                )
        self._edit_children(self._parts_of(parent_path),
                            lambda fs: tuple(f for f in fs if f.id != field.id))
        self.changes.append(f"drop {path}")
        return self

    def rename_column(self, path: PathLike, new_name: str) -> SchemaUpdate:
        """Rename a struct field (the last part of ``path``); files keep reading by id, so no data is rewritten.

        Raises:
            InvalidNameError: an empty name.
            DuplicateFieldError: a sibling already has ``new_name``.
        """
        field = self._find(path)
        path = _shown(path)
        if new_name == field.name:
            return self  # nothing changes: no change is recorded
        if not isinstance(new_name, str) or not new_name:
            raise InvalidNameError(f"cannot rename {path!r} to {new_name!r}: a name must be a non-empty string")
        self._refuse_identifier(field, "rename", path)
        parent_path = self._parent_path(field)
        parent = self._find(parent_path) if parent_path else None
        if parent is not None and not isinstance(parent.type, StructType):
            raise SchemaEvolutionError(f"cannot rename {path!r}: list elements and map keys/values "
                                       "have fixed names")
        taken = any(f.name == new_name and f.id != field.id for f in parent.type.fields) if parent is not None \
            else self._top.named(new_name) not in (None, field)
        if taken:
            raise DuplicateFieldError(
                f"cannot rename {path!r} to {new_name!r}: that name is taken at the same level"
            )
        self._replace(field.id, field.with_(name=new_name))
        self.changes.append(f"rename {path} to {join_path([new_name])}")
        return self

    def update_column(
        self, path: PathLike, type: TypeLike | None = None, *, nullable: bool | None = None,
        doc: str | None = None,
    ) -> SchemaUpdate:
        """Change a primitive's type (as the policy allows), relax nullability, or set its doc.

        Asking for what the field already is records no change."""
        field = self._find(path)
        path = _shown(path)
        new = field
        if type is not None:
            target = self._parse_type(type)
            if is_nested(target) or is_nested(field.type):
                raise TypeChangeNotAllowedError(
                    f"cannot change the type of {path!r} from {type_name(field.type)} to "
                    f"{type_name(target)}: change nested types by adding, dropping or retyping "
                    "their children (e.g. update_column('s.x', ...))"
                )
            is_key = isinstance(self._container_of(field), MapType) and self._container_of(field).key.id == field.id
            if is_key and CastPolicy.lossless().classify(field.type, target) not in (CastKind.IDENTITY, CastKind.WIDEN):
                raise TypeChangeNotAllowedError(
                    f"cannot change map key {path!r} from {type_name(field.type)} to {type_name(target)}: "
                    "map keys may only widen losslessly (e.g. int -> long)"
                )
            if self._policy.classify(field.type, target) is None:
                raise TypeChangeNotAllowedError(
                    f"cannot change {path!r} from {type_name(field.type)} to {type_name(target)} "
                    f"under CastPolicy.{self._policy.call}: {self._advice(field.type, target, is_key)}"
                )
            if target != field.type:
                self._refuse_identifier(field, "retype", path)
                new = new.with_(type=target,
                                initial_default=recast_default(field.initial_default, field.type, target, path),
                                write_default=recast_default(field.write_default, field.type, target, path))
        if nullable is not None:
            if field.nullable and not nullable:
                raise NullabilityTighteningError(
                    f"cannot make {path!r} required: it is nullable and old rows may hold nulls. "
                    "Add a new required column with a default instead"
                )
            new = new.with_(nullable=nullable)
        if doc is not None:
            new = new.with_(doc=doc)
        if _same_field(new, field):
            return self  # nothing changes: no change is recorded
        self._replace(field.id, new)
        self.changes.append(f"update {path}")
        return self

    def set_write_default(self, path: PathLike, value: Any) -> SchemaUpdate:
        """The value appends write for ``path`` when a batch lacks it (Iceberg's ``write-default``); the read
        default of older files is unchanged.
        """
        field = self._find(path)
        new = field.with_(write_default=value)
        if _same_field(new, field):
            return self
        self._replace(field.id, new)
        self.changes.append(f"set write default of {_shown(path)}")
        return self

    def move_first(self, path: PathLike) -> SchemaUpdate:
        """Put the field first among its siblings (a read order change: files are untouched)."""
        return self._move(path, None, "first")

    def move_after(self, path: PathLike, other: PathLike) -> SchemaUpdate:
        """Put the field right after its sibling ``other``.

        Raises:
            NestingLevelMoveError: ``other`` is not in the same struct.
        """
        return self._move(path, other, "after")

    def move_before(self, path: PathLike, other: PathLike) -> SchemaUpdate:
        """Put the field right before its sibling ``other``.

        Raises:
            NestingLevelMoveError: ``other`` is not in the same struct.
        """
        return self._move(path, other, "before")

    def set_identifier_fields(self, *paths: PathLike) -> SchemaUpdate:
        """Make ``paths`` the schema's identifier (primary-key) fields; none clears them. A keyed table refuses
        a change of its key at commit (``IdentifierFieldChangeError``).
        """
        ids = tuple(self._find(p).id for p in paths)
        if ids == self._ident:
            return self
        self._current = self._rebuild(tuple(self._top.fields), ident=ids)
        self.changes.append(f"identifier fields {', '.join(_shown(p) for p in paths)}")
        return self

    def apply(self) -> S:
        """The new schema, ``schema_id`` one past the base (the base schema is unchanged).

        When nothing changed (no operation, or only no-ops), the base schema itself: no new version."""
        if self._unchanged():
            return self._base
        result = self._make(
            self._current.fields,
            schema_id=self._base.schema_id + 1,
            identifier_field_ids=self._current.identifier_field_ids,
            highest_field_id=max(self._next_id - 1, self._base.highest_field_id),
            doc=self._base.doc,
        )
        return result

    def commit(self) -> Any:
        """Record the change (only for builders obtained from a table)."""
        if self._on_apply is None:
            raise SchemaEvolutionError("this update is not bound to a table; call apply() instead")
        return self._on_apply(self.apply())

    # -- helpers --------------------------------------------------------------------------------
    @property
    def _current(self) -> S:
        """The schema as changed so far (built from the top level once after a run of top-level edits)."""
        if self._schema is None:
            self._current = self._rebuild(tuple(self._top.fields))
        assert self._schema is not None
        return self._schema

    @_current.setter
    def _current(self, schema: S) -> None:
        self._schema = schema
        self._ident = schema.identifier_field_ids
        if list(schema.fields) != self._top.fields:
            self._top.reset(schema.fields)

    def _unchanged(self) -> bool:
        cur, base = self._current, self._base
        return cur.identifier_field_ids == base.identifier_field_ids and \
            max(self._next_id - 1, base.highest_field_id) == base.highest_field_id and \
            len(cur.fields) == len(base.fields) and \
            all(_same_field(a, b) for a, b in zip(cur.fields, base.fields, strict=True))

    def _is_ancestor(self, ancestor: int, field_id: int) -> bool:
        if self._top.holds(field_id):
            return False
        parent = self._current.parent_id(field_id)
        while parent is not None:
            if parent == ancestor:
                return True
            parent = self._current.parent_id(parent)
        return False

    def _container_of(self, field: Field) -> Any:
        if self._top.holds(field.id):
            return None
        parent = self._current.parent_id(field.id)
        return None if parent is None else self._current.field(parent).type

    def _find(self, path: PathLike) -> Field:
        try:
            parts = split_path(path)
        except InvalidNameError:
            parts = ()
        top = self._top.named(parts[0]) if len(parts) == 1 else None
        return top if top is not None else self._current.find(path)

    def _take_id(self) -> int:
        fid = self._next_id
        self._next_id += 1
        return fid

    def _parse_type(self, t: TypeLike) -> FieldType:
        if isinstance(t, str):
            return parse_type(t)
        if isinstance(t, pa.DataType) and (pa.types.is_nested(t) or pa.types.is_dictionary(t)):
            check_arrow_depth([pa.field("_", t)])
            return field_from_arrow(pa.field("_", t), "_", lambda _p: 0).type
        return t

    def _fresh_type(self, t: FieldType) -> FieldType:
        """Renumber every nested field of a new type with fresh ids (parents before children)."""
        return visit_type(t, FreshIds(self._take_id))

    def _struct_at(self, parent_parts: tuple[str, ...], full: str) -> StructType | None:
        if not parent_parts:
            return None
        parent = self._current.find(parent_parts)
        if not isinstance(parent.type, StructType):
            raise SchemaEvolutionError(
                f"cannot add {full!r}: {join_path(parent_parts)!r} is a {type_name(parent.type)}, "
                "not a struct (for a list of structs use 'col.element.x', for a map 'col.value.x')"
            )
        return parent.type

    def _parent_path(self, field: Field) -> str | None:
        if self._top.holds(field.id):
            return ""
        parent = self._current.parent_id(field.id)
        return "" if parent is None else self._current.path_of(parent)

    @staticmethod
    def _parts_of(path: str | None) -> tuple[str, ...]:
        return split_path(path) if path else ()

    def _refuse_identifier(self, field: Field, verb: str, path: str) -> None:
        if field.id in self._ident:
            raise IdentifierFieldChangeError(
                f"cannot {verb} {path!r}: it is an identifier (primary-key) field, and identifier "
                "fields cannot be dropped, renamed or retyped"
            )

    def _edit_children(self, parent_parts: tuple[str, ...],
                       edit: Callable[[tuple[Field, ...]], tuple[Field, ...]]) -> None:
        if not parent_parts:  # a new order or a dropped column at the top: nothing to check
            self._top.reset(edit(tuple(self._top.fields)))
            self._schema = None
            return
        parent = self._current.find(parent_parts)
        assert isinstance(parent.type, StructType)
        self._replace(parent.id, parent.with_(type=StructType(edit(parent.type.fields))))

    def _replace(self, field_id: int, new: Field) -> None:
        if self._top.holds(field_id):  # same id, a checked name, a primitive type: nothing else to check
            self._top.replace(field_id, new)
            self._schema = None
            return

        def swap(fields: tuple[Field, ...]) -> tuple[Field, ...]:
            return tuple(new if f.id == field_id else _swap_inside(f, swap) for f in fields)

        self._current = self._rebuild(swap(tuple(self._top.fields)))

    def _rebuild(self, fields: tuple[Field, ...], ident: tuple[int, ...] | None = None) -> S:
        ident = self._ident if ident is None else ident
        highest = max(self._next_id - 1, self._base.highest_field_id)
        schema = self._make(fields, schema_id=self._base.schema_id, highest_field_id=highest)
        live = tuple(i for i in ident if schema.has_field(i))
        if not live:
            return schema
        return self._make(fields, schema_id=self._base.schema_id, identifier_field_ids=live,
                          highest_field_id=highest)

    def _place(self, fields: tuple[Field, ...], field: Field, first: bool, after: str | None,
               before: str | None, path: str) -> tuple[Field, ...]:
        out = list(fields)
        if first:
            return (field, *out)
        anchor = after or before
        if anchor is None:
            return (*out, field)
        anchor_parts = split_path(anchor)
        if len(anchor_parts) > 1 and anchor_parts[:-1] != split_path(path)[:-1]:
            raise NestingLevelMoveError(
                f"cannot place {path!r} relative to {anchor!r}: both must be siblings in the same struct"
            )
        idx = next((i for i, f in enumerate(out) if f.name == anchor_parts[-1]), None)
        if idx is None:
            raise UnknownFieldError(anchor, [f.name for f in out])
        out.insert(idx + 1 if after else idx, field)
        return tuple(out)

    def _move(self, path: PathLike, other: PathLike | None, where: str) -> SchemaUpdate:
        field = self._find(path)
        path = _shown(path)
        other = None if other is None else _shown(other)
        parent_path = self._parent_path(field)
        if other is not None:
            anchor = self._find(other)
            if self._parent_path(anchor) != parent_path:
                raise NestingLevelMoveError(
                    f"cannot move {path!r} {where} {other!r}: fields move only among their siblings, "
                    "never to another struct"
                )
            if anchor.id == field.id:
                raise SchemaEvolutionError(f"cannot move {path!r} relative to itself")

        def edit(fields: tuple[Field, ...]) -> tuple[Field, ...]:
            rest = [f for f in fields if f.id != field.id]
            if other is None:
                return (field, *rest)
            idx = next(i for i, f in enumerate(rest) if f.name == anchor.name)
            rest.insert(idx + 1 if where == "after" else idx, field)
            return tuple(rest)

        before = tuple(self._top.fields)
        self._edit_children(self._parts_of(parent_path), edit)
        if tuple(self._top.fields) == before:
            return self  # already there
        self.changes.append(f"move {path} {where} {other or ''}".rstrip())
        return self


def _swap_inside(f: Field, swap: Callable[[tuple[Field, ...]], tuple[Field, ...]]) -> Field:
    t = f.type
    if isinstance(t, StructType):
        return f.with_(type=StructType(swap(t.fields)))
    if isinstance(t, ListType):
        return _with_type(f, ListType(swap((t.element,))[0], t.variant, t.size))
    if isinstance(t, MapType):
        key, value = swap((t.key, t.value))
        return _with_type(f, MapType(key, value, t.keys_sorted))
    return f


def _with_type(f: Field, new_type: FieldType) -> Field:
    """A list or map field with a new type, its defaults carried across (a list<date> default widens)."""
    changes: dict[str, Any] = {"type": new_type}
    for kind in ("initial_default", "write_default"):
        value = getattr(f, kind)
        if value is None or new_type == f.type:
            continue
        try:
            changes[kind] = pa.scalar(value, type_to_arrow(f.type)).cast(type_to_arrow(new_type)).as_py()
        except (pa.ArrowException, TypeError, ValueError):
            pass
    return f.with_(**changes)


def _same_field(a: Field, b: Field) -> bool:
    """Field equality that tells 0.0 from -0.0 in defaults (``==`` does not)."""
    return a == b and repr(a.initial_default) == repr(b.initial_default) and \
        repr(a.write_default) == repr(b.write_default)


def _require_child_defaults(t: FieldType, path: str) -> None:
    """A required struct defaulting to ``{}`` is built from its children: required ones need defaults."""
    if not isinstance(t, StructType):
        return
    for child in t.fields:
        if child.required and child.initial_default is None:
            raise RequiredFieldWithoutDefaultError(
                f"cannot add required struct {path!r} with default {{}}: its required child "
                f"{path + '.' + child.name!r} has no default, so old rows would hold a null there"
            )
        if child.initial_default == {}:
            _require_child_defaults(child.type, f"{path}.{child.name}")
