"""ALTER TABLE statements (Hudi's and DuckLake's forms) parsed into schema changes.

Users paste DDL from the docs they know, so both dialects are accepted, with or without the
``ALTER TABLE name`` prefix, several actions separated by commas or ``;``. Parsing is separate from
applying: :func:`parse_alter` gives plain :class:`Change` objects (each renders back to canonical
SQL), :func:`apply_alter` replays them on a :class:`~fieldshift.SchemaUpdate`. Syntax errors point
a caret at the offending word and say what was expected, because "syntax error near X" wastes a
user's minute. ``parse_predicate`` reads one condition of filter text (``table/expressions/text.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from fieldshift.ddl.changes import (
    AddColumn,
    Change,
    DropColumn,
    MoveColumn,
    RenameColumn,
    SetComment,
    SetDefault,
    SetNullable,
    SetType,
    SqlLiteral,
    coerce_literal,
)
from fieldshift.ddl.parser import DDLParser
from fieldshift.ddl.tokens import DDLSyntaxError, apply_changes, pointer
from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema, join_path, split_path
from fieldshift.schema.schema_update import SchemaUpdate
from fieldshift.schema.types import FieldType, ListType, MapType, StructType

__all__ = [
    "AddColumn",
    "Change",
    "DDLSyntaxError",
    "DropColumn",
    "MoveColumn",
    "RenameColumn",
    "SetComment",
    "SetDefault",
    "SetNullable",
    "SetType",
    "SqlLiteral",
    "apply_alter",
    "coerce_literal",
    "parse_alter",
    "parse_columns",
    "parse_predicate",
    "pointer",
]


# -- public API ----------------------------------------------------------------------------------
def parse_alter(statement: str) -> list[Change]:
    """Parse one or more ALTER TABLE statements (Hudi or DuckLake spelling) into changes."""
    return DDLParser(statement).script()


def apply_alter(update: SchemaUpdate, statement: str | Sequence[Change]) -> SchemaUpdate:
    """Apply a statement's changes to ``update`` in order; a refusal gets a note pointing at the change."""
    return apply_changes(update, statement, parse_alter(statement) if isinstance(statement, str) else statement)


def parse_columns(text: str) -> Schema:
    """A new table's schema from column specs: ``id bigint NOT NULL, name varchar COMMENT 'who'``.

    Ids are assigned as Iceberg does for a new table: top-level columns first, then nested fields.
    """
    p = DDLParser(text)
    specs = [p.column_spec()]
    while p.accept(","):
        specs.append(p.column_spec())
    if not p.ended():
        raise p.error("',' or the end of the column list")
    for spec in specs:
        if len(split_path(spec.path)) > 1 or spec.first or spec.after or spec.before:
            raise DDLSyntaxError(text, spec.span[0], "a top-level column name and type (no dotted paths or "
                                 "positions in a new schema)", spec.path, spec.span[1])
    counter = iter(range(len(specs) + 1, 1 << 31))
    fields = [Field(i, split_path(s.path)[0], _renumber(s.type, counter), nullable=s.nullable, doc=s.doc,
                    initial_default=s.default, write_default=s.default)
              for i, s in enumerate(specs, start=1)]
    return Schema(fields, schema_id=0)


def _renumber(t: FieldType, counter: Iterator[int]) -> FieldType:
    """Fresh ids for a parsed type's nested fields, each level's fields before their children."""
    if isinstance(t, StructType):
        fields = [f.with_(id=next(counter)) for f in t.fields]
        return StructType(tuple(f.with_(type=_renumber(f.type, counter)) for f in fields))
    if isinstance(t, ListType):
        element = t.element.with_(id=next(counter))
        return ListType(element.with_(type=_renumber(element.type, counter)), t.variant, t.size)
    if isinstance(t, MapType):
        key, value = t.key.with_(id=next(counter)), t.value.with_(id=next(counter))
        return MapType(key.with_(type=_renumber(key.type, counter)),
                       value.with_(type=_renumber(value.type, counter)), t.keys_sorted)
    return t


def parse_predicate(text: str) -> tuple[str, str, Any]:
    """One condition of filter text as ``(path, op, SqlLiteral | list[SqlLiteral] | None)``.

    The grammar is the filter text's (``fieldshift.table.expressions.text``); this takes one condition only.
    """
    from fieldshift.table.expressions.text import parse_filter_text
    from fieldshift.table.expressions.tree import Predicate

    expr = parse_filter_text(text)
    if not isinstance(expr, Predicate):
        raise DDLSyntaxError(text, 0, "one condition (a filter of several: fieldshift.table.expressions.text)", text,
                             len(text))
    value = list(expr.value) if isinstance(expr.value, tuple) else expr.value
    return join_path(expr.path), expr.op, value
