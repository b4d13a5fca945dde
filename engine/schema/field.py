"""`Field`: one named, typed, id-carrying column or nested child, with Iceberg's two defaults.

It builds on the types (which hold their children as ``types.FieldLike``, the interface this class
implements), on ``defaults`` (which checks its defaults) and on ``arrow_form`` (its Arrow form).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from fieldshift.errors import InvalidNameError
from fieldshift.schema.defaults import validate_default  # module level: an import statement costs ~1 us per field
from fieldshift.schema.formats.arrow_form import field_to_arrow
from fieldshift.schema.types import (
    FieldType,
    ListType,
    MapType,
    StructType,
    check_primitive,
    logically_equal,
    type_name,
)

__all__ = ["Field"]

_CHECKED_TYPE_IDS = frozenset(t.id for t in (pa.decimal32(1), pa.decimal64(1), pa.decimal128(1), pa.decimal256(1),
                                              pa.binary(1)))


@dataclass(frozen=True, slots=True)
class Field:
    """A column (or struct child, list element, map key/value) identified by ``id``, not by name.

    ``initial_default`` fills rows of files written before the field existed and never changes;
    ``write_default`` fills values a writer does not supply and may change over time. For a struct
    the only defaults are ``None`` and ``{}`` (build the struct from its children's defaults).
    """

    id: int
    name: str
    type: FieldType
    nullable: bool = True
    doc: str | None = None
    initial_default: Any = None
    write_default: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, int) or isinstance(self.id, bool):
            raise TypeError(f"field {self.name!r}: id must be an int, got {self.id!r}")
        if not isinstance(self.name, str) or not self.name:
            raise InvalidNameError(f"field id {self.id}: a field needs a non-empty name, got {self.name!r}")
        if isinstance(self.type, pa.DataType) and self.type.id in _CHECKED_TYPE_IDS:
            check_primitive(self.type, self.name)
        if self.initial_default is not None:
            object.__setattr__(self, "initial_default", validate_default(self, self.initial_default, "initial"))
        if self.write_default is not None:
            object.__setattr__(self, "write_default", validate_default(self, self.write_default, "write"))

    def __hash__(self) -> int:  # defaults may be dicts/lists; equality still compares them
        return hash((self.id, self.name, self.type, self.nullable, self.doc))

    @property
    def required(self) -> bool:
        """Whether a value must be present (not ``nullable``; Iceberg's word)."""
        return not self.nullable

    def with_(self, **changes: Any) -> Field:
        """A copy with some attributes changed (fields are immutable)."""
        return replace(self, **changes)

    def children(self) -> tuple[Field, ...]:
        """Direct nested children: struct fields, a list element, or a map's key and value."""
        t = self.type
        if isinstance(t, StructType):
            return t.fields
        if isinstance(t, ListType):
            return (t.element,)
        if isinstance(t, MapType):
            return (t.key, t.value)
        return ()

    def logically_equal(self, other: Field) -> bool:
        """Same id, name, nullability and values: types compare by what they hold, not how Arrow lays them out
        (``string`` and ``large_string`` are equal), and docs and defaults are ignored.
        """
        return (
            self.id == other.id
            and self.name == other.name
            and self.nullable == other.nullable
            and logically_equal(self.type, other.type)
        )

    def to_arrow(self) -> pa.Field:
        """The Arrow field, with the field id (and doc) in its metadata at every depth, as Parquet
        and Iceberg readers expect (``PARQUET:field_id``).
        """
        return field_to_arrow(self)

    def __str__(self) -> str:
        null = "" if self.nullable else " not null"
        return f"{self.id}: {self.name} {type_name(self.type)}{null}"
