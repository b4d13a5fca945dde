"""``fieldshift merge``: MERGE INTO a table from a file, its clauses as options (``Table.merge``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from fieldshift.cli.console import UsageError, cli_errors, open_table, out_console
from fieldshift.cli.write_cmds import (
    FormatOption,
    InputFormat,
    NullOption,
    TypeOption,
    parse_types,
    read_input,
)

__all__ = ["merge", "parse_set"]

_WORDS = {"null": None, "true": True, "false": False}


def _value(text: str, option: str) -> Any:
    """The right side of ``COL = VALUE``: ``source.x`` / ``target.x``, a quoted string, a number, true, false,
    null."""
    v = text.strip()
    if v.split(".", 1)[0] in ("source", "target") and "." in v:
        return v
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        import pyarrow as pa

        return pa.scalar(v[1:-1].replace(v[0] * 2, v[0]))  # a literal even if it reads like a column
    if v.lower() in _WORDS:
        return _WORDS[v.lower()]
    for kind in (int, float):
        try:
            return kind(v)
        except ValueError:
            continue
    raise UsageError(f"{option} {text!r}: the value is source.COL, target.COL, a 'quoted string', a number, true, "
                     "false or null")


def parse_set(pairs: list[str] | None, option: str = "--set") -> dict[str, Any] | None:
    """``--set "COL = VALUE"`` options as a ``set``/``values`` dict (None when none were given)."""
    if not pairs:
        return None
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"{option} {pair!r}: expected \"COL = VALUE\", e.g. {option} \"v = source.v\"")
        name = name.strip()
        if len(name) >= 2 and name[0] == name[-1] and name[0] in "`\"":  # a quoted name, as --where spells one
            name = name[1:-1].replace(name[0] * 2, name[0])
        out[name] = _value(value, option)
    return out


@cli_errors
def merge(
    location: Annotated[str, typer.Argument(help="Table directory.")],
    file: Annotated[Path, typer.Argument(help="The source rows: a .parquet, .csv or .json/.jsonl file.")],
    on: Annotated[list[str], typer.Option("--on", help="A column source and target rows match by (repeat; a "
                                          "keyed table: its key).")],
    update: Annotated[bool, typer.Option("--update", help="Matched rows take the source row ('*').")] = False,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="\"COL = VALUE\" for matched rows (repeat; VALUE: source.COL, target.COL or a literal).")] = None,
    update_if: Annotated[str | None, typer.Option(
        "--update-if", help="Update only where this holds, e.g. \"source.op = 'u'\".")] = None,
    delete: Annotated[bool, typer.Option("--delete", help="Delete matched rows (tried before --update).")] = False,
    delete_if: Annotated[str | None, typer.Option("--delete-if", help="Delete matched rows where this holds.")
                         ] = None,
    insert: Annotated[bool, typer.Option("--insert", help="Insert source rows no target row matches ('*').")
                      ] = False,
    insert_if: Annotated[str | None, typer.Option("--insert-if", help="Insert only where this holds.")] = None,
    delete_missing: Annotated[bool, typer.Option(
        "--delete-missing", help="Delete target rows no source row matches.")] = False,
    delete_missing_if: Annotated[str | None, typer.Option(
        "--delete-missing-if", help="Delete unmatched target rows where this holds (\"target.day < '2024-01-01'\").")
    ] = None,
    evolve: Annotated[bool, typer.Option(
        "--evolve/--no-evolve", help="Let '*' clauses add columns and widen types.")] = True,
    fmt: FormatOption = InputFormat.auto,
    types: TypeOption = None,
    null_values: NullOption = None,
) -> None:
    """Merge a file's rows into a table (SQL MERGE INTO) in one commit; without --update, --set, --delete or
    --insert options an upsert by --on (--update --insert; with --delete-missing, a full sync).

    Conditions are filter text over source.COL and target.COL. A null in an --on column never matches;
    a target row matched by two source rows is refused. CSV and JSON are read as by `fieldshift append`.
    """
    table = open_table(location)
    sets = parse_set(set_)
    if not any((update, sets, update_if, delete, delete_if, insert, insert_if)):  # --delete-missing adds to it
        update = insert = True
    data = read_input(file, fmt, table.schema, types=parse_types(types), null_values=null_values)
    builder = table.merge(data, on, evolve=evolve)
    if delete or delete_if:
        builder.when_matched_delete(condition=delete_if)
    if update or sets or update_if:
        builder.when_matched_update(set=sets or "*", condition=update_if)
    if insert or insert_if:
        builder.when_not_matched_insert(condition=insert_if)
    if delete_missing or delete_missing_if:
        builder.when_not_matched_by_source_delete(condition=delete_missing_if)
    result = builder.execute()
    console = out_console()
    if result.snapshot_id is None:
        console.print("no row inserted, updated or deleted: nothing was committed (no snapshot)")
        return
    console.print(f"merged {file.name} into {table.location}: {result.rows_inserted} inserted, "
                  f"{result.rows_updated} updated, {result.rows_deleted} deleted in snapshot {result.snapshot_id}"
                  + (" (schema evolved)" if result.schema_evolved else ""))
