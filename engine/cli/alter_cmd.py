"""``fieldshift alter LOCATION "STATEMENT"``: Hudi or DuckLake ALTER TABLE, committed as a new schema."""

from __future__ import annotations

from typing import Annotated

import typer

from fieldshift.cli.console import cli_errors, open_table, out_console, parse_policy
from fieldshift.schema.policy_names import POLICY_NAMES

__all__ = ["alter"]

EXAMPLES = """
Examples (ALTER TABLE name is optional; separate statements with ';'):

  fieldshift alter t "ADD COLUMNS(x string COMMENT 'c' AFTER id)"
  fieldshift alter t "ADD COLUMN c VARCHAR DEFAULT 'x'"
  fieldshift alter t "ALTER col1 SET TYPE BIGINT; RENAME a TO b"
  fieldshift alter t "ALTER COLUMN a.b.c DROP NOT NULL"
  fieldshift alter t "DROP COLUMNS x, y"
  fieldshift alter t "ADD PARTITION FIELD hours(ts)"
  fieldshift alter t "REPLACE PARTITION FIELD days(ts) WITH hours(ts)"
  fieldshift alter t "DROP PARTITION FIELD ts_hour"
"""


@cli_errors
def alter(
    location: Annotated[str, typer.Argument(help="Table directory.")],
    statement: Annotated[str, typer.Argument(help="One or more ALTER TABLE statements.")],
    policy: Annotated[str | None, typer.Option(
        "--policy", help="Which type changes the statements may make (default: the table's policy): "
        + ", ".join(POLICY_NAMES) + ". The commit still needs every data file readable under the table's policy.")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the result without committing.")] = False,
    show_schema: Annotated[bool, typer.Option("--show-schema", help="Also print the new schema.")] = False,
) -> None:
    """Change the schema with ALTER TABLE statements (Hudi's and DuckLake's forms), or the partition spec with
    Iceberg's ADD / DROP / REPLACE PARTITION FIELD; files stay as they are."""
    from rich.text import Text

    from fieldshift.cli.diff import diff_schemas
    from fieldshift.cli.render import schema_tree, simple_table
    from fieldshift.ddl.alter import apply_alter, parse_alter
    from fieldshift.table.partitions.ddl_partitions import is_partition_statement

    if is_partition_statement(statement):
        _alter_partitions(location, statement, dry_run)
        return
    changes = parse_alter(statement)  # a syntax error needs no table
    cast_policy = parse_policy(policy)
    table = open_table(location)
    old = table.schema
    update = table.update_schema(policy=cast_policy)
    apply_alter(update, statement)
    new = update.apply() if dry_run else update.commit()
    console = out_console()
    if not dry_run and new.schema_id == old.schema_id:
        console.print(Text(f"nothing to change: schema {old.schema_id} already is what the statements ask for; "
                           "nothing was committed", style="bold"))
        return
    diffs = diff_schemas(old, new)
    # one count, the table's: several clauses may touch one field (RENAME a TO b; RENAME b TO c)
    console.print(Text(f"schema {old.schema_id} -> {new.schema_id}: {len(diffs)} change(s) from "
                       f"{len(changes)} clause(s)" + (" (dry run)" if dry_run else ""), style="bold"))
    for change in changes:
        console.print(Text("  " + change.sql()))
    if diffs:
        console.print(simple_table(["change", "id", "before", "after", "detail"],
                                   [(d.kind, d.field_id, d.old_path or "-", d.new_path or "-", d.detail)
                                    for d in diffs]))
    if show_schema:
        console.print(schema_tree(new))
    if dry_run:
        console.print(Text("dry run: nothing was committed", style="yellow"))



def _alter_partitions(location: str, statement: str, dry_run: bool) -> None:
    """Partition changes commit a new spec of their own; old files keep theirs."""
    from rich.text import Text

    from fieldshift.cli.partition_view import spec_history
    from fieldshift.table.partitions.ddl_partitions import apply_partition_alter

    table = open_table(location)
    old = table.spec
    update = apply_partition_alter(table.update_spec(), statement)
    new = update.apply() if dry_run else update.commit()
    console = out_console()
    if new.spec_id == old.spec_id:
        console.print(Text(f"nothing to change: spec {old.spec_id} already is what the statements ask for; "
                           "nothing was committed", style="bold"))
        return
    verb = "would change" if dry_run else "changed"
    console.print(Text(f"partition spec {old.spec_id} -> {new.spec_id}: {verb} {len(update.changes)} thing(s)",
                       style="bold"))
    for change in update.changes:
        console.print(Text("  " + change))
    if dry_run:
        console.print(Text(f"new spec would be: {new.describe(table.schema)}"))
        console.print(Text("dry run: nothing was committed", style="yellow"))
    else:
        console.print(spec_history(table, table.schema))
