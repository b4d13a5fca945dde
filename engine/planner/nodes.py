"""Plan nodes: plain frozen data (ints, names, Arrow types, scalars, kernel keys) that pickle.

A node holds only what applying it needs; the path stays for error messages. What planning decided
and why (``explain()``'s notes) is kept by the plan, by the id of the read field a node produces.

Each node turns the arrays of one nesting level (top-level columns, a struct's children, a list's
values, a map's keys and items) into one output array of its ``target`` type. Values are touched
only through kernels, looked up by name when the node runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, Union

import numpy as np
import pyarrow as pa

from fieldshift.kernels import (
    conform,
    constant_array,
    decoded,
    get_kernel,
    list_child_range,
    needs_rebuild,
    rebuild_as,
    rebuild_list,
    rebuild_map,
    rebuild_struct,
    without_views,
)
from fieldshift.kernels.valid_nulls import valid_hidden_nulls

__all__ = ["CastNode", "ConstantNode", "ListNode", "MapNode", "Node", "NullCheck", "StructNode", "Take"]

RowMap = Callable[[np.ndarray], np.ndarray]
"""Maps indices at the current nesting level to top-level row numbers (used only on failures)."""


class FailureSink(Protocol):
    def failed(self, path: str, local: np.ndarray, source: pa.Array, rows: RowMap,
               source_type: str, target_type: str) -> None: ...

    def null_in_required(self, path: str, local: np.ndarray, rows: RowMap) -> None: ...


def _identity_rows(idx: np.ndarray) -> np.ndarray:
    return idx


@dataclass(frozen=True, slots=True)
class Take:
    """Input ``index`` as it is (relabelled or re-laid-out to ``target`` when only names differ)."""

    index: int
    target: pa.DataType
    path: str

    def evaluate(self, inputs: Sequence[pa.Array], length: int, sink: FailureSink, rows: RowMap) -> pa.Array:
        return conform(inputs[self.index], self.target)


@dataclass(frozen=True, slots=True)
class CastNode:
    """Input ``index`` cast to ``target`` by the kernel registered as ``kernel``."""

    index: int
    target: pa.DataType
    kernel: str
    source_name: str
    target_name: str
    path: str

    def evaluate(self, inputs: Sequence[pa.Array], length: int, sink: FailureSink, rows: RowMap) -> pa.Array:
        source = decoded(inputs[self.index])  # dictionary, run-end encoded, extension: their values
        outcome = get_kernel(self.kernel)(source, self.target)
        if outcome.failed is not None and outcome.failed.any():
            sink.failed(self.path, np.flatnonzero(outcome.failed), source, rows, self.source_name,
                        self.target_name)
        return outcome.values


@dataclass(frozen=True, slots=True)
class ConstantNode:
    """A column the file lacks: a caller's constant, the initial default, or null."""

    value: pa.Scalar
    path: str

    def __hash__(self) -> int:
        return hash((self.path, str(self.value.type), repr(self.value.as_py())))

    @property
    def target(self) -> pa.DataType:
        return self.value.type

    def evaluate(self, inputs: Sequence[pa.Array], length: int, sink: FailureSink, rows: RowMap) -> pa.Array:
        return constant_array(self.value, length)


@dataclass(frozen=True, slots=True)
class StructNode:
    """A struct rebuilt from planned children, keeping the file struct's own validity."""

    index: int
    children: tuple[Node, ...]
    target: pa.DataType
    path: str

    def evaluate(self, inputs: Sequence[pa.Array], length: int, sink: FailureSink, rows: RowMap) -> pa.Array:
        source = decoded(inputs[self.index])
        kids = _StructChildren(source)
        child_rows = _masked_rows(source, rows) if source.null_count else rows
        out = [c.evaluate(kids, len(source), sink, child_rows) for c in self.children]
        rebuilt = rebuild_struct(self.target, source, out)
        if source.null_count and any(isinstance(c, NullCheck) for c in self.children):
            return valid_hidden_nulls(rebuilt)  # a required child's nulls under null structs: valid placeholders
        return rebuilt


