"""The typer application: one sub-command per job, meaningful exit codes, colour only on a terminal.

A command's module is imported when the command is registered. ``main()`` registers only the command its
command line names (every command for ``--help``, for no command and for an unknown one), so one command's
start-up does not import the other commands' modules; ``whole_app()`` (the package attribute
``fieldshift.cli.app``: tests, the docs) is the whole tree.
"""

from __future__ import annotations

import functools
import importlib
import sys
from pathlib import Path
from typing import Annotated

import typer

from fieldshift.cli.catalog_opt import CATALOG_HELP, TABLE_HELP, choose
from fieldshift.cli.console import set_quiet
from fieldshift.cli.help_style import PlainHelpGroup

__all__ = ["COMMANDS", "build_app", "main", "named_command", "whole_app"]

# command name -> (module of fieldshift.cli, its function); "schema" is that module's sub-application
COMMANDS: dict[str, tuple[str, str]] = {
    "schema": ("schema_cmds", "app"),
    "alter": ("alter_cmd", "alter"),
    "explain": ("explain_cmd", "explain"),
    "read": ("read_cmds", "read"),
    "append": ("write_cmds", "append"),
    "quarantine": ("read_cmds", "quarantine"),
    "create": ("write_cmds", "create"),
    "policy": ("policy_cmd", "policy"),
    "upsert": ("keyed_cmds", "upsert"),
    "delete": ("row_cmds", "delete"),
    "update": ("row_cmds", "update"),
    "merge": ("merge_cmd", "merge"),
    "compact": ("keyed_cmds", "compact"),
    "expire": ("keyed_cmds", "expire"),
    "capture": ("capture_cmd", "capture_command"),
    "vacuum": ("maint_cmds", "vacuum"),
    "publish": ("publish_cmd", "publish"),
    "warmup": ("maint_cmds", "warmup"),
}
_ROOT_VALUE_OPTIONS = ("--catalog", "--table")  # the root options that take a value


def _print_version(value: bool) -> None:
    if value:
        from fieldshift import __version__

        typer.echo(f"fieldshift {__version__}")
        raise typer.Exit()


def _set_quiet(value: bool) -> None:
    if value:
        set_quiet(True)


def _root(
    catalog: Annotated[str | None, typer.Option("--catalog", envvar="FIELDSHIFT_CATALOG", help=CATALOG_HELP)] = None,
    table: Annotated[str | None, typer.Option("--table", help=TABLE_HELP)] = None,
    version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True, help="Print the version and exit.")] = False,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", callback=_set_quiet, help="No progress bars (results and errors still print).")] = False,
) -> None:
    """fieldshift: schema history, DDL, explain and reads for fieldshift tables."""
    choose(catalog, table)


def demo(
    dir: Annotated[Path | None, typer.Option("--dir", help="Where to create the demo tables.")] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the demo tables afterwards.")] = False,
    spark: Annotated[bool, typer.Option("--spark/--no-spark", help="Also read through Spark.")] = True,
) -> None:
    """Replay every seed scenario end to end (standalone and on Spark) and check each result."""
    from fieldshift.cli.demo import run_demo

    raise typer.Exit(run_demo(dir, keep=keep, use_spark=spark))


def build_app(only: str | None = None) -> typer.Typer:
    """The command tree: every command, or the root options, ``demo`` and the one command ``only``."""
    tree = typer.Typer(
        name="fieldshift",
        help="Evolve lakehouse data written under old schemas into the current schema, by field id.\n\n"
             "Exit codes: 0 ok, 1 the table refused or a check failed, 2 usage or syntax error.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        cls=PlainHelpGroup,
    )
    tree.callback()(_root)
    tree.command()(demo)
    for name, (module_name, attr) in COMMANDS.items():
        if only is not None and name != only:
            continue
        module = importlib.import_module(f"fieldshift.cli.{module_name}")
        if name == "schema":
            tree.add_typer(module.app, name="schema")
        else:
            epilog = module.EXAMPLES if name == "alter" else None
            tree.command(name, epilog=epilog)(getattr(module, attr))
    return tree


def named_command(argv: list[str]) -> str | None:
    """The known command ``argv`` (the arguments after the program) names after the root options, if any."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in _ROOT_VALUE_OPTIONS:
            i += 2
        elif arg.startswith("-"):
            if arg in ("--help", "-h"):
                return None
            i += 1
        else:
            return arg if arg in COMMANDS or arg == "demo" else None
    return None


def main() -> None:
    build_app(named_command(sys.argv[1:]))()


@functools.cache
def whole_app() -> typer.Typer:
    """Every command, built once per process."""
    return build_app()
