"""`UpdateSpec`: add, remove, replace and rename partition fields; ``commit()`` records a new spec.

Old data files keep the spec they were written with (the catalog records it per file), so changing
day -> hour rewrites nothing: new files are written by hour, old ones stay by day, and scans prune
both through their own spec.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fieldshift.errors import PartitionSpecError
from fieldshift.schema.model import Schema
from fieldshift.table.partitions.partitioning import (
    PartitionField,
    PartitionSpec,
    PartitionTerm,
    bind_term,
    check_spec,
    default_name,
    parse_term,
)
from fieldshift.table.partitions.transforms import parse_transform

__all__ = ["UpdateSpec"]


class UpdateSpec:
    """Chainable partition spec changes against the current spec; nothing changes until ``commit()``."""

    def __init__(self, schema: Schema, current: PartitionSpec, history: Sequence[PartitionSpec],
                 on_commit: Callable[[PartitionSpec, list[str]], Any] | None = None) -> None:
        self._schema = schema
        self._base = current
        self._history = tuple(history)
        self._fields: list[PartitionField] = list(current.fields)
        self._on_commit = on_commit
        self.changes: list[str] = []

    def _term(self, term: Any, transform: Any = None, name: str | None = None) -> PartitionTerm:
        t = parse_term((term, str(transform)) if transform is not None and isinstance(term, str) else term)
        return PartitionTerm(t.column, t.transform, name or t.name)

    def _find(self, ref: Any) -> int:
        """Index of the field named ``ref``, or matching the term ``ref`` (e.g. ``days(ts)``)."""
        if isinstance(ref, str):
            for i, f in enumerate(self._fields):
                if f.name == ref:
                    return i
        term = parse_term(ref)
        source_id, _ = bind_term(term, self._schema)
        for i, f in enumerate(self._fields):
            if f.source_id == source_id and f.transform == term.transform:
                return i
        raise PartitionSpecError(f"the partition spec has no field {ref!r}; its fields are "
                                 f"{[f'{f.name} ({f.transform})' for f in self._fields]}")

    def add_field(self, term: Any, transform: Any = None, name: str | None = None) -> UpdateSpec:
        """``add_field("hours(ts)")``, ``add_field("ts", "hour", "ts_hour")`` or ``add_field("bucket(16, id)")``."""
        t = self._term(term, parse_transform(transform) if transform is not None else None, name)
        source_id, path = bind_term(t, self._schema)
        for f in self._fields:
            if f.source_id == source_id and f.transform == t.transform:
                raise PartitionSpecError(f"the partition spec already has {t.transform}({path}) as field {f.name!r}")
        known = {(f.source_id, str(f.transform)): f.field_id for s in (*self._history, self._base) for f in s.fields}
        taken = {f.field_id for f in self._fields}
        fid = known.get((source_id, str(t.transform)))
        if fid is None or fid in taken:
            fid = max([999, *known.values(), *taken]) + 1
        self._fields.append(PartitionField(source_id, fid, t.transform, t.name or default_name(t.transform, path)))
        self.changes.append(f"add partition field {self._fields[-1].name} = {t.transform}({path})")
        return self

    def remove_field(self, ref: Any) -> UpdateSpec:
        """Remove a field by name (``"ts_day"``) or term (``"days(ts)"``); files written with it keep it."""
        f = self._fields.pop(self._find(ref))
        self.changes.append(f"remove partition field {f.name} ({f.transform})")
        return self

    def replace_field(self, ref: Any, term: Any, name: str | None = None) -> UpdateSpec:
        """``replace_field("days(ts)", "hours(ts)")``: Spark's REPLACE PARTITION FIELD ... WITH ...."""
        i = self._find(ref)
        old = self._fields.pop(i)
        self.add_field(term, name=name)
        self._fields.insert(i, self._fields.pop())
        self.changes[-1] = f"replace partition field {old.name} ({old.transform}) with {self._fields[i].name} " \
                           f"({self._fields[i].transform})"
        return self

    def rename_field(self, old: str, new: str) -> UpdateSpec:
        i = self._find(old)
        f = self._fields[i]
        self._fields[i] = PartitionField(f.source_id, f.field_id, f.transform, new)
        self.changes.append(f"rename partition field {old} to {new}")
        return self

    def apply(self) -> PartitionSpec:
        """The resulting spec (the current one if nothing changed); checked against the schema."""
        fields = tuple(self._fields)
        if fields == self._base.fields:
            return self._base
        same = [s.spec_id for s in self._history if s.fields == fields]  # Iceberg reuses an identical spec's id
        spec_id = same[0] if same else max(s.spec_id for s in (*self._history, self._base)) + 1
        spec = PartitionSpec(spec_id, fields)
        check_spec(spec, self._schema)
        return spec

    def commit(self) -> PartitionSpec:
        """Record the new spec in a commit of its own (none when nothing changed)."""
        spec = self.apply()
        if spec is self._base or self._on_commit is None:
            return spec
        self._on_commit(spec, list(self.changes))
        return spec

    def __enter__(self) -> UpdateSpec:
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        if exc_type is None:
            self.commit()

