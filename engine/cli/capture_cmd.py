"""``fieldshift capture SOURCE_DIR TABLE``: land every new file of a directory in a table, exactly once,
with a live display of files, rows, schema changes and quarantined rows (on a terminal)."""

from __future__ import annotations

import sys
import threading
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fieldshift.cli.catalog_opt import chosen
from fieldshift.cli.console import (
    POLICY_HELP,
    UsageError,
    cli_errors,
    err_console,
    open_table,
    out_console,
    parse_policy,
    stdout_is_tty,
)
from fieldshift.cli.write_cmds import NullOption, TypeOption, parse_types
from fieldshift.errors import DuplicateKeyError

if TYPE_CHECKING:  # rich and the table layer are imported when the command runs (start-up time)
    from rich.table import Table as RichTable

    from fieldshift.table.streams.capture import CaptureProgress

__all__ = ["CaptureFormatOption", "CaptureOperationOption", "capture_command"]


class CaptureOperationOption(StrEnum):
    append = "append"
    upsert = "upsert"


class CaptureFormatOption(StrEnum):
    auto = "auto"
    json = "json"
    csv = "csv"
    parquet = "parquet"
    avro = "avro"


def _view(p: CaptureProgress, source: Path, watching: bool) -> RichTable:
    from rich.table import Table as RichTable
    from rich.text import Text

    grid = RichTable.grid(padding=(0, 2))
    grid.add_row(Text(f"capturing {source}" + (" (watching; Ctrl-C stops)" if watching else ""), style="bold"))
    grid.add_row(f"files {p.files:,}   rows {p.rows:,}   quarantined {p.quarantined:,}   commits {p.commits:,}"
                 f"   waiting {p.pending:,}")
    for change in p.schema_changes[-5:]:
        grid.add_row(Text(f"schema: {change}", style="cyan"))
    return grid


@cli_errors
def capture_command(
    source: Annotated[Path, typer.Argument(help="The landing directory to read new files from.")],
    location: Annotated[str, typer.Argument(help="Table directory (created from the first file if absent; "
                                            "leave out with --catalog and --table).")],
    fmt: Annotated[CaptureFormatOption, typer.Option(
        "--format", help="Source format (default: each file's suffix; JSON is one object per line).")
    ] = CaptureFormatOption.auto,
    watch: Annotated[bool, typer.Option(
        "--watch/--once", help="Keep watching the directory (until Ctrl-C or --idle-timeout), or take what is "
        "there now and stop (the default).")] = False,
    quarantine: Annotated[bool, typer.Option(
        "--quarantine", help="Set incompatible records aside (with the file name and reason) instead of "
        "failing.")] = False,
    policy: Annotated[str | None, typer.Option("--policy", help=POLICY_HELP)] = None,
    files_per_commit: Annotated[int, typer.Option("--files-per-commit", help="Files per commit.")] = 100,
    interval: Annotated[float, typer.Option("--interval", help="Seconds between listings with --watch.")] = 1.0,
    idle_timeout: Annotated[float | None, typer.Option(
        "--idle-timeout", help="With --watch: stop after this many seconds without new files.")] = None,
    operation: Annotated[CaptureOperationOption, typer.Option(
        "--operation", help="On a keyed table: append (insert-only) or upsert (the latest row per key wins).")
    ] = CaptureOperationOption.append,
    types: TypeOption = None,
    null_values: NullOption = None,
) -> None:
    """Capture a landing directory: each new file read with its own schema, the table evolving on write.

    CSV and JSON columns the table holds as string are read as text exactly as written ("007" stays
    "007"); other columns' types are guessed (CSV: integer, double, boolean, date, timestamp or string;
    JSON: its own types) unless pinned with --type COL=TYPE. --type and --null-values apply to CSV and
    JSON files only.
    """
    from fieldshift.table.streams.capture import CaptureProgress, capture

    if not source.is_dir():
        raise UsageError(f"no such directory: {source}")
    if files_per_commit < 1:
        raise UsageError("--files-per-commit must be at least 1")
    chosen_format = None if fmt is CaptureFormatOption.auto else fmt.value
    pinned = parse_types(types)
    # --catalog: the table must exist there (a capture creates tables only with their own catalog)
    target = open_table(location) if chosen().catalog else location
    stop = threading.Event()
    live_on = sys.stderr.isatty()
    console = err_console() if live_on else None
    state = CaptureProgress()
    latest = [state]  # the progress so far, kept when Ctrl-C ends a watch
    with _live(_view(state, source, watch), console) if live_on else _NoLive() as live:
        def report(p: CaptureProgress) -> None:
            latest[0] = p
            if live_on:
                live.update(_view(p, source, watch), refresh=True)
            elif watch:
                print(f"captured {p.files:,} files, {p.rows:,} rows, {p.quarantined:,} quarantined",
                      file=sys.stderr, flush=True)

        try:
            state = capture(source, target, format=chosen_format, watch=watch,  # type: ignore[arg-type]
                            on_incompatible="quarantine" if quarantine else "fail", policy=parse_policy(policy),
                            files_per_commit=files_per_commit, interval=interval, idle_timeout=idle_timeout,
                            stop=stop, on_progress=report, operation=operation.value,  # type: ignore[arg-type]
                            types=pinned, null_values=null_values)
        except DuplicateKeyError as e:  # the command line's way to keep the latest row per key
            e.args = (str(e).replace("Use table.upsert()", "Capture with --operation upsert"),)
            raise
        except KeyboardInterrupt:
            stop.set()
            state = latest[0]
    rows = [("files", state.files), ("rows written", state.rows), ("rows quarantined", state.quarantined),
            ("commits", state.commits)]
    rows += [("schema change", c) for c in state.schema_changes]
    into = location or str(getattr(target, "location", location))
    (_print_rich if stdout_is_tty() else _print_plain)(f"captured {source} into {into}", rows)
    if state.quarantined:
        advice = f"{state.quarantined} record(s) quarantined: see `fieldshift quarantine {into}`"
        if stdout_is_tty():
            from rich.text import Text

            out_console().print(Text(advice, style="yellow"))
        else:
            print(advice)


def _print_rich(title: str, rows: list[tuple[str, object]]) -> None:
    from rich.text import Text

    from fieldshift.cli.render import simple_table

    out = out_console()
    out.print(Text(title, style="bold"))
    out.print(simple_table(["", ""], rows, show_header=False))


def _print_plain(title: str, rows: list[tuple[str, object]]) -> None:
    """The summary as plain aligned lines: a pipe needs no rich (it is most of a short capture's start-up)."""
    width = max(len(label) for label, _ in rows)
    print(title)
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")

def _live(view: RichTable, console: Any) -> Any:
    """rich's live display (imported only on a terminal: piped runs start faster without it)."""
    from rich.live import Live

    return Live(view, console=console, transient=False, auto_refresh=False)


class _NoLive:
    """Stands in for rich's Live when stderr is not a terminal."""

    def __enter__(self) -> _NoLive:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, *args: object, **kwargs: object) -> None:
        return None
