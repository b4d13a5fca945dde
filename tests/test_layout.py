"""The package's layout keeps its promises: the engine never reaches up into Spark, and every
``fieldshift.<module>`` path names a module, not a function re-exported under the same name."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parent.parent
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

    shadowed = [n for n in fs.__all__
                if not isinstance(getattr(fs, n), ModuleType) and importlib.util.find_spec(f"fieldshift.{n}")]
    assert shadowed == []
    modules = {"evolution_plan": "EvolutionPlan", "front_door": "evolve", "widening": "supertype"}
    for module, name in modules.items():
        m = importlib.import_module(f"fieldshift.{module}")
        assert isinstance(m, ModuleType) and getattr(m, name) is getattr(fs, name)
