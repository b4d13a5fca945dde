"""Capture from a landing directory (Onehouse's Stream Captures): every new file into a table, once.

Each file is read with its own schema (capture_read.py), files are committed in groups: the group's
schemas are folded into one table schema by the on-write evolution (supertype, new nullable columns,
missing columns null or their write default), every file's rows are fitted to it, rows that cannot
fit go to quarantine with the file name and the reason, and the commit records the files it captured
in the same transaction (stream_marks.py). A restart lists the directory again and takes exactly the
files no commit recorded: a killed capture neither skips nor repeats a file.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.errors import (
    AlreadyCommittedError,
    CaptureFileError,
    NotKeyedError,
    SchemaEvolutionError,
    StorageLocationError,
    TableError,
)
from fieldshift.options import OnIncompatible, check_option
from fieldshift.planner import REASON_COLUMN
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.table.catalog.stream_log import captured_sources
from fieldshift.table.catalog.stream_marks import CapturedFile, StreamMark
from fieldshift.table.commits import Attempt, with_retries
from fieldshift.table.evolution.on_write import WritePlan, plan_write
from fieldshift.table.evolution.partition_evolution import check_schema_change
from fieldshift.table.handle import TableIO
from fieldshift.table.streams.capture_read import (
    INFERRED,
    CaptureFormat,
    SourceFile,
    fit_inferred,
    format_of,
    list_source_files,
    pinned_types,
    read_source_file,
)
from fieldshift.table.streams.stream_commit import StreamOperation
from fieldshift.table.table import Table
from fieldshift.table.write.write_commit import WriteRequest, write_rows

__all__ = ["CaptureProgress", "capture"]


@dataclass
class CaptureProgress:
    """What a capture has done so far (handed to ``on_progress`` after every commit, returned at the end)."""

    files: int = 0
    rows: int = 0
    quarantined: int = 0
    commits: int = 0
    skipped: int = 0
    schema_changes: list[str] = field(default_factory=list)
    pending: int = 0
    last_file: str = ""


def capture(source: str | os.PathLike[str], table: Table | str | os.PathLike[str], *,
            format: CaptureFormat | None = None, watch: bool = False, on_incompatible: OnIncompatible = "fail",
            policy: CastPolicy | str | None = None, files_per_commit: int = 100, workers: int | None = None,
            interval: float = 1.0, idle_timeout: float | None = None, stop: threading.Event | None = None,
            on_progress: Callable[[CaptureProgress], None] | None = None,
            operation: StreamOperation = "append", types: Mapping[str, pa.DataType | str] | None = None,
            null_values: Sequence[str] | None = None) -> CaptureProgress:
    """Capture every file of ``source`` no earlier capture committed into ``table`` (a Table or a location;
    a location with no table gets one, created from the first file's schema).

    ``format`` (default: each file's extension) is json (newline-delimited), csv, parquet or avro.
    ``watch`` keeps listing the directory every ``interval`` seconds until ``stop`` is set or nothing new
    arrived for ``idle_timeout`` seconds. Files are read on ``workers`` threads and committed
    ``files_per_commit`` at a time. Land files atomically (write under a name starting with '.' or
    '_', then rename): a file is read once, when first listed.

    A keyed table takes ``operation="upsert"`` (the latest row per key wins, later files over earlier
    ones) or an insert-only ``"append"`` (a key seen before fails the group with ``DuplicateKeyError``).

    CSV and JSON files: columns the table holds as text are read as text exactly as written ("007" stays
    "007"); other columns' types are inferred (CSV: int64, double, bool, date, timestamp or string; JSON:
    its own types), or pinned with ``types={"zip": "string", "amount": "decimal(10,2)"}``.
    ``null_values`` replaces the CSV texts that read as null (default: an empty field, ``NA``, ``n/a``,
    ``NULL``, ... in columns not read as text; see ``fieldshift.table.streams.capture_read``). Both are ignored
    for Parquet and Avro files, which carry their own types.
    """
    check_option("on_incompatible", on_incompatible, OnIncompatible)
    check_option("operation", operation, StreamOperation)
    if format is not None:
        check_option("format", format, CaptureFormat)
    if files_per_commit < 1:
        raise SchemaEvolutionError(f"files_per_commit must be at least 1, got {files_per_commit}")
    pinned = pinned_types(types)
    nulls = None if null_values is None else tuple(null_values)
    folder = Path(source).resolve()
    resolved = CastPolicy.from_name(policy) if isinstance(policy, str) else policy
    target = table if isinstance(table, Table) else _open(table)
    location = None if isinstance(table, Table) else table
    if operation == "upsert" and (target is None or target.keys is None):
        raise NotKeyedError(f"capture with operation='upsert' needs a keyed table at {table}; create it first with "
                            "Table.create(..., identifier_fields=[...]) (fieldshift create --key)")
    progress = CaptureProgress()
    idle_since = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers or min(4, os.cpu_count() or 1)) as pool:
        while True:
            done = captured_sources(target.catalog, target.table_id) if target is not None else {}
            new = [f for f in list_source_files(folder, format) if str(f.path) not in done]
            progress.pending = len(new)
            for start in range(0, len(new), files_per_commit):
                if stop is not None and stop.is_set():
                    return progress
                group = new[start:start + files_per_commit]
                like = _text_types(target)
                datas = list(pool.map(functools.partial(_read, fmt=format, like=like, types=pinned,
                                                        null_values=nulls), group))
                if target is None:
                    assert location is not None
                    first = next((tables[0][0] for tables in datas if tables), None)
                    if first is None:  # only empty files: no columns to create a table from, nothing to record
                        continue
                    target = _create(location, first, resolved)
                _commit_group(target.io, group, datas, _Rules(on_incompatible, resolved, operation, pinned), progress)
                progress.pending = max(0, len(new) - start - len(group))
                if on_progress is not None:
                    on_progress(progress)
            if new:
                idle_since = time.monotonic()
            if not watch or (stop is not None and stop.is_set()):
                return progress
            if idle_timeout is not None and time.monotonic() - idle_since >= idle_timeout:
                return progress
            if stop is not None:
                stop.wait(interval)
            else:
                time.sleep(interval)


def _read(f: SourceFile, fmt: CaptureFormat | None, like: dict[str, pa.DataType], types: dict[str, pa.DataType],
          null_values: tuple[str, ...] | None) -> list[tuple[pa.Table, bool]]:
    """The file's tables, each with whether its types were guessed (JSON, CSV)."""
    kind = fmt or format_of(f.path)
    if kind not in INFERRED:
        return [(t, False) for t in read_source_file(f.path, kind)]
    return [(t, True) for t in read_source_file(f.path, kind, like=like, types=types, null_values=null_values)]


def _text_types(table: Table | None) -> dict[str, pa.DataType]:
    """The table's top-level column types, which decide how CSV and JSON text is read (none yet: inferred)."""
    if table is None:
        return {}
    return {f.name: f.type for f in table.schema.fields if isinstance(f.type, pa.DataType)}


def _open(location: str | os.PathLike[str]) -> Table | None:
    try:
        return Table.open(location)
    except StorageLocationError:
        raise  # an object-store location needs a catalog: pass a Table opened with catalog=
    except TableError:
        if (Path(location) / "fieldshift.db").exists() or (Path(location) / ".fieldshift-table").exists():
            raise
        return None


def _create(location: str | os.PathLike[str], first: pa.Table, policy: CastPolicy | None) -> Table:
    """A new table from the first file's columns, all nullable (later files may lack any of them)."""
    schema = pa.schema([f.with_nullable(True) for f in first.schema])
    try:
        return Table.create(location, schema, policy=policy)
    except TableError:
        return Table.open(location)  # another capture created it meanwhile


@dataclass(frozen=True)
class _Rules:
    """How a capture fits its files: evolution rules, the policy (None: the table's), append or upsert, the
    types pinned by name."""

    on_incompatible: OnIncompatible
    policy: CastPolicy | None
    operation: StreamOperation
    pinned: Mapping[str, pa.DataType]


def _commit_group(io: TableIO, group: Sequence[SourceFile], datas: Sequence[list[tuple[pa.Table, bool]]],
                  rules: _Rules, progress: CaptureProgress) -> None:
    """Fold the group's schemas into the table's, fit every file to it, commit once with the files' marks
    (``commits.with_retries``: a conflict folds again on the new head)."""

    def attempt(_now: Attempt) -> None:
        metadata = io.metadata()
        base = metadata.current_schema
        policy = rules.policy or metadata.policy
        schema, changes = base, []
        types = {f.name: f.type for f in base.fields if isinstance(f.type, pa.DataType)}
        parts = [(f, fit_inferred(data, types, rules.pinned) if guessed else data)
                 for f, tables in zip(group, datas, strict=True) for data, guessed in tables]
        folded: set[pa.Schema] = set()  # a file schema folded in once changes nothing the second time
        for f, data in parts:
            if data.schema not in folded:
                folded.add(data.schema)
                wp = _plan(f, data, schema, rules.on_incompatible, policy)
                if wp.evolved:  # a partition key's type may change only where its transforms keep every key
                    try:
                        check_schema_change(metadata.spec, base, wp.schema, table=metadata.name)
                    except SchemaEvolutionError as e:
                        raise CaptureFileError(f"cannot capture {f.path}: {e}") from e
                schema, changes = wp.schema, changes + list(wp.changes)
        if changes:  # one new schema version for the group, whatever number of steps led to it
            schema = Schema(schema.fields, schema_id=base.schema_id + 1,
                            identifier_field_ids=schema.identifier_field_ids,
                            highest_field_id=schema.highest_field_id, doc=schema.doc)
        goods, bads = [], []
        plans: dict[pa.Schema, WritePlan] = {}  # one write plan per file schema
        for f, data in parts:
            wp = plans.get(data.schema) or plans.setdefault(data.schema,
                                                            _plan(f, data, schema, rules.on_incompatible, policy))
            try:
                good, bad = wp.split(data)
            except SchemaEvolutionError as e:
                raise CaptureFileError(f"cannot capture {f.path}: {e}") from e
            goods.append(good.cast(schema.to_arrow()) if good.num_rows else good)
            if bad is not None and bad.num_rows:
                bads.append(_tagged(bad, f.path.name))
        rows = [g for g in goods if g.num_rows]
        data = pa.concat_tables(rows) if rows else schema.to_arrow().empty_table()
        mark = StreamMark(captured=tuple(CapturedFile(str(f.path), f.size, f.mtime_ns, sum(t.num_rows for t, _ in d))
                                         for f, d in zip(group, datas, strict=True)))
        try:
            done = write_rows(io, metadata, WriteRequest(
                schema, bool(changes), data, bads, rules.operation, mark,
                {"changes": changes, "writer": "capture", "files": len(group)}))
        except AlreadyCommittedError:  # another capture took some of these files: list again
            progress.skipped += len(group)
            return
        progress.files += len(group)
        progress.rows += done.rows
        progress.quarantined += sum(b.num_rows for b in bads)
        progress.commits += 1
        progress.schema_changes += changes
        progress.last_file = group[-1].path.name

    with_retries(attempt)


def _plan(f: SourceFile, data: pa.Table, schema: Schema, on_incompatible: OnIncompatible,
          policy: CastPolicy) -> WritePlan:
    try:
        return plan_write(data.schema, schema, evolve=True, on_incompatible=on_incompatible, policy=policy)
    except SchemaEvolutionError as e:
        raise CaptureFileError(f"cannot capture {f.path}: {str(e).rstrip('.')}. Nothing of its group was "
                               "committed; move the file out, or capture with on_incompatible='quarantine'") from e


def _tagged(bad: pa.Table, name: str) -> pa.Table:
    """Quarantined rows with the source file's name before each reason."""
    i = bad.schema.get_field_index(REASON_COLUMN)
    reasons = pc.binary_join_element_wise(pa.scalar(f"[{name}] "), bad.column(i), "")
    return bad.set_column(i, REASON_COLUMN, reasons)
