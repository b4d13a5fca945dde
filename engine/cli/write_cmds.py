"""``fieldshift create`` and ``fieldshift append``: make a table; add rows from Parquet, CSV or JSON."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import pyarrow as pa
import pyarrow.compute as pc
import typer
from rich.text import Text

from fieldshift.cli.console import UsageError, cli_errors, fail, open_table, out_console, parse_policy, progress
from fieldshift.cli.render import schema_tree, simple_table
from fieldshift.errors import SchemaEvolutionError, TableExistsError
from fieldshift.policy import POLICY_NAMES
from fieldshift.schema import Schema

__all__ = ["InputFormat", "append", "create", "read_input", "write_file"]


class InputFormat(StrEnum):
    auto = "auto"
    parquet = "parquet"
    csv = "csv"
    json = "json"


_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json",
             ".ndjson": "json"}


def _fitted_type(guessed: pa.DataType, target: pa.DataType) -> pa.DataType:
    """``guessed`` with each leaf the table also has replaced by the table's type (names kept)."""
    T = pa.types
    if T.is_struct(guessed) and T.is_struct(target):
        by_name = {target.field(i).name: target.field(i) for i in range(target.num_fields)}
        children = []
        for i in range(guessed.num_fields):
            g = guessed.field(i)
            t = by_name.get(g.name)
            children.append(g.with_type(_fitted_type(g.type, t.type)) if t is not None else g)
        return pa.struct(children)
    if T.is_list(guessed) and (T.is_list(target) or T.is_large_list(target)):
        return pa.list_(guessed.value_field.with_type(_fitted_type(guessed.value_type, target.value_type)))
    if T.is_nested(guessed) or T.is_nested(target):
        return guessed
    return target


def _fit_to_table(data: pa.Table, schema: Schema) -> pa.Table:
    """Text formats guess types (every integer is int64); use the table's types wherever values fit exactly.

    Otherwise a CSV of small numbers would widen an ``int`` column to ``long`` on write. A column
    whose values do not fit keeps its guessed type, so on-write evolution still widens or
    quarantines it as it should.
    """
    columns = []
    for name, column in zip(data.column_names, data.columns, strict=True):
        try:
            target = _fitted_type(column.type, schema.find(name).to_arrow().type)
        except KeyError:
            target = column.type
        if target != column.type:
            try:
                column = pc.cast(column, target, safe=True)
            except (pa.ArrowException, NotImplementedError):
                pass
        columns.append(column)
    return pa.table(columns, names=data.column_names)


def read_input(path: Path, fmt: InputFormat, schema: Schema) -> pa.Table:
    """Read an input file; Parquet keeps its types, CSV and JSON are fitted to the table's."""
    kind = fmt.value if fmt is not InputFormat.auto else _SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise UsageError(f"cannot tell the format of {path.name!r} from its suffix; "
                         "pass --format parquet|csv|json")
    if not path.exists():
        raise UsageError(f"no such file: {path}")
    if kind == "parquet":
        import pyarrow.parquet as pq

        f = pq.ParquetFile(path)
        with progress(f"reading {path.name}", f.metadata.num_rows) as advance:
            batches = []
            for batch in f.iter_batches():
                batches.append(batch)
                advance(batch.num_rows)
        return pa.Table.from_batches(batches, schema=f.schema_arrow)
    with progress(f"reading {path.name}") as advance:
        if kind == "csv":
            import pyarrow.csv as pacsv

            strings = {f.name: pa.string() for f in schema.fields  # keep '007' as text, not 7
                       if isinstance(f.type, pa.DataType) and pa.types.is_string(f.type)}
            data = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(column_types=strings))
        else:
            import pyarrow.json as pajson

            data = pajson.read_json(path)
        advance(data.num_rows)
    return _fit_to_table(data, schema)


@cli_errors
def append(
    location: Annotated[str, typer.Argument(help="Table directory.")],
    file: Annotated[Path, typer.Argument(help="A .parquet, .csv or .json/.jsonl (an object per line) file.")],
    quarantine: Annotated[bool, typer.Option(
        "--quarantine", help="Set incompatible rows aside with a reason instead of failing the append.")
    ] = False,
    evolve: Annotated[bool, typer.Option(
        "--evolve/--no-evolve", help="Let new columns and wider types change the table schema.")] = True,
    fmt: Annotated[InputFormat, typer.Option("--format", help="Input format (default: from the suffix).")
                   ] = InputFormat.auto,
) -> None:
    """Append a file's rows all-or-nothing, evolving the table schema on write (Onehouse rules)."""
    write_file(location, file, quarantine=quarantine, evolve=evolve, fmt=fmt, upsert=False)


