"""The value-level half of the commit-time promise: checked casts that old files would meet must succeed.

Type-level planning (readability.py) proves every file can be planned into a new schema. A checked
cast (binary -> string needs valid UTF-8, timestamp us -> ns needs years 1677..2262, a narrowing) can
still fail on a value, and then every later scan of the table would fail. Before such a schema or
policy is committed, the columns concerned are read from the files that would meet the cast and
evolved once; a failing value refuses the commit, naming the file, the column and the value.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from fieldshift.errors import CastValueError, HistoryUnreadableError
from fieldshift.planner import cached_plan
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.table.evolution.readability import checked_fields
from fieldshift.table.files.data_files import iter_file_batches
from fieldshift.table.files.storage import TableStorage, open_storage

__all__ = ["check_values"]


def check_values(location: TableStorage | Path, list_files: Callable[[], Iterable[tuple[str, int]]],
                 schemas: dict[int, Schema], read_schema: Schema, policy: CastPolicy, *, table: str,
                 change: str, only: Collection[int] | None = None) -> None:
    """Raise :class:`HistoryUnreadableError` when a value of a data file (``(path, schema id)`` from
    ``list_files``, called only if some schema version needs a checked cast) fails that cast on its way
    into ``read_schema`` under ``policy``. ``only``: the top-level field ids a schema change touched
    (``readability.changed_fields``); the others read as they did before it."""
    checked = {sid: ids for sid, s in schemas.items() if (ids := checked_fields(s, read_schema, policy, only))}
    if not checked:
        return  # the common case (widenings only): no file is listed or read
    storage = open_storage(location)
    for path, schema_id in list_files():
        ids = checked.get(schema_id)
        if not ids:
            continue
        file_schema = schemas[schema_id]
        names = [file_schema.field(i).name for i in ids]
        plan = cached_plan(file_schema.select(names), read_schema.select([read_schema.field(i).name for i in ids]),
                           policy)
        try:
            for batch in iter_file_batches(storage, path, file_schema.select(names).to_arrow(), 65_536):
                plan.apply(batch)
        except CastValueError as e:
            raise HistoryUnreadableError(
                f"cannot commit {change} to table {table!r}: data file {path} (schema {schema_id}) could no "
                f"longer be read under the policy {policy.option_name!r}: {e}\nNothing was committed; keep "
                "the column's type, or rewrite those rows first."
            ) from None
