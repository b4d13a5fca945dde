"""The planner layer: plan once (match a read schema against a file schema by id), apply per batch.

``planning`` builds plans, ``cache`` keeps them (the one plan cache), ``nodes`` and ``strategy`` are
what a plan runs, ``evolution_plan`` applies it to batches (``small_batches`` groups tiny ones), and
``front_door`` is the public ``plan()`` / ``evolve()``. Layers above import from this face.
"""

from fieldshift.planner.cache import PlanCache
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

# The two constants again, annotated: pdoc renders a re-exported variable's docstring only from here.
PLAN_CACHE: PlanCache
"""Every plan fieldshift makes through ``cached_plan`` and ``arrow_plan``: the one plan cache
(``clear_plan_cache`` empties it)."""
REASON_COLUMN: str
"""The column ``EvolutionPlan.apply_split`` adds to the rows it sets aside: which values failed which cast."""

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