def write_file(location: str, file: Path, *, quarantine: bool, evolve: bool, fmt: InputFormat, upsert: bool) -> None:
    """``append`` or ``upsert`` a file's rows and print what the write did."""
    table = open_table(location)
    data = read_input(file, fmt, table.schema)
    write = table.upsert if upsert else table.append
    with progress("upserting" if upsert else "appending", None) as advance:
        try:
            result = write(data, evolve=evolve, on_incompatible="quarantine" if quarantine else "fail")
        except SchemaEvolutionError as e:
            e.add_note("nothing was written. On the command line: --quarantine sets incompatible rows aside; "
                       "--evolve (the default) lets new columns and wider types change the schema.")
            raise
        advance(result.rows_written)
    rows = [("rows upserted" if upsert else "rows written", result.rows_written),
            ("rows quarantined", result.rows_quarantined),
            ("snapshot", result.snapshot_id), ("schema", result.schema_id),
            ("schema evolved", "yes" if result.schema_evolved else "no")]
    rows += [("change", c) for c in result.changes]
    console = out_console()
    title = f"upserted {file.name} into" if upsert else f"appended {file.name} to"
    console.print(Text(f"{title} {table.location}", style="bold"))
    console.print(simple_table(["", ""], rows, show_header=False))
    if result.rows_quarantined:
        console.print(Text(f"{result.rows_quarantined} row(s) quarantined: see "
                           f"`fieldshift quarantine {location}`", style="yellow"))


def _load_schema(text: str) -> Schema:
    from fieldshift.ddl import parse_columns

    candidate = Path(text)
    if not text.lstrip().startswith("{") and len(text) < 4096 and candidate.is_file():
        text = candidate.read_text()
    if not text.lstrip().startswith("{"):
        return parse_columns(text)
    try:
        return Schema.from_json(text)
    except (KeyError, TypeError, ValueError) as e:
        raise UsageError(f"--schema is not a valid Iceberg schema JSON: {e}") from None


@cli_errors
def create(
    location: Annotated[str, typer.Argument(help="Table directory to create.")],
    schema: Annotated[str, typer.Option(
        "--schema", "-s", help="Iceberg schema JSON, a file holding it, or columns: \"id bigint NOT NULL, "
        "name string\".")],
    identifier: Annotated[str | None, typer.Option(
        "--key", "--identifier", help="Comma-separated primary-key columns: the table becomes keyed "
        "(upsert, delete, merge-on-read).")] = None,
    precombine: Annotated[str | None, typer.Option(
        "--precombine", help="A keyed table's ordering column: of two rows of one key the higher wins.")] = None,
    buckets: Annotated[int | None, typer.Option(
        "--buckets", help="A keyed table's hidden key buckets (fixed at create; default 4).")] = None,
    policy: Annotated[str | None, typer.Option(
        "--policy", help="The table's evolution policy (default onehouse): " + ", ".join(POLICY_NAMES) + ".")
    ] = None,
    partition_by: Annotated[list[str] | None, typer.Option(
        "--partition-by", help="A partition term, repeatable: a column, days(ts), hours(ts), bucket(16, id), "
        "truncate(4, name).")] = None,
) -> None:
    """Create an empty table (SQLite catalog + Parquet files) with the given schema."""
    from fieldshift.cli.catalog_opt import chosen
    from fieldshift.table import Table

    parsed = _load_schema(schema)
    keys = [k.strip() for k in identifier.split(",") if k.strip()] if identifier else ()
    try:
        table = Table.create(location, parsed, identifier_fields=keys, policy=parse_policy(policy),
                             precombine=precombine, buckets=buckets, partition_by=partition_by or (),
                             catalog=chosen().catalog, name=chosen().table)
    except TableExistsError:
        fail(f"a table already exists at {location}; see it with `fieldshift schema show {location}`, "
             "or pick another location")
    title = f"created {table.location} with schema {table.schema.schema_id}, policy {table.policy.option_name}"
    out_console().print(schema_tree(table.schema, title))
    if partition_by:
        out_console().print(Text(f"partitioned by {table.spec.describe(table.schema)}"))
