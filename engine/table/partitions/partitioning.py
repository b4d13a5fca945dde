"""Partition specs: versioned like schemas, fields bound to source columns by field id.

A spec is a list of fields, each a source column (by id, so renames keep it), a transform and a
name; partition field ids start at 1000 and are never reused for another (source, transform), as in
Iceberg. Specs are written to the catalog as Iceberg's JSON (``spec-id``, ``fields`` with
``source-id``, ``field-id``, ``transform``, ``name``). Terms are accepted in Iceberg's Spark SQL forms:
``ts``, ``day(ts)`` / ``days(ts)``, ``hours(ts)``, ``bucket(16, id)``, ``truncate(4, name)`` (or
``truncate(name, 4)``), ``void(x)``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fieldshift.errors import PartitionSpecError, UnknownFieldError
from fieldshift.schema.model import Schema, split_path
from fieldshift.schema.types import ListType, MapType
from fieldshift.table.partitions.transforms import TIME_TRANSFORMS, Transform, parse_transform

__all__ = ["FIRST_FIELD_ID", "UNPARTITIONED", "PartitionField", "PartitionSpec", "PartitionTerm", "bind_term",
           "build_spec", "check_spec", "default_name", "parse_term"]

FIRST_FIELD_ID = 1000


@dataclass(frozen=True, slots=True)
class PartitionField:
    """One partition field: ``transform(source column)`` recorded under ``name``."""

    source_id: int
    field_id: int
    transform: Transform
    name: str

    def to_dict(self) -> dict[str, Any]:
        return {"source-id": self.source_id, "field-id": self.field_id, "transform": str(self.transform),
                "name": self.name}


@dataclass(frozen=True, slots=True)
class PartitionSpec:
    """A table's partitioning as of some snapshot; spec 0 of a table created without ``partition_by`` is empty."""

    spec_id: int
    fields: tuple[PartitionField, ...] = ()

    @property
    def is_unpartitioned(self) -> bool:
        """No field, or only void ones: every row lands in one partition."""
        return all(f.transform.kind == "void" for f in self.fields)

    @property
    def last_field_id(self) -> int:
        return max((f.field_id for f in self.fields), default=FIRST_FIELD_ID - 1)

    def field_named(self, name: str) -> PartitionField:
        for f in self.fields:
            if f.name == name:
                return f
        raise PartitionSpecError(f"spec {self.spec_id} has no partition field named {name!r}; its fields are "
                                 f"{[f.name for f in self.fields]}")

    def describe(self, schema: Schema | None = None) -> str:
        """``day(ts) AS ts_day, bucket[16](id) AS id_bucket_16`` (source names from ``schema`` when given)."""
        if not self.fields:
            return "unpartitioned"
        parts = []
        for f in self.fields:
            src = schema.path_of(f.source_id) if schema is not None and schema.has_field(f.source_id) \
                else f"field {f.source_id}"
            term = src if f.transform.kind == "identity" else f"{f.transform}({src})"
            parts.append(term if term == f.name else f"{term} AS {f.name}")
        return ", ".join(parts)

    def __str__(self) -> str:
        return f"spec {self.spec_id}: {self.describe()}"

    def to_json(self) -> str:
        return json.dumps({"spec-id": self.spec_id, "fields": [f.to_dict() for f in self.fields]})

    @classmethod
    def from_json(cls, text: str | dict[str, Any]) -> PartitionSpec:
        obj = json.loads(text) if isinstance(text, str) else text
        fields = tuple(PartitionField(int(f["source-id"]), int(f["field-id"]), parse_transform(f["transform"]),
                                      str(f["name"])) for f in obj["fields"])
        return cls(int(obj["spec-id"]), fields)


UNPARTITIONED = PartitionSpec(0, ())


@dataclass(frozen=True, slots=True)
class PartitionTerm:
    """An unbound partition term: a transform of a column path, optionally named."""

    column: str
    transform: Transform
    name: str | None = None

    def __str__(self) -> str:
        t = self.transform
        inner = f"{t.param}, {self.column}" if t.param is not None else self.column
        text = f"{t.kind}({inner})" if t.kind != "identity" else self.column
        return f"{text} AS {self.name}" if self.name else text


_CALL = re.compile(r"^\s*([A-Za-z_]+)\s*\((.*)\)\s*(?:AS\s+(`[^`]+`|[A-Za-z_][\w]*))?\s*$", re.I | re.S)
_PLAIN = re.compile(r"^\s*(`[^`]+`(?:\.`[^`]+`|\.[\w]+)*|[\w.]+)\s*(?:AS\s+(`[^`]+`|[A-Za-z_][\w]*))?\s*$", re.I)


def _unquote(name: str | None) -> str | None:
    return name[1:-1] if name and name.startswith("`") and name.endswith("`") else name


