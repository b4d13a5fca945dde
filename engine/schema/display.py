"""Plain-text tree rendering of schemas (ids, types, nullability, defaults) for humans.

``Schema.__str__`` delegates here; it reads the schema through its interface (``SchemaLike``), so this
module never imports ``fieldshift.schema.model``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from fieldshift.schema.types import ListType, MapType, StructType, type_name

if TYPE_CHECKING:
    from fieldshift.schema.field import Field
    from fieldshift.schema.schema_like import SchemaLike

__all__ = ["field_label", "field_parts", "schema_tree"]


def field_parts(f: Field) -> list[tuple[str, str]]:
    """The pieces of a field's label as (role, text), so plain and styled renderings agree.

    Roles: name, type, required, id, default, doc.
    """
    t = f.type
    shown = {StructType: "struct", ListType: "list", MapType: "map"}.get(type(t)) or type_name(t)
    parts = [("name", f"{f.name}:"), ("type", shown)]
    if not f.nullable:
        parts.append(("required", "not null"))
    parts.append(("id", f"(id {f.id})"))
    if f.initial_default is not None:
        parts.append(("default", f"initial default {f.initial_default!r}"))
    if f.write_default is not None and f.write_default != f.initial_default:
        parts.append(("default", f"write default {f.write_default!r}"))
    if f.doc:
        parts.append(("doc", f"-- {f.doc}"))
    return parts


def field_label(f: Field) -> str:
    return " ".join(text for _, text in field_parts(f))


def _lines(fields: tuple[Field, ...], indent: str) -> Iterator[str]:
    for i, f in enumerate(fields):
        last = i == len(fields) - 1
        yield f"{indent}{'└── ' if last else '├── '}{field_label(f)}"
        yield from _lines(f.children(), indent + ("    " if last else "│   "))


def schema_tree(schema: SchemaLike) -> str:
    """The tree ``str(schema)`` shows: a head line, then one line per field at every depth."""
    head = f"schema {schema.schema_id} (highest field id {schema.highest_field_id})"
    return "\n".join([head, *_lines(schema.fields, "")])
