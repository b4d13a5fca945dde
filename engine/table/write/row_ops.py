"""``Table.delete(filter=...)`` of unkeyed tables and ``Table.update`` of any table, one attempt each.

An unkeyed delete or update is ``row_changes``' steps: find the matched rows (positions), remove them
(deletion vectors or rewrites), append the updated versions, one commit. A keyed update reads the
merged rows the filter matches and upserts their new versions (which supersede the old ones through the
key lookup's deletion vectors), refusing what would break the key: a key column in ``set``, or a
precombine value lower than the row's own (the new version must win). Either kind of update is exclusive:
any concurrent commit conflicts (it could have added rows the filter matches), and the caller retries.

``set`` values are literals (cast exactly to the column's type) or ``fieldshift.col("other")`` (that column's
value of the same row, cast exactly); there is no arithmetic. Only top-level columns can be set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from fieldshift.errors import PrecombineLoweredError, RowChangeError
from fieldshift.schema.model import Schema
from fieldshift.table.commits import expired_is_conflict
from fieldshift.table.expressions.references import Reference
from fieldshift.table.files.data_files import removed_unless_committed
from fieldshift.table.handle import TableIO
from fieldshift.table.keyed.keys import KeySpec
from fieldshift.table.keyed.merge import group_files, read_group
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.partitions.partition_write import MAX_FILE_ROWS, write_partitioned
from fieldshift.table.records import DataFile
from fieldshift.table.scan.table_scan import Scan
from fieldshift.table.write.row_changes import (
    POSITION_COLUMN,
    check_unit_live,
    commit_row_changes,
    find_rows,
    plan_removal,
)
from fieldshift.table.write.set_values import fit_column, fit_literal
from fieldshift.table.write.write_commit import DeleteResult, WriteRequest, write_rows

__all__ = ["UpdateResult", "apply_set", "check_keyed_set", "check_set", "delete_where", "keyed_new_versions",
           "keyed_update_units", "update_unit", "update_where"]


@dataclass(frozen=True)
class UpdateResult:
    """What one update did: how many rows got a new version (0: nothing matched, nothing committed: the
    head's id). ``rows_inserted`` and ``rows_deleted`` are always 0 (an old version a new one replaces counts
    as updated, as in a merge): the counts every row change reports under the same names."""

    rows_updated: int
    snapshot_id: int
    rows_inserted: int = 0
    rows_deleted: int = 0


def delete_where(io: TableIO, metadata: TableMetadata, filter: Any) -> DeleteResult:
    """Remove the rows of an unkeyed table that ``filter`` matches at ``metadata``'s head, in one commit."""
    with expired_is_conflict("the snapshot this delete read was expired meanwhile"):
        matched = find_rows(io, metadata, filter)
    if not matched.count:
        return DeleteResult(0, metadata.head.snapshot_id, 0)
    written: list[str] = []
    with removed_unless_committed(io.storage, written):
        removal = plan_removal(io, metadata, matched, written)
        snap = commit_row_changes(io, metadata, matched, removal, operation="delete")
    return DeleteResult(0, snap.snapshot_id, removal.rows_removed)


def update_where(io: TableIO, metadata: TableMetadata, set: Mapping[str, Any], where: Any, *,
                 resolve: bool = True) -> UpdateResult:
    """Give the rows ``where`` matches at ``metadata``'s head the values ``set`` names, in one commit."""
    schema = metadata.current_schema
    check_set(set, schema)
    keys = metadata.keys
    if keys is not None:
        return _update_keyed(io, metadata, keys, set, where, resolve)
    with expired_is_conflict("the snapshot this update read was expired meanwhile"):
        matched = find_rows(io, metadata, where, with_rows=True)
    if not matched.count:
        return UpdateResult(0, metadata.head.snapshot_id)
    assert matched.rows is not None
    rows = apply_set(matched.rows.drop_columns([POSITION_COLUMN]), schema, set)
    written: list[str] = []
    with removed_unless_committed(io.storage, written):
        removal = plan_removal(io, metadata, matched, written)
        files = write_partitioned(io.storage, schema, metadata.spec, rows, written, MAX_FILE_ROWS)
        snap = commit_row_changes(io, metadata, matched, removal, files, operation="update",
                                  summary={"rows": rows.num_rows})
    return UpdateResult(rows.num_rows, snap.snapshot_id)


def check_keyed_set(set: Mapping[str, Any], metadata: TableMetadata) -> None:
    """What a keyed update refuses before reading a row: a column the table lacks, a key column in ``set``."""
    keys = metadata.keys
    assert keys is not None
    check_set(set, metadata.current_schema)
    touched = [n for n in set if n in keys.key_names]
    if touched:
        raise RowChangeError(f"update sets key column(s) {touched} of table {metadata.name!r}; a key identifies its "
                             "row and never changes: delete the row and upsert it under the new key. Nothing was "
                             "written")


def keyed_new_versions(metadata: TableMetadata, rows: pa.Table, set: Mapping[str, Any]) -> pa.Table:
    """The new versions of a keyed table's merged ``rows`` (every column of the current schema) under ``set``,
    refusing a precombine value lowered below a row's own (``PrecombineLoweredError``)."""
    keys = metadata.keys
    assert keys is not None
    new = apply_set(rows, metadata.current_schema, set)
    if keys.precombine_name is not None and keys.precombine_name in set:
        _check_precombine(rows, new, keys, metadata.name)
    return new


