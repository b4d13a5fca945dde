"""Commits as typed changes: each kind of change a commit makes owns its conflict rule and writes its rows through
the catalog's record modules (``table/catalog/``: the statements live there).

A commit is ``catalog.commit(table_id, base_snapshot_id, requirements, updates, operation=..., summary=...)``
(the shape of PyIceberg's ``TableRequirement``/``TableUpdate`` and the Iceberg REST commit). Inside the
catalog's one transaction the catalog reads the head once (:class:`CommitState`), then every requirement
and update ``check``s itself against what committed since the base snapshot (``state.moved``), in a fixed
order (``CHECK_ORDER``: a replayed stream mark is told before a conflict, a conflict before the checks
of values); the catalog writes the snapshot row, then every update ``apply``s its rows (``APPLY_ORDER``).

Conflict rules, against a head that moved past the base snapshot:

- :class:`AddFiles` is replayed on the new head when its files still read as the head's schema under
  the table's policy, with no cast that checks values (else :class:`CommitConflictError`);
- :class:`RemoveFiles` conflicts when another commit already ended one of its files (a compaction);
- :class:`ReplaceAll`, :class:`SetSchema`, :class:`SetPolicy`, :class:`SetSpec` and the requirement
  :class:`NoConcurrentCommit` conflict on any concurrent commit;
- :class:`DeletionVectors` conflict (or, for a compaction, commit their files unresolved) when another
  commit changed one of their buckets (``deletion_vectors``);
- :class:`RecordStreamMark` refuses a mark recorded before (:class:`AlreadyCommittedError`), whatever moved;
- :class:`FilesPresent` requires, under the commit lock, that the new files still exist (a vacuum).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from fieldshift.errors import CommitConflictError, HistoryUnreadableError
from fieldshift.gc_pause import paused_gc
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.table.catalog.deletion_vectors import VectorCommit, commit_vectors
from fieldshift.table.catalog.files import (
    end_all_files,
    end_files,
    insert_files,
    live_schema_ids,
    schema_counts,
    snapshot_schema_counts,
)
from fieldshift.table.catalog.quarantine import insert_quarantine
from fieldshift.table.catalog.schemas import insert_schema
from fieldshift.table.catalog.snapshots import commit_head
from fieldshift.table.catalog.specs import insert_spec, load_specs
from fieldshift.table.catalog.sql import POLICY_PROPERTY, PUBLISH_PROPERTY, parse_json, policy_of
from fieldshift.table.catalog.stream_marks import StreamMark, check_unrecorded, record
from fieldshift.table.catalog.tables import set_properties, table_by_id
from fieldshift.table.evolution.partition_evolution import check_schema_change
from fieldshift.table.evolution.precombine_order import check_precombine_change
from fieldshift.table.evolution.readability import changed_fields, check_readable, checked_fields
from fieldshift.table.files.data_files import check_present
from fieldshift.table.files.storage import TableStorage
from fieldshift.table.partitions.partitioning import PartitionSpec
from fieldshift.table.publish.iceberg_types import check_publishable_change
from fieldshift.table.publish.iceberg_values import check_partitions
from fieldshift.table.records import DataFile

__all__ = ["AddFiles", "CommitState", "CommitStep", "DeletionVectors", "FilesPresent", "NoConcurrentCommit",
           "QuarantineFiles", "RecordStreamMark", "RemoveFiles", "ReplaceAll", "SetPolicy", "SetSchema", "SetSpec",
           "TableRequirement", "TableUpdate", "begin_commit"]


@dataclass
class CommitState:
    """What one commit transaction sees: its base, the head it found, the table's name, properties and policy,
    and what its updates bring (a new schema or policy, added files) for the checks that need them together."""

    conn: Any
    table_id: int
    base_snapshot_id: int
    head_id: int
    head_schema_id: int
    name: str
    properties: dict[str, str]
    operation: str
    policy: CastPolicy
    """The table's policy, or the new one a :class:`SetPolicy` of this commit sets."""
    load_schemas: Callable[[], dict[int, Schema]]
    head_fresh: tuple[Any, ...] = ()
    """The head's id, commit time and the properties' text: what ``load_metadata``'s cache is keyed by."""
    new_schema: Schema | None = None
    policy_changed: bool = False
    added: tuple[DataFile, ...] = ()
    changes_metadata: bool = False
    """Whether an update changes what ``TableMetadata`` holds besides the head (schema, spec, policy)."""

    @property
    def new_id(self) -> int:
        return self.head_id + 1

    @property
    def moved(self) -> bool:
        """Whether another writer committed after the base snapshot."""
        return self.head_id != self.base_snapshot_id

    @property
    def schema_id(self) -> int:
        """The schema the new snapshot reads with."""
        return self.new_schema.schema_id if self.new_schema is not None else self.head_schema_id

    @property
    def publishing(self) -> bool:
        return bool(self.properties.get(PUBLISH_PROPERTY))

    def schemas(self) -> dict[int, Schema]:
        """Every stored schema by id (a fresh dict: callers add the new one to it)."""
        return self.load_schemas()

    def specs(self) -> list[tuple[PartitionSpec, int]]:
        return load_specs(self.conn, self.table_id)

    def refuse_concurrent(self) -> None:
        """The rule of changes that must see the table exactly as their base: any concurrent commit conflicts."""
        if self.moved:
            raise CommitConflictError(
                f"another writer committed snapshot {self.head_id} after snapshot {self.base_snapshot_id}, "
                f"on which this {self.operation} was based; reload the table and retry")


