"""Arrow <-> fieldshift: ids travel in each Arrow field's metadata under ``PARQUET:field_id``.

This is the key pyarrow's Parquet reader and writer use, so a schema read from a Parquet footer
already carries the ids, and a table written from ``to_arrow()`` stores them in the file. This module
reads Arrow into fields; the other way, which ``Field.to_arrow`` needs below this module, is
:mod:`fieldshift.schema.formats.arrow_form` (its names are importable from here too).
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from fieldshift.errors import InvalidFieldIdError, MissingFieldIdError
from fieldshift.schema.field import Field
from fieldshift.schema.formats.arrow_form import FIELD_ID_KEY, field_to_arrow, fields_to_arrow, type_to_arrow
from fieldshift.schema.type_names import primitive_name
from fieldshift.schema.types import FieldType, ListType, MapType, StructType

__all__ = ["FIELD_ID_KEY", "arrow_field_id", "field_from_arrow", "field_to_arrow", "fields_from_arrow",
           "fields_to_arrow", "type_to_arrow"]


def arrow_field_id(f: pa.Field) -> int | None:
    raw = (f.metadata or {}).get(FIELD_ID_KEY)
    return None if raw is None else _parse_id(raw, f.name)


def _parse_id(raw: bytes, path: str) -> int:
    """A ``PARQUET:field_id`` value: a whole number from 0 (Paimon numbers fields from 0, Iceberg from 1;
    negative ids are fieldshift's own, for columns nothing identifies)."""
    try:
        fid: int | None = int(raw)
    except ValueError:
        fid = None  # unparsable: refused below, as a negative id is
    if fid is None or fid < 0:
        raise InvalidFieldIdError(
            f"Arrow field {path!r} has {FIELD_ID_KEY.decode()}={raw.decode(errors='replace')!r}; field ids "
            "are whole numbers from 0. Remove the metadata and read with a name mapping, or renumber it"
        )
    return fid


IdSource = Callable[[str], int]


def field_from_arrow(f: pa.Field, path: str, next_id: IdSource | None, name: str | None = None) -> Field:
    """Convert one Arrow field (recursively); ``next_id`` assigns ids to fields that carry none.

    ``name`` replaces the Arrow name (list elements are always "element", whatever Arrow calls them)."""
    meta = f.metadata or {}  # built anew on every access: read once
    raw = meta.get(FIELD_ID_KEY)
    if raw is not None:
        fid = _parse_id(raw, path)
    elif next_id is None:
        raise MissingFieldIdError(
            f"Arrow field {path!r} ({f.type}) has no {FIELD_ID_KEY.decode()!r} metadata. Pass "
            "assign_ids=True to number fields in order, or read the file with a name mapping."
        )
    else:
        fid = next_id(path)
    doc = meta.get(b"doc")
    return Field(
        id=fid,
        name=f.name if name is None else name,
        type=_type_from_arrow(f.type, path, next_id),
        nullable=f.nullable,
        doc=doc.decode() if doc is not None else None,
    )


_NESTED_OR_WRAPPED = frozenset(t.id for t in (
    pa.struct([]), pa.map_(pa.int8(), pa.int8()), pa.list_(pa.int8()), pa.large_list(pa.int8()),
    pa.list_view(pa.int8()), pa.large_list_view(pa.int8()), pa.list_(pa.int8(), 1),
    pa.dictionary(pa.int8(), pa.int8()), pa.run_end_encoded(pa.int32(), pa.int8()),
    pa.uuid(),  # every extension type shares this id
))
_PRIMITIVES: dict[pa.DataType, pa.DataType] = {}


def _type_from_arrow(t: pa.DataType, path: str, next_id: IdSource | None) -> FieldType:
    if t.id not in _NESTED_OR_WRAPPED:
        return _primitive(t, path)
    if pa.types.is_dictionary(t):
        return _type_from_arrow(t.value_type, path, next_id)
    if isinstance(t, pa.BaseExtensionType):  # e.g. arrow.uuid: the values are its storage type
        return _type_from_arrow(t.storage_type, path, next_id)
    if pa.types.is_struct(t):
        children = [t.field(i) for i in range(t.num_fields)]
        return StructType(tuple(field_from_arrow(c, f"{path}.{c.name}", next_id) for c in children))
    if pa.types.is_map(t):
        return MapType(
            key=field_from_arrow(t.key_field, f"{path}.key", next_id),
            value=field_from_arrow(t.item_field, f"{path}.value", next_id),
            keys_sorted=t.keys_sorted,
        )
    for check, variant in (
        (pa.types.is_large_list, "large_list"),
        (pa.types.is_list_view, "list_view"),
        (pa.types.is_large_list_view, "large_list_view"),
        (pa.types.is_fixed_size_list, "fixed_size_list"),
        (pa.types.is_list, "list"),
    ):
        if check(t):
            element = field_from_arrow(t.value_field, f"{path}.element", next_id, "element")
            size = t.list_size if variant == "fixed_size_list" else None
            return ListType(element=element, variant=variant, size=size)
    return _type_from_arrow(t.value_type, path, next_id)  # run-end encoded


def _primitive(t: pa.DataType, path: str) -> pa.DataType:
    """The one shared instance of a storable primitive type (plans memoise decisions per instance)."""
    shared = _BY_TYPE_ID.get(t.id)  # hashing a pa.DataType formats it: 0.25-1 us
    if shared is not None:
        return shared
    shared = _PRIMITIVES.get(t)
    if shared is None:
        _check_storable(t, path)
        if len(_PRIMITIVES) < 4096:
            _PRIMITIVES[t] = t
        shared = t
    if t.id in _PARAMETERLESS:
        _BY_TYPE_ID[t.id] = shared
    return shared


_PARAMETERLESS = frozenset(t.id for t in (
    pa.null(), pa.bool_(), pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
    pa.uint64(), pa.float16(), pa.float32(), pa.float64(), pa.string(), pa.large_string(), pa.string_view(),
    pa.binary(), pa.large_binary(), pa.binary_view(), pa.date32(), pa.date64(),
))
"""Arrow type ids that name exactly one type: their shared instance is found by id, without hashing."""
_BY_TYPE_ID: dict[int, pa.DataType] = {}


class _TooDeep(Exception):
    """A column nests deeper than the walk's limit (``fields_from_arrow`` returns None)."""


_STRUCT_ID = pa.struct([]).id
_MAP_ID = pa.map_(pa.int8(), pa.int8()).id
_LIST_IDS = {pa.list_(pa.int8()).id: "list", pa.large_list(pa.int8()).id: "large_list",
             pa.list_view(pa.int8()).id: "list_view", pa.large_list_view(pa.int8()).id: "large_list_view",
             pa.list_(pa.int8(), 1).id: "fixed_size_list"}
_DICTIONARY_ID = pa.dictionary(pa.int8(), pa.int8()).id


def fields_from_arrow(schema: pa.Schema, next_id: Callable[[], int], max_depth: int) -> list[Field] | None:
    """``field_from_arrow`` of every column in one walk, the nesting depth checked on the way: the fast
    path of wide schemas, for callers that keep the general walk for errors.

    Gives the same fields as ``field_from_arrow`` with ``next_id`` (called in the same order, without a
    path), or None when a column spans more than ``max_depth`` Parquet levels (counted as
    ``types.arrow_depth`` counts them). Builds no paths: an invalid id or type raises an error without
    the right path (``InvalidFieldIdError``, ``TypeError``, ``ValueError``), which the caller answers by
    taking the general walk, whose errors name the column."""
    try:
        return [_fast_field(f, None, 1, next_id, max_depth) for f in schema]
    except _TooDeep:
        return None


def _fast_field(f: pa.Field, name: str | None, depth: int, next_id: Callable[[], int], max_depth: int) -> Field:
    """``field_from_arrow`` of a field whose type sits at Parquet level ``depth``."""
    if depth > max_depth:
        raise _TooDeep
    meta = f.metadata
    doc = None
    if meta is None:
        fid = next_id()
    else:
        raw = meta.get(FIELD_ID_KEY)
        if raw is None:
            fid = next_id()
        else:
            fid = int(raw)
            if fid < 0:
                raise ValueError(f"field id {fid} is negative")
        raw_doc = meta.get(b"doc")
        if raw_doc is not None:
            doc = raw_doc.decode()
    t = f.type
    ftype = _BY_TYPE_ID.get(t.id)
    if ftype is None:
        ftype = _fast_type(t, depth, next_id, max_depth)
    return Field(fid, f.name if name is None else name, ftype, f.nullable, doc)


def _fast_type(t: pa.DataType, depth: int, next_id: Callable[[], int], max_depth: int) -> FieldType:
    """``_type_from_arrow`` at Parquet level ``depth`` (wrappers' values sit at their own level)."""
    tid = t.id
    if tid not in _NESTED_OR_WRAPPED:
        return _primitive(t, "")
    if tid == _STRUCT_ID:  # the ids of nested and wrapper types are distinct: any order of tests will do
        return StructType(tuple([_fast_field(t.field(i), None, depth + 1, next_id, max_depth)
                                 for i in range(t.num_fields)]))
    variant = _LIST_IDS.get(tid)
    if variant is not None:
        element = _fast_field(t.value_field, "element", depth + 2, next_id, max_depth)
        return ListType(element=element, variant=variant, size=t.list_size if variant == "fixed_size_list" else None)
    if tid == _MAP_ID:
        return MapType(key=_fast_field(t.key_field, None, depth + 2, next_id, max_depth),
                       value=_fast_field(t.item_field, None, depth + 2, next_id, max_depth),
                       keys_sorted=t.keys_sorted)
    if tid == _DICTIONARY_ID:
        return _fast_type(t.value_type, depth, next_id, max_depth)
    if isinstance(t, pa.BaseExtensionType):
        return _fast_type(t.storage_type, depth, next_id, max_depth)
    return _fast_type(t.value_type, depth, next_id, max_depth)  # run-end encoded


def _check_storable(t: pa.DataType, path: str) -> None:
    try:
        primitive_name(t)
    except TypeError:
        raise TypeError(
            f"column {path!r} has Arrow type {t}, which Parquet does not store; fieldshift supports "
            "the types Parquet stores (see the README's type table)"
        ) from None
