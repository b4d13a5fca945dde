"""The CLI reference as Markdown, generated from the command tree itself (``make docs`` writes it).

Walking the built click commands (rather than copying ``--help`` output) keeps the reference
exact: commands other modules add appear on their own, with their arguments, options, defaults and
help text.
"""

from __future__ import annotations

import inspect
from typing import Any

import typer

__all__ = ["cli_reference", "command_paths"]


def command_paths(app: typer.Typer) -> list[tuple[str, ...]]:
    """Every command's path below the root (``("schema", "show")``), the root group included as ``()``."""
    found: list[tuple[str, ...]] = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        found.append(path)
        for name in _listed(command):
            walk(command.commands[name], (*path, name))

    walk(typer.main.get_command(app), ())
    return found


def _listed(command: Any) -> list[str]:
    commands = getattr(command, "commands", {})
    return [name for name in commands if not getattr(commands[name], "hidden", False)]


def _param_row(param: Any, ctx: Any) -> str:
    if param.param_type_name == "argument":
        name = f"`{param.metavar or param.name.upper()}`"
    else:
        flags = " / ".join(param.opts + param.secondary_opts)
        name = f"`{flags}`" + (f" {param.metavar}" if param.metavar else "")
    notes = []
    if param.required:
        notes.append("required")
    default = param.default
    if param.param_type_name == "option" and not param.required and default not in (None, False, (), []):
        shown = param.opts[0] if default is True and param.secondary_opts else getattr(default, "value", default)
        notes.append(f"default: {shown}")
    text = " ".join(inspect.cleandoc(getattr(param, "help", None) or "").split())
    extra = f" ({'; '.join(notes)})" if notes else ""
    def cell(x: str) -> str:
        return x.replace("|", "\\|")

    return f"| {cell(name)} | {cell(text + extra)} |"


def _section(command: Any, path: tuple[str, ...], ctx: Any) -> list[str]:
    title = " ".join(("fieldshift", *path))
    lines = [f"## `{title}`", ""]
    help_text = inspect.cleandoc(command.help or "")
    if help_text:
        lines += [help_text, ""]
    sub_ctx = command.make_context(title, [], parent=ctx, resilient_parsing=True)
    usage = " ".join(command.collect_usage_pieces(sub_ctx))
    lines += ["```", f"{title} {usage}".rstrip(), "```", ""]
    params = [p for p in command.get_params(sub_ctx) if not getattr(p, "hidden", False)]
    if params:
        lines += ["| parameter | meaning |", "|---|---|"] + [_param_row(p, sub_ctx) for p in params] + [""]
    if getattr(command, "epilog", None):
        lines += ["```", inspect.cleandoc(command.epilog), "```", ""]
    listed = _listed(command)
    if listed:
        lines += ["Commands: " + ", ".join(f"`{' '.join((*path, n))}`" for n in listed), ""]
    for name in listed:
        lines += _section(command.commands[name], (*path, name), sub_ctx)
    return lines


def cli_reference(app: typer.Typer) -> str:
    """Markdown for every command of ``app``: usage line, help, arguments and options with defaults."""
    root = typer.main.get_command(app)
    ctx = root.make_context("fieldshift", [], resilient_parsing=True)
    return "\n".join(["# Command line reference", "", *_section(root, (), ctx)[2:]])
