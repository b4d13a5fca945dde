"""Reading a published fieldshift table back through Iceberg readers, for the publishing tests."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from fieldshift.table import Table

__all__ = ["canonical", "fieldshift_rows", "pyiceberg_rows", "static_table"]


def canonical(table: pa.Table) -> list[str]:
    """Rows as sorted JSON texts (column names kept; order of rows ignored)."""
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in table.to_pylist())


def fieldshift_rows(t: Table, snapshot_id: int) -> list[str]:
    return canonical(t.scan(snapshot_id=snapshot_id).to_arrow())


def static_table(t: Table) -> Any:
    from pyiceberg.table import StaticTable

    return StaticTable.from_metadata(str(t.location))


def pyiceberg_rows(t: Table, snapshot_id: int, row_filter: Any = None) -> list[str]:
    st = static_table(t)
    scan = st.scan(snapshot_id=snapshot_id) if row_filter is None else st.scan(snapshot_id=snapshot_id,
                                                                               row_filter=row_filter)
    return canonical(scan.to_arrow())
