"""Small batches: columns evolved the same way go through one evaluation of their concatenation.

On a batch of a few rows each kernel call costs its fixed overhead (~5 µs through pyarrow's Python
API) whatever the rows, so W1's ten int -> long columns cost ten calls. Concatenating them (one C++
call), evaluating the shared node once and slicing the result costs about two. Only nodes that can
never report a failed value are grouped: a failure's row number would be a row of the concatenation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pyarrow as pa

from fieldshift.kernels.numba_format import INT_TO_STRING
from fieldshift.kernels.widen import NUMPY_WIDEN
from fieldshift.planner.nodes import (
    ROOT_ROWS,
    CastNode,
    ConstantNode,
    FailureSink,
    ListNode,
    MapNode,
    Node,
    NullCheck,
    StructNode,
    Take,
)

__all__ = ["SMALL_BATCH_ROWS", "evaluate_small", "shared_shapes"]

SMALL_BATCH_ROWS = 2_048
"""Up to this many rows, concatenating columns costs less than the kernel calls it saves."""

GROUP_MAX = 64
"""Columns concatenated at most into one evaluation: a 2,500-column concatenation no longer fits the
CPU caches and cost 5-8x its 64-column pieces (a 10,000-column batch's cost grew 13x per column)."""

_NEVER_FAIL_KERNELS = frozenset((NUMPY_WIDEN, INT_TO_STRING, "cast.arrow"))


def shared_shapes(nodes: Sequence[Node]) -> tuple[tuple[Node, tuple[int, ...]], ...]:
    """(shared node reading input 0, the top-level nodes it stands for) for every group of two or more.

    The shared node is the first member reading the concatenation; its paths stay, as they only name
    failed values and grouped nodes never fail."""
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, node in enumerate(nodes):
        if not isinstance(node, (Take, ConstantNode)) and _never_fails(node):
            groups.setdefault(_work(node, top=True), []).append(i)
    chunks = [members[k:k + GROUP_MAX] for members in groups.values() for k in range(0, len(members), GROUP_MAX)]
    return tuple((dataclasses.replace(nodes[members[0]], index=0), tuple(members))
                 for members in chunks if len(members) > 1)


def evaluate_small(nodes: Sequence[Node], shapes: tuple[tuple[Node, tuple[int, ...]], ...],
                   columns: Sequence[pa.Array], length: int, sink: FailureSink, out: list[pa.Array | None]) -> None:
    """Fill ``out`` for the grouped nodes of a batch of ``length`` rows, each group evaluated once."""
    for shape, members in shapes:
        try:
            joined = pa.concat_arrays([columns[nodes[i].index] for i in members])
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # e.g. dictionaries that do not unify
            continue  # the members are then evaluated one by one
        result = shape.evaluate([joined], len(joined), sink, ROOT_ROWS)
        for k, i in enumerate(members):
            out[i] = result.slice(k * length, length)


def _never_fails(node: Node) -> bool:
    if isinstance(node, NullCheck):
        return False
    if isinstance(node, CastNode):
        return node.kernel in _NEVER_FAIL_KERNELS
    if isinstance(node, StructNode):
        return all(_never_fails(c) for c in node.children)
    if isinstance(node, ListNode):
        return _never_fails(node.element)
    if isinstance(node, MapNode):
        return _never_fails(node.key) and _never_fails(node.value)
    return True


def _work(node: Node, top: bool = False) -> tuple[object, ...]:
    """What ``node`` does, without its path (and which input it reads at the top)."""
    index = 0 if top or isinstance(node, ConstantNode) else node.index
    if isinstance(node, CastNode):
        return ("cast", index, node.target, node.kernel)
    if isinstance(node, StructNode):
        return ("struct", index, node.target, tuple(_work(c) for c in node.children))
    if isinstance(node, ListNode):
        return ("list", index, node.target, _work(node.element))
    if isinstance(node, MapNode):
        return ("map", index, node.target, _work(node.key), _work(node.value))
    if isinstance(node, Take):
        return ("take", index, node.target)
    return ("constant", node.target, repr(node.value.as_py()))
