"""The commit-time promise of a table: every data file any snapshot references reads under the table's policy.

A schema change (or a policy change) is planned against every schema version data files were
written with, the way scans will plan them; a change that would strand any file is refused before
it is committed. Plans are cached by schema fingerprints, so the check costs one plan per distinct
(file schema, read schema) pair, not one per file.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping

import pyarrow as pa

from fieldshift.errors import HistoryUnreadableError, SchemaEvolutionError, SchemaMismatchError
from fieldshift.planner import cached_plan
from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastKind, CastPolicy

__all__ = ["changed_fields", "check_readable", "checked_fields"]


def changed_fields(base: Schema, new: Schema) -> frozenset[int]:
    """Top-level field ids of ``new`` that are not exactly as in ``base`` (added, retyped, renamed, re-documented,
    new defaults or children).

    A field left as it was reads from every file as it did into ``base``, which its commit already proved
    (under the same policy), so a schema change re-checks only these. Untouched fields are usually the
    very same objects (schema updates edit a list of them), so the comparison is mostly by identity.
    """
    out = set()
    for f in new.fields:
        old = base.field(f.id) if base.has_field(f.id) else None
        if old is not f and (old is None or base.parent_id(f.id) is not None or old != f):
            out.add(f.id)
    return frozenset(out)


def only_fields(file_schema: Schema, read_schema: Schema, ids: frozenset[int]) -> tuple[Schema, Schema]:
    """The pair narrowed to the read schema's top-level fields ``ids`` and every top-level field of the file
    that holds any id within them, at any depth (a field moved in or out of a struct is planned whole)."""
    read = read_schema.select([[f.name] for f in read_schema.fields if f.id in ids])
    wanted = {x.id for f in read.fields for x in _within(f)}
    file = file_schema.select([[f.name] for f in file_schema.fields
                               if f.id in wanted or (f.children() and any(x.id in wanted for x in _within(f)))])
    return file, read


def _within(f: Field) -> Iterator[Field]:
    yield f
    for c in f.children():
        yield from _within(c)


def check_readable(pairs: Mapping[tuple[int, int], int], schemas: Mapping[int, Schema], policy: CastPolicy,
                   *, table: str, change: str, new_policy: bool = False,
                   only: Mapping[tuple[int, int], frozenset[int]] | None = None) -> None:
    """Raise :class:`HistoryUnreadableError` unless files of each ``(file schema id, read schema id)``
    pair (``pairs`` maps each pair to its file count) plan under ``policy``.

    ``only`` restricts a pair to the read schema's top-level fields it names (``changed_fields``: the
    rest was proved readable when the previous schema was committed).

    The error lists every pair that fails with its column mismatches, so one refusal says all there
    is to fix.
    """
    failures: list[str] = []
    ids: set[int] = set()
    mismatched = 0  # failures that are column mismatches (a preset may read those)
    for (file_id, read_id), count in sorted(pairs.items()):
        fields = None if only is None else only.get((file_id, read_id))
        try:
            if fields is None:
                cached_plan(schemas[file_id], schemas[read_id], policy)
            elif fields:
                cached_plan(*only_fields(schemas[file_id], schemas[read_id], fields), policy)
        except SchemaMismatchError as e:
            mismatched += 1
            rows = "\n".join(f"    {m.path}: {m.file_type} -> {m.read_type} ({m.why})" for m in e.mismatches)
            failures.append(f"  {count} data file(s) written with schema {file_id}, read as schema {read_id}:\n"
                            f"{rows}")
            ids.add(file_id)
        except SchemaEvolutionError as e:
            failures.append(f"  {count} data file(s) written with schema {file_id}, read as schema {read_id}: {e}")
            ids.add(file_id)
    if failures:
        whose = "the new policy" if new_policy else "the table's policy"
        if new_policy:
            fix = "keep the current policy, or one that still reads them"
        else:
            fix = "keep the column types they can be read as"
            every = [(schemas[f], schemas[r]) for f, r in sorted(pairs)]
            preset = _reading_preset(every, policy) if mismatched == len(failures) else None
            if preset is not None:
                fix += (f", or first make CastPolicy.{preset.call} the table's policy "
                        f"(table.set_policy(CastPolicy.{preset.call}), `fieldshift policy LOCATION "
                        f"{preset.option_name}`), which reads them")
        raise HistoryUnreadableError(
            f"cannot commit {change} to table {table!r}: under {whose} {policy.option_name!r} the data files "
            f"written with schema id(s) {sorted(ids)} could no longer be read:\n" + "\n".join(failures)
            + f"\nNothing was committed. Live snapshots reference these files, so {fix}."
        )


def _reading_preset(pairs: list[tuple[Schema, Schema]], policy: CastPolicy) -> CastPolicy | None:
    """The first other preset allowing all ``policy`` does under which every (file, read) pair plans:
    advice that works (``set_policy`` to it keeps every file readable, and the change then commits)."""
    for preset in CastPolicy.presets():
        if preset == policy or not policy.rules <= preset.rules:
            continue
        try:
            for file_schema, read_schema in pairs:
                cached_plan(file_schema, read_schema, preset)
        except SchemaEvolutionError:
            continue
        return preset
    return None


def checked_fields(file_schema: Schema, read_schema: Schema, policy: CastPolicy,
                   only: Collection[int] | None = None) -> list[int]:
    """Top-level field ids of ``read_schema`` (of ``only``, if given) whose reading from ``file_schema``
    involves a checked cast that may fail (none when the policy reads failing values as null)."""
    if policy.on_error == "null":
        return []
    fields = read_schema.fields if only is None else [read_schema.field(i) for i in sorted(only)]
    return [f.id for f in fields if _may_fail(f, file_schema, policy)]


def _may_fail(f: Field, file_schema: Schema, policy: CastPolicy) -> bool:
    if file_schema.has_field(f.id):
        old = file_schema.field(f.id).type
        if isinstance(old, pa.DataType) and isinstance(f.type, pa.DataType):
            return policy.classify(old, f.type) is CastKind.CHECKED
    return any(_may_fail(c, file_schema, policy) for c in f.children())
