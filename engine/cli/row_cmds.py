"""``fieldshift delete`` and ``fieldshift update``: row-level changes by a filter, on any table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fieldshift.cli.console import UsageError, cli_errors, open_table, out_console
from fieldshift.cli.read_cmds import parse_where
from fieldshift.errors import CastValueError, DDLSyntaxError, RowChangeError

if TYPE_CHECKING:  # the command tree imports no Arrow (tests/cli/test_cli_startup.py): these load when run
    from fieldshift.schema.model import Schema

__all__ = ["delete", "parse_set", "update"]

_LITERAL_START = ("NULL", "TRUE", "FALSE", "DATE", "TIMESTAMP", "TIMESTAMPTZ", "-", "+")


def parse_set(assignments: Sequence[str], schema: Schema) -> dict[str, Any]:
    """``--set`` texts (``"col = value"``) as ``Table.update``'s ``set``: a SQL literal (``12``, ``'text'``,
    ``NULL``, ``TRUE``, ``DATE '2024-01-31'``) read as the column's type, or another column's name (its value
    in the same row). A text that does not parse is a ``DDLSyntaxError`` with a caret; a literal that does not
    fit its column a ``CastValueError``."""
    from fieldshift.ddl.changes import coerce_literal
    from fieldshift.ddl.parser import DDLParser
    from fieldshift.schema.field_paths import split_path
    from fieldshift.table.expressions.references import Reference, col

    out: dict[str, Any] = {}
    for text in assignments:
        parser = DDLParser(text)
        name = parser.path("a column name, as in --set \"status = 'done'\"")
        parser.expect("=", "'=' after the column name")
        tok = parser.peek()
        if tok.kind in ("number", "string") or parser.at(*_LITERAL_START):
            lit = parser.literal()
            value: Any = lit
        else:
            value = col(parser.path("a literal or a column name after '='"))
        if not parser.ended():
            raise parser.error("the end of the assignment (one column = value per --set)")
        parts = split_path(name)
        if len(parts) != 1 or parts[0] not in schema.names:
            raise RowChangeError(f"--set {text!r}: {name!r} is not a top-level column of the table "
                                 f"({schema.names}); nothing was written")
        if not isinstance(value, Reference):
            try:
                value = coerce_literal(value, schema.find(parts[0]).type)
            except ValueError as e:
                raise CastValueError(parts[0], 0, value.text, "text", str(schema.find(parts[0]).type),
                                     f"{e}; nothing was written.") from None
        out[parts[0]] = value
    return out


@cli_errors
def delete(
    location: Annotated[str, typer.Argument(help="Table directory.")],
    where: Annotated[list[str], typer.Option(
        "--where", "-w",
        help="A filter the rows to delete meet, e.g. \"rowId = 'row_1' or note is null\" (repeat: AND).")],
) -> None:
    """Delete the rows (of a keyed table: of the current merged table) that meet every --where filter."""
    table = open_table(location)
    if not where:
        raise UsageError("delete needs at least one --where condition")
    result = table.delete(filter=parse_where(where))
    gone = result.rows_deleted if result.rows_deleted is not None else result.keys_deleted
    if not gone:
        out_console().print("no row matched: nothing was deleted (no snapshot)")
        return
    out_console().print(f"deleted {gone} row(s) from {table.location} in snapshot {result.snapshot_id}")


@cli_errors
def update(
    location: Annotated[str, typer.Argument(help="Table directory.")],
    assignments: Annotated[list[str], typer.Option(
        "--set", "-s", help="\"column = value\": a SQL literal ('text', 12, NULL, DATE '2024-01-31') or another "
                            "column's name (repeat for more columns).")],
    where: Annotated[list[str] | None, typer.Option(
        "--where", "-w", help="A filter the rows to update meet (repeat: AND); without it every row.")] = None,
) -> None:
    """Give the rows that meet every --where filter new values, in one snapshot (nothing evolves)."""
    table = open_table(location)
    if not assignments:
        raise UsageError("update needs at least one --set \"column = value\"")
    try:
        values = parse_set(assignments, table.schema)
    except DDLSyntaxError as e:
        raise UsageError(str(e)) from None
    result = table.update(values, where=parse_where(where) if where else None)
    if not result.rows_updated:
        out_console().print("no row matched: nothing was updated (no snapshot)")
        return
    out_console().print(f"updated {result.rows_updated} row(s) of {table.location} in snapshot "
                        f"{result.snapshot_id}")
