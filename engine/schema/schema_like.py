"""`SchemaLike`: the interface of :class:`fieldshift.schema.model.Schema` that the modules it delegates to rely on.

``Schema.from_json`` / ``to_json`` (``iceberg_json``), ``from_avro`` / ``to_avro`` (``avro_parse``,
``avro_write``), ``update()`` (``schema_update``) and ``str()`` (``display``) are built on those modules, so
they cannot import ``fieldshift.schema.model`` back: they read a schema through this protocol and build new ones
as the class they are given (``cls`` of a class method, or the type of the schema they started from).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from fieldshift.schema.field import Field

__all__ = ["SchemaLike"]


class SchemaLike(Protocol):
    """What the schema's delegates use of a schema: its constructor, attributes and lookups
    (``Schema`` is the one implementation; see its docstrings)."""

    doc: str | None

    def __init__(self, fields: Iterable[Field], *, schema_id: int = 0, identifier_field_ids: Iterable[int] = (),
                 highest_field_id: int | None = None, doc: str | None = None, unmapped_ids: bool = False) -> None: ...

    @property
    def fields(self) -> tuple[Field, ...]: ...

    @property
    def schema_id(self) -> int: ...

    @property
    def highest_field_id(self) -> int: ...

    @property
    def identifier_field_ids(self) -> tuple[int, ...]: ...

    @property
    def unmapped_ids(self) -> bool: ...

    def all_fields(self) -> Iterator[Field]: ...

    def field(self, field_id: int) -> Field: ...

    def has_field(self, field_id: int) -> bool: ...

    def path_of(self, field_id: int) -> str: ...

    def parent_id(self, field_id: int) -> int | None: ...

    def find(self, path: str | Sequence[str]) -> Field: ...
