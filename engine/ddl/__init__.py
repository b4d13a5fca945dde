"""ALTER TABLE statements (Hudi's and DuckLake's forms) parsed into schema changes: ``fieldshift.ddl``."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fieldshift.ddl.alter import (
        AddColumn,
        Change,
        DDLSyntaxError,
        DropColumn,
        MoveColumn,
        RenameColumn,
        SetComment,
        SetDefault,
        SetNullable,
        SetType,
        SqlLiteral,
        apply_alter,
        coerce_literal,
        parse_alter,
        parse_columns,
        parse_predicate,
        pointer,
    )

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

_LAZY = {
    "AddColumn": "fieldshift.ddl.alter",
    "Change": "fieldshift.ddl.alter",
    "DDLSyntaxError": "fieldshift.ddl.alter",
    "DropColumn": "fieldshift.ddl.alter",
    "MoveColumn": "fieldshift.ddl.alter",
    "RenameColumn": "fieldshift.ddl.alter",
    "SetComment": "fieldshift.ddl.alter",
    "SetDefault": "fieldshift.ddl.alter",
    "SetNullable": "fieldshift.ddl.alter",
    "SetType": "fieldshift.ddl.alter",
    "SqlLiteral": "fieldshift.ddl.alter",
    "apply_alter": "fieldshift.ddl.alter",
    "coerce_literal": "fieldshift.ddl.alter",
    "parse_alter": "fieldshift.ddl.alter",
    "parse_columns": "fieldshift.ddl.alter",
    "parse_predicate": "fieldshift.ddl.alter",
    "pointer": "fieldshift.ddl.alter",
}


def __getattr__(name: str) -> Any:
    """A name of this face, imported on first use: importing one module of the package loads only what it needs."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