def parse_term(term: str | PartitionTerm | tuple[str, str]) -> PartitionTerm:
    """``day(ts)``, ``days(ts)``, ``bucket(16, id)``, ``truncate(4, s)``, ``ts``, each optionally ``AS name``;
    also ``(column, transform)`` pairs such as ``("ts", "day")`` and :class:`PartitionTerm` objects."""
    if isinstance(term, PartitionTerm):
        return term
    if isinstance(term, tuple) and len(term) == 2 and all(isinstance(x, str) for x in term):
        return PartitionTerm(term[0], parse_transform(term[1]))
    if not isinstance(term, str):
        raise PartitionSpecError(f"a partition term is a string such as 'day(ts)' or 'bucket(16, id)', or a "
                                 f"(column, transform) pair, not {term!r}")
    m = _CALL.match(term)
    if m:
        kind, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
        name = _unquote(m.group(3))
        if kind.lower() in ("bucket", "truncate"):
            if len(args) != 2:
                raise PartitionSpecError(f"partition term {term!r}: {kind.lower()} takes a number and a column, "
                                         f"e.g. {kind.lower()}(16, id)")
            number, column = (args[0], args[1]) if args[0].isdigit() else (args[1], args[0])
            if not number.isdigit():
                raise PartitionSpecError(f"partition term {term!r}: {kind.lower()} needs a whole number, "
                                         f"e.g. {kind.lower()}(16, id)")
            return PartitionTerm(column, parse_transform(f"{kind}[{int(number)}]"), name)
        if len(args) != 1 or not args[0]:
            raise PartitionSpecError(f"partition term {term!r}: {kind} takes one column, e.g. {kind}(ts)")
        return PartitionTerm(args[0], parse_transform(kind), name)
    m = _PLAIN.match(term)
    if not m:
        raise PartitionSpecError(f"cannot read partition term {term!r}; write a column ('region'), a transform of "
                                 "one ('days(ts)', 'bucket(16, id)', 'truncate(4, name)'), optionally AS name")
    return PartitionTerm(m.group(1), Transform("identity"), _unquote(m.group(2)))


def default_name(transform: Transform, source_name: str) -> str:
    """Iceberg's names: ``ts`` (identity), ``ts_day``, ``id_bucket_16``, ``name_trunc_4``, ``x_null`` (void)."""
    k = transform.kind
    if k == "identity":
        return source_name
    if k == "bucket":
        return f"{source_name}_bucket_{transform.param}"
    if k == "truncate":
        return f"{source_name}_trunc_{transform.param}"
    if k == "void":
        return f"{source_name}_null"
    return f"{source_name}_{k}"


def bind_term(term: PartitionTerm, schema: Schema) -> tuple[int, str]:
    """(source field id, source path) of a term's column; it must be a primitive outside lists and maps."""
    try:
        field = schema.find(term.column)
    except UnknownFieldError as e:
        raise PartitionSpecError(f"partition term {term}: {e.args[0] if e.args else e}") from None
    parts = split_path(term.column)
    for i in range(1, len(parts)):
        parent = schema.find(parts[:i])
        if isinstance(parent.type, (ListType, MapType)):
            raise PartitionSpecError(f"partition term {term}: {term.column!r} lies inside a list or map; partition "
                                     "by a top-level column or a struct's field")
    path = schema.path_of(field.id)
    term.transform.check(field.type, f"partition term {term} (column {path!r})")
    return field.id, path


def check_spec(spec: PartitionSpec, schema: Schema) -> None:
    """Refuse duplicate names or fields, two time transforms of one column, and names that shadow a column."""
    seen: dict[str, PartitionField] = {}
    pairs: set[tuple[int, str]] = set()
    timed: dict[int, PartitionField] = {}
    top = set(schema.names)
    for f in spec.fields:
        if f.name in seen:
            raise PartitionSpecError(f"two partition fields are named {f.name!r}; name one of them with AS")
        seen[f.name] = f
        key = (f.source_id, str(f.transform))
        if key in pairs:
            raise PartitionSpecError(f"partition field {f.name!r} repeats {f.transform} of "
                                     f"{schema.path_of(f.source_id)!r}, which the spec has already")
        pairs.add(key)
        if f.transform.kind in TIME_TRANSFORMS:
            if f.source_id in timed:
                other = timed[f.source_id]
                raise PartitionSpecError(
                    f"partition fields {other.name!r} ({other.transform}) and {f.name!r} ({f.transform}) both "
                    f"partition {schema.path_of(f.source_id)!r} by time, which is redundant; replace one with the "
                    "other (REPLACE PARTITION FIELD)")
            timed[f.source_id] = f
        if f.name in top and not (f.transform.kind == "identity" and schema.find(f.name).id == f.source_id):
            raise PartitionSpecError(f"partition field name {f.name!r} is the name of column {f.name!r}; only an "
                                     "identity field of that column may share it. Name the field with AS")
    ident = set(schema.identifier_field_ids)
    if ident and spec.fields:
        outside = [f for f in spec.fields if f.source_id not in ident and f.transform.kind != "void"]
        if outside:
            keys = [schema.path_of(i) for i in schema.identifier_field_ids]
            raise PartitionSpecError(
                f"partition field(s) {[f.name for f in outside]} use column(s) "
                f"{[schema.path_of(f.source_id) for f in outside]} outside the table's identifier fields {keys}; "
                "a table with a key partitions by key columns only (Paimon's rule), so one key lives in one "
                "partition")


def build_spec(schema: Schema, terms: Sequence[Any], spec_id: int = 0,
               history: Sequence[PartitionSpec] = ()) -> PartitionSpec:
    """A spec from terms; a (source, transform) that an earlier spec had keeps its partition field id."""
    known = {(f.source_id, str(f.transform)): f.field_id for s in history for f in s.fields}
    next_id = max([FIRST_FIELD_ID - 1, *known.values()]) + 1
    fields = []
    for raw in terms:
        term = parse_term(raw)
        source_id, path = bind_term(term, schema)
        fid = known.get((source_id, str(term.transform)))
        if fid is None:
            fid = next_id
            next_id += 1
        fields.append(PartitionField(source_id, fid, term.transform, term.name or default_name(term.transform, path)))
    spec = PartitionSpec(spec_id, tuple(fields))
    check_spec(spec, schema)
    return spec
