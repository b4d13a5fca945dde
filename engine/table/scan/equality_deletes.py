"""Equality deletes in a scan of an open table: which rows of an evolved batch some delete file's rows equal.

A delete file stores the values of its equality fields as they were written; each one is read once per
scan, by field id, and evolved into the scan's types, so a delete written before a promotion still
matches (``int`` 5 deletes the ``long`` 5). Rows match when every equality field is equal, a null
matching a null (the spec's ``col IS NULL``). A field the read schema lacks (not selected, or dropped
since the delete was written) is read as well: ``with_equality_fields`` adds its top-level column, from
the newest schema that still had it, to what the scan reads, and the scan drops it from its output.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fieldshift.errors import SchemaEvolutionError, UnsupportedFormatFeatureError
from fieldshift.open_tables.source import EqualityDeletes
from fieldshift.planner import plan
from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.schema.types import StructType
from fieldshift.table.files.data_files import data_file_errors, read_columns
from fieldshift.table.files.parquet_read import decode_schema

__all__ = ["EqualityMatcher", "with_equality_fields"]

_EXTRA = "__fieldshift_eq_{}"


def _path(schema: Schema, field_id: int, where: str) -> tuple[str, ...]:
    """Names from the top-level column down to ``field_id``, which must sit in structs only."""
    names = []
    fid: int | None = field_id
    while fid is not None:
        parent = schema.parent_id(fid)
        if parent is not None and not isinstance(schema.field(parent).type, StructType):
            raise UnsupportedFormatFeatureError(f"{where}: equality field {field_id} ({schema.path_of(field_id)}) is "
                                                "inside a list or map, which equality deletes cannot name")
        names.append(schema.field(fid).name)
        fid = parent
    return tuple(reversed(names))


def _top(schema: Schema, field_id: int) -> Field:
    fid = field_id
    while (parent := schema.parent_id(fid)) is not None:
        fid = parent
    return schema.field(fid)


def with_equality_fields(read_schema: Schema, field_ids: Iterable[int], snapshot_schema: Schema,
                         schemas: Mapping[int, Schema], where: str) -> tuple[Schema, dict[int, tuple[str, ...]]]:
    """``read_schema`` plus the top-level columns holding ``field_ids`` it lacks, and each field's path in it.

    A field is taken from the snapshot's schema, else from the newest older schema that had it (a column
    dropped after the delete was written is still compared, as the Iceberg spec says); an added column
    whose name is taken reads under a reserved name. A field dropped from inside a column the read keeps
    cannot be added without that column's new shape: refused by name."""
    fields = list(read_schema.fields)
    schema = read_schema
    paths: dict[int, tuple[str, ...]] = {}
    for fid in sorted(set(field_ids)):
        if not schema.has_field(fid):
            donor = snapshot_schema if snapshot_schema.has_field(fid) else next(
                (s for _, s in sorted(schemas.items(), reverse=True) if s.has_field(fid)), None)
            if donor is None:
                raise UnsupportedFormatFeatureError(f"{where}: an equality delete names field id {fid}, which no "
                                                    "schema of the table has")
            top = _top(donor, fid)
            if schema.has_field(top.id):
                raise UnsupportedFormatFeatureError(
                    f"{where}: an equality delete compares field {donor.path_of(fid)} (id {fid}), dropped from "
                    f"column {top.name!r} since; fieldshift cannot read it beside that column's current shape")
            taken = {f.name for f in fields}
            added = top if top.name not in taken else Field(top.id, _EXTRA.format(top.id), top.type, top.nullable,
                                                            top.doc, top.initial_default, top.write_default)
            fields.append(added)
            schema = Schema(fields, schema_id=read_schema.schema_id)
        paths[fid] = _path(schema, fid, where)
    return schema, paths


