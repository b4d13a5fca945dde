"""The planner layer: plan once (match a read schema against a file schema by id), apply per batch.

``planning`` builds plans, ``cache`` keeps them (the one plan cache), ``nodes`` and ``strategy`` are
what a plan runs, ``evolution_plan`` applies it to batches (``small_batches`` groups tiny ones), and
``front_door`` is the public ``plan()`` / ``evolve()``. Layers above import from this face.
"""

from fieldshift.planner.evolution_plan import REASON_COLUMN, CastReport, EvolutionPlan
from fieldshift.planner.front_door import evolve, plan
from fieldshift.planner.planning import (
    PLAN_CACHE,
    arrow_plan,
    build_plan,
    cached_plan,
    clear_plan_cache,
    plan_key,
    value_key,
)
from fieldshift.planner.strategy import BatchStrategy

__all__ = [
    "PLAN_CACHE",
    "REASON_COLUMN",
    "BatchStrategy",
    "CastReport",
    "EvolutionPlan",
    "arrow_plan",
    "build_plan",
    "cached_plan",
    "clear_plan_cache",
    "evolve",
    "plan",
    "plan_key",
    "value_key",
]
