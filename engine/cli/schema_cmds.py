"""``fieldshift schema show | log | diff``: what the table's schema is, was, and what changed."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from fieldshift.cli.console import AS_OF_HELP, UsageError, as_of_snapshot, cli_errors, open_table, out_console
from fieldshift.cli.open_cmds import SourceFormat, SourceOptions

if TYPE_CHECKING:  # rich, pyarrow and the renderers are imported when a command runs (start-up time)
    from fieldshift.schema.model import Schema
    from fieldshift.table import Snapshot

__all__ = ["app"]

app = typer.Typer(help="Show a table's schema versions, their history, and how two versions differ.",
                  no_args_is_help=True)

Location = Annotated[str, typer.Argument(help="Table directory (holds fieldshift.db).")]


class SchemaFormat(StrEnum):
    tree = "tree"
    json = "json"


def _pick(schemas: dict[int, Schema], schema_id: int | None, default: int) -> Schema:
    sid = default if schema_id is None else schema_id
    if sid not in schemas:
        raise UsageError(f"no schema {sid}; schema ids are {sorted(schemas)}")
    return schemas[sid]


@app.command("show")
@cli_errors
def show(
    location: Location,
    schema_id: Annotated[int | None, typer.Option("--schema-id", help="A past schema version.")] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help=AS_OF_HELP)] = None,
    fmt: Annotated[SchemaFormat, typer.Option("--format", help="tree, or Iceberg JSON.")] = SchemaFormat.tree,
    source_format: SourceFormat = None,
    source_options: SourceOptions = None,
) -> None:
    """Print a schema version as a tree: ids, types, nullability, defaults and docs."""
    if source_format is not None:
        from fieldshift.cli.open_cmds import schema_show_open

        schema_show_open(location, source_format, schema_id, as_of, fmt is SchemaFormat.json, source_options)
        return
    if source_options:
        raise UsageError("--source-option is for --source-format tables")
    from fieldshift.cli.partition_view import spec_history
    from fieldshift.cli.render import schema_tree

    table = open_table(location)
    as_of = as_of_snapshot(table, as_of)
    snapshots = {s.snapshot_id: s for s in table.history()}
    if as_of is not None and as_of not in snapshots:
        raise UsageError(f"no snapshot {as_of}; snapshots are {sorted(snapshots)}")
    head = snapshots[as_of if as_of is not None else max(snapshots)].schema_id
    schema = _pick(table.schemas_by_id(), schema_id, head)
    console = out_console()
    if fmt is SchemaFormat.json:
        console.print_json(schema.to_json()) if console.is_terminal else print(schema.to_json(indent=2))
        return
    current = " (current)" if schema.schema_id == table.schema.schema_id else ""
    console.print(schema_tree(schema, f"schema {schema.schema_id}{current}"))
    console.print(spec_history(table, schema))


@app.command("log")
@cli_errors
def log(location: Location, source_format: SourceFormat = None, source_options: SourceOptions = None) -> None:
    """Print the schema versions (with the changes that made them) and every snapshot."""
    if source_format is not None:
        from fieldshift.cli.open_cmds import schema_log_open

        schema_log_open(location, source_format, source_options)
        return
    if source_options:
        raise UsageError("--source-option is for --source-format tables")
    from rich.text import Text

    from fieldshift.cli.render import simple_table

    table = open_table(location)
    snapshots = table.history()
    schemas = table.schemas_by_id()
    first_seen: dict[int, Snapshot] = {}
    for s in snapshots:
        first_seen.setdefault(s.schema_id, s)
    rows = []
    for sid, schema in schemas.items():
        snap = first_seen.get(sid)
        changes = snap.summary.get("changes") if snap else None
        changes = changes or (["created"] if sid == min(schemas) else [])
        rows.append((sid, snap.snapshot_id if snap else "-", len(schema.fields), schema.highest_field_id,
                     "\n".join(changes)))
    console = out_console()
    console.print(simple_table(["schema", "since snapshot", "columns", "highest id", "changes"], rows,
                               title=f"Schema versions of {table.location} (policy {table.policy.option_name})"))
    snap_rows = []
    previous = None
    for s in snapshots:
        marker = Text(str(s.schema_id))
        if s.schema_id != previous:
            marker.append(" (new)", style="green")
        previous = s.schema_id
        rows_written = s.summary.get("rows", "")
        quarantined = s.summary.get("quarantined") or ""
        snap_rows.append((s.snapshot_id, s.committed_at.replace("T", " ")[:19], s.operation, marker,
                          rows_written, quarantined))
    headers = ["snapshot", "committed at (UTC)", "operation", "schema", "rows", "quarantined"]
    console.print(simple_table(headers, snap_rows, title="Snapshots"))


@app.command("diff")
@cli_errors
def diff(
    location: Location,
    a: Annotated[int, typer.Argument(help="The older schema id.")],
    b: Annotated[int | None, typer.Argument(help="The newer schema id (default: current).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per change.")] = False,
) -> None:
    """Show what changed between two schema versions, field by field id."""
    from rich.text import Text

    from fieldshift.cli.diff import diff_schemas
    from fieldshift.cli.render import simple_table

    table = open_table(location)
    schemas = table.schemas_by_id()
    old = _pick(schemas, a, a)
    new = _pick(schemas, b, table.schema.schema_id)
    changes = diff_schemas(old, new)
    console = out_console()
    if as_json:
        for c in changes:
            print(json.dumps({"kind": c.kind, "field_id": c.field_id, "old_path": c.old_path,
                              "new_path": c.new_path, "detail": c.detail}))
        return
    if not changes:
        console.print(f"schemas {old.schema_id} and {new.schema_id} have the same fields")
        return
    rows = [(Text(c.kind, style=_KIND_STYLE.get(c.kind, "")), c.field_id, c.old_path or "-",
             c.new_path or "-", c.detail) for c in changes]
    console.print(simple_table(["change", "id", f"in schema {old.schema_id}", f"in schema {new.schema_id}",
                                "detail"], rows, title=f"Schema {old.schema_id} -> {new.schema_id}"))


_KIND_STYLE = {"added": "green", "dropped": "red", "renamed": "yellow", "retyped": "cyan", "moved": "magenta"}
