"""``fieldshift upsert``, ``compact`` and ``expire``: keyed writes and table maintenance (deletes: ``row_cmds``)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer

from fieldshift.cli.console import cli_errors, open_table, out_console
from fieldshift.cli.write_cmds import FormatOption, InputFormat, NullOption, TypeOption, write_file

__all__ = ["compact", "expire", "upsert"]


@cli_errors
def upsert(
    location: Annotated[str, typer.Argument(help="Table directory (a keyed table).")],
    file: Annotated[Path, typer.Argument(help="A .parquet, .csv or .json/.jsonl (an object per line) file.")],
    quarantine: Annotated[bool, typer.Option(
        "--quarantine", help="Set incompatible rows aside with a reason instead of failing.")] = False,
    evolve: Annotated[bool, typer.Option(
        "--evolve/--no-evolve", help="Let new columns and wider types change the table schema.")] = True,
    fmt: FormatOption = InputFormat.auto,
    types: TypeOption = None,
    null_values: NullOption = None,
    partial: Annotated[bool, typer.Option(
        "--partial", help="A partial-column upsert: columns the file lacks keep the current rows' values.")] = False,
) -> None:
    """Insert or replace rows by primary key (the highest precombine value wins), evolving on write.

    CSV and JSON files are read as by `fieldshift append` (string columns as text, --type pins).
    """
    write_file(location, file, quarantine=quarantine, evolve=evolve, fmt=fmt, upsert=True, types=types,
               null_values=null_values, partial=partial)


@cli_errors
def compact(location: Annotated[str, typer.Argument(help="Table directory.")]) -> None:
    """Rewrite small files, files of older schemas and merged buckets into the current schema."""
    table = open_table(location)
    result = table.compact()
    if result.snapshot_id is None:
        out_console().print("nothing to compact: every bucket is one file in the current schema")
        return
    out_console().print(f"compacted {result.files_removed} file(s) into {result.files_written} "
                        f"({result.rows_written} rows) in snapshot {result.snapshot_id}")


@cli_errors
def expire(
    location: Annotated[str, typer.Argument(help="Table directory.")],
    older_than: Annotated[float, typer.Option(
        "--older-than", min=0, help="Expire snapshots committed more than this many hours ago.")] = 120.0,
    retain_last: Annotated[int, typer.Option("--retain-last", min=1, help="Always keep this many newest.")] = 1,
    vacuum: Annotated[bool, typer.Option(
        "--vacuum/--no-vacuum", help="Then delete the files only expired snapshots used.")] = True,
) -> None:
    """Forget old snapshots (time travel to them ends) and, with --vacuum, delete the files only they used."""
    table = open_table(location)
    result = table.expire_snapshots(older_than=dt.timedelta(hours=older_than), retain_last=retain_last)
    console = out_console()
    if not result.expired_snapshots:
        console.print("no snapshot is old enough: nothing expired")
        return
    console.print(f"expired {len(result.expired_snapshots)} snapshot(s) "
                  f"({result.expired_snapshots[0]}..{result.expired_snapshots[-1]})")
    if vacuum:
        from fieldshift.table.maintenance import remove_expired_files

        removed = remove_expired_files(table.io, result)
        console.print(f"deleted {len(removed)} file(s) no snapshot references")