@dataclass(frozen=True, slots=True)
class ListNode:
    """A list whose elements go through ``element``; the slice's offsets and validity are reused."""

    index: int
    element: Node
    target: pa.DataType
    path: str

    def evaluate(self, inputs: Sequence[pa.Array], length: int, sink: FailureSink, rows: RowMap) -> pa.Array:
        source = _same_list_layout(decoded(inputs[self.index]), self.target)
        values, offsets, start = list_child_range(source)
        element_rows = _element_rows(source, start, rows)
        new_values = self.element.evaluate([values], len(values), sink, element_rows)
        return rebuild_list(self.target, source, offsets, new_values)


@dataclass(frozen=True, slots=True)
class MapNode:
    """A map whose keys and items go through their own nodes; offsets and validity are reused."""

    index: int
    key: Node
    value: Node
    target: pa.DataType
    path: str

    def evaluate(self, inputs: Sequence[pa.Array], length: int, sink: FailureSink, rows: RowMap) -> pa.Array:
        source = decoded(inputs[self.index])
        entries, offsets, start = list_child_range(source)
        entry_rows = _element_rows(source, start, rows)
        kids = [entries.field(0), entries.field(1)]
        keys = self.key.evaluate(kids, len(entries), sink, entry_rows)
        items = self.value.evaluate(kids, len(entries), sink, entry_rows)
        return rebuild_map(self.target, source, offsets, keys, items)


@dataclass(frozen=True, slots=True)
class NullCheck:
    """A required read field over a file column that may hold nulls: ``inner`` after a null check.

    Writers such as DuckDB and Spark mark every Parquet column optional, so the file's nullability says
    nothing about its values; the null count does. Nulls under a null parent (struct or list slot) are
    hidden and do not count."""

    inner: Node
    path: str

    @property
    def index(self) -> int:
        return self.inner.index  # type: ignore[union-attr]

    @property
    def target(self) -> pa.DataType:
        return self.inner.target

    def evaluate(self, inputs: Sequence[pa.Array], length: int, sink: FailureSink, rows: RowMap) -> pa.Array:
        source = inputs[self.index]
        if source.null_count:
            sink.null_in_required(self.path, np.flatnonzero(source.is_null().to_numpy(zero_copy_only=False)),
                                  rows)
        return self.inner.evaluate(inputs, length, sink, rows)


Node = Union[Take, CastNode, ConstantNode, StructNode, ListNode, MapNode, NullCheck]


class _StructChildren(Sequence[pa.Array]):
    """A struct's children, fetched only when a node asks for one."""

    __slots__ = ("_source",)

    def __init__(self, source: pa.Array) -> None:
        self._source = source

    def __getitem__(self, i: int) -> pa.Array:  # type: ignore[override]
        return self._source.field(i)

    def __len__(self) -> int:
        return self._source.type.num_fields


def _masked_rows(source: pa.Array, rows: RowMap) -> RowMap:
    """Rows of a struct's children; -1 where the struct itself is null (its children are hidden)."""
    def to_rows(idx: np.ndarray) -> np.ndarray:
        valid = source.is_valid().to_numpy(zero_copy_only=False)[idx]
        return np.where(valid, rows(idx), -1)

    return to_rows


def _element_rows(source: pa.Array, start: int, rows: RowMap) -> RowMap:
    """Rows of list (or map) entries; -1 for entries that sit under a null list slot."""
    def to_rows(idx: np.ndarray) -> np.ndarray:
        if pa.types.is_fixed_size_list(source.type):
            parent = idx // source.type.list_size
        else:
            offsets = source.offsets.to_numpy() - start
            parent = np.searchsorted(offsets, idx, side="right") - 1
        valid = source.is_valid().to_numpy(zero_copy_only=False)[parent]
        return np.where(valid, rows(parent), -1)

    return to_rows


def _same_list_layout(source: pa.Array, target: pa.DataType) -> pa.Array:
    """Cast a list of another layout (large, view, fixed) to the target's layout, same elements."""
    if source.type.id == target.id:
        return source
    element = source.type.value_field.with_type(without_views(source.type.value_type))
    if pa.types.is_large_list(target):
        want = pa.large_list(element)
    elif pa.types.is_fixed_size_list(target):
        want = pa.list_(element, target.list_size)
    else:
        want = pa.list_(element)
    return rebuild_as(source, want) if needs_rebuild(source.type) else conform(source, want)


ROOT_ROWS: RowMap = _identity_rows
