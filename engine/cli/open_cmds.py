"""The CLI's reads of tables other formats wrote: ``read``, ``schema show``, ``schema log`` and ``explain``
with ``--source-format ducklake|iceberg|delta|paimon|hudi`` go through ``fs.open_table`` (the root
``--table`` names the table inside the source: DuckLake ``schema.table``, Paimon ``db.table``, an
Iceberg catalog's ``ns.table``). ``--source-option KEY=VALUE`` (repeatable) passes ``fs.open_table``'s
options (``table/open_options.py``): ``data_path=``, ``properties.KEY=``, ``storage_options.KEY=``, and
``catalog.KEY=`` — an Iceberg table in a PyIceberg catalog, whose name is then LOCATION (or ``--table``).

Each command's fieldshift-table path stays in its own module; this one holds only what differs for a
read-only view (no policy, no schema id of another snapshot's files, no partition-spec history).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fieldshift.cli.console import EXIT_FAILED, UsageError, as_of_snapshot, fail, out_console

if TYPE_CHECKING:  # the table layer, pyarrow and rich are imported when a command runs (start-up time)
    from fieldshift.cli.output import OutputFormat
    from fieldshift.schema.model import Schema
    from fieldshift.table.open_table import OpenTable

__all__ = ["SourceFormat", "SourceOptions", "explain_open", "open_source", "read_open", "refuse", "schema_log_open",
           "schema_show_open"]

FORMATS = ("ducklake", "iceberg", "hudi", "delta", "paimon")  # table.open_table.FORMATS (checked by a test)
SourceFormat = Annotated[str | None, typer.Option(
    "--source-format", help=f"Read a table another format wrote: {', '.join(FORMATS)} (the root --table names it "
                            "in the source, e.g. main.t). Default: a fieldshift table.")]
SourceOptions = Annotated[list[str] | None, typer.Option(
    "--source-option", help="With --source-format, repeatable KEY=VALUE: data_path=PATH (DuckLake), "
                            "properties.KEY=VALUE (Iceberg FileIO, e.g. properties.s3.endpoint=URL), "
                            "storage_options.KEY=VALUE (Hudi), catalog.KEY=VALUE (an Iceberg catalog: "
                            "catalog.type=sql catalog.uri=sqlite:///c.db; LOCATION is then the table's "
                            "ns.name).")]


def open_source(location: str, source_format: str, source_options: Sequence[str] | None = None) -> OpenTable:
    """The ``--source-format`` table at ``location`` named by the root ``--table``, opened with the
    ``--source-option`` pairs; with ``catalog.*`` options LOCATION is the table's name in that catalog
    (exit 1 when a package the format needs is missing)."""
    from fieldshift.cli.catalog_opt import chosen
    from fieldshift.errors import InvalidOptionError, MissingDependencyError
    from fieldshift.table.open_options import open_options, parse_pairs
    from fieldshift.table.open_table import open_table

    key = source_format.strip().lower()
    if key not in FORMATS:
        raise UsageError(f"--source-format {source_format!r}: use one of {', '.join(FORMATS)}")
    if chosen().catalog:
        raise UsageError("--catalog names a fieldshift catalog; with --source-format, LOCATION is the source "
                         "(a DuckLake catalog file, an Iceberg metadata.json or table directory, ...); an Iceberg "
                         "catalog is --source-option catalog.KEY=VALUE")
    try:
        options = open_options(parse_pairs(source_options or ()), "--source-option")
    except InvalidOptionError as e:
        raise UsageError(str(e)) from None
    name, source = chosen().table, location
    if "catalog" in options:  # a PyIceberg catalog: LOCATION names the table in it
        if name and location and name != location:
            raise UsageError(f"with --source-option catalog.*, LOCATION is the table's name: it says {location!r} "
                             f"and --table says {name!r}; give one")
        name, source = name or location, None
        if not name:
            raise UsageError("with --source-option catalog.*, give the table's name (ns.table) as LOCATION")
    elif not location:
        raise UsageError(f"missing the {key} table's LOCATION")
    try:
        return open_table(source, format=key, name=name, **options)
    except MissingDependencyError as e:
        fail(str(e), EXIT_FAILED)


def _columns(table_schema: Schema, columns: str | None) -> list[str] | None:
    cols = [c.strip() for c in columns.split(",") if c.strip()] if columns else None
    for c in cols or ():
        if c not in table_schema.names:
            raise UsageError(f"--columns: no top-level column {c!r} in schema {table_schema.schema_id}; "
                             f"columns are {table_schema.names}")
    return cols


def _where(where: Sequence[str] | None) -> Any:
    from fieldshift.table.expressions.text import parse_filter_text
    from fieldshift.table.expressions.tree import and_

    return and_(*(parse_filter_text(w) for w in where or ())) if where else None


def refuse(**given: Any) -> None:
    """Exit 2 when a flag only fieldshift tables take is given with --source-format."""
    for flag, value in given.items():
        if value is not None:
            raise UsageError(f"{flag} applies to fieldshift tables; a --source-format table is read in its "
                             "snapshot's schema with its format's casts")


def read_open(location: str, source_format: str, columns: str | None, where: Sequence[str] | None,
              as_of: str | None, limit: int | None, fmt: OutputFormat, output: Path | None,
              source_options: Sequence[str] | None = None) -> None:
    """``fieldshift read SOURCE --source-format F``."""
    from fieldshift.cli.output import TABLE_ROWS, OutputFormat, limit_batches, write_batches

    with open_source(location, source_format, source_options) as table:
        snap = as_of_snapshot(table, as_of)
        scan = table.scan(columns=None, snapshot_id=snap)  # the snapshot's schema, for --columns' message
        cols = _columns(scan.full_schema, columns)
        scan = table.scan(columns=cols, filter=_where(where), snapshot_id=snap)
        title = f"{source_format} table {table.name} @ snapshot {scan.snapshot_id}"
        batches = scan.to_batches()
        if fmt is OutputFormat.table:
            batches = iter(list(limit_batches(batches, (TABLE_ROWS if limit is None else limit) + 1)))
        rows = write_batches(batches, scan.output_schema, fmt, output, limit=limit, title=title)
        if output is not None:
            out_console().print(f"wrote {rows:,} row(s) to {output} ({fmt.value})")


def schema_show_open(location: str, source_format: str, schema_id: int | None, as_of: str | None,
                     as_json: bool, source_options: Sequence[str] | None = None) -> None:
    """``fieldshift schema show SOURCE --source-format F``."""
    from fieldshift.cli.render import schema_tree

    with open_source(location, source_format, source_options) as table:
        schemas = table.schemas()
        if schema_id is None:
            snap = as_of_snapshot(table, as_of)
            schema_id = table.schema.schema_id if snap is None else \
                table.scan(snapshot_id=snap, columns=[]).full_schema.schema_id
        if schema_id not in schemas:
            raise UsageError(f"no schema {schema_id}; schema ids are {sorted(schemas)}")
        schema = schemas[schema_id]
        console = out_console()
        if as_json:
            console.print_json(schema.to_json()) if console.is_terminal else print(schema.to_json(indent=2))
            return
        current = " (current)" if schema.schema_id == table.schema.schema_id else ""
        console.print(schema_tree(schema, f"{source_format} table {table.name}: schema {schema.schema_id}{current}"))


def schema_log_open(location: str, source_format: str, source_options: Sequence[str] | None = None) -> None:
    """``fieldshift schema log SOURCE --source-format F``: schema versions and the snapshots that changed the table."""
    from rich.text import Text

    from fieldshift.cli.render import simple_table

    with open_source(location, source_format, source_options) as table:
        snapshots = table.history()
        schemas = table.schemas()
        first_seen: dict[int, Any] = {}
        for s in snapshots:
            first_seen.setdefault(s.schema_id, s)
        rows = [(sid, first_seen[sid].snapshot_id if sid in first_seen else "-", len(schema.fields),
                 schema.highest_field_id) for sid, schema in sorted(schemas.items())]
        console = out_console()
        console.print(simple_table(["schema", "since snapshot", "columns", "highest id"], rows,
                                   title=f"Schema versions of {source_format} table {table.name}"))
        snap_rows, previous = [], None
        for s in snapshots:
            marker = Text(str(s.schema_id))
            if s.schema_id != previous:
                marker.append(" (new)", style="green")
            previous = s.schema_id
            snap_rows.append((s.snapshot_id, s.timestamp.isoformat().replace("T", " ")[:19], s.operation or "",
                              marker))
        console.print(simple_table(["snapshot", "committed at (UTC)", "operation", "schema"], snap_rows,
                                   title="Snapshots"))


def explain_open(location: str, source_format: str, columns: str | None, where: Sequence[str] | None,
                 as_of: str | None, source_options: Sequence[str] | None = None) -> None:
    """``fieldshift explain SOURCE --source-format F``: ``OpenTable.explain()`` printed."""
    from dataclasses import replace

    from rich.text import Text

    with open_source(location, source_format, source_options) as table:
        snap = as_of_snapshot(table, as_of)
        cols = _columns(table.scan(snapshot_id=snap, columns=[]).full_schema, columns)
        filter_ = _where(where)
        explanation = table.explain(columns=cols, filter=filter_, snapshot_id=snap)
        if where:
            explanation = replace(explanation, filter=" and ".join(f"({w})" for w in where))
        out_console().print(Text(str(explanation)))

