"""Arrow <-> fieldshift: ids travel in each Arrow field's metadata under ``PARQUET:field_id``.

This is the key pyarrow's Parquet reader and writer use, so a schema read from a Parquet footer
already carries the ids, and a table written from ``to_arrow()`` stores them in the file.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from fieldshift.errors import MissingFieldIdError
from fieldshift.field import Field
from fieldshift.types import FieldType, ListType, MapType, StructType

__all__ = ["FIELD_ID_KEY", "arrow_field_id", "field_from_arrow", "field_to_arrow", "type_to_arrow"]

FIELD_ID_KEY = b"PARQUET:field_id"


def arrow_field_id(f: pa.Field) -> int | None:
    raw = (f.metadata or {}).get(FIELD_ID_KEY)
    return int(raw) if raw is not None else None


def type_to_arrow(t: FieldType) -> pa.DataType:
    if isinstance(t, StructType):
        return pa.struct([field_to_arrow(f) for f in t.fields])
    if isinstance(t, ListType):
        element = field_to_arrow(t.element)
        if t.variant == "large_list":
            return pa.large_list(element)
        if t.variant == "list_view":
            return pa.list_view(element)
        if t.variant == "large_list_view":
            return pa.large_list_view(element)
        if t.variant == "fixed_size_list":
            return pa.list_(element, t.size)
        return pa.list_(element)
    if isinstance(t, MapType):
        return pa.map_(field_to_arrow(t.key), field_to_arrow(t.value), keys_sorted=t.keys_sorted)
    return t


def field_to_arrow(f: Field) -> pa.Field:
    meta = {FIELD_ID_KEY: str(f.id).encode()}
    if f.doc is not None:
        meta[b"doc"] = f.doc.encode()
    return pa.field(f.name, type_to_arrow(f.type), nullable=f.nullable, metadata=meta)


IdSource = Callable[[str], int]


def field_from_arrow(f: pa.Field, path: str, next_id: IdSource | None) -> Field:
    """Convert one Arrow field (recursively); ``next_id`` assigns ids to fields that carry none."""
    fid = arrow_field_id(f)
    if fid is None:
        if next_id is None:
            raise MissingFieldIdError(
                f"Arrow field {path!r} ({f.type}) has no {FIELD_ID_KEY.decode()!r} metadata. Pass "
                "assign_ids=True to number fields in order, or read the file with a name mapping."
            )
        fid = next_id(path)
    doc = (f.metadata or {}).get(b"doc")
    return Field(
        id=fid,
        name=f.name,
        type=_type_from_arrow(f.type, path, next_id),
        nullable=f.nullable,
        doc=doc.decode() if doc is not None else None,
    )


def _type_from_arrow(t: pa.DataType, path: str, next_id: IdSource | None) -> FieldType:
    if pa.types.is_dictionary(t):
        return _type_from_arrow(t.value_type, path, next_id)
    if isinstance(t, pa.BaseExtensionType):  # e.g. arrow.uuid: the values are its storage type
        return _type_from_arrow(t.storage_type, path, next_id)
    if pa.types.is_struct(t):
        return StructType(tuple(field_from_arrow(t.field(i), f"{path}.{t.field(i).name}", next_id)
                                for i in range(t.num_fields)))
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
            element = field_from_arrow(t.value_field, f"{path}.element", next_id)
            size = t.list_size if variant == "fixed_size_list" else None
            return ListType(element=element, variant=variant, size=size)
    if pa.types.is_run_end_encoded(t):
        return _type_from_arrow(t.value_type, path, next_id)
    _check_storable(t, path)
    return t


def _check_storable(t: pa.DataType, path: str) -> None:
    from fieldshift.type_names import primitive_name

    try:
        primitive_name(t)
    except TypeError:
        raise TypeError(
            f"column {path!r} has Arrow type {t}, which Parquet does not store; fieldshift supports "
            "the types Parquet stores (see the README's type table)"
        ) from None
