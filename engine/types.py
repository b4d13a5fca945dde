"""The public path of the type model, ``fieldshift.types``: it lives in :mod:`fieldshift.schema.types`."""

from fieldshift.schema.types import (
    MAX_NESTING_DEPTH,
    FieldLike,
    FieldType,
    ListType,
    MapType,
    StructType,
    arrow_depth,
    check_arrow_depth,
    check_primitive,
    container_depth_guard,
    int_range,
    is_nested,
    logical_type,
    logically_equal,
    type_name,
)

__all__ = [
    "MAX_NESTING_DEPTH",
    "FieldLike",
    "FieldType",
    "ListType",
    "MapType",
    "StructType",
    "arrow_depth",
    "check_arrow_depth",
    "check_primitive",
    "container_depth_guard",
    "int_range",
    "is_nested",
    "logical_type",
    "logically_equal",
    "type_name",
]