class CommitStep(Protocol):
    """A requirement or an update: checked in ``CHECK_ORDER`` inside the transaction, before any row is written."""

    CHECK_ORDER: ClassVar[int]

    def check(self, state: CommitState) -> None: ...


class TableRequirement(CommitStep, Protocol):
    """A condition the commit needs; it writes nothing."""


class TableUpdate(CommitStep, Protocol):
    """A change the commit makes: ``apply`` writes its rows after the snapshot row, in ``APPLY_ORDER``."""

    APPLY_ORDER: ClassVar[int]

    def apply(self, state: CommitState) -> None: ...


def begin_commit(conn: Any, table_id: int, base_snapshot_id: int, operation: str, updates: Sequence[TableUpdate],
                 load_schemas: Callable[[], dict[int, Schema]]) -> CommitState:
    """Read the head and the table's row (two statements) inside the commit transaction."""
    head_id, head_schema_id, committed_at = commit_head(conn, table_id)
    name, text = table_by_id(conn, table_id)  # type: ignore[misc]
    props = parse_json(text, f"the properties of table {name!r}")
    new_policy = next((u.policy for u in updates if isinstance(u, SetPolicy)), None)
    return CommitState(
        conn, table_id, base_snapshot_id, head_id, head_schema_id, name, props, operation,
        new_policy or policy_of(name, props), load_schemas, (head_id, committed_at, text),
        new_schema=next((u.schema for u in updates if isinstance(u, SetSchema)), None),
        policy_changed=new_policy is not None,
        added=tuple(f for u in updates if isinstance(u, AddFiles) for f in u.files),
        changes_metadata=any(isinstance(u, (SetSchema, SetPolicy, SetSpec)) for u in updates))


# -- requirements ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class FilesPresent:
    """The files a commit references still exist (checked under the commit lock, which vacuum holds)."""

    CHECK_ORDER: ClassVar[int] = 0
    storage: TableStorage
    paths: tuple[str, ...]

    def check(self, state: CommitState) -> None:
        check_present(self.storage, self.paths)


@dataclass(frozen=True)
class NoConcurrentCommit:
    """No commit landed after the base (an insert-only append to a keyed table checked its keys there)."""

    CHECK_ORDER: ClassVar[int] = 2

    def check(self, state: CommitState) -> None:
        state.refuse_concurrent()


# -- updates --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RecordStreamMark:
    """Record a micro-batch id and/or captured source files with the snapshot (exactly once)."""

    CHECK_ORDER: ClassVar[int] = 1
    APPLY_ORDER: ClassVar[int] = 7
    mark: StreamMark

    def check(self, state: CommitState) -> None:
        check_unrecorded(state.conn, state.table_id, self.mark)

    def apply(self, state: CommitState) -> None:
        record(state.conn, state.table_id, self.mark, state.new_id)


