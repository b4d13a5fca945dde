"""Consoles, exit codes and progress shared by every command.

Exit codes are a contract for scripts: 0 ok, 1 the table refused or a check failed, 2 the command
line itself is wrong (bad option, statement syntax, ``--where`` syntax, unknown column in an option).
Colour and progress appear only on a terminal, so piped output stays plain text.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, TypeVar

import typer

from fieldshift.errors import DDLSyntaxError, SchemaEvolutionError, TableError, TypeSyntaxError
from fieldshift.schema.policy_names import POLICY_NAMES

if TYPE_CHECKING:  # rich, pyarrow and the policies are imported where a command uses them (start-up time)
    from rich.console import Console

    from fieldshift.schema.policy import CastPolicy

__all__ = [
    "AS_OF_HELP",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "POLICY_HELP",
    "UsageError",
    "as_of_snapshot",
    "cli_errors",
    "cli_terms",
    "err_console",
    "fail",
    "open_table",
    "out_console",
    "parse_policy",
    "progress",
    "set_quiet",
    "stdout_is_tty",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
POLICY_HELP = ("Cast policy (default: the table's own): " + ", ".join(POLICY_NAMES) + ".")
F = TypeVar("F", bound=Callable[..., Any])


_QUIET = {"on": False}


def set_quiet(quiet: bool) -> None:
    """``--quiet``: no progress bars for the rest of this process."""
    _QUIET["on"] = quiet


class UsageError(ValueError):
    """The command line is wrong in a way typer cannot see (exit 2)."""


def stdout_is_tty() -> bool:
    return sys.stdout.isatty()


def _console(stream: TextIO) -> Console:
    from rich.console import Console

    tty = stream.isatty()
    width = int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").isdigit() else (None if tty else 200)
    return Console(file=stream, color_system="auto" if tty else None, highlight=False, width=width,
                   no_color=bool(os.environ.get("NO_COLOR")) or None)


def out_console() -> Console:
    """Where results go (stdout)."""
    return _console(sys.stdout)


def err_console() -> Console:
    """Where errors, warnings and progress go (stderr), so stdout stays parseable."""
    return _console(sys.stderr)


# Advice the library gives in Python terms, and what the same advice is on the command line.
_CLI_TERMS = (
    ("append with on_incompatible='quarantine'", "append with --quarantine"),
    ("on_incompatible='quarantine'", "--quarantine"),
    ("pass evolve=True", "append without --no-evolve"),
    ("table.update_schema().set_write_default(...)", "`fieldshift alter LOCATION \"ALTER COLUMN c SET DEFAULT ...\"`"),
    ("table.update_schema()", "`fieldshift alter`"),
    ("open it with Table.open() or pick another name", "pick another name"),
    ("open it with Table.open()", "see it with `fieldshift schema show`, or pick another location"),
    ("run Table.create() again", "run `fieldshift create` again"),
    ("create it with Table.create()", "make one with `fieldshift create LOCATION --schema ...`"),
)


def cli_terms(message: str) -> str:
    """``message`` with the library's Python advice (``on_incompatible='quarantine'``) in CLI terms."""
    for python, cli in _CLI_TERMS:
        message = message.replace(python, cli)
    return message


def fail(message: str, code: int = EXIT_FAILED, *, notes: list[str] | None = None) -> NoReturn:
    from rich.text import Text

    console = err_console()
    console.print(Text("error: ", style="bold red") + Text(cli_terms(message)))
    for note in notes or ():
        console.print(Text(cli_terms(note), style="dim"))
    raise typer.Exit(code)


