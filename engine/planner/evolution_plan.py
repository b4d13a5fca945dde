"""`EvolutionPlan`: a frozen, picklable plan that evolves batches without any per-batch planning."""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from fieldshift.errors import BatchTypeError, CastValueError, NullInRequiredFieldError, SchemaEvolutionError
from fieldshift.gc_pause import paused_gc
from fieldshift.kernels.ipc_batches import IpcProgram, run_ipc_program
from fieldshift.kernels.layout import conform, same_child_names, same_values, take_rows
from fieldshift.kernels.threads import get_threads, run_parallel
from fieldshift.kernels.warm import numba_ready
from fieldshift.kernels.widen import NUMPY_WIDEN
from fieldshift.options import CastMode
from fieldshift.planner.nodes import (
    ROOT_ROWS,
    CastNode,
    ConstantNode,
    ListNode,
    MapNode,
    Node,
    NullCheck,
    RowMap,
    StructNode,
    Take,
)
from fieldshift.planner.small_batches import SMALL_BATCH_ROWS, evaluate_small, shared_shapes
from fieldshift.planner.strategy import BatchSteps, BatchStrategy
from fieldshift.planner.tiny_batches import TINY_BATCH_ROWS, compile_program
from fieldshift.schema.formats.arrow_conversion import FIELD_ID_KEY
from fieldshift.schema.policy import CastPolicy

__all__ = ["REASON_COLUMN", "CastReport", "EvolutionPlan"]

log = logging.getLogger("fieldshift")
REASON_COLUMN = "_fieldshift_reason"
"""The column ``EvolutionPlan.apply_split`` adds to the rows it sets aside: which values failed which cast."""
_PARALLEL_MIN_ROWS = 16_384  # below this, handing columns to threads costs more than it saves
WIDE_PLAN = 256  # more columns than this: one batch allocates enough wrappers to set off collections
D = TypeVar("D", pa.RecordBatch, pa.Table)


@dataclass
class CastReport:
    """Values that failed an explicit cast: count per column path, and the failing top-level rows."""

    failures: dict[str, int] = field(default_factory=dict)
    rows: dict[str, np.ndarray] = field(default_factory=dict)
    reasons: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))

    @property
    def total(self) -> int:
        """Failed values over every column."""
        return sum(self.failures.values())

    def merge(self, other: CastReport) -> None:
        """Add ``other``'s failure counts to this report's (one report over many batches)."""
        for path, n in other.failures.items():
            self.failures[path] = self.failures.get(path, 0) + n


class _Sink:
    """Receives per-row cast failures from nodes and acts on them per the mode."""

    def __init__(self, mode: CastMode, batch_row_offset: int = 0) -> None:
        self.lock = threading.Lock()  # columns may be evaluated on several threads
        self.mode = mode
        self.report = CastReport()
        self.offset = batch_row_offset

    def failed(self, path: str, local: np.ndarray, source: pa.Array, rows: RowMap,
               source_type: str, target_type: str) -> None:
        top = rows(local)
        alive = top >= 0  # values hidden under a null struct or list slot are not failures
        if not alive.all():
            local, top = local[alive], top[alive]
            if not len(local):
                return
        if self.mode == "raise":
            value = _shown_value(source, int(local[0]))
            raise CastValueError(path, int(top[0]) + self.offset, value, source_type, target_type)
        with self.lock:
            self._record(path, local, top, source, source_type, target_type)

    def null_in_required(self, path: str, local: np.ndarray, rows: RowMap) -> None:
        """Nulls in a required field: refused, or (collecting) reported as failing rows."""
        top = rows(local)
        top = top[top >= 0]  # nulls under a null struct or list slot are hidden, not values
        if not len(top):
            return
        if self.mode != "collect":
            raise NullInRequiredFieldError(path, len(top), int(top[0]) + self.offset)
        with self.lock:
            self.report.failures[path] = self.report.failures.get(path, 0) + len(top)
            self.report.rows[path] = np.unique(np.concatenate([self.report.rows.get(path, top[:0]), top]))
            for row in np.unique(top)[:1000].tolist():
                self.report.reasons[row].append(f"{path}: null in a required field")

    def _record(self, path: str, local: np.ndarray, top: np.ndarray, source: pa.Array, source_type: str,
                target_type: str) -> None:
        self.report.failures[path] = self.report.failures.get(path, 0) + len(local)
        self.report.rows[path] = np.unique(np.concatenate([self.report.rows.get(path, top[:0]), top]))
        if self.mode == "collect":
            for i, row in zip(local[:1000].tolist(), top[:1000].tolist(), strict=True):
                self.report.reasons[row].append(
                    f"{path}: cannot cast {_shown_value(source, i)!r} from {source_type} to {target_type}"
                )


