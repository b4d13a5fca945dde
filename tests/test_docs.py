"""The documentation: every public name has a docstring, and ``make docs`` renders all of them."""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

import pytest

import fieldshift
import fieldshift.spark
from fieldshift.cli.app import app
from fieldshift.cli.reference import cli_reference, command_paths
from fieldshift.policy import POLICY_NAMES

ROOT = Path(__file__).resolve().parent.parent


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


def test_docs_build_renders_every_public_name(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import build as docs_build
    finally:
        sys.path.remove(str(ROOT / "docs"))
    out = tmp_path / "site"
    pages = {p.relative_to(out).as_posix() for p in docs_build.build(out)}
    assert {"index.html", "fieldshift.html", "fieldshift/spark.html", "cli.html", "concepts.html",
            "architecture.html"} <= pages
    for page, module in (("fieldshift.html", fieldshift), ("fieldshift/spark.html", fieldshift.spark)):
        sections = set(re.findall(r'<section id="([\w.]+)">', (out / page).read_text()))
        assert set(module.__all__) <= sections, set(module.__all__) - sections
    cli = (out / "cli.html").read_text()
    assert all(" ".join(("fieldshift", *p)) in cli for p in command_paths(app))
    concepts = (out / "concepts.html").read_text()
    assert all(f"<code>{name}</code>" in concepts for name in POLICY_NAMES) and "{{" not in concepts
    assert "One batch" in (out / "architecture.html").read_text()
