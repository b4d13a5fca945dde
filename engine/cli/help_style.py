"""Plain help for every command: ``LOCATION`` and ``TEXT`` instead of typer's ``{location}`` and ``<str>``.

Typer's rich help prints each parameter's Python type (``<bool>`` on flags, ``<list[str]>``) and
wraps required arguments in braces. ``PlainHelpGroup`` (the root group's class) walks the command
tree once it is built and gives every parameter without an explicit metavar the classic click one,
and gives every command the root's ``--quiet`` flag, so commands other modules add later get both
without doing anything. The same walk lets every command leave out LOCATION when the root's
``--catalog`` and ``--table`` name the table (``catalog_opt.allow_omitted_location``).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, get_args, get_origin

from typer.core import TyperArgument, TyperGroup

from fieldshift.cli.catalog_opt import allow_omitted_location
from fieldshift.cli.plain_values import plain_param, plain_values

__all__ = ["PlainHelpGroup", "plain_metavars", "share_option"]

_TYPE_WORDS = {bool: "", str: "TEXT", int: "INTEGER", float: "FLOAT", Path: "PATH"}


def _option_metavar(param: Any) -> str:
    """TEXT, INTEGER, [a|b]: from typer's type descriptor (typer >= 0.22) or the click type (older)."""
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""
    desc = getattr(param, "type_descriptor", None)
    if desc is None:
        choices = getattr(param.type, "choices", None)
        name = param.type.name
    else:
        choices = desc.choices
        annotation = desc.annotation
        if get_origin(annotation) is list:
            annotation = get_args(annotation)[0]
        name = _TYPE_WORDS.get(annotation, getattr(annotation, "__name__", str(annotation)))
    if choices:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in choices) + "]"
    return name.upper()


def _plain_argument(param: TyperArgument) -> None:
    if param.metavar is None:
        param.metavar = (param.name or "value").upper()
    piece = param.metavar if param.required else f"[{param.metavar}]"
    piece += "..." if param.nargs != 1 else ""
    param.get_usage_pieces = lambda ctx: [piece]  # type: ignore[method-assign]
    param.display_type_rich = lambda ctx: None  # the name says it: no <str> after LOCATION


def _plain_help_option(command: Any) -> None:
    original = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = original(ctx)
        if option is not None:
            option.metavar = ""
            plain_param(option)
        return option

    command.get_help_option = get_help_option


def _sub_commands(command: Any) -> list[Any]:
    return list(getattr(command, "commands", {}).values())


def plain_metavars(command: Any) -> None:
    """Give ``command`` and every sub-command classic metavars (recursively, in place)."""
    for param in command.params:
        if isinstance(param, TyperArgument):
            _plain_argument(param)
        elif param.param_type_name == "option" and param.metavar is None:
            param.metavar = _option_metavar(param)
    _plain_help_option(command)
    for sub in _sub_commands(command):
        plain_metavars(sub)


def share_option(command: Any, flag: str) -> None:
    """Give every sub-command of ``command`` its option ``flag`` too (same callback, value not passed on)."""
    option = next((p for p in command.params if flag in getattr(p, "opts", ())), None)
    if option is None:
        return
    shared = copy.copy(option)
    shared.expose_value = False

    def add(cmd: Any) -> None:
        for sub in _sub_commands(cmd):
            if not any(flag in getattr(p, "opts", ()) for p in sub.params):
                sub.params.append(shared)
            add(sub)

    add(command)


class PlainHelpGroup(TyperGroup):
    """The root group: plain metavars everywhere below it, ``--quiet`` on every command, LOCATION
    optional wherever ``--catalog`` and ``--table`` name the table, and values read without pydantic
    (``plain_values``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        share_option(self, "--quiet")
        plain_metavars(self)
        allow_omitted_location(self)
        plain_values(self)
