"""The schema data was written with, recovered from its Arrow schema: ids, a name mapping, or names.

Columns the resolution cannot identify get negative ids (``Schema(unmapped_ids=True)``; ids a file
carries are 0 or more), which never match a read field: they keep
their position (plans address columns by position) and are ignored, as unknown file columns are.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from fieldshift.errors import FieldshiftError, InvalidOptionError, MissingFieldIdError
from fieldshift.options import MatchMode, check_option
from fieldshift.schema.formats.arrow_conversion import FIELD_ID_KEY, arrow_field_id, field_from_arrow, fields_from_arrow
from fieldshift.schema.model import Schema
from fieldshift.schema.types import MAX_NESTING_DEPTH, check_arrow_depth

__all__ = ["file_schema_of", "has_field_ids", "without_field_ids"]


def has_field_ids(schema: pa.Schema) -> bool:
    """Does any field (at any struct depth) carry a ``PARQUET:field_id``?"""
    return _has_any_id(schema)


def without_field_ids(schema: pa.Schema) -> pa.Schema:
    """``schema`` with every ``PARQUET:field_id`` removed, at any depth: for files whose ids are not the
    table's (a format that resolves columns by name), so only a name mapping identifies their columns."""
    def strip(f: pa.Field) -> pa.Field:
        t = f.type
        if pa.types.is_struct(t):
            t = pa.struct([strip(t.field(i)) for i in range(t.num_fields)])
        elif pa.types.is_large_list(t):
            t = pa.large_list(strip(t.value_field))
        elif pa.types.is_list(t):
            t = pa.list_(strip(t.value_field))
        elif pa.types.is_map(t):
            t = pa.map_(strip(t.key_field), strip(t.item_field), t.keys_sorted)
        meta = {k: v for k, v in (f.metadata or {}).items() if k != FIELD_ID_KEY}
        return pa.field(f.name, t, f.nullable, meta or None)

    return pa.schema([strip(f) for f in schema], metadata=schema.metadata)


def _has_any_id(schema: pa.Schema) -> bool:
    def walk(f: pa.Field) -> Iterator[bool]:
        yield arrow_field_id(f) is not None
        t = f.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                yield from walk(t.field(i))

    return any(any(walk(f)) for f in schema)


def file_schema_of(arrow_schema: pa.Schema, read_schema: Schema | None = None, *,
                   name_mapping: Any = None, match: MatchMode = "id") -> Schema:
    """Recover the file ``Schema`` of data with this Arrow schema.

    ``match="id"`` (default) uses ``PARQUET:field_id`` metadata, else the ``name_mapping`` (Iceberg
    aliases), else fails with advice. ``match="name"`` assigns ids by matching names to the read
    schema: it can resurrect a dropped column whose name was re-added, so use it only for data that
    never saw a drop.
    """
    check_option("match", match, MatchMode)
    if match == "id":
        fast = _with_ids(arrow_schema)
        if fast is not None:
            return fast
    check_arrow_depth(arrow_schema)  # before the recursive walks below
    if match == "id" and not _has_any_id(arrow_schema):
        if name_mapping is None:
            raise MissingFieldIdError(
                f"the data's columns {arrow_schema.names} carry no field ids ({FIELD_ID_KEY.decode()!r} "
                "metadata). Say which schema the data was WRITTEN with (not the current one, under which "
                "renamed columns would read NULL): fs.evolve(data, read_schema, file_schema=<that schema>), "
                "or name_mapping=NameMapping.from_schema(<that schema>) (the table's Iceberg name mapping, "
                "with aliases for renamed columns, when files of several versions mix)."
            )
        arrow_schema = name_mapping.apply(arrow_schema)
    elif match == "name":
        if read_schema is None:
            raise InvalidOptionError("match='name' needs the read schema to take ids from; pass read_schema")
        arrow_schema = _ids_by_name(arrow_schema, read_schema)
    unknown = itertools.count(-1, -1)
    fields = [field_from_arrow(f, f.name, lambda _path: next(unknown)) for f in arrow_schema]
    return Schema(fields, unmapped_ids=True)


def _with_ids(arrow_schema: pa.Schema) -> Schema | None:
    """The common case, data carrying its ids, in one depth-checked walk (``fields_from_arrow``); None
    sends the caller down the general path, which raises the same errors, in the same order, with paths."""
    unknown = itertools.count(-1, -1)
    try:
        fields = fields_from_arrow(arrow_schema, unknown.__next__, MAX_NESTING_DEPTH)
    except (FieldshiftError, TypeError, ValueError):
        return None
    if fields is None or not _has_any_id(arrow_schema):  # too deep, or ids from a name mapping
        return None
    return Schema(fields, unmapped_ids=True)


def _ids_by_name(arrow_schema: pa.Schema, read_schema: Schema) -> pa.Schema:
    def tag(f: pa.Field, path: tuple[str, ...]) -> pa.Field:
        try:
            fid = read_schema.find(path).id
        except KeyError:
            fid = None
        t = f.type
        if pa.types.is_struct(t):
            t = pa.struct([tag(t.field(i), (*path, t.field(i).name)) for i in range(t.num_fields)])
        elif pa.types.is_map(t):
            t = pa.map_(tag(t.key_field, (*path, "key")), tag(t.item_field, (*path, "value")))
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            ctor = pa.large_list if pa.types.is_large_list(t) else pa.list_
            t = ctor(tag(t.value_field, (*path, "element")))
        meta = dict(f.metadata or {})
        if fid is not None:
            meta[FIELD_ID_KEY] = str(fid).encode()
        return pa.field(f.name, t, f.nullable, meta)

    return pa.schema([tag(f, (f.name,)) for f in arrow_schema])
