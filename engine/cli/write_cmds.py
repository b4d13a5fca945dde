"""``fieldshift create`` and ``fieldshift append``: make a table; add rows from Parquet, CSV or JSON."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fieldshift.cli.console import (
    UsageError,
    cli_errors,
    cli_terms,
    fail,
    open_table,
    out_console,
    parse_policy,
    progress,
)
from fieldshift.errors import DuplicateKeyError, InvalidOptionError, SchemaEvolutionError, TableExistsError
from fieldshift.schema.policy_names import POLICY_NAMES

if TYPE_CHECKING:  # pyarrow, rich and the table layer are imported by the commands that use them (start-up)
    import pyarrow as pa

    from fieldshift.schema.model import Schema

__all__ = ["FormatOption", "InputFormat", "NullOption", "TypeOption", "append", "create", "parse_types", "read_input",
           "write_file"]


class InputFormat(StrEnum):
    auto = "auto"
    parquet = "parquet"
    csv = "csv"
    json = "json"


_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json",
             ".ndjson": "json"}


FormatOption = Annotated[InputFormat, typer.Option("--format", help="Input format (default: from the suffix).")]
TypeOption = Annotated[list[str] | None, typer.Option(
    "--type", help="COL=TYPE, repeatable: read CSV/JSON column COL as TYPE (string, bigint, decimal(10,2), date, "
    "...) instead of guessing. Columns the table holds as string are always read as text as written.")]
NullOption = Annotated[list[str] | None, typer.Option(
    "--null-values", help="A CSV text that reads as null, repeatable (--null-values '' --null-values NULL); "
    "replaces the default (an empty field, NA, N/A, n/a, NULL, null, NaN, nan, #N/A, ... in columns not read as "
    "text) and applies to every unquoted field, text columns too (a quoted field is a value).")]


def parse_types(pairs: list[str] | None) -> dict[str, pa.DataType]:
    """``--type COL=TYPE`` options as ``{COL: Arrow type}``."""
    from fieldshift.table.streams.capture_read import pinned_types

    types: dict[str, pa.DataType] = {}
    for pair in pairs or ():
        name, sep, type_text = pair.rpartition("=")
        if not sep or not name.strip() or not type_text.strip():
            raise UsageError(f"--type {pair!r}: expected COL=TYPE, e.g. --type zip=string")
        try:
            types.update(pinned_types({name.strip(): type_text.strip()}))
        except InvalidOptionError as e:
            raise UsageError(f"--type {pair!r}: {e}") from None
    return types


def read_input(path: Path, fmt: InputFormat, schema: Schema, *, types: dict[str, pa.DataType] | None = None,
               null_values: list[str] | None = None) -> pa.Table:
    """Read an input file; Parquet keeps its types, CSV and JSON are read as ``fs.read_file`` reads them
    (the table's text columns as text, ``--type`` pins, ``--null-values``; guessed numbers fitted)."""
    from fieldshift.table.streams.capture_read import read_file

    kind = fmt.value if fmt is not InputFormat.auto else _SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise UsageError(f"cannot tell the format of {path.name!r} from its suffix; "
                         "pass --format parquet|csv|json")
    if not path.exists():
        raise UsageError(f"no such file: {path}")
    if kind == "parquet":
        if types or null_values is not None:
            raise UsageError(f"--type and --null-values apply to CSV and JSON files; {path.name} is Parquet, "
                             "which carries its own types")
        import pyarrow.parquet as pq

        f = pq.ParquetFile(path)
        with progress(f"reading {path.name}", f.metadata.num_rows) as advance:
            batches = []
            for batch in f.iter_batches():
                batches.append(batch)
                advance(batch.num_rows)
        import pyarrow as pa

        return pa.Table.from_batches(batches, schema=f.schema_arrow)
    if kind == "json" and null_values is not None:
        raise UsageError(f"--null-values applies to CSV files; JSON ({path.name}) writes null itself")
    with progress(f"reading {path.name}") as advance:
        data = read_file(path, kind, like=schema, types=types, null_values=null_values)  # type: ignore[arg-type]
        advance(data.num_rows)
    return data


@cli_errors
def append(
    location: Annotated[str, typer.Argument(help="Table directory.")],
    file: Annotated[Path, typer.Argument(help="A .parquet, .csv or .json/.jsonl (an object per line) file.")],
    quarantine: Annotated[bool, typer.Option(
        "--quarantine", help="Set incompatible rows aside with a reason instead of failing the append.")
    ] = False,
    evolve: Annotated[bool, typer.Option(
        "--evolve/--no-evolve", help="Let new columns and wider types change the table schema.")] = True,
    fmt: FormatOption = InputFormat.auto,
    types: TypeOption = None,
    null_values: NullOption = None,
) -> None:
    """Append a file's rows all-or-nothing, evolving the table schema on write (Onehouse rules).

    CSV and JSON columns the table holds as string are read as text exactly as written ("007" stays
    "007"); other columns' types are guessed (CSV: integer, double, boolean, date, timestamp or string;
    JSON: its own types) unless pinned with --type COL=TYPE, and guessed numbers take the table's
    narrower number type where every value fits.
    """
    write_file(location, file, quarantine=quarantine, evolve=evolve, fmt=fmt, upsert=False, types=types,
               null_values=null_values)


def write_file(location: str, file: Path, *, quarantine: bool, evolve: bool, fmt: InputFormat, upsert: bool,
               types: list[str] | None = None, null_values: list[str] | None = None, partial: bool = False) -> None:
    """``append`` or ``upsert`` a file's rows and print what the write did."""
    from rich.text import Text

    from fieldshift.cli.render import simple_table

    pinned = parse_types(types)
    table = open_table(location)
    data = read_input(file, fmt, table.schema, types=pinned, null_values=null_values)
    write = table.upsert if upsert else table.append
    with progress("upserting" if upsert else "appending", None) as advance:
        try:
            extra = {"partial": True} if partial else {}
            result = write(data, evolve=evolve, on_incompatible="quarantine" if quarantine else "fail", **extra)
        except DuplicateKeyError as e:
            e.args = (cli_terms(str(e)).replace(_PY_UPSERT, _cli_upsert(location, file)),)
            raise
        except SchemaEvolutionError as e:
            e.add_note("nothing was written. On the command line: --quarantine sets incompatible rows aside; "
                       "--evolve (the default) lets new columns and wider types change the schema.")
            raise
        advance(result.rows_written)
    rows = [("rows upserted" if upsert else "rows written", result.rows_written),
            ("rows quarantined", result.rows_quarantined),
            ("snapshot", result.snapshot_id), ("schema", result.schema_id),
            ("schema evolved", "yes" if result.schema_evolved else "no")]
    if upsert:  # None: a bucket merges on read, where counting would mean reading it
        rows[1:1] = [("rows inserted", "?" if result.rows_inserted is None else result.rows_inserted),
                     ("rows updated", "?" if result.rows_updated is None else result.rows_updated)]
    rows += [("change", c) for c in result.changes]
    console = out_console()
    title = f"upserted {file.name} into" if upsert else f"appended {file.name} to"
    console.print(Text(f"{title} {table.location}", style="bold"))
    console.print(simple_table(["", ""], rows, show_header=False))
    if result.rows_quarantined:
        console.print(Text(f"{result.rows_quarantined} row(s) quarantined: see "
                           f"`fieldshift quarantine {location or table.location}`", style="yellow"))


_PY_UPSERT = "table.upsert()"


def _cli_upsert(location: str, file: Path) -> str:
    """The command that replaces rows by key, for a duplicate-key append's advice."""
    import shlex

    from fieldshift.cli.catalog_opt import chosen
    from fieldshift.table.catalog.sql import redact_uri

    words = ["fieldshift"]
    if chosen().catalog:
        words += ["--catalog", redact_uri(chosen().catalog or "")] + (["--table", chosen().table or ""]
                                                                      if chosen().table else [])
    words += ["upsert", *([location] if location else []), str(file)]
    return "`" + shlex.join(words) + "`"


def _load_schema(text: str) -> Schema:
    from fieldshift.ddl.alter import parse_columns
    from fieldshift.schema.model import Schema

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
    location: Annotated[str, typer.Argument(help="Table directory to create (with --catalog: named by --table, "
                                            "default its last component).")],
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
    from rich.text import Text

    from fieldshift.cli.catalog_opt import chosen
    from fieldshift.cli.render import schema_tree
    from fieldshift.table import Table

    if not location:
        raise UsageError("create needs the new table's LOCATION (where its files go), also with --catalog and "
                         "--table")
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
    if chosen().catalog:  # a shared catalog's table is found by this name (--table NAME)
        title += f", as table {table.name!r} of the catalog"
    out_console().print(schema_tree(table.schema, title))
    if partition_by:
        out_console().print(Text(f"partitioned by {table.spec.describe(table.schema)}"))
