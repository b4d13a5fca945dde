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
