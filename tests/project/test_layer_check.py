"""tools/layer_check.py finds upward imports, import cycles (also through function-level and TYPE_CHECKING
imports) and private cross-module imports, and the project has none beyond its named allowlist."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOTS = {"engine": "fieldshift", "kernels": "fieldshift.kernels"}


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("layer_check", REPO / "tools" / "layer_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


lc = _load()


def _tree(root: Path, files: dict[str, str]) -> Path:
    """A package tree: ``engine/`` is fieldshift, ``kernels/`` fieldshift.kernels (every folder a package)."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in {p.parent for p in root.rglob("*.py")}:
        (folder / "__init__.py").touch()
    return root


def _findings(root: Path, kind: str) -> list[tuple[str, ...]]:
    report, _ = lc.check(root, ROOTS, known={})
    return [f.modules for f in report.findings if f.kind == kind]


def test_an_import_of_a_higher_layer_is_upward(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "engine/schema/types.py": "def f():\n    from fieldshift.table.scan import Scan\n",  # 1 -> 3, in a function
        "engine/table/scan.py": "from fieldshift.errors import E\nScan = 1\n",  # 3 -> 0: down, fine
        "engine/errors.py": "from fieldshift.planner import plan\n",  # 0 -> 2 through the planner's face
        "engine/planner/__init__.py": "plan = 1\n",
        "kernels/casts.py": "import fieldshift.errors\n",  # 0 -> 0
        "engine/cli/command_tree.py": "import fieldshift\nimport fieldshift.types\n",  # layer 4: public paths
        "engine/schema/model.py": "import fieldshift\n",  # layer 1 may not
        # 1 -> 3, twice
        "engine/schema/field.py": "from fieldshift.ddl.tokens import t\nfrom fieldshift.ddl.parser import p\n",
        # an old public path is in the face's layer
        "engine/schema/widening.py": "from fieldshift.policy import CastPolicy\n",
        "engine/types.py": "t = 1\n",
        "engine/policy.py": "CastPolicy = 1\n",
        "engine/ddl/tokens.py": "t = 1\n",
        "engine/ddl/parser.py": "p = 1\n",
    })
    assert sorted(_findings(tmp_path, "upward import")) == [
        ("errors", "planner"), ("schema.field", "ddl.parser"), ("schema.field", "ddl.tokens"),
        ("schema.model", "fieldshift"), ("schema.types", "table.scan"), ("schema.widening", "policy")]


def test_a_cycle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "engine/field.py": "import fieldshift.types\n",
        "engine/types.py": "def to_arrow():\n    from fieldshift import arrow\n",
        "engine/arrow.py": "from fieldshift.field import Field\n",
        "engine/other.py": "from fieldshift.field import Field\n",  # imports the cycle, is not in it
    })
    assert _findings(tmp_path, "import cycle") == [("arrow", "field", "types")]


def test_a_cycle_through_a_type_checking_import_is_found(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "engine/schema.py": "from typing import TYPE_CHECKING\n"
                            "if TYPE_CHECKING:\n    from fieldshift.update import U\n",
        "engine/update.py": "from .schema import Schema\n",  # relative: fieldshift.schema
        "kernels/a.py": "import typing\nif typing.TYPE_CHECKING:\n    from fieldshift.kernels.b import B\n",
        "kernels/b.py": "from fieldshift.kernels import a\n",
    })
    report, found = lc.check(tmp_path, ROOTS, known={})
    assert [f.modules for f in report.findings] == [("kernels.a", "kernels.b"), ("schema", "update")]
    where = {(i.importer, i.imported): i.where for i in found}
    assert where[("fieldshift.schema", "fieldshift.update")] == "type-checking"
    assert where[("fieldshift.kernels.a", "fieldshift.kernels.b")] == "type-checking"
    assert where[("fieldshift.update", "fieldshift.schema")] == "module"


def test_a_module_importing_through_its_own_package_face_is_in_a_cycle(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "engine/table/__init__.py": "from fieldshift.table.scan import Scan\nhelper = 1\n",
        "engine/table/scan.py": "from fieldshift.table import helper\nScan = 1\n",
    })
    assert _findings(tmp_path, "import cycle") == [("table", "table.scan")]


def test_a_private_name_from_another_module_is_found(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "engine/schema.py": "def _rebuild(): ...\n",
        "engine/avro.py": "from fieldshift.schema import _rebuild, join\n",
        "engine/json.py": "from .schema import _rebuild as rebuild\n",  # renamed: still the private name
        "engine/_shared.py": "_WIDE = 1\n",
        "engine/avro_read.py": "from fieldshift._shared import _WIDE\nfrom fieldshift import _shared\n",  # a private
        "engine/dunder.py": "from fieldshift.schema import __doc__\n",  # module's names are its package's
    })
    assert _findings(tmp_path, "private import") == [("avro", "schema", "_rebuild"), ("json", "schema", "_rebuild")]


def test_the_allowlist_excuses_a_finding_and_a_stale_entry_fails(tmp_path: Path) -> None:
    _tree(tmp_path, {"engine/a.py": "import fieldshift.b\n", "engine/b.py": "import fieldshift.a\n"})
    cycle = lc.Finding("import cycle", ("a", "b"))
    report, _ = lc.check(tmp_path, ROOTS, known={cycle: "issue 1 removes it"})
    assert report.ok and report.findings == (cycle,) and report.new == ()
    gone = lc.Finding("import cycle", ("c", "d"))
    report, _ = lc.check(tmp_path, ROOTS, known={cycle: "issue 1", gone: "issue 2"})
    assert not report.ok and report.stale == (gone,)
    report, _ = lc.check(tmp_path, ROOTS, known={})
    assert not report.ok and report.new == (cycle,)


def test_each_strongly_connected_component_is_one_finding() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert lc.cycles(graph) == [("a", "b", "c"), ("d", "e")]
    chain = {str(i): {str(i + 1)} for i in range(5000)}  # deep graphs: no recursion limit
    chain["5000"] = {"0"}
    assert len(lc.cycles(chain)[0]) == 5001


def test_the_project_has_nothing_beyond_its_allowlist(capsys: pytest.CaptureFixture[str]) -> None:
    """The layers of the real tree: anything new fails, and so does a KNOWN entry that is gone."""
    report, _ = lc.check(REPO)
    assert report.new == () and report.stale == (), "\n".join(map(str, report.new + report.stale))
    assert all(reason.strip() for reason in lc.KNOWN.values())
    assert lc.main(["--root", str(REPO)]) == 0
    assert "0 not in KNOWN, 0 stale KNOWN entries" in capsys.readouterr().out


def test_the_package_folders_are_pyprojects() -> None:
    roots = lc.package_roots(REPO)
    assert roots == {"engine": "fieldshift", "kernels": "fieldshift.kernels", "spark": "fieldshift.spark"}
    mods = lc.modules(REPO, roots)
    assert mods["fieldshift"] == REPO / "engine" / "__init__.py"
    assert mods["fieldshift.kernels.registry"] == REPO / "kernels" / "registry.py"
