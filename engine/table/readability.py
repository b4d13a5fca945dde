"""The commit-time promise of a table: every data file any snapshot references reads under the table's policy.

A schema change (or a policy change) is planned against every schema version data files were
written with, the way scans will plan them; a change that would strand any file is refused before
it is committed. Plans are cached by schema fingerprints, so the check costs one plan per distinct
(file schema, read schema) pair, not one per file.
"""

from __future__ import annotations

from collections.abc import Mapping

from fieldshift.errors import HistoryUnreadableError, SchemaEvolutionError, SchemaMismatchError
from fieldshift.planner import cached_plan
from fieldshift.policy import CastPolicy
from fieldshift.schema import Schema

__all__ = ["check_readable"]


def check_readable(pairs: Mapping[tuple[int, int], int], schemas: Mapping[int, Schema], policy: CastPolicy,
                   *, table: str, change: str, new_policy: bool = False) -> None:
    """Raise :class:`HistoryUnreadableError` unless files of each ``(file schema id, read schema id)``
    pair (``pairs`` maps each pair to its file count) plan under ``policy``.

    The error lists every pair that fails with its column mismatches, so one refusal says all there
    is to fix.
    """
    failures: list[str] = []
    ids: set[int] = set()
    for (file_id, read_id), count in sorted(pairs.items()):
        try:
            cached_plan(schemas[file_id], schemas[read_id], policy)
        except SchemaMismatchError as e:
            rows = "\n".join(f"    {m.path}: {m.file_type} -> {m.read_type} ({m.why})" for m in e.mismatches)
            failures.append(f"  {count} data file(s) written with schema {file_id}, read as schema {read_id}:\n"
                            f"{rows}")
            ids.add(file_id)
        except SchemaEvolutionError as e:
            failures.append(f"  {count} data file(s) written with schema {file_id}, read as schema {read_id}: {e}")
            ids.add(file_id)
    if failures:
        whose = "the new policy" if new_policy else "the table's policy"
        fix = ("keep the current policy, or one that still reads them" if new_policy else
               "keep the column types they can be read as, or first make the table's policy allow the change "
               "(table.set_policy(...), `fieldshift policy LOCATION NAME`)")
        raise HistoryUnreadableError(
            f"cannot commit {change} to table {table!r}: under {whose} {policy.option_name!r} the data files "
            f"written with schema id(s) {sorted(ids)} could no longer be read:\n" + "\n".join(failures)
            + f"\nNothing was committed. Snapshots keep referencing these files (there is no snapshot expiry "
            f"yet), so {fix}."
        )
