"""Writing result batches as a terminal table, CSV, newline-delimited JSON or Parquet, streaming."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING

from fieldshift.cli.console import UsageError, out_console, stdout_is_tty

if TYPE_CHECKING:  # pyarrow and rich are imported by the writers (the command line starts without them)
    import pyarrow as pa

__all__ = ["TABLE_ROWS", "OutputFormat", "limit_batches", "write_batches"]

TABLE_ROWS = 100
"""Rows a terminal table shows when no ``--limit`` is given."""


class OutputFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"


def limit_batches(batches: Iterable[pa.RecordBatch], limit: int | None) -> Iterator[pa.RecordBatch]:
    """Stop reading as soon as ``limit`` rows have been produced."""
    left = limit
    for batch in batches:
        if left is not None:
            if left <= 0:
                return
            batch = batch.slice(0, left)
            left -= batch.num_rows
        yield batch


@contextlib.contextmanager
def _binary_sink(output: Path | None) -> Iterator[IO[bytes]]:
    if output is None:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
    else:
        with open(output, "wb") as f:
            yield f


def write_batches(batches: Iterable[pa.RecordBatch], schema: pa.Schema, fmt: OutputFormat,
                  output: Path | None, *, limit: int | None = None, title: str | None = None,
                  append: bool = False) -> int:
    """Write the batches; returns the number of rows written. ``append`` adds a terminal table to the
    end of ``output`` (several tables, e.g. one per quarantined source schema, share one file)."""
    if fmt is OutputFormat.parquet and output is None and stdout_is_tty():
        raise UsageError("refusing to write Parquet to a terminal; pass --output FILE or redirect stdout")
    if fmt is OutputFormat.table:
        return _table(batches, schema, output, limit, title, append)
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from fieldshift.cli.render import json_text, py_rows

    rows = 0
    with _binary_sink(output) as sink:
        if fmt is OutputFormat.parquet:
            with pq.ParquetWriter(sink, schema) as writer:
                for batch in limit_batches(batches, limit):
                    writer.write_batch(batch)
                    rows += batch.num_rows
            return rows
        if fmt is OutputFormat.csv:
            flat = pa.schema([f.with_type(pa.string()) if pa.types.is_nested(f.type) else f for f in schema])
            with pacsv.CSVWriter(sink, flat) as writer:
                for batch in limit_batches(batches, limit):
                    writer.write_batch(_nested_as_json(batch, flat))
                    rows += batch.num_rows
            return rows
        for batch in limit_batches(batches, limit):
            lines = [json_text(r) for r in py_rows(batch)]
            if lines:
                sink.write(("\n".join(lines) + "\n").encode())
            rows += batch.num_rows
    return rows


def _nested_as_json(batch: pa.RecordBatch, flat: pa.Schema) -> pa.RecordBatch:
    """CSV has no nesting: structs, lists and maps go into their cells as JSON text."""
    import pyarrow as pa

    from fieldshift.cli.render import json_text

    columns = []
    for column, f in zip(batch.columns, flat, strict=True):
        if pa.types.is_nested(column.type):
            texts = [None if v is None else json_text(v)
                     for v in column.to_pylist()]
            column = pa.array(texts, f.type)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=flat)


def _table(batches: Iterable[pa.RecordBatch], schema: pa.Schema, output: Path | None, limit: int | None,
           title: str | None, append: bool = False) -> int:
    import pyarrow as pa
    from rich.text import Text

    from fieldshift.cli.render import rows_table

    shown = TABLE_ROWS if limit is None else limit
    taken = list(limit_batches(batches, shown + 1))
    data = pa.Table.from_batches(taken, schema=schema)
    more = data.num_rows > shown
    data = data.slice(0, shown)
    caption = f"{data.num_rows} row(s)"
    if more:
        caption = f"first {shown} rows shown" + (
            "; more rows exist (pass --limit N, or --format csv/json for all)" if limit is None
            else f" (--limit {shown})")
    view = rows_table(data, caption=caption)
    with contextlib.ExitStack() as stack:
        if output is None:
            console = out_console()
        else:
            from rich.console import Console

            console = Console(file=stack.enter_context(open(output, "a" if append else "w", encoding="utf-8")),
                              color_system=None, width=200)
        if title:  # a line of its own: a table title would wrap to the table's width
            console.print(Text(title, style="bold"))
        console.print(view)
    return data.num_rows