@dataclass(frozen=True)
class SetPolicy:
    """Make ``policy`` the table's; every data file of every snapshot must stay readable under it."""

    CHECK_ORDER: ClassVar[int] = 2
    APPLY_ORDER: ClassVar[int] = 0
    policy: CastPolicy

    def check(self, state: CommitState) -> None:
        state.refuse_concurrent()
        if state.new_schema is None:  # with a schema change, SetSchema checks the history under this policy
            with paused_gc():
                check_history(state)

    def apply(self, state: CommitState) -> None:
        state.properties[POLICY_PROPERTY] = self.policy.option_name
        set_properties(state.conn, state.table_id, state.properties)


@dataclass(frozen=True)
class ReplaceAll:
    """End every live file (an overwrite); the files of this commit are added after."""

    CHECK_ORDER: ClassVar[int] = 2
    APPLY_ORDER: ClassVar[int] = 2

    def check(self, state: CommitState) -> None:
        state.refuse_concurrent()

    def apply(self, state: CommitState) -> None:
        end_all_files(state.conn, state.table_id, state.new_id)


@dataclass(frozen=True)
class SetSpec:
    """Make ``spec`` the current partition spec."""

    CHECK_ORDER: ClassVar[int] = 2
    APPLY_ORDER: ClassVar[int] = 4
    spec: PartitionSpec

    def check(self, state: CommitState) -> None:
        state.refuse_concurrent()

    def apply(self, state: CommitState) -> None:
        insert_spec(state.conn, state.table_id, self.spec, state.new_id)


@dataclass(frozen=True)
class SetSchema:
    """Make ``schema`` the current schema: a partition source or precombine column may not be dropped or
    retyped where that breaks them, a publishing table's readers must read it, and every data file of
    every snapshot must read as it under the table's policy."""

    CHECK_ORDER: ClassVar[int] = 3
    APPLY_ORDER: ClassVar[int] = 3
    schema: Schema

    def check(self, state: CommitState) -> None:
        state.refuse_concurrent()
        head_schema = state.schemas()[state.head_schema_id]
        check_schema_change(state.specs()[-1][0], head_schema, self.schema, table=state.name)
        check_precombine_change(state.properties, head_schema, self.schema, table=state.name)
        if state.publishing:  # what Iceberg readers could not read is refused before it commits
            check_publishable_change(self.schema, _live_schemas(state), state.name)
        with paused_gc():  # plans every schema pair (cycle-free objects)
            check_history(state)

    def apply(self, state: CommitState) -> None:
        insert_schema(state.conn, state.table_id, self.schema, state.new_id)


@dataclass(frozen=True)
class AddFiles:
    """Add data (or delete) files written with schema ``write_schema_id``."""

    CHECK_ORDER: ClassVar[int] = 4
    APPLY_ORDER: ClassVar[int] = 5
    files: tuple[DataFile, ...]
    write_schema_id: int | None = None

    def check(self, state: CommitState) -> None:
        if state.moved and self.write_schema_id is not None and self.write_schema_id != state.head_schema_id:
            check_replay(state, self.write_schema_id)
        if state.publishing and self.files:  # partition values Iceberg readers could not read
            specs = {s.spec_id: s for s, _ in state.specs()}
            if any(s.fields for s in specs.values()):
                schemas = state.schemas()
                if state.new_schema is not None:
                    schemas[state.new_schema.schema_id] = state.new_schema
                check_partitions(self.files, specs, schemas, state.name)

    def apply(self, state: CommitState) -> None:
        insert_files(state.conn, state.table_id, state.new_id, self.files)


@dataclass(frozen=True)
class RemoveFiles:
    """End files (by id) in the new snapshot; one another commit already ended conflicts."""

    CHECK_ORDER: ClassVar[int] = 5
    APPLY_ORDER: ClassVar[int] = 1
    file_ids: tuple[int, ...]

    def check(self, state: CommitState) -> None:
        """Checked as it applies: the update of each file's row says whether it was still live."""

    def apply(self, state: CommitState) -> None:
        end_files(state.conn, state.table_id, self.file_ids, state.new_id)