@dataclass(frozen=True, slots=True)
class EvolutionPlan:
    """Evolves batches of one file schema into one read schema.

    ``apply`` returns the same kind it gets (RecordBatch or Table). An identity plan returns the very
    object it was given; a relabel plan puts the read schema over the same buffers; a computed plan
    evaluates its nodes. ``strategy`` says which, chosen once at planning; batches of another layout
    of the planned types (dictionaries, other child names) always go through the nodes.
    """

    strategy: BatchStrategy
    nodes: tuple[Node, ...]
    output_schema: pa.Schema
    input_schema: pa.Schema  # the file schema as Arrow: batches of exactly it skip checks
    policy: CastPolicy
    steps: BatchSteps
    # what planning decided per read field id, for explain() only (nodes carry what apply needs)
    notes: tuple[tuple[int, str], ...] = ()
    # its size in columns, the file's and the read schema's fields at every depth (what bounds the plan
    # cache; 0: count the Arrow schemas' fields)
    columns: int = field(default=0, compare=False, repr=False)
    # nodes doing the same work on different columns, found on the first small batch (planning does
    # not pay for it): one evaluation of their concatenation there (small_batches.py)
    _shared: list[tuple[tuple[Node, tuple[int, ...]], ...]] = field(default_factory=list, compare=False,
                                                                      repr=False)
    # batch schemas other than input_schema already found to hold the planned types (dictionary or
    # extension encodings, other child names): checked once, then by pointer
    _accepted: list[pa.Schema] = field(default_factory=list, compare=False, repr=False)
    # the nodes compiled for tiny batches (tiny_batches.py), or None when they cannot be: built on the
    # first tiny batch
    _tiny: list[IpcProgram | None] = field(default_factory=list, compare=False, repr=False)

    @property
    def identity(self) -> bool:
        """Batches of the planned schema pass through unchanged."""
        return self.strategy is BatchStrategy.IDENTITY

    @property
    def rename_only(self) -> bool:
        """Every read column is a file column as it is (renamed, reordered or relabelled at most)."""
        return all(isinstance(n, Take) for n in self.nodes)

    @property
    def input_names(self) -> tuple[str, ...]:
        """The top-level column names a batch must have to be evolved by this plan (the file schema's)."""
        return tuple(self.input_schema.names)

    @property
    def input_width(self) -> int:
        """How many top-level columns the plan takes (``len(input_names)``)."""
        return len(self.input_schema)

    # -- applying -------------------------------------------------------------------------------
    def apply(self, data: D) -> D:
        """Evolve a RecordBatch or Table; cast failures follow the policy's ``on_error``."""
        out, _ = self._run(data, self.policy.on_error)
        return out

    def apply_with_report(self, data: D) -> tuple[D, CastReport]:
        """Like ``apply``, and also return how many values failed an explicit cast, per column."""
        return self._run(data, self.policy.on_error)

    def apply_split(self, data: D) -> tuple[D, D]:
        """Split into (evolved good rows, input bad rows + a ``_fieldshift_reason`` column).

        A row is bad when any of its values fails a checked cast; the bad rows are returned as they
        were in the input (the file schema), so nothing about them is lost.
        """
        out, report = self.apply_collect(data)
        bad_rows = np.unique(np.concatenate(list(report.rows.values()))) if report.rows \
            else np.zeros(0, dtype=np.int64)
        if not len(bad_rows):
            return out, _empty_bad(data)
        keep = np.ones(data.num_rows, dtype=bool)
        keep[bad_rows] = False
        reasons = pa.array(["; ".join(report.reasons.get(int(r), ["cast failed"])) for r in bad_rows],
                           pa.string())
        bad = take_rows(data, bad_rows).append_column(REASON_COLUMN, reasons)
        return take_rows(out, np.flatnonzero(keep)), bad

    def apply_collect(self, data: D) -> tuple[D, CastReport]:
        """Evolve every row (failing values read as null) and report the failing rows with reasons."""
        return self._run(data, "collect")

    def _run(self, data: D, mode: CastMode) -> tuple[D, CastReport]:
        if isinstance(data, pa.Table):
            report = CastReport()
            if self.strategy is BatchStrategy.IDENTITY and data.schema.equals(self.output_schema):
                return self._relabel(data), report
            batches, offset = [], 0
            for batch in data.to_batches():
                out, part = self._run_batch(batch, mode, offset)
                batches.append(out)
                report.merge(part)
                for path, rows in part.rows.items():
                    report.rows[path] = np.concatenate([report.rows.get(path, rows[:0]), rows + offset])
                for row, why in part.reasons.items():
                    report.reasons[row + offset].extend(why)
                offset += batch.num_rows
            return pa.Table.from_batches(batches, schema=self.output_schema), report
        if isinstance(data, pa.RecordBatch):
            return self._run_batch(data, mode, 0)
        raise TypeError(f"plan.apply takes a pyarrow RecordBatch or Table, not {type(data).__name__}; "
                        "use fieldshift.evolve() for readers and streams")

    def _relabel(self, data: D) -> D:
        """The same object when its field metadata (ids) already match, else the same buffers relabelled."""
        if data.schema.equals(self.output_schema, check_metadata=True):  # with metadata, Arrow compares
            return data  # child field names too: one C++ call answers what the checks below do
        names_ok = all(same_child_names(data.schema.field(i).type, self.output_schema.field(i).type)
                       for i in self.steps.list_columns)
        if names_ok and data.schema.remove_metadata().equals(self.output_schema, check_metadata=True):
            return data
        targets = self.output_schema.types
        if isinstance(data, pa.Table):
            columns = [pa.chunked_array([conform(c, t) for c in col.chunks], type=t)
                       for col, t in zip(data.columns, targets, strict=True)]
            return pa.Table.from_arrays(columns, schema=self.output_schema)
        columns = [conform(c, t) for c, t in zip(data.columns, targets, strict=True)]
        return pa.RecordBatch.from_arrays(columns, schema=self.output_schema)

    def _run_batch(self, batch: pa.RecordBatch, mode: CastMode, offset: int) -> tuple[pa.RecordBatch, CastReport]:
        schema = batch.schema  # each .schema access builds a new wrapper: fetch it once
        strategy = self.strategy
        if strategy is BatchStrategy.IDENTITY and schema.equals(self.output_schema):
            return self._relabel(batch), CastReport()
        if strategy is BatchStrategy.RELABEL and schema.equals(self.input_schema):
            return self._relabel_columns(batch), CastReport()
        if batch.num_rows <= TINY_BATCH_ROWS and strategy is BatchStrategy.COMPUTED and numba_ready() and \
                schema.equals(self.input_schema):
            program = self._tiny_program()
            done = None if program is None else run_ipc_program(program, batch)
            if done is not None:
                return done, CastReport()
        if len(self.nodes) > WIDE_PLAN:  # thousands of Array wrappers, no cycles: see gc_pause
            with paused_gc():
                return self._compute(batch, schema, mode, offset)
        return self._compute(batch, schema, mode, offset)

    def _compute(self, batch: pa.RecordBatch, schema: pa.Schema, mode: CastMode,
                 offset: int) -> tuple[pa.RecordBatch, CastReport]:
        """Evaluate the nodes (every batch of a computed plan, other layouts of the others)."""
        exact = schema.equals(self.input_schema)  # a pointer check for batches of one stream
        if not exact:
            self._check_input(schema)
        sink = _Sink(mode, offset)
        columns = _Columns(batch)  # only the columns a node reads get wrapped (dropped ones never)
        rows = batch.num_rows
        nodes = self.nodes
        out: list[pa.Array | None] = [None] * len(nodes)
        if exact:  # columns of exactly the read type: no per-batch check of their layout or names
            for i, source in self.steps.untouched:
                out[i] = columns[source]
        heavy = self.steps.computed
        if len(heavy) > 1 and rows >= _PARALLEL_MIN_ROWS and get_threads() > 1:
            done = run_parallel(lambda i: nodes[i].evaluate(columns, rows, sink, ROOT_ROWS),
                                [(i,) for i in heavy])
            for i, arr in zip(heavy, done, strict=True):
                out[i] = arr
        elif rows <= SMALL_BATCH_ROWS and self._shared_shapes():
            evaluate_small(nodes, self._shared_shapes(), columns, rows, sink, out)
        for i, n in enumerate(nodes):
            if out[i] is None:
                out[i] = n.evaluate(columns, rows, sink, ROOT_ROWS)
        if sink.report.total and mode == "null":
            log.warning("fieldshift: %d value(s) failed an explicit cast and were read as null: %s",
                        sink.report.total, sink.report.failures)
        return pa.RecordBatch.from_arrays(out, schema=self.output_schema), sink.report

    def _check_input(self, schema: pa.Schema) -> None:
        """Refuse a batch whose columns are not the ones planned for: by name, then by type."""
        names = self.input_schema.names
        if schema.names != names:
            raise SchemaEvolutionError(
                f"the plan reads the file columns {names} in this order, but the batch has "
                f"{schema.names}; plan with the schema of this data (columns match by position)"
            )
        if any(schema.equals(s) for s in self._accepted):
            return
        for name, got, want in zip(schema.names, schema.types, self.input_schema.types, strict=True):
            if not same_values(got, want):
                raise BatchTypeError(name, str(want), str(got))
        if len(self._accepted) < 4:  # a few other layouts of the same values (dictionaries, item names)
            self._accepted.append(schema)

    def _tiny_program(self) -> IpcProgram | None:
        if not self._tiny:  # two threads may both compile it: the same answer
            self._tiny.append(compile_program(self.nodes, self.input_schema, self.output_schema))
        return self._tiny[0]

    def _shared_shapes(self) -> tuple[tuple[Node, tuple[int, ...]], ...]:
        if not self._shared:  # two threads may both compute it: the same answer
            self._shared.append(shared_shapes(self.nodes))
        return self._shared[0]

    def _relabel_columns(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Renames, reorders and drops only: the read schema over the same column buffers."""
        every = batch.columns
        out = [every[n.index] for n in self.nodes]
        for i, target in self.steps.views:  # nested renames, decided at plan time
            out[i] = out[i].view(target)
        for i in self.steps.list_columns:  # Parquet's `item` vs `element`, known only per batch
            target = self.nodes[i].target
            if not same_child_names(out[i].type, target):
                out[i] = out[i].view(target)
        return pa.RecordBatch.from_arrays(out, schema=self.output_schema)

    # -- describing -----------------------------------------------------------------------------
    def explain(self) -> str:
        """One line per read column (nested ones indented): what the plan does to it."""
        if self.identity:
            head = "identity: batches pass through unchanged"
        elif self.rename_only:
            head = "rename only: the same buffers under the read schema"
        else:
            head = f"evolves {self.input_width} file column(s) into {len(self.nodes)} read column(s)"
        lines = [head, *_explain(self.nodes, list(self.output_schema), dict(self.notes), "  ")]
        return "\n".join(lines)

    def widened_on_read(self) -> dict[int, pa.DataType]:
        """Top-level file columns (by index) whose only change is an exact numeric widening, with their
        read type: a Parquet reader can cast those while decoding, on its own threads."""
        return {n.index: n.target for n in self.nodes if isinstance(n, CastNode) and n.kernel == NUMPY_WIDEN}

    def needed_input_columns(self) -> list[str]:
        """Top-level file columns the plan reads (the rest need not be read from disk)."""
        used = sorted({n.index for n in self.nodes if not isinstance(n, ConstantNode)})
        return [self.input_names[i] for i in used]

    def __str__(self) -> str:
        return self.explain()

    def __repr__(self) -> str:
        return f"EvolutionPlan({len(self.nodes)} columns, identity={self.identity})"


class _Columns:
    """A batch's columns, fetched when a node asks for one."""

    __slots__ = ("_batch",)

    def __init__(self, batch: pa.RecordBatch) -> None:
        self._batch = batch

    def __getitem__(self, i: int) -> pa.Array:
        return self._batch.column(i)

    def __len__(self) -> int:
        return self._batch.num_columns


def _explain(nodes: tuple[Node, ...], fields: list[pa.Field], notes: dict[int, str], indent: str) -> list[str]:
    """One line per node; its note is found by the id of the read field it produces (``fields``: the
    output's Arrow fields beside the nodes, ids in their metadata)."""
    lines: list[str] = []
    for n, f in zip(nodes, fields, strict=True):
        checked = isinstance(n, NullCheck)
        if checked:
            n = n.inner
        note = notes.get(int(f.metadata[FIELD_ID_KEY]), "")
        lines.append(f"{indent}{n.path}: {note}{'; checked for nulls' if checked else ''}")
        t = f.type
        if isinstance(n, StructNode):
            lines.extend(_explain(n.children, list(t), notes, indent + "  "))
        elif isinstance(n, ListNode):
            lines.extend(_explain((n.element,), [t.value_field], notes, indent + "  "))
        elif isinstance(n, MapNode):
            lines.extend(_explain((n.key, n.value), [t.key_field, t.item_field], notes, indent + "  "))
    return [line for line in lines if not line.endswith(": as is") or indent == "  "]


def _shown_value(source: pa.Array, i: int) -> object:
    """The value at ``i`` for a failure report; temporal values outside Python's datetime range (which
    ``as_py`` cannot convert) as their raw integer with the unit, e.g. ``'253402300800000000 us'``."""
    try:
        return source[i].as_py()
    except (OverflowError, ValueError, pa.ArrowException):
        t = source.type
        raw = source.slice(i, 1)
        width = pa.int32() if t.bit_width == 32 else pa.int64()
        try:
            ticks = raw.view(width)[0].as_py()
        except (pa.ArrowException, ValueError, TypeError):
            return f"<unprintable {t}>"
        unit = getattr(t, "unit", "days" if pa.types.is_date32(t) else "ms" if pa.types.is_date64(t) else "")
        return f"{ticks} {unit}".rstrip()


def _empty_bad(data: Any) -> Any:
    empty = data.slice(0, 0)
    return empty.append_column(REASON_COLUMN, pa.array([], pa.string()))
