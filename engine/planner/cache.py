"""`PlanCache`: the one store of plans, keyed by value, bounded by one least-recently-used rule.

What a plan depends on is spelled once, in ``plan_key``: the file schema (its fingerprint, or for an
Arrow schema its IPC bytes, ids included), the read schema, the policy, constants and name mapping.
"""

from __future__ import annotations

import decimal
import math
import struct
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa

from fieldshift.options import MatchMode
from fieldshift.planner.evolution_plan import EvolutionPlan
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy

__all__ = ["PlanCache", "plan_columns", "plan_key", "value_key"]

def value_key(v: Any) -> Any:
    """A value as a cache key that keeps apart what ``==`` merges: 0.0 and -0.0 (by the float's bits),
    1, 1.0 and True (by type), NaNs (equal to themselves here); containers element by element."""
    if isinstance(v, float):
        return ("float", struct.pack("<d", v)) if not math.isnan(v) else ("float", "nan")
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(value_key(x) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple((value_key(k), value_key(x)) for k, x in v.items()))
    if isinstance(v, decimal.Decimal):
        return ("decimal", str(v))
    if isinstance(v, pa.Scalar):
        return ("scalar", str(v.type), v.is_valid and repr(v))
    try:
        hash(v)
    except TypeError:
        return (type(v).__name__, repr(v))
    return (type(v).__name__, v)


def plan_key(file_key: Any, read_schema: Schema, policy: CastPolicy, constants: Mapping[int, Any] | None,
             name_mapping: Any = None, match: MatchMode = "id") -> tuple[Any, ...]:
    """What a plan depends on, by value -- the one definition the plan cache uses.

    ``file_key`` is the file schema's fingerprint (or, for an Arrow schema, its IPC bytes, ids
    included); the read schema by fingerprint (structure, ids, docs and defaults by their bits); the
    policy by value (a frozen dataclass); constants by field id and ``value_key``; the name mapping by
    its content (a frozen dataclass), never by ``id()``, whose addresses are recycled; and ``match``.
    """
    consts = tuple(sorted((k, value_key(v)) for k, v in (constants or {}).items()))
    mapping: Any = name_mapping
    try:
        hash(mapping)
    except TypeError:
        mapping = repr(mapping)
    return (file_key, read_schema.fingerprint(), policy, consts, mapping, match)


def plan_columns(plan: EvolutionPlan) -> int:
    """A plan's size in columns (its input and output fields, nested ones included): what bounds the cache.

    Planning counts them on its schemas (``EvolutionPlan.columns``); walking the Arrow schemas again
    builds a wrapper per field (1.8 ms for a 1,000-column plan)."""
    return plan.columns or 1 + _fields(plan.input_schema) + _fields(plan.output_schema)


def _fields(container: Any) -> int:
    n = 0
    for f in container:
        n += 1
        t = f.type
        if isinstance(t, pa.StructType):
            n += _fields(t)
        elif isinstance(t, pa.MapType):
            n += _fields((t.key_field, t.item_field))
        elif isinstance(t, (pa.ListType, pa.LargeListType, pa.FixedSizeListType, pa.ListViewType,
                            pa.LargeListViewType)):
            n += _fields((t.value_field,))
    return n


class PlanCache:
    """Plans by ``plan_key``, the least recently used dropped beyond ``size`` plans or ``columns``
    columns in all (``plan_columns``); thread-safe.

    The bound is mostly by columns: a scan plans each schema version of its files once, and an LRU
    smaller than a table's history would miss on every version of every scan (a 1,000-version table
    against 512 plans), while a count alone lets a few hundred 10,000-column plans hold gigabytes.

    Plans for Arrow schemas are also found without their key: batches of one stream share their C++
    schema, so comparing it with the few most recently looked-up Arrow schemas (metadata, i.e. ids,
    included) is a pointer check, where serialising the schema for its key costs far more on wide
    schemas. That index only points at cached plans: what the LRU drops, it forgets too.
    """

    def __init__(self, size: int = 65_536, recent: int = 8, columns: int = 250_000) -> None:
        self._size = size
        self._max_columns = columns
        self._columns = 0
        self._plans: OrderedDict[tuple[Any, ...], tuple[EvolutionPlan, int]] = OrderedDict()
        # (key without its file part, the Arrow schema, the plan, the full key), newest first
        self._recent: deque[tuple[tuple[Any, ...], pa.Schema, EvolutionPlan, tuple[Any, ...]]] = deque(maxlen=recent)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._plans)

    def get(self, key: tuple[Any, ...], build: Callable[[], EvolutionPlan],
            arrow: pa.Schema | None = None) -> EvolutionPlan:
        """The plan under ``key``, built (outside the lock) and stored when absent; ``arrow`` is the
        data's Arrow schema when ``key`` is made from its bytes, for ``recent_arrow`` to find it by."""
        with self._lock:
            hit = self._plans.get(key)
            if hit is not None:
                self._plans.move_to_end(key)
                if arrow is not None:
                    self._recent.appendleft((key[1:], arrow, hit[0], key))
                return hit[0]
        plan = build()
        weight = plan_columns(plan)
        with self._lock:
            old = self._plans.pop(key, None)
            self._columns += weight - (old[1] if old is not None else 0)
            self._plans[key] = (plan, weight)
            while len(self._plans) > 1 and (len(self._plans) > self._size or self._columns > self._max_columns):
                dropped, (_, dropped_weight) = self._plans.popitem(last=False)
                self._columns -= dropped_weight
                if any(entry[3] == dropped for entry in self._recent):
                    self._recent = deque((e for e in self._recent if e[3] != dropped), maxlen=self._recent.maxlen)
            if arrow is not None:
                self._recent.appendleft((key[1:], arrow, plan, key))
        return plan

    def recent_arrow(self, arrow: pa.Schema, rest: tuple[Any, ...]) -> EvolutionPlan | None:
        """The plan of a recently looked-up Arrow schema equal to ``arrow`` (ids included) under the
        key part ``rest``, if any."""
        with self._lock:
            recent = tuple(self._recent)
        for key_rest, schema, plan, _ in recent:
            if key_rest == rest and schema.equals(arrow, check_metadata=True):
                return plan
        return None

    def clear(self) -> None:
        with self._lock:
            self._plans.clear()
            self._columns = 0
            self._recent.clear()
