"""`Schema`: an immutable, versioned list of id-carrying fields with lookups by id and by path.

The schema model's facade: the conversions to and from Iceberg JSON and Avro, ``update()`` and ``str()``
delegate to modules below this one (``iceberg_json``, ``avro_parse``, ``avro_write``, ``schema_update``,
``display``), which know a schema by its interface (``schema_like.SchemaLike``) and build new ones as the
class they are given, so none of them imports this module. Paths are ``field_paths``' (re-exported here).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from fieldshift.errors import (
    DuplicateFieldError,
    InvalidFieldIdError,
    InvalidNameError,
    NestingDepthError,
    SchemaEvolutionError,
    UnknownFieldError,
)
from fieldshift.gc_pause import paused_gc
from fieldshift.schema.display import schema_tree
from fieldshift.schema.field import Field
from fieldshift.schema.field_paths import join_path, split_path
from fieldshift.schema.formats.arrow_conversion import arrow_field_id, field_from_arrow, fields_to_arrow
from fieldshift.schema.formats.avro_parse import schema_from_avro
from fieldshift.schema.formats.avro_write import schema_to_avro
from fieldshift.schema.formats.iceberg_json import schema_from_json, schema_to_json
from fieldshift.schema.schema_update import SchemaUpdate
from fieldshift.schema.types import MAX_NESTING_DEPTH, ListType, MapType, StructType, check_arrow_depth

__all__ = ["Schema", "join_path", "split_path"]

MAX_FIELD_ID = 2**31 - 1  # Parquet and Iceberg store field ids as int32
ELEMENT_ALIASES = ("element", "item")


class Schema:
    """An immutable table schema: fields with ids at every depth, a version id and key fields.

    Equality compares structure exactly (ids, names, physical types, nullability, docs, defaults);
    use :meth:`logically_equal` to ignore physical variants such as large_string vs string.
    """

    __slots__ = ("_arrow", "_arrow_types", "_by_id", "_fields", "_fp", "_highest", "_ident", "_parents", "_paths",
                 "_schema_id", "_top", "_unmapped", "doc")

    def __init__(
        self,
        fields: Iterable[Field],
        *,
        schema_id: int = 0,
        identifier_field_ids: Iterable[int] = (),
        highest_field_id: int | None = None,
        doc: str | None = None,
        unmapped_ids: bool = False,
    ) -> None:
        """``unmapped_ids`` is internal: a file schema recovered from data numbers the columns no id
        identifies -1, -2, ... (they never match a read field); every other id is 0 or more (Iceberg
        numbers fields from 1, Paimon from 0)."""
        self._fields = tuple(fields)
        self._unmapped = unmapped_ids
        self._schema_id = int(schema_id)
        self._ident = tuple(identifier_field_ids)
        self.doc = doc
        self._fp: str | None = None
        self._arrow: pa.Schema | None = None
        self._arrow_types: dict[int, pa.DataType] | None = None
        self._by_id: dict[int, Field] = {}
        self._paths: dict[int, tuple[str, ...]] | None = None  # both on first need (_places)
        self._parents: dict[int, int | None] | None = None
        self._top: dict[str, Field] | None = None  # top-level name -> field, built on first lookup
        self._index(self._fields, (), None, 1)
        top = max(self._by_id, default=0)
        if highest_field_id is not None and highest_field_id < top:
            raise SchemaEvolutionError(
                f"highest_field_id {highest_field_id} is below the largest field id in use ({top})"
            )
        self._highest = top if highest_field_id is None else int(highest_field_id)
        for fid in self._ident:
            self._check_identifier(fid)

    # -- construction helpers -------------------------------------------------------------------
    def _index(self, fields: Sequence[Field], prefix: tuple[str, ...], parent: int | None, depth: int) -> None:
        """Index ``fields`` at Parquet level ``depth`` (a struct's children one deeper, a list's or map's
        two): ids, names and the nesting limit are checked on the way."""
        container = self._container(parent)
        sibling_names = not isinstance(container, (ListType, MapType))
        if depth > MAX_NESTING_DEPTH:
            raise NestingDepthError(
                f"{join_path(prefix)!r} nests deeper than the {MAX_NESTING_DEPTH} Parquet levels readers "
                "accept (a struct is one level, a list or map two): flatten it, or store the deep part as text"
            )
        seen: set[str] = set()
        by_id, unmapped = self._by_id, self._unmapped
        for f in fields:
            fid = f.id
            if not 0 <= fid <= MAX_FIELD_ID and not (unmapped and fid < 0):
                raise InvalidFieldIdError(
                    f"field {join_path((*prefix, f.name))!r} has id {fid}; field ids are whole numbers from 0 "
                    f"to {MAX_FIELD_ID} (number them from 1, or let Schema.from_arrow(assign_ids=True) do it)"
                )
            if sibling_names:
                if f.name in seen:
                    raise DuplicateFieldError(
                        f"two fields are named {join_path((*prefix, f.name))!r} at the same level; "
                        "names must be unique among siblings"
                    )
                seen.add(f.name)
            if fid in by_id:
                first = next(path for g, path, _ in self._walk_places(self._fields, (), None) if g.id == fid)
                raise DuplicateFieldError(
                    f"field id {fid} is used by both {join_path(first)!r} and "
                    f"{join_path((*prefix, f.name))!r}; every field needs its own id"
                )
            by_id[fid] = f
            if not isinstance(f.type, pa.DataType):
                path = (*prefix, f.name if sibling_names else self._child_token(container, f))
                self._index(f.children(), path, fid, depth + (1 if isinstance(f.type, StructType) else 2))

    def _walk_places(self, fields: Sequence[Field], prefix: tuple[str, ...],
                     parent: int | None) -> Iterator[tuple[Field, tuple[str, ...], int | None]]:
        """(field, path, parent id) of every field, in ``_index``'s order (parents before children)."""
        container = self._container(parent)
        sibling_names = not isinstance(container, (ListType, MapType))
        for f in fields:
            path = (*prefix, f.name if sibling_names else self._child_token(container, f))
            yield f, path, parent
            if not isinstance(f.type, pa.DataType):
                yield from self._walk_places(f.children(), path, f.id)

    def _places(self) -> tuple[dict[int, tuple[str, ...]], dict[int, int | None]]:
        """Every field's path and parent id, walked on first need: a schema recovered from a file to plan
        with never asks, and skipping them makes its index ~40% cheaper."""
        if self._paths is None or self._parents is None:
            places = list(self._walk_places(self._fields, (), None))
            self._parents = {f.id: parent for f, _, parent in places}
            self._paths = {f.id: path for f, path, _ in places}
        return self._paths, self._parents

    def _container(self, parent: int | None) -> Any:
        return None if parent is None else self._by_id[parent].type

    @staticmethod
    def _child_token(container: ListType | MapType, f: Field) -> str:
        if isinstance(container, ListType):
            return "element"
        return "key" if container.key.id == f.id else "value"

    def _check_identifier(self, fid: int) -> None:
        if fid not in self._by_id:
            raise UnknownFieldError(f"identifier field id {fid}", [])
        f = self._by_id[fid]
        ancestors = []
        parents = self._places()[1]
        parent = parents[fid]
        while parent is not None:
            ancestors.append(self._by_id[parent])
            parent = parents[parent]
        if any(not isinstance(a.type, StructType) for a in ancestors):
            raise SchemaEvolutionError(
                f"identifier field {self.path_of(fid)!r} sits inside a list or map; "
                "identifier fields must be primitives reachable through structs only"
            )
        optional = next((a for a in ancestors if a.nullable), None)
        if optional is not None:  # Iceberg's rule: a null struct would make the key null
            raise SchemaEvolutionError(
                f"identifier field {self.path_of(fid)!r} sits inside the optional struct "
                f"{self.path_of(optional.id)!r}; make the struct required, or pick a field outside it"
            )
        if f.nullable or not isinstance(f.type, pa.DataType):
            raise SchemaEvolutionError(
                f"identifier field {self.path_of(fid)!r} must be a required primitive "
                f"(it is {'nullable' if f.nullable else str(f.type)})"
            )

    # -- basic properties -----------------------------------------------------------------------
    @property
    def fields(self) -> tuple[Field, ...]:
        """The top-level fields, in order."""
        return self._fields

    @property
    def schema_id(self) -> int:
        """This version's id in its table's history; files record the id of the schema they were written with."""
        return self._schema_id

    @property
    def highest_field_id(self) -> int:
        """The highest field id ever assigned, dropped fields included: new fields are numbered after it, so an
        id is never reused.
        """
        return self._highest

    @property
    def identifier_field_ids(self) -> tuple[int, ...]:
        """The ids of the primary-key (identifier) fields; empty for a table without a key."""
        return self._ident

    @property
    def names(self) -> list[str]:
        """The top-level column names, in order."""
        return [f.name for f in self._fields]

    def __len__(self) -> int:
        return len(self._fields)

    @property
    def field_count(self) -> int:
        """Fields at every depth (struct fields, list elements, map keys and values included)."""
        return len(self._by_id)

    def __iter__(self) -> Iterator[Field]:
        return iter(self._fields)

    def __getitem__(self, key: int | str) -> Field:
        if isinstance(key, int):
            return self._fields[key]
        return self.find(key)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Schema):
            return NotImplemented
        return (
            self._fields == other._fields
            and self._schema_id == other._schema_id
            and self._ident == other._ident
            and self._highest == other._highest
        )

    def __hash__(self) -> int:
        return hash((self._fields, self._schema_id, self._ident, self._highest))

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild,
            (self._fields, self._schema_id, self._ident, self._highest, self.doc, self._unmapped),
        )

    @property
    def unmapped_ids(self) -> bool:
        """True for a file schema recovered from data, where unidentified columns have negative ids."""
        return self._unmapped

    def logically_equal(self, other: Schema) -> bool:
        """Same ids, names, nullability and logical types at every depth (physical variants aside)."""
        return len(self._fields) == len(other._fields) and all(
            a.logically_equal(b) for a, b in zip(self._fields, other._fields, strict=True)
        )

    def same_structure(self, other: Schema) -> bool:
        """Same fields exactly, ignoring schema id and highest field id."""
        return self._fields == other._fields

    # -- lookups --------------------------------------------------------------------------------
    def all_fields(self) -> Iterator[Field]:
        """Every field at every depth, parents before children."""
        return iter(self._by_id.values())

    def field(self, field_id: int) -> Field:
        """The field with ``field_id`` at any depth.

        Raises:
            UnknownFieldError: no field has that id.
        """
        try:
            return self._by_id[field_id]
        except KeyError:
            raise UnknownFieldError(f"field id {field_id}", []) from None

    def has_field(self, field_id: int) -> bool:
        """Whether a field with ``field_id`` exists at any depth."""
        return field_id in self._by_id

    def path_of(self, field_id: int) -> str:
        """The dotted path of field ``field_id`` (names holding dots backtick-quoted; ``find`` reads it back)."""
        return join_path(self._places()[0][self.field(field_id).id])

    def parent_id(self, field_id: int) -> int | None:
        """The id of the struct, list or map holding field ``field_id``; None for a top-level field."""
        self.field(field_id)
        return self._places()[1][field_id]

    def find(self, path: str | Sequence[str]) -> Field:
        """The field at a path: a list/tuple of names, or a dotted string (``a.b``, ``l.element.x``,
        ``m.value.y``, ```a.b`.c``); case-sensitive. A string that is exactly a top-level name
        (``"a.b"`` with no struct ``a``) finds that column too."""
        try:
            parts = split_path(path)
        except InvalidNameError:
            if isinstance(path, str) and path in self._top_names():
                return self._top_names()[path]
            raise
        try:
            return self._find_parts(parts)
        except UnknownFieldError:
            if isinstance(path, str) and len(parts) > 1 and path in self._top_names():
                return self._top_names()[path]
            raise

    def _find_parts(self, parts: tuple[str, ...]) -> Field:
        level: Sequence[Field] = self._fields
        container: Any = None
        found: Field | None = None
        for i, part in enumerate(parts):
            found = self._top_names().get(part) if i == 0 else self._child(level, container, part)
            if found is None:
                shown = join_path(parts[: i + 1])
                raise UnknownFieldError(shown, self._candidates(level, container))
            container = found.type
            level = found.children()
        assert found is not None
        return found

    @staticmethod
    def _child(level: Sequence[Field], container: Any, part: str) -> Field | None:
        if isinstance(container, ListType):
            return container.element if part in ELEMENT_ALIASES else None
        if isinstance(container, MapType):
            return {"key": container.key, "value": container.value}.get(part)
        return next((f for f in level if f.name == part), None)

    @staticmethod
    def _candidates(level: Sequence[Field], container: Any) -> list[str]:
        if isinstance(container, ListType):
            return ["element"]
        if isinstance(container, MapType):
            return ["key", "value"]
        return [f.name for f in level]

    def _top_names(self) -> dict[str, Field]:
        """Top-level name -> field (one dict per schema: a lookup must not walk 10,000 columns)."""
        if self._top is None:
            self._top = {f.name: f for f in self._fields}
        return self._top

    def fingerprint(self) -> str:
        """A stable digest of the structure (not of the schema id); plan caches key on it."""
        if self._fp is None:
            # the Arrow IPC form holds names, physical types, nullability, ids and docs; defaults aside
            defaults = [(f.id, f.initial_default, f.write_default) for f in self._by_id.values()
                        if f.initial_default is not None or f.write_default is not None]
            digest = hashlib.sha256(self.to_arrow().serialize().to_pybytes())
            digest.update(repr(defaults).encode())
            self._fp = digest.hexdigest()[:32]
        return self._fp

    def select(self, names: Iterable[str | Sequence[str]]) -> Schema:
        """A schema of only the named top-level columns, in the order given (names are taken as they
        are, dots included, unless quoted with backticks or given as a one-part list)."""
        names = list(names)
        if names == self.names and not self._ident and self.doc is None:
            return self  # every column in order: the same schema (and its cached Arrow form and fingerprint)
        chosen = [self.find((n,) if isinstance(n, str) and n in self._top_names() else n) for n in names]
        missing = [f for f in chosen if self._places()[1][f.id] is not None]
        if missing:
            raise SchemaEvolutionError(f"select() takes top-level columns; {missing[0].name!r} is nested")
        return Schema(chosen, schema_id=self._schema_id, highest_field_id=self._highest, unmapped_ids=self._unmapped)

    # -- conversions ----------------------------------------------------------------------------
    @classmethod
    def from_arrow(
        cls, schema: pa.Schema, *, assign_ids: bool = False, schema_id: int = 0,
        identifier_field_ids: Iterable[int] = (),
    ) -> Schema:
        """Read ids from ``PARQUET:field_id`` metadata; ``assign_ids=True`` numbers id-less fields."""
        check_arrow_depth(schema)  # before the recursive walks below
        next_id = None
        if assign_ids:
            used = set(_ids_in_arrow(schema, arrow_field_id))
            counter = (i for i in itertools.count(1) if i not in used)
            next_id = lambda _path: next(counter)  # noqa: E731
        fields = [field_from_arrow(f, f.name, next_id) for f in schema]
        return cls(fields, schema_id=schema_id, identifier_field_ids=identifier_field_ids)

    def to_arrow(self) -> pa.Schema:
        """The Arrow schema with ids in field metadata (built once: schemas are immutable)."""
        if self._arrow is None:
            with paused_gc():  # one pa.Field per column, no cycles (gc_pause)
                fields, self._arrow_types = fields_to_arrow(self._fields)
                self._arrow = pa.schema(fields)
        return self._arrow

    def arrow_types(self) -> Mapping[int, pa.DataType]:
        """Every field's Arrow type by id, at every depth: those of ``to_arrow()``, kept as it built them
        (planning looks up thousands; reading them back out of the Arrow schema builds a wrapper each)."""
        if self._arrow_types is None:
            self.to_arrow()
        assert self._arrow_types is not None
        return self._arrow_types

    @classmethod
    def from_json(cls, text: str | dict[str, Any]) -> Schema:
        """Parse Iceberg table-schema JSON (types Iceberg lacks use Arrow-style names)."""
        return schema_from_json(text, cls)

    def to_json(self, *, indent: int | None = None) -> str:
        """The schema as Iceberg's JSON (``schema-id``, ``identifier-field-ids``, defaults); ``from_json``
        reads it back."""
        return schema_to_json(self, indent=indent)

    @classmethod
    def from_avro(cls, avro: str | dict[str, Any], *, schema_id: int = 0, assign_ids: bool = True) -> Schema:
        """An Avro record schema; ids from Iceberg's ``field-id`` attributes, else assigned in order."""
        return schema_from_avro(avro, cls, schema_id=schema_id, assign_ids=assign_ids)

    def to_avro(self, name: str = "record") -> dict[str, Any]:
        """An Avro record schema (``name`` its record name), field ids in Iceberg's ``field-id`` attributes."""
        return schema_to_avro(self, name=name)

    def update(self, *, policy: Any = None) -> SchemaUpdate[Schema]:
        """A builder of schema changes; ``.apply()`` gives a new schema with ``schema_id + 1``."""
        return SchemaUpdate(self, policy=policy)

    # -- display --------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"Schema(schema_id={self._schema_id}, fields=[{', '.join(str(f) for f in self._fields)}])"

    def __str__(self) -> str:
        return schema_tree(self)


def _rebuild(fields: tuple[Field, ...], schema_id: int, ident: tuple[int, ...], highest: int,
             doc: str | None, unmapped: bool = False) -> Schema:
    return Schema(fields, schema_id=schema_id, identifier_field_ids=ident, highest_field_id=highest,
                  doc=doc, unmapped_ids=unmapped)


def _ids_in_arrow(schema: pa.Schema, get_id: Any) -> Iterator[int]:
    def walk(f: pa.Field) -> Iterator[int]:
        fid = get_id(f)
        if fid is not None:
            yield fid
        t = f.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                yield from walk(t.field(i))
        elif pa.types.is_map(t):
            yield from walk(t.key_field)
            yield from walk(t.item_field)
        elif hasattr(t, "value_field"):
            yield from walk(t.value_field)

    for f in schema:
        yield from walk(f)
