"""``fieldshift read`` and ``fieldshift quarantine``: rows out, evolved into the schema asked for."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fieldshift.cli.console import (
    AS_OF_HELP,
    POLICY_HELP,
    UsageError,
    as_of_snapshot,
    cli_errors,
    open_table,
    out_console,
    parse_policy,
    progress,
)
from fieldshift.cli.open_cmds import SourceFormat, SourceOptions
from fieldshift.cli.output import TABLE_ROWS, OutputFormat, limit_batches, write_batches

if TYPE_CHECKING:  # pyarrow and the filter parser are imported when a command runs (start-up time)
    import pyarrow as pa

__all__ = ["parse_where", "quarantine", "read"]

Location = Annotated[str, typer.Argument(help="Table directory.")]
Format = Annotated[OutputFormat, typer.Option("--format", "-f", help="table, csv, json (one object per line) "
                                              "or parquet.")]
Output = Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")]
Limit = Annotated[int | None, typer.Option("--limit", "-n", min=0, help="At most this many rows.")]


def parse_where(where: Sequence[str] | None) -> Any:
    """The ``--where`` flags as one filter: each is filter text (the whole grammar), all must hold.

    Columns and literals are checked when the scan binds the filter to the schema read (a caret
    points at the column or literal that does not fit)."""
    from fieldshift.table.expressions.text import parse_filter_text
    from fieldshift.table.expressions.tree import and_

    return and_(*(parse_filter_text(w) for w in where or ()))


@cli_errors
def read(
    location: Location,
    columns: Annotated[str | None, typer.Option(
        "--columns", "-c", help="Comma-separated top-level columns.")] = None,
    where: Annotated[list[str] | None, typer.Option(
        "--where", "-w",
        help="A filter: \"v > 2 and (name is null or name = 'x')\" (=, !=, <, <=, >, >=, [NOT] IN (..), "
             "IS [NOT] NULL, IS [NOT] NAN, STARTS WITH, LIKE 'x%', AND, OR, NOT); repeat to AND.")
    ] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help=AS_OF_HELP)] = None,
    schema_id: Annotated[int | None, typer.Option(
        "--schema-id", help="Read into this schema version.")] = None,
    limit: Limit = None,
    fmt: Format = OutputFormat.table,
    output: Output = None,
    policy: Annotated[str | None, typer.Option("--policy", help=POLICY_HELP)] = None,
    source_format: SourceFormat = None,
    source_options: SourceOptions = None,
) -> None:
    """Read rows, evolving old files into the schema of the snapshot (or --schema-id)."""
    if source_format is not None:
        from fieldshift.cli.open_cmds import read_open, refuse

        refuse(**{"--schema-id": schema_id, "--policy": policy})
        read_open(location, source_format, columns, where, as_of, limit, fmt, output, source_options)
        return
    if source_options:
        raise UsageError("--source-option is for --source-format tables")
    table = open_table(location)
    as_of = as_of_snapshot(table, as_of)
    snapshots = {s.snapshot_id: s for s in table.history()}
    if as_of is not None and as_of not in snapshots:
        if 0 <= as_of < min(snapshots):
            table.scan(snapshot_id=as_of)  # an expired snapshot: SnapshotExpiredError says so (exit 1)
        raise UsageError(f"no snapshot {as_of}; snapshots are {sorted(snapshots)}")
    schemas = table.schemas_by_id()
    snap_id = as_of if as_of is not None else max(snapshots)
    sid = schema_id if schema_id is not None else snapshots[snap_id].schema_id
    if sid not in schemas:
        raise UsageError(f"no schema {sid}; schema ids are {sorted(schemas)}")
    schema = schemas[sid]
    cols = [c.strip() for c in columns.split(",") if c.strip()] if columns else None
    for c in cols or ():
        if c not in schema.names:
            raise UsageError(f"--columns: no top-level column {c!r} in schema {sid}; "
                             f"columns are {schema.names}")
    scan = table.scan(columns=cols, filter=parse_where(where), snapshot_id=as_of, schema_id=schema_id,
                      policy=parse_policy(policy))
    scan.check()  # refuse before the first line of output
    title = f"{Path(str(table.location)).name} @ snapshot {scan.snapshot_id}, schema {sid}"
    if fmt is not OutputFormat.table and output is None:  # streaming to stdout: no bar in the way
        write_batches(scan.to_batches(), scan.output_schema, fmt, None, limit=limit, title=title)
        return
    total = sum(f.record_count for f in scan.files())
    with progress("reading", total) as advance:
        def counted() -> Iterator[pa.RecordBatch]:
            for batch in scan.to_batches():
                advance(batch.num_rows)
                yield batch

        if fmt is not OutputFormat.table:
            rows = write_batches(counted(), scan.output_schema, fmt, output, limit=limit, title=title)
            _confirm(rows, output, fmt)
            return
        # a terminal table is printed after the bar is gone, so the two never overwrite each other
        batches = list(limit_batches(counted(), (TABLE_ROWS if limit is None else limit) + 1))
    rows = write_batches(batches, scan.output_schema, fmt, output, limit=limit, title=title)
    _confirm(rows, output, fmt)


def _confirm(rows: int, output: Path | None, fmt: OutputFormat) -> None:
    """With --output, say what was written where (stdout is free: the rows went to the file)."""
    if output is not None:
        out_console().print(f"wrote {rows:,} row(s) to {output} ({fmt.value})")


@cli_errors
def quarantine(
    location: Location,
    limit: Limit = None,
    fmt: Format = OutputFormat.table,
    output: Output = None,
    source_schema: Annotated[bool, typer.Option(
        "--source-schema", help="Also show the schema each quarantined batch arrived with.")] = False,
) -> None:
    """Show rows that appends set aside, with the reason for each, whatever types they arrived with.

    A terminal table shows one table per source schema, in the source types; json prints one object
    per row (the row's own columns plus the reason, time and snapshot); csv and parquet have one
    uniform table with each row's values as JSON text in ``_fieldshift_row``.
    """
    import pyarrow as pa

    from fieldshift.planner import REASON_COLUMN
    from fieldshift.table.evolution.on_write import QUARANTINED_AT_COLUMN, SOURCE_SCHEMA_COLUMN
    from fieldshift.table.write.quarantine import ROW_COLUMN, SNAPSHOT_COLUMN

    table = open_table(location)
    front = [REASON_COLUMN, QUARANTINED_AT_COLUMN, SNAPSHOT_COLUMN]
    meta = {*front, SOURCE_SCHEMA_COLUMN, ROW_COLUMN}
    title = f"quarantined rows of {Path(str(table.location)).name}"
    if fmt is OutputFormat.table:
        groups = table.quarantine(grouped=True)
        left, written = limit, 0
        for i, rows in enumerate(groups or [pa.table({REASON_COLUMN: pa.array([], pa.string())})]):
            keep = [c for c in front if c in rows.column_names]
            keep += [c for c in rows.column_names if c not in meta]
            if source_schema and SOURCE_SCHEMA_COLUMN in rows.column_names:
                keep.append(SOURCE_SCHEMA_COLUMN)
            group_title = title if len(groups) < 2 else f"{title}, source schema {i + 1} of {len(groups)}"
            shown = write_batches(rows.select(keep).to_batches(), rows.select(keep).schema, fmt, output,
                                  limit=left, title=group_title, append=i > 0)
            written += shown
            if left is not None:
                left -= shown
                if left <= 0:
                    break
        _confirm(written, output, fmt)
        return
    rows = table.quarantine()
    if not source_schema:
        rows = rows.drop_columns([SOURCE_SCHEMA_COLUMN])
    if fmt is OutputFormat.json:
        _confirm(_quarantine_json(rows, limit, output), output, fmt)
        return
    _confirm(write_batches(rows.to_batches(), rows.schema, fmt, output, limit=limit, title=title), output, fmt)


def _quarantine_json(rows: pa.Table, limit: int | None, output: Path | None) -> int:
    """One JSON object per quarantined row: its own columns, then reason, time and snapshot."""
    import json

    from fieldshift.cli.render import json_text
    from fieldshift.table.write.quarantine import ROW_COLUMN

    rows = rows.slice(0, limit) if limit is not None else rows
    lines = []
    for r in rows.to_pylist():
        values = json.loads(r.pop(ROW_COLUMN))
        lines.append(json_text({**values, **r}))
    text = "".join(line + "\n" for line in lines)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        output.write_text(text, encoding="utf-8")
    return len(lines)
