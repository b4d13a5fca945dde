"""Build the documentation site (``make docs``): API reference, CLI reference, concepts, architecture.

``python docs/build.py OUTPUT_DIR`` renders every public name of the modules in ``MODULES`` from
their docstrings with pdoc, the CLI reference from the typer command tree (``fieldshift.cli.reference``),
and the concepts and architecture pages from Markdown. A public name without a docstring
(``undocumented``), any warning (pdoc's) or a relative link to a page that does not exist fails the build.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import html
import importlib
import inspect
import re
import shutil
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

__all__ = ["MODULES", "build", "check_documented", "main", "undocumented"]

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("fieldshift", "fieldshift.table", "fieldshift.planner", "fieldshift.kernels", "fieldshift.spark")
"""The modules the API reference renders, one page each; every public name of each must have a docstring."""
PAGES = {  # page -> (title, markdown source or None for generated)
    "concepts.html": "Concepts",
    "cli.html": "Command line",
    "architecture.html": "Architecture",
}
API_PAGES = {  # module -> what its API page is for (the index says it)
    "fieldshift": "every public name, from its docstring",
    "fieldshift.table": "the table store: tables, scans (filters, limits, pandas/polars/DuckDB), catalogs",
    "fieldshift.planner": "plans, their cache and cast reports",
    "fieldshift.kernels": "the value kernels plans name: casts, layouts, parsing, threads",
    "fieldshift.spark": "sessions, reads, writes, schema conversions",
}
_LINK = re.compile(r'href="([^"#:${}]+)(?:#[^"]*)?"')


_MEMBER_KINDS = (staticmethod, classmethod, property, functools.cached_property)
_DEFAULT_DOCS = {enum.Enum.__doc__, enum.IntEnum.__doc__, enum.StrEnum.__doc__, dict.__doc__}


def _class_doc(cls: type) -> str:
    """A class's own docstring: one inherited from its base, or made up by ``dataclass``, does not count."""
    doc = vars(cls).get("__doc__")
    if not isinstance(doc, str) or doc in _DEFAULT_DOCS:
        return ""
    if dataclasses.is_dataclass(cls):
        try:
            made_up = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
        except (TypeError, ValueError):
            made_up = None
        if doc == made_up:
            return ""
    return doc.strip()


def _members(cls: type) -> Iterator[str]:
    """The public methods and properties of ``cls`` pdoc shows: its own and those of its bases from the same
    package (a base from the standard library or another package documents its own)."""
    package = cls.__module__.split(".")[0]
    seen = set()
    for base in cls.__mro__:
        if base.__module__.split(".")[0] != package:
            continue
        for name, value in vars(base).items():
            if name.startswith("_") or name in seen:
                continue
            if isinstance(value, _MEMBER_KINDS) or inspect.isfunction(value) or inspect.isroutine(value):
                seen.add(name)
                yield name


def _member_doc(cls: type, name: str) -> str:
    """A method's or property's docstring, or the one of the member it overrides (as pdoc shows it)."""
    for base in cls.__mro__:
        member = vars(base).get(name)
        if member is None:
            continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        doc = member.fget.__doc__ if isinstance(member, property) and member.fget is not None else member.__doc__
        if isinstance(doc, str) and doc.strip():
            return doc.strip()
    return ""


def _variable_doc(module: ModuleType, name: str) -> str:
    """The docstring pdoc renders for a module variable: a string right after its assignment or annotation
    in that module (for a re-exported one, an annotation ``NAME: type`` and its string in the re-exporting module)."""
    import pdoc.doc

    member = pdoc.doc.Module(module).members.get(name)
    return member.docstring.strip() if member is not None else ""


