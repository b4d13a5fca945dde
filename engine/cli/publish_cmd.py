"""``fieldshift publish``: write a table's metadata in another format beside its Parquet files (Iceberg)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from fieldshift.cli.console import cli_errors, open_table, out_console, progress

__all__ = ["publish"]


@cli_errors
def publish(
    location: Annotated[str, typer.Argument(help="Table directory.")],
    iceberg: Annotated[bool, typer.Option("--iceberg", help="Publish as an Iceberg table (metadata under "
                                          "LOCATION/metadata; the only format today).")] = False,
    register: Annotated[tuple[str, str] | None, typer.Option(
        "--register", metavar="CATALOG_URI NAMESPACE.NAME", help="Register the table in this PyIceberg SQL catalog "
        "(its 'default' catalog); every later catch-up moves its pointer forward.")] = None,
) -> None:
    """Write Iceberg metadata for every snapshot not yet published; PyIceberg and DuckDB's iceberg_scan
    then read LOCATION as an Iceberg table."""
    if not iceberg:
        raise typer.BadParameter("name the format to publish: --iceberg")
    table = open_table(location)
    with progress("publishing", None, unit="versions") as advance:
        result = table.publish(register=register)
        advance(len(result.written))
    console = out_console()
    console.print(Text(f"published {len(result.written)} new metadata version(s); current: "
                       f"{result.metadata_location}", style="bold"))
