"""The catalog rows of partitioning: ``fs_partition_spec`` (one row per spec) and each data file's
``spec_id`` and ``partition_values`` (a JSON list, values encoded as the catalog encodes statistics).

A table whose catalog holds no spec row (created before partitioning existed) has spec 0,
unpartitioned, and every file it has is recorded with spec 0 and no partition values.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fieldshift.errors import CatalogFormatError, CommitConflictError
from fieldshift.table.catalog.dialect import Connection
from fieldshift.table.catalog.sql import parse_json
from fieldshift.table.files.stats import decode_value, encode_value
from fieldshift.table.partitions.partitioning import UNPARTITIONED, PartitionSpec

__all__ = ["decode_partition", "decode_partitions", "encode_partition", "insert_spec", "load_specs", "parse_specs"]


def insert_spec(conn: Connection, table_id: int, spec: PartitionSpec, snapshot_id: int) -> None:
    """Make ``spec`` current as of ``snapshot_id``. An older spec made current again keeps its id (its row
    moves to this snapshot); a spec id a concurrent writer took for other fields is a conflict."""
    row = conn.execute("SELECT spec_json FROM fs_partition_spec WHERE table_id = ? AND spec_id = ?",
                       (table_id, spec.spec_id)).fetchone()
    if row is not None:
        if PartitionSpec.from_json(parse_json(row[0], f"partition spec {spec.spec_id}")) != spec:
            raise CommitConflictError(f"partition spec id {spec.spec_id} already exists; reload the table and retry")
        conn.execute("UPDATE fs_partition_spec SET begin_snapshot = ? WHERE table_id = ? AND spec_id = ?",
                     (snapshot_id, table_id, spec.spec_id))
        return
    if spec.spec_id != 0 and not conn.execute("SELECT 1 FROM fs_partition_spec WHERE table_id = ?",
                                               (table_id,)).fetchone():
        conn.execute("INSERT INTO fs_partition_spec VALUES (?, 0, 0, ?)", (table_id, UNPARTITIONED.to_json()))
    conn.execute("INSERT INTO fs_partition_spec VALUES (?, ?, ?, ?)",
                 (table_id, spec.spec_id, snapshot_id, spec.to_json()))


def load_specs(conn: Connection, table_id: int) -> list[tuple[PartitionSpec, int]]:
    """(spec, snapshot that last made it current) of every spec, in that order: the last is the current
    spec; spec 0 unpartitioned if none."""
    rows = conn.execute("SELECT spec_id, begin_snapshot, spec_json FROM fs_partition_spec WHERE table_id = ? "
                        "ORDER BY begin_snapshot, spec_id", (table_id,)).fetchall()
    return parse_specs(rows)


def parse_specs(rows: Sequence[tuple[Any, Any, str]]) -> list[tuple[PartitionSpec, int]]:
    """(spec, begin snapshot) of stored (spec id, begin snapshot, JSON) rows in commit order; spec 0
    unpartitioned if there are none."""
    if not rows:
        return [(UNPARTITIONED, 0)]
    out = []
    for spec_id, begin, text in rows:
        try:
            out.append((PartitionSpec.from_json(parse_json(text, f"partition spec {spec_id}")), int(begin)))
        except (KeyError, TypeError, ValueError) as e:
            raise CatalogFormatError(f"partition spec {spec_id} in the catalog is corrupt ({e}); restore the "
                                     "catalog from a backup") from None
    return out


def encode_partition(values: tuple[Any, ...]) -> str | None:
    """A JSON list: integers (the keys of time transforms and buckets) as plain numbers, every other
    value tagged as statistics are (so a bool, a date or a Decimal reads back as itself)."""
    if not values:
        return None
    return json.dumps([v if type(v) is int or v is None else encode_value(v) for v in values])


def decode_partition(text: str | None) -> tuple[Any, ...]:
    if text is None:
        return ()
    values = parse_json(text, "a data file's partition values")
    if not isinstance(values, list):
        raise CatalogFormatError(f"a data file's partition values in the catalog are corrupt ({text[:80]!r} is no "
                                 "JSON list); restore the catalog from a backup")
    return tuple(v if v is None or type(v) is int else decode_value(v) for v in values)


def decode_partitions(texts: Sequence[str | None]) -> list[tuple[Any, ...]]:
    """``decode_partition`` of many files' texts, parsed as one JSON document (a snapshot of thousands of
    files is listed cold without a parse call per file); a text that does not parse is named as alone."""
    present = [t for t in texts if t is not None]
    if not all(t[:1] == "[" and t[-1:] == "]" for t in present):  # each text one list: the count check holds
        return [decode_partition(t) for t in texts]
    try:
        parsed = json.loads(f"[{','.join(present)}]") if present else []
    except ValueError:
        parsed = None
    if parsed is None or len(parsed) != len(present) or not all(type(v) is list for v in parsed):
        return [decode_partition(t) for t in texts]  # a corrupt text: named by itself
    values = iter(parsed)
    return [() if t is None else tuple(v if v is None or type(v) is int else decode_value(v) for v in next(values))
            for t in texts]
