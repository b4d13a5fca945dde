"""How a plan treats a batch, chosen once at planning: pass it through, relabel it, or compute columns.

The names follow iceberg-rust's ``RecordBatchTransformer`` (PassThrough / ModifySchema / Modify). The
runtime data each strategy needs sits in one ``BatchSteps``; like Polars' column selectors, a column
the plan leaves untouched is just an index there, never a node to evaluate.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from fieldshift.kernels.layout import names_like, same_child_names
from fieldshift.planner.nodes import CastNode, ConstantNode, ListNode, MapNode, Node, NullCheck, StructNode, Take
from fieldshift.schema.model import Schema
from fieldshift.schema.types import ListType, MapType, StructType

__all__ = ["BatchSteps", "BatchStrategy", "choose_strategy"]


class BatchStrategy(enum.Enum):
    """What a plan does to a batch of exactly the schema it was planned for."""

    IDENTITY = "identity"  # the batch itself (its fields relabelled only when their ids differ)
    RELABEL = "relabel"  # renames, reorders, drops: the read schema over the same column buffers
    COMPUTED = "computed"  # nodes compute some columns; untouched ones are taken by index


@dataclass(frozen=True, slots=True)
class BatchSteps:
    """The per-batch work decided at planning; batches of other layouts fall back to the nodes."""

    untouched: tuple[tuple[int, int], ...] = ()  # (output, file column) already of the exact read type
    computed: tuple[int, ...] = ()  # output columns whose node computes, costliest first (run on threads)
    views: tuple[tuple[int, pa.DataType], ...] = ()  # RELABEL: nested renames, as views of the buffers
    list_columns: tuple[int, ...] = ()  # Parquet's `item` vs `element`, known only per batch


def choose_strategy(nodes: tuple[Node, ...], read_schema: Schema, file_arrow: pa.Schema,
                    output: pa.Schema) -> tuple[BatchStrategy, BatchSteps]:
    """The strategy for batches of ``file_arrow`` and the runtime selectors it needs."""
    lists = tuple(i for i, f in enumerate(read_schema.fields) if f.type.__class__ in _NESTED and _holds_list(f.type))
    takes = all(isinstance(n, Take) for n in nodes)
    if takes and len(nodes) == len(file_arrow) and all(n.index == i for i, n in enumerate(nodes)) \
            and file_arrow.equals(output):
        return BatchStrategy.IDENTITY, BatchSteps(list_columns=lists)
    if takes:
        types = file_arrow.types  # a wrapper per column: only when every node might relabel
        if all(names_like(types[n.index], n.target) == types[n.index] for n in nodes):
            views = tuple((i, n.target) for i, n in enumerate(nodes) if types[n.index] != n.target)
            return BatchStrategy.RELABEL, BatchSteps(views=views, list_columns=lists)
    return BatchStrategy.COMPUTED, BatchSteps(untouched=_untouched(nodes, file_arrow),
                                              computed=_costliest_first(nodes), list_columns=lists)


def _untouched(nodes: tuple[Node, ...], file_arrow: pa.Schema) -> tuple[tuple[int, int], ...]:
    """Take nodes whose file column already has exactly the target type, child names included."""
    out = []
    field = file_arrow.field  # a pa.Field per Take: file_arrow.types would build a wrapper per column
    for i, n in enumerate(nodes):
        if n.__class__ is Take:
            source = field(n.index).type
            if source == n.target and (source.num_fields == 0 or same_child_names(source, n.target)):
                out.append((i, n.index))
    return tuple(out)


def _costliest_first(nodes: tuple[Node, ...]) -> tuple[int, ...]:
    """The nodes that compute, costliest first: threads take them in this order (see run_parallel)."""
    heavy = [i for i, n in enumerate(nodes) if n.__class__ not in _LIGHT]
    return tuple(sorted(heavy, key=lambda i: -_cost(nodes[i])))


_LIGHT = frozenset((Take, ConstantNode))
_NESTED = frozenset((StructType, ListType, MapType))


_TEXT_TYPE_IDS = frozenset((pa.string().id, pa.large_string().id, pa.string_view().id))


def _cost(node: Node) -> int:
    """A rough weight: text is formatted or parsed value by value; widening and rebuilds are copies."""
    cls = node.__class__  # the node classes are final: a class check each, not an isinstance chain
    if cls is CastNode:
        text = node.kernel.startswith(("cast.numba", "cast.masked")) or node.target.id in _TEXT_TYPE_IDS
        return 8 if text else 1
    if cls is NullCheck:
        return 1 + _cost(node.inner)
    if cls is StructNode:
        return 1 + sum(_cost(c) for c in node.children)
    if cls is ListNode:
        return 2 + _cost(node.element)
    if cls is MapNode:
        return 2 + _cost(node.key) + _cost(node.value)
    return 0


def _holds_list(t: Any) -> bool:
    if isinstance(t, StructType):
        return any(_holds_list(c.type) for c in t.fields)
    return isinstance(t, (ListType, MapType))
