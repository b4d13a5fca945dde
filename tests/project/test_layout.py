"""The package's layout keeps its promises: the engine never reaches up into Spark, and every
``fieldshift.<module>`` path names a module, not a function re-exported under the same name."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[2]
ENGINE = ROOT / "engine"


def _imported_modules(path: Path) -> set[str]:
    """Every module an ``import`` names in ``path``, function-local imports included."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def test_engine_below_the_cli_never_imports_spark() -> None:
    """``Schema.to_spark`` made the schema model import the Spark layer; conversions live in fieldshift.spark."""
    offenders = {
        str(p.relative_to(ROOT)): sorted(m for m in _imported_modules(p) if m.startswith("fieldshift.spark"))
        for p in ENGINE.rglob("*.py")
        if "cli" not in p.relative_to(ENGINE).parts
    }
    assert {p: m for p, m in offenders.items() if m} == {}
    import fieldshift as fs

    assert not hasattr(fs.Schema, "to_spark")


def test_no_module_is_shadowed_by_a_public_name() -> None:
    """``import fieldshift.plan as m`` gave the function ``plan``: a public name must not share a module's name."""
    import importlib
    import importlib.util
    from types import ModuleType

    import fieldshift as fs
    import fieldshift.planner as planner

    for package in (fs, planner):
        shadowed = [n for n in package.__all__ if not isinstance(getattr(package, n), ModuleType)
                    and importlib.util.find_spec(f"{package.__name__}.{n}")]
        assert shadowed == []
    modules = {"planner.evolution_plan": "EvolutionPlan", "planner.front_door": "evolve",
               "schema.widening": "supertype"}
    for module, name in modules.items():
        m = importlib.import_module(f"fieldshift.{module}")
        assert isinstance(m, ModuleType) and getattr(m, name) is getattr(fs, name)


def test_the_planner_layer_is_one_package() -> None:
    """The planner's modules live in ``fieldshift.planner`` (layer 2), none at the old top-level paths."""
    import importlib.util

    old = ["planner", "evolution_plan", "front_door", "plan_nodes", "plan_cache", "strategy", "small_batches"]
    assert [m for m in old if (ENGINE / f"{m}.py").exists()] == []
    assert importlib.util.find_spec("fieldshift.planner").submodule_search_locations
    import fieldshift.planner as planner

    for name in ("cached_plan", "arrow_plan", "build_plan", "clear_plan_cache", "PLAN_CACHE", "EvolutionPlan"):
        assert hasattr(planner, name)
