"""``fieldshift explain``: for each schema version live files were written with, what reading them does.

This answers "why is this column null / cast / renamed for old rows?" without reading any data:
plans depend only on the two schemas, so one plan per written schema version covers every file.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Annotated

import typer

from fieldshift.cli.console import (
    AS_OF_HELP,
    EXIT_FAILED,
    POLICY_HELP,
    UsageError,
    as_of_snapshot,
    cli_errors,
    open_table,
    out_console,
    parse_policy,
)
from fieldshift.cli.open_cmds import SourceFormat, SourceOptions
from fieldshift.errors import SchemaEvolutionError

if TYPE_CHECKING:  # the planner, rich and pyarrow are imported when the command runs (start-up time)
    from fieldshift.schema.model import Schema
    from fieldshift.schema.policy import CastPolicy

__all__ = ["explain", "plan_rows"]


def plan_rows(file_schema: Schema, read_schema: Schema,
              policy: CastPolicy | None = None) -> tuple[str, list[tuple[str, str]]]:
    """(headline, [(column, what happens)]) for files of ``file_schema`` read as ``read_schema``."""
    from fieldshift.planner import cached_plan

    plan = cached_plan(file_schema, read_schema, policy)
    head, *lines = plan.explain().splitlines()
    rows = []
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        path, _, note = line.strip().partition(": ")
        rows.append((" " * (indent - 2) + path, note))
    read_ids = {f.id for f in read_schema.all_fields()}
    for f in file_schema.fields:
        if f.id not in read_ids:
            note = f"in the file (id {f.id}) but not in schema {read_schema.schema_id}: not read"
            rows.append((f.name, note))
    return head, rows


@cli_errors
def explain(
    location: Annotated[str, typer.Argument(help="Table directory.")],
    as_of: Annotated[str | None, typer.Option("--as-of", help=AS_OF_HELP)] = None,
    schema_id: Annotated[int | None, typer.Option(
        "--schema-id", help="Read as this schema version (default: the snapshot's).")] = None,
    policy: Annotated[str | None, typer.Option("--policy", help=POLICY_HELP)] = None,
    source_format: SourceFormat = None,
    columns: Annotated[str | None, typer.Option(
        "--columns", "-c", help="With --source-format: comma-separated top-level columns to plan.")] = None,
    where: Annotated[list[str] | None, typer.Option(
        "--where", "-w", help="With --source-format: a filter (read's grammar); shows the files it prunes.")] = None,
    source_options: SourceOptions = None,
) -> None:
    """Show, per schema version of the live data files, what the read plan does to each column.

    With --source-format (a table another format wrote): the snapshot and schema read, the files kept and
    pruned by --where, their deletes, and the plan of each file layout."""
    if source_format is not None:
        from fieldshift.cli.open_cmds import explain_open, refuse

        refuse(**{"--schema-id": schema_id, "--policy": policy})
        explain_open(location, source_format, columns, where, as_of, source_options)
        return
    if source_options:
        raise UsageError("--source-option is for --source-format tables")
    if columns is not None or where:
        raise UsageError("--columns and --where are for --source-format tables; a fieldshift table's plans cover "
                         "every column of each written schema")
    from rich.text import Text

    from fieldshift.cli.render import simple_table

    table = open_table(location)
    cast_policy = parse_policy(policy) or table.policy
    whose = "" if policy is not None else " (the table's policy)"
    snapshots = {s.snapshot_id: s for s in table.history()}
    as_of = as_of_snapshot(table, as_of)
    snap_id = max(snapshots) if as_of is None else as_of
    if snap_id not in snapshots:
        raise UsageError(f"no snapshot {snap_id}; snapshots are {sorted(snapshots)}")
    schemas = table.schemas_by_id()
    read_id = snapshots[snap_id].schema_id if schema_id is None else schema_id
    if read_id not in schemas:
        raise UsageError(f"no schema {read_id}; schema ids are {sorted(schemas)}")
    read_schema = schemas[read_id]
    files = table.scan(snapshot_id=snap_id, schema_id=read_id, policy=cast_policy).live_files()
    console = out_console()
    console.print(Text(f"snapshot {snap_id}: {len(files)} live data file(s), read as schema {read_id} "
                       f"with policy {cast_policy.option_name}{whose}", style="bold"))
    if not files:
        console.print("no live data files: nothing to plan")
        return
    count, rows = Counter(f.schema_id for f in files), Counter[int]()
    for f in files:
        rows[f.schema_id] += f.record_count
    failed = 0
    for sid in sorted(count):
        title = f"files written with schema {sid}: {count[sid]} file(s), {rows[sid]:,} row(s)"
        try:
            head, plan_lines = plan_rows(schemas[sid], read_schema, cast_policy)
        except SchemaEvolutionError as e:
            failed += 1
            console.print(Text(title, style="bold"))
            console.print(Text(f"cannot be read as schema {read_id}:\n{e}", style="red"))
            continue
        console.print(Text(f"{title}: {head}", style="bold"))
        console.print(simple_table(["column", "what the plan does"], plan_lines))
    if failed:
        raise typer.Exit(EXIT_FAILED)