class EqualityMatcher:
    """Reads each equality delete file of a scan once and tells which rows of a batch they delete."""

    def __init__(self, scan_schema: Schema, paths: Mapping[int, tuple[str, ...]], policy: CastPolicy,
                 open_input: Callable[[str], Any], where: str) -> None:
        self.scan_schema, self.paths, self.policy = scan_schema, dict(paths), policy
        self._open, self.where = open_input, where
        self._files: dict[str, dict[int, pa.Array]] = {}
        self._lock = threading.Lock()

    def _read(self, delete: EqualityDeletes) -> dict[int, pa.Array]:
        """The delete file's equality columns (field id -> values in the scan's type)."""
        with self._lock:
            if delete.path in self._files:
                return self._files[delete.path]
        if delete.file_format != "parquet":
            raise UnsupportedFormatFeatureError(f"equality delete file {delete.path} is {delete.file_format}; "
                                                "fieldshift reads Parquet equality deletes")
        tops = list(dict.fromkeys(self.paths[fid][0] for fid in delete.field_ids))
        wanted = self.scan_schema.select(tops)
        with data_file_errors(delete.path):
            pf = pq.ParquetFile(self._open(delete.path), arrow_extensions_enabled=False)
            found = pf.schema_arrow
            projected = decode_schema(found, wanted, policy=self.policy)
            try:
                p = plan(projected, wanted, policy=self.policy)
            except SchemaEvolutionError as e:
                raise type(e)(f"equality delete file {delete.path}: {e}") from None
            batches = [p.apply(b) for b in read_columns(pf, projected.names, 65_536, file_schema=found)]
        table = pa.Table.from_batches(batches, schema=wanted.to_arrow()) if batches else wanted.to_arrow().empty_table()
        out = {fid: _leaf(table, self.paths[fid]) for fid in delete.field_ids}
        with self._lock:
            self._files[delete.path] = out
        return out

    def deleted(self, batch: pa.RecordBatch, deletes: Sequence[EqualityDeletes]) -> np.ndarray | None:
        """A boolean mask of ``batch``'s rows that ``deletes`` delete (None: none of them)."""
        if not deletes or not batch.num_rows:
            return None
        groups: dict[tuple[int, ...], list[EqualityDeletes]] = {}
        for d in deletes:
            groups.setdefault(tuple(d.field_ids), []).append(d)
        mask: np.ndarray | None = None
        for ids, files in groups.items():
            values = [self._read(f) for f in files]
            keys = [pa.concat_arrays([v[fid] for v in values]) for fid in ids]
            if not len(keys[0]):
                continue
            rows = [_leaf(batch, self.paths[fid]) for fid in ids]
            hit = _members(rows, keys)
            mask = hit if mask is None else (mask | hit)
        return mask


def _leaf(data: pa.Table | pa.RecordBatch, path: tuple[str, ...]) -> pa.Array:
    """The values at ``path`` (a null struct makes its children null)."""
    column = data.column(path[0])
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    for name in path[1:]:
        column = pc.struct_field(column, name)
    return column


def _members(rows: list[pa.Array], keys: list[pa.Array]) -> np.ndarray:
    """Which rows equal some key row in every column (null equals null)."""
    if len(rows) == 1:
        found = pc.is_in(rows[0], value_set=pc.unique(keys[0]), skip_nulls=False)
        return found.to_numpy(zero_copy_only=False).astype(bool, copy=False)
    row_codes, key_codes = [], []
    for r, k in zip(rows, keys, strict=True):
        universe = pc.unique(k)
        row_codes.append(pc.index_in(r, value_set=universe, skip_nulls=False))
        key_codes.append(pc.index_in(k, value_set=universe, skip_nulls=False))
    names = [f"k{i}" for i in range(len(rows))]
    left = pa.table([*row_codes, pa.array(np.arange(len(rows[0]), dtype=np.int64))], names=[*names, "row"])
    left = left.filter(functools.reduce(pc.and_, [pc.is_valid(c) for c in row_codes]))
    right = pa.table(key_codes, names=names).group_by(names).aggregate([])
    hits = left.join(right, names, join_type="left semi")["row"].to_numpy()
    out = np.zeros(len(rows[0]), bool)
    out[hits] = True
    return out