def keyed_update_units(io: TableIO, metadata: TableMetadata, where: Any) -> list[tuple[DataFile, ...]]:
    """The merge groups (their files) whose merged rows ``where`` may match: the units of a distributed keyed
    update (``update_unit``), one group's rows only known merged."""
    return [tuple(g) for g in group_files(Scan(io, metadata, None, where).files())]


def update_unit(io: TableIO, metadata: TableMetadata, set: Mapping[str, Any], where: Any, unit: Sequence[DataFile],
                written: list[str]) -> tuple[list[DataFile], int]:
    """One merge group's share of a keyed update at ``metadata``'s snapshot: its merged rows ``where`` matches,
    their new versions written as upsert files (not committed; their paths land in ``written``), and how many.
    A unit file no longer live at the snapshot raises ``CommitConflictError``."""
    keys = metadata.keys
    assert keys is not None
    scan = Scan(io, metadata, None, where)
    check_unit_live(scan, unit, "the update")
    merged = read_group(scan, list(unit))
    rows = pa.Table.from_batches([scan.finish(b) for b in merged.to_batches()], schema=scan.output_schema)
    if not rows.num_rows:
        return [], 0
    new = keyed_new_versions(metadata, rows, set)
    files = write_partitioned(io.storage, metadata.current_schema, metadata.spec, new, written, MAX_FILE_ROWS,
                              keys=keys)
    return files, new.num_rows


def _update_keyed(io: TableIO, metadata: TableMetadata, keys: KeySpec, set: Mapping[str, Any], where: Any,
                  resolve: bool) -> UpdateResult:
    check_keyed_set(set, metadata)
    schema = metadata.current_schema
    with expired_is_conflict("the snapshot this update read was expired meanwhile"):
        rows = Scan(io, metadata, None, where).to_arrow()
    if not rows.num_rows:
        return UpdateResult(0, metadata.head.snapshot_id)
    new = keyed_new_versions(metadata, rows, set)
    with expired_is_conflict("the snapshot this update read was expired meanwhile"):
        done = write_rows(io, metadata, WriteRequest(schema, False, new, operation="upsert",
                                                     summary={"updated": new.num_rows}, exclusive=True),
                          resolve=resolve)
    return UpdateResult(new.num_rows, done.snapshot.snapshot_id)


def _check_precombine(old: pa.Table, new: pa.Table, keys: KeySpec, table: str) -> None:
    """The new versions must win over the rows they replace: a lower (or null) precombine value is refused."""
    import pyarrow.compute as pc

    name = keys.precombine_name
    assert name is not None
    a, b = old.column(name), new.column(name)
    lower = pc.fill_null(pc.or_kleene(pc.less(b, a), pc.and_kleene(pc.is_null(b), pc.is_valid(a))), False)
    bad = np.flatnonzero(lower.to_numpy(zero_copy_only=False))
    if len(bad):
        i = int(bad[0])
        key = ", ".join(f"{k}={old.column(k)[i].as_py()!r}" for k in keys.key_names)
        raise PrecombineLoweredError(
            f"update sets precombine column {name!r} of the row ({key}) of table {table!r} to {b[i].as_py()!r}, "
            f"below its value {a[i].as_py()!r} ({len(bad)} row(s)); the new version would lose to the row it "
            "replaces. Nothing was written")


def check_set(set: Mapping[str, Any], schema: Schema) -> None:
    """``set`` names top-level columns of ``schema`` and its literals fit them exactly — checked before any row is
    read, so a bad value is an error even where no row matches (``col(...)`` values are checked per row)."""
    if not isinstance(set, Mapping) or not set:
        raise TypeError("update() takes set={column: value, ...}, a non-empty dict of top-level column names")
    unknown = [n for n in set if not isinstance(n, str) or n not in schema.names]
    if unknown:
        raise RowChangeError(f"update sets column(s) {unknown}, which the table's current schema lacks (top-level "
                             f"columns are {schema.names}); update evolves nothing. Nothing was written")
    arrow = schema.to_arrow()
    for name, value in set.items():
        if not isinstance(value, Reference):
            fit_literal(value, arrow.field(name).type, name, "update")


def apply_set(rows: pa.Table, schema: Schema, set: Mapping[str, Any]) -> pa.Table:
    """``rows`` (in ``schema``'s columns) with each column of ``set`` replaced: by a literal, or by another
    column of the same row (``col("x")``), each cast exactly to the column's type; a value that does not fit
    is a :class:`CastValueError` naming the column and row, a null in a required column a ``RowChangeError``."""
    check_set(set, schema)
    arrow = schema.select(rows.column_names).to_arrow()
    out = rows
    for name, value in set.items():
        target = arrow.field(name)
        if isinstance(value, Reference):
            source = value.column if isinstance(value.column, str) else ".".join(value.column)
            if source not in rows.column_names:
                raise RowChangeError(f"update sets {name!r} from column {source!r}, which is not a top-level column "
                                     f"of the table ({rows.column_names}); nothing was written")
            new = fit_column(rows.column(source), target.type, name, f"col({source!r})")
        else:
            scalar = fit_literal(value, target.type, name, "update")
            new = pa.repeat(scalar, rows.num_rows)
        if not target.nullable and new.null_count:
            raise RowChangeError(f"update sets required column {name!r} to null; nothing was written")
        out = out.set_column(out.column_names.index(name), target, new)
    return out
