"""The root ``--catalog`` / ``--table`` options: which shared catalog (a SQLite file or a
``postgresql://`` URI) and which table name in it a command works on.

Given both, a command needs no LOCATION: ``fieldshift --catalog URI --table events read`` finds the
table by its name, and the catalog says where it lives (a LOCATION given anyway is accepted and
ignored). ``allow_omitted_location`` teaches every command that.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

import typer

# click's UsageError, whichever click typer uses (newer typers vendor their own copy)
_USAGE_ERROR: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")

__all__ = ["CATALOG_HELP", "OMITTED", "TABLE_HELP", "CatalogChoice", "allow_omitted_location", "choose", "chosen"]

CATALOG_HELP = ("Shared catalog of the table: a SQLite file or postgresql://user@host/db (also FIELDSHIFT_CATALOG). "
                "Default: the table's own catalog, or the one its directory's marker names.")
TABLE_HELP = ("The table's name in --catalog; with both, commands need no LOCATION. Default: the table at LOCATION "
              "(`create` names it after the last component of its location).")
OMITTED = ""
"""The LOCATION a command receives when ``--catalog`` and ``--table`` name the table instead."""


@dataclass(frozen=True)
class CatalogChoice:
    catalog: str | None = None
    table: str | None = None


_choice = CatalogChoice()


def choose(catalog: str | None, table: str | None) -> None:
    """Record the root options for this invocation (the callback runs before every command)."""
    global _choice
    _choice = CatalogChoice(catalog or None, table or None)


def chosen() -> CatalogChoice:
    return _choice


def _names_the_table(ctx: Any) -> bool:
    root = ctx.find_root().params
    return bool(root.get("catalog") and root.get("table"))


def _omitting_parse(command: Any, position: int, last: bool) -> Any:
    """``command.parse_args`` that, under ``--catalog`` and ``--table``, first reads the command line as
    one without LOCATION (OMITTED in its place), then, if that does not parse, as written."""
    original = command.parse_args

    def parse_args(self: Any, ctx: Any, args: list[str]) -> list[str]:
        if not _names_the_table(ctx):
            return original(ctx, args)
        omitted = [*args, OMITTED] if last else [OMITTED, *args] if position == 0 else None
        if omitted is None:
            return original(ctx, args)
        try:
            return original(ctx, omitted)
        except _USAGE_ERROR as first:
            ctx.params.clear()
            try:
                return original(ctx, list(args))
            except _USAGE_ERROR:
                raise first from None

    return types.MethodType(parse_args, command)


def allow_omitted_location(command: Any) -> None:
    """Let every command below ``command`` with a ``location`` argument run without it when the root's
    ``--catalog`` and ``--table`` name the table (in place, recursively)."""
    for sub in getattr(command, "commands", {}).values():
        allow_omitted_location(sub)
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    names = [p.name for p in arguments]
    if "location" in names:
        i = names.index("location")
        command.parse_args = _omitting_parse(command, i, i == len(names) - 1 and i > 0)  # type: ignore[method-assign]