def cli_errors(fn: F) -> F:
    """Turn fieldshift's refusals into one clear message and the right exit code (no tracebacks)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (DDLSyntaxError, TypeSyntaxError, UsageError, json.JSONDecodeError) as e:
            fail(str(e), EXIT_USAGE)
        except (SchemaEvolutionError, TableError) as e:
            fail(str(e), EXIT_FAILED, notes=list(getattr(e, "__notes__", [])))
        except BrokenPipeError:  # `fieldshift read ... | head`: the reader has all it wants
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(EXIT_OK) from None
        except OSError as e:
            fail(str(e), EXIT_FAILED)
        except Exception as e:
            arrow = sys.modules.get("pyarrow")  # an Arrow error needs pyarrow imported, so no need to import it
            if arrow is not None and isinstance(e, arrow.ArrowException):
                fail(str(e), EXIT_FAILED)
            # a Spark error (the demo) that carries a fieldshift error: say that one
            if not type(e).__module__.startswith(("pyspark", "py4j")):
                raise
            from fieldshift.spark.errors_bridge import from_spark_error

            cause = from_spark_error(e)
            fail(str(cause) if cause is not None else str(e).splitlines()[0], EXIT_FAILED)

    return wrapper  # type: ignore[return-value]


def parse_policy(name: str | None) -> CastPolicy | None:
    """A cast policy by name (``CastPolicy.from_name``); None (option not given) means the table's own."""
    if name is None:
        return None
    from fieldshift.schema.policy import CastPolicy

    try:
        return CastPolicy.from_name(name)
    except ValueError as e:
        raise UsageError(str(e)) from None


AS_OF_HELP = ("A snapshot id, or an ISO-8601 time (naive is UTC; e.g. 2024-05-01T12:00:00Z): the latest "
              "snapshot at or before it; or a Paimon tag's name. Default: the latest.")


def as_of_snapshot(table: Any, as_of: str | None) -> Any:
    """``--as-of`` for ``table``: None (the latest), a snapshot id, or the id of the latest snapshot at or
    before an ISO-8601 time (naive is UTC). Whole-number text is an id (a Hudi instant too); the name of
    a tag of a format that names snapshots (Paimon) is that tag's snapshot; anything else is a time.
    ``table`` is a fieldshift ``Table`` or an ``OpenTable`` (which takes ids as its format spells them)."""
    if as_of is None:
        return None
    text = as_of.strip()
    foreign = hasattr(table, "resolve")  # an OpenTable
    if text.isdigit():
        return table.resolve(snapshot_id=text) if foreign else int(text)
    tags = getattr(getattr(table, "source", None), "tags", None) if foreign else None
    if tags is not None and text in tags():
        return table.resolve(snapshot_id=text)
    return table.resolve(as_of=text) if foreign else table.snapshot_at(text).snapshot_id


def open_table(location: str) -> Any:
    """The table at ``location`` (or the one ``--catalog`` and ``--table`` name), or exit 1 saying how to
    make one."""
    from fieldshift.cli.catalog_opt import chosen
    from fieldshift.table import Table
    from fieldshift.table.create import CATALOG_FILE, TABLE_MARKER

    if chosen().catalog:  # --catalog: the table is found by --table, else by its location, in that catalog
        if not location and not chosen().table:
            raise UsageError("name the table: give its LOCATION, or --table NAME with --catalog")
        return Table.open(location or None, catalog=chosen().catalog, name=chosen().table)
    if not location:
        raise UsageError("missing the table's LOCATION (or name it with --catalog URI --table NAME)")
    from fieldshift.table.files.storage import is_object_store

    if is_object_store(location):  # its marker object names the catalog, or the error says to pass one
        return Table.open(location)
    if not any((Path(location) / marker).exists() for marker in (CATALOG_FILE, TABLE_MARKER)):
        from fieldshift.table.open_table import detect_format

        found = detect_format(location)
        if found is not None:  # another format's table: say which flag reads it
            name = " and --table SCHEMA.TABLE" if found == "ducklake" else ""
            raise UsageError(f"{location} is a {found} table, not a fieldshift one: pass --source-format "
                             f"{found}{name} to read it")
        fail(f"no fieldshift table at {location} (no {CATALOG_FILE}); make one with `fieldshift create "
             f"{location} --schema ...`")
    return Table.open(location)


@contextmanager
def progress(description: str, total: int | None = None, *, show: bool = True,
             unit: str = "rows") -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``: a transient bar on stderr when stdout is a terminal and ``--quiet`` is off.

    Every command whose work can take more than a second wraps it in this (reading, appending,
    vacuum); ``total`` None shows a spinner with a running count of ``unit``.
    """
    if not (show and stdout_is_tty()) or _QUIET["on"]:
        yield lambda n: None
        return
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                   TextColumn("{task.completed:,} " + unit), TimeElapsedColumn(),
                   console=err_console(), transient=True)
    with bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)
