"""The typer application: one sub-command per job, meaningful exit codes, colour only on a terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fieldshift.cli import (
    alter_cmd,
    capture_cmd,
    explain_cmd,
    keyed_cmds,
    maint_cmds,
    merge_cmd,
    policy_cmd,
    publish_cmd,
    read_cmds,
    row_cmds,
    schema_cmds,
    write_cmds,
)
from fieldshift.cli.catalog_opt import CATALOG_HELP, TABLE_HELP, choose
from fieldshift.cli.console import set_quiet
from fieldshift.cli.help_style import PlainHelpGroup

__all__ = ["app", "main"]

app = typer.Typer(
    name="fieldshift",
    help="Evolve lakehouse data written under old schemas into the current schema, by field id.\n\n"
         "Exit codes: 0 ok, 1 the table refused or a check failed, 2 usage or syntax error.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=PlainHelpGroup,
)


def _print_version(value: bool) -> None:
    if value:
        from fieldshift import __version__

        typer.echo(f"fieldshift {__version__}")
        raise typer.Exit()


def _set_quiet(value: bool) -> None:
    if value:
        set_quiet(True)


@app.callback()
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


@app.command()
def demo(
    dir: Annotated[Path | None, typer.Option("--dir", help="Where to create the demo tables.")] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the demo tables afterwards.")] = False,
    spark: Annotated[bool, typer.Option("--spark/--no-spark", help="Also read through Spark.")] = True,
) -> None:
    """Replay every seed scenario end to end (standalone and on Spark) and check each result."""
    from fieldshift.cli.demo import run_demo

    raise typer.Exit(run_demo(dir, keep=keep, use_spark=spark))


app.add_typer(schema_cmds.app, name="schema")
app.command("alter", epilog=alter_cmd.EXAMPLES)(alter_cmd.alter)
app.command("explain")(explain_cmd.explain)
app.command("read")(read_cmds.read)
app.command("append")(write_cmds.append)
app.command("quarantine")(read_cmds.quarantine)
app.command("create")(write_cmds.create)
app.command("policy")(policy_cmd.policy)
app.command("upsert")(keyed_cmds.upsert)
app.command("delete")(row_cmds.delete)
app.command("update")(row_cmds.update)
app.command("merge")(merge_cmd.merge)
app.command("compact")(keyed_cmds.compact)
app.command("expire")(keyed_cmds.expire)
app.command("capture")(capture_cmd.capture_command)
app.command("vacuum")(maint_cmds.vacuum)
app.command("publish")(publish_cmd.publish)
app.command("warmup")(maint_cmds.warmup)


def main() -> None:
    app()