def undocumented(modules: Sequence[str] = MODULES) -> list[str]:
    """Every public name of ``modules`` without a docstring, as ``module.name`` or ``module.Class.member``.

    Public: each name in a module's ``__all__``, and the public methods and properties (own or from a base
    of the same package) of the classes among them. A class needs a docstring of its own, so an error class
    does not pass on its base's; a method may carry the docstring of the method it overrides, as pdoc does.
    """
    missing = []
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            where = f"{module_name}.{name}"
            if isinstance(value, type):
                if not _class_doc(value):
                    missing.append(where)
                missing += [f"{where}.{member}" for member in _members(value) if not _member_doc(value, member)]
            elif inspect.isroutine(value) or hasattr(value, "__wrapped__"):  # functools wrappers too
                if not (inspect.getdoc(value) or "").strip():
                    missing.append(where)
            elif not inspect.ismodule(value) and not _variable_doc(module, name):
                missing.append(where)
    return missing


def check_documented(modules: Sequence[str] = MODULES) -> None:
    """Raise ``RuntimeError`` naming every public name of ``modules`` that has no docstring."""
    missing = undocumented(modules)
    if missing:
        raise RuntimeError(f"{len(missing)} public name(s) without a docstring (write one for each):\n  "
                           + "\n  ".join(missing))


def _module_page(module: str) -> str:
    """Where pdoc writes a module's page: ``fieldshift.table`` -> ``fieldshift/table.html``."""
    return module.replace(".", "/") + ".html"


def _page(title: str, body: str) -> str:
    api = [(_module_page(m), f"API: {m}") for m in MODULES]
    nav = " · ".join(f'<a href="{href}">{html.escape(name)}</a>' for href, name in
                     [("index.html", "fieldshift"), *api, *PAGES.items()])
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            '<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;'
            'line-height:1.5}pre,code{background:#f4f4f4}pre{padding:.6rem;overflow:auto}'
            'table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem;vertical-align:top}'
            f'</style></head><body><nav>{nav}</nav>\n{body}\n</body></html>\n')


def _markdown(text: str) -> str:
    from pdoc.render_helpers import to_html

    return to_html(text)


def _concepts() -> str:
    from fieldshift.schema.policy import POLICY_NAMES

    text = (ROOT / "docs" / "concepts.md").read_text()
    return text.replace("{{policy_names}}", ", ".join(f"`{n}`" for n in POLICY_NAMES))


def _check_links(out: Path) -> list[str]:
    broken = []
    for page in out.rglob("*.html"):
        for target in _LINK.findall(page.read_text()):
            if not (page.parent / target).resolve().exists():
                broken.append(f"{page.relative_to(out)} links to missing {target}")
    return broken


def build(out: Path, modules: Sequence[str] = MODULES) -> list[Path]:
    """Write the site into ``out`` (replaced); returns the pages written.

    Raises ``RuntimeError`` before writing anything if a public name of ``modules`` has no docstring,
    and on any pdoc warning or broken link."""
    check_documented(modules)
    import pdoc
    import pdoc.render

    from fieldshift.cli import app
    from fieldshift.cli.reference import cli_reference

    if out.exists():
        shutil.rmtree(out)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a docstring pdoc cannot render fails the build
        pdoc.render.configure(docformat="google", show_source=False, footer_text="fieldshift")
        pdoc.pdoc(*modules, output_directory=out)
    sources = {"concepts.html": _concepts(), "cli.html": cli_reference(app),
               "architecture.html": (ROOT / "ARCHITECTURE.md").read_text()}
    for name, text in sources.items():
        (out / name).write_text(_page(PAGES[name], _markdown(text)))
    api = "".join(f"- [API reference: `{m}`]({_module_page(m)}) — {API_PAGES.get(m, 'its public names')}\n"
                  for m in modules)
    index = ("# fieldshift documentation\n\n" + api +
             "- [Concepts](concepts.html) — field ids, policies, defaults, read routes\n"
             "- [Command line](cli.html) — every `fieldshift` command, generated from the CLI itself\n"
             "- [Architecture](architecture.html) — layers and one batch's path\n")
    (out / "index.html").write_text(_page("fieldshift documentation", _markdown(index)))
    broken = _check_links(out)
    if broken:
        raise RuntimeError("broken links in the docs:\n  " + "\n  ".join(broken))
    return sorted(out.rglob("*.html"))


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "_build"
    pages = build(out)
    print(f"docs: {len(pages)} pages in {out}")


if __name__ == "__main__":
    main()