@dataclass(frozen=True)
class QuarantineFiles:
    """Record quarantine files (path, rows) set aside by this commit."""

    CHECK_ORDER: ClassVar[int] = 5
    APPLY_ORDER: ClassVar[int] = 6
    files: tuple[tuple[str, int], ...]

    def check(self, state: CommitState) -> None:
        """Quarantine files conflict with nothing."""

    def apply(self, state: CommitState) -> None:
        insert_quarantine(state.conn, state.table_id, state.new_id, self.files)


@dataclass(frozen=True)
class DeletionVectors:
    """Record a keyed write's deletion vectors and resolved files (rule: ``deletion_vectors``)."""

    CHECK_ORDER: ClassVar[int] = 5
    APPLY_ORDER: ClassVar[int] = 8
    commit: VectorCommit = field(hash=False)

    def check(self, state: CommitState) -> None:
        """Checked as it applies: which buckets changed since the base decides between writing and conflicting."""

    def apply(self, state: CommitState) -> None:
        commit_vectors(state.conn, state.table_id, state.base_snapshot_id, state.new_id, self.commit)


# -- the checks of values and history -------------------------------------------------------------
def _live_schemas(state: CommitState) -> list[Schema]:
    """The schemas of the data files live at the head, and of those being added."""
    ids = live_schema_ids(state.conn, state.table_id)
    ids |= {f.schema_id for f in state.added if f.content == "data"}
    schemas = state.schemas()
    return [schemas[i] for i in sorted(ids) if i in schemas]


def check_replay(state: CommitState, write_schema_id: int) -> None:
    """Files written for an older head must read as the new head's schema, or the writer retries.

    The concurrent schema change checked the values of the files committed before it, not of these:
    when reading them into the new head takes a cast that checks values (binary -> string needs
    UTF-8), the writer retries too, and its rows are then cast (and checked) on their way in."""
    schemas, head = state.schemas(), state.head_schema_id
    try:
        check_readable({(write_schema_id, head): 1}, schemas, state.policy, table=state.name, change="rows")
    except HistoryUnreadableError as e:
        raise CommitConflictError(f"the schema changed concurrently and the new rows no longer fit: {e}") from None
    checked = checked_fields(schemas[write_schema_id], schemas[head], state.policy)
    if checked:
        names = ", ".join(repr(schemas[head].field(i).name) for i in checked)
        raise CommitConflictError(f"the schema changed concurrently and the new rows' columns {names} would "
                                  "meet a cast that checks values; retry on the new schema")


def check_history(state: CommitState) -> None:
    """Every file of every snapshot reads as the new head schema (and, for a policy change, as each
    snapshot's own schema) under the policy.

    A schema change under an unchanged policy plans the files already committed only for the fields
    it changed: every one of them was proved to read as the previous head schema."""
    schema, conn, table_id = state.new_schema, state.conn, state.table_id
    schemas = state.schemas()
    target = state.head_schema_id
    if schema is not None:
        schemas[schema.schema_id] = schema
        target = schema.schema_id
    pairs: dict[tuple[int, int], int] = {}
    for sid, count in schema_counts(conn, table_id):
        pairs[(sid, target)] = count
    for f in state.added:
        pairs[(f.schema_id, target)] = pairs.get((f.schema_id, target), 0) + 1
    if schema is None:  # a policy change: time travel into each snapshot's schema must keep working
        for fsid, ssid, count in snapshot_schema_counts(conn, table_id):
            pairs[(fsid, ssid)] = count
    only = None
    if schema is not None and not state.policy_changed and state.head_schema_id in schemas:
        changed = changed_fields(schemas[state.head_schema_id], schema)
        added = {f.schema_id for f in state.added}  # new files were never checked: planned whole
        only = {pair: changed for pair in pairs if pair[0] not in added}
    if schema is None:
        change = f"policy {state.policy.option_name!r}"
    else:
        change = f"schema {schema.schema_id}" + ("" if state.operation == "schema"
                                                 else f" (evolved by an {state.operation})")
    check_readable(pairs, schemas, state.policy, table=state.name, change=change, new_policy=schema is None,
                   only=only)
