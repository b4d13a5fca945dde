"""The partition spec history as the CLI shows it (``fieldshift schema show``, ``alter``, ``create``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.table import Table as RichTable

from fieldshift.cli.render import simple_table
from fieldshift.schema.model import Schema

__all__ = ["spec_history"]


def spec_history(table: Any, schema: Schema) -> RichTable:
    """One row per spec: id, the snapshot that made it, its fields (source names as of ``schema``), live files."""
    specs = table.catalog.specs(table.table_id)
    live = Counter(f.spec_id for f in table.scan().live_files())
    current = specs[-1][0].spec_id
    rows = [(f"{spec.spec_id}{' (current)' if spec.spec_id == current else ''}", since,
             spec.describe(schema), live.get(spec.spec_id, 0)) for spec, since in specs]
    return simple_table(["spec", "since snapshot", "partition fields", "live files"], rows,
                        title="Partition specs (old files keep the spec they were written with)")
