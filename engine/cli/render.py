"""Rich renderings of schemas and rows; every cell is ``Text`` so names like ``ts[UTC]`` are never markup."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
from collections.abc import Iterable
from typing import Any

import pyarrow as pa
from rich.table import Table as RichTable
from rich.text import Text
from rich.tree import Tree

from fieldshift.schema.display import field_parts
from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema

__all__ = ["cell", "json_default", "py_rows", "rows_table", "schema_tree", "simple_table"]

_STYLES = {"name": "bold", "type": "cyan", "required": "yellow", "id": "dim", "default": "green",
           "doc": "italic dim"}


def _label(f: Field) -> Text:
    text = Text()
    for i, (role, part) in enumerate(field_parts(f)):
        text.append(("" if i == 0 else " ") + part, style=_STYLES.get(role, ""))
    return text


def _grow(node: Tree, fields: Iterable[Field]) -> None:
    for f in fields:
        _grow(node.add(_label(f)), f.children())


def schema_tree(schema: Schema, title: str | None = None) -> Tree:
    """A tree with every field's id, type, nullability, defaults and doc."""
    head = title or f"schema {schema.schema_id}"
    highest = Text(f"  (highest field id {schema.highest_field_id})", style="dim")
    root = Tree(Text(head, style="bold") + highest)
    _grow(root, schema.fields)
    return root


def json_default(value: Any) -> Any:
    """JSON for Arrow's Python values: ISO dates and times, decimals as strings, bytes as base64."""
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _finite(value: Any) -> Any:
    """NaN and infinities as the strings "NaN", "Infinity", "-Infinity" (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def json_text(value: Any) -> str:
    """Strict JSON (what jq and JSON.parse accept) for a row or value of Arrow's Python values."""
    return json.dumps(_finite(value), default=json_default, ensure_ascii=False, allow_nan=False)


def cell(value: Any) -> Text:
    if value is None:
        return Text("null", style="dim italic")
    if isinstance(value, (dict, list, tuple)):
        return Text(json_text(value))
    if isinstance(value, (dt.date, dt.time)):
        return Text(value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat())
    return Text(str(value))


def simple_table(columns: Iterable[str], rows: Iterable[Iterable[Any]], title: str | None = None, *,
                 show_header: bool = True) -> RichTable:
    view = RichTable(title=title, title_justify="left", title_style="bold", show_header=show_header)
    for c in columns:
        view.add_column(Text(c))
    for row in rows:
        view.add_row(*(v if isinstance(v, Text) else cell(v) for v in row))
    return view


def rows_table(data: pa.Table, title: str | None = None, caption: str | None = None) -> RichTable:
    """Rows with each column's type under its name."""
    from fieldshift.schema.types import type_name

    view = RichTable(title=title, title_justify="left", caption=caption, caption_justify="left")
    for f in data.schema:
        try:
            shown = type_name(f.type)
        except TypeError:
            shown = str(f.type)
        view.add_column(Text(f.name, style="bold") + Text(f"\n{shown}", style="dim"))
    for row in py_rows(data):
        view.add_row(*(cell(v) for v in row.values()))
    return view


def py_rows(data: pa.Table | pa.RecordBatch) -> list[dict[str, Any]]:
    """``data.to_pylist()``, but a column Python cannot hold (a timestamp past year 9999) as Arrow's text."""
    try:
        return data.to_pylist()
    except (OverflowError, ValueError):
        pass
    columns = []
    for column in data.columns:
        try:
            columns.append(column.to_pylist())
        except (OverflowError, ValueError):
            import pyarrow.compute as pc

            columns.append(pc.cast(column, pa.string()).to_pylist())
    return [dict(zip(data.column_names, values, strict=True)) for values in zip(*columns, strict=True)]
