"""The documentation: every public name has a docstring, and ``make docs`` renders all of them."""

from __future__ import annotations

import importlib.util
import inspect
import re
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

import fieldshift
import fieldshift.spark
from fieldshift.cli import app
from fieldshift.cli.reference import cli_reference, command_paths
from fieldshift.schema.policy import POLICY_NAMES

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def docs_build() -> ModuleType:
    """docs/build.py, loaded under its own name (``build`` is also the name of a packaging tool)."""
    spec = importlib.util.spec_from_file_location("fieldshift_docs_build", ROOT / "docs" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _own_doc(obj: object) -> str:
    """The object's own docstring (a class does not inherit one from its base here)."""
    doc = vars(obj).get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__", None)
    return inspect.cleandoc(doc or "")


@pytest.mark.parametrize("module", [fieldshift, fieldshift.spark], ids=["fieldshift", "fieldshift.spark"])
def test_every_public_name_has_a_docstring(module: object) -> None:
    missing = [name for name in module.__all__ if not _own_doc(getattr(module, name))]
    assert not missing, f"public names without a docstring in {module.__name__}: {missing}"


def test_cli_reference_covers_every_command_and_option() -> None:
    text = cli_reference(app)
    for path in command_paths(app):
        assert f"## `{' '.join(('fieldshift', *path))}`" in text or not path, path
    assert "`--where / -w` TEXT" in text and "LOCATION" in text and "`fieldshift schema diff`" in text
    assert "<bool>" not in text and "{location}" not in text


def test_docs_build_renders_every_public_name(tmp_path: Path, docs_build: ModuleType) -> None:
    out = tmp_path / "site"
    pages = {p.relative_to(out).as_posix() for p in docs_build.build(out)}
    assert {"index.html", "fieldshift.html", "fieldshift/spark.html", "fieldshift/table.html",
            "fieldshift/planner.html", "fieldshift/kernels.html", "cli.html", "concepts.html",
            "architecture.html"} <= pages
    for name in docs_build.MODULES:
        module = sys.modules[name]
        sections = set(re.findall(r'<section id="([\w.]+)">', (out / f"{name.replace('.', '/')}.html").read_text()))
        assert set(module.__all__) <= sections, set(module.__all__) - sections
    table = (out / "fieldshift" / "table.html").read_text()
    for member in ("Table.scan", "Table.to_arrow", "Scan.to_batches", "Scan.to_reader", "Scan.count", "Scan.files",
                   "Scan.to_pandas", "Scan.to_polars", "Scan.to_duckdb"):
        assert f'id="{member}"' in table, member
    scan_doc = table[table.index('id="Table.scan"'):table.index('id="Table.to_arrow"')]
    assert "Filters" in scan_doc and "not_null" in scan_doc and "limit" in scan_doc  # the grammar, on its page
    cli = (out / "cli.html").read_text()
    assert all(" ".join(("fieldshift", *p)) in cli for p in command_paths(app))
    concepts = (out / "concepts.html").read_text()
    assert all(f"<code>{name}</code>" in concepts for name in POLICY_NAMES) and "{{" not in concepts
    assert "One batch" in (out / "architecture.html").read_text()


FAKE = """\
    \"\"\"A module with a few public names, some without a docstring.\"\"\"

    import dataclasses

    __all__ = ["Base", "Child", "Made", "Plain", "LIMIT", "UNSAID", "documented", "silent"]


    class Base(Exception):
        \"\"\"A documented base.\"\"\"

        def told(self) -> int:
            \"\"\"Documented here, inherited below.\"\"\"
            return 1

        def _private(self) -> None:
            pass


    class Child(Base):
        def told(self) -> int:  # an override: the base's docstring is the one shown
            return 2

        @property
        def size(self) -> int:
            return 0

        @classmethod
        def make(cls) -> "Child":
            return cls()


    @dataclasses.dataclass
    class Made:
        x: int  # the docstring dataclass makes up does not count


    class Plain:
        \"\"\"Documented, with a documented static method and an undocumented one.\"\"\"

        @staticmethod
        def fine() -> None:
            \"\"\"Yes.\"\"\"

        @staticmethod
        def bare() -> None:
            pass


    LIMIT = 3
    \"\"\"A documented constant.\"\"\"

    UNSAID = 4


    def documented() -> None:
        \"\"\"Yes.\"\"\"


    def silent() -> None:
        pass


    def _hidden() -> None:
        pass
"""


@pytest.fixture
def fake_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "fs_fake_docs.py").write_text(textwrap.dedent(FAKE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fs_fake_docs", raising=False)
    return "fs_fake_docs"


def test_the_check_names_every_public_name_without_a_docstring(docs_build: ModuleType, fake_module: str) -> None:
    assert docs_build.undocumented([fake_module]) == [
        "fs_fake_docs.Child", "fs_fake_docs.Child.size", "fs_fake_docs.Child.make", "fs_fake_docs.Made",
        "fs_fake_docs.Plain.bare", "fs_fake_docs.UNSAID", "fs_fake_docs.silent"]


def test_the_docs_build_fails_on_a_public_name_without_a_docstring(tmp_path: Path, docs_build: ModuleType,
                                                                   fake_module: str) -> None:
    out = tmp_path / "site"
    with pytest.raises(RuntimeError, match="7 public name") as info:
        docs_build.build(out, modules=[fake_module])
    assert "fs_fake_docs.silent" in str(info.value) and "fs_fake_docs.Child.size" in str(info.value)
    assert not out.exists()


def test_every_public_name_of_the_documented_modules_has_a_docstring(docs_build: ModuleType) -> None:
    assert {"fieldshift.table", "fieldshift.planner", "fieldshift.kernels"} <= set(docs_build.MODULES)
    assert docs_build.undocumented() == []
