"""Build the documentation site (``make docs``): API reference, CLI reference, concepts, architecture.

``python docs/build.py OUTPUT_DIR`` renders every public name of ``fieldshift`` and
``fieldshift.spark`` from their docstrings with pdoc, the CLI reference from the typer command tree
(``fieldshift.cli.reference``), and the concepts and architecture pages from Markdown. Any warning
(pdoc's, or a relative link to a page that does not exist) fails the build.
"""

from __future__ import annotations

import html
import re
import shutil
import sys
import warnings
from pathlib import Path

__all__ = ["build", "main"]

ROOT = Path(__file__).resolve().parent.parent
PAGES = {  # page -> (title, markdown source or None for generated)
    "concepts.html": "Concepts",
    "cli.html": "Command line",
    "architecture.html": "Architecture",
}
_LINK = re.compile(r'href="([^"#:${}]+)(?:#[^"]*)?"')


def _page(title: str, body: str) -> str:
    nav = " · ".join(f'<a href="{href}">{html.escape(name)}</a>' for href, name in
                     [("index.html", "fieldshift"), ("fieldshift.html", "API: fieldshift"),
                      ("fieldshift/spark.html", "API: fieldshift.spark"), *PAGES.items()])
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            '<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;'
            'line-height:1.5}pre,code{background:#f4f4f4}pre{padding:.6rem;overflow:auto}'
            'table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem;vertical-align:top}'
            f'</style></head><body><nav>{nav}</nav>\n{body}\n</body></html>\n')


def _markdown(text: str) -> str:
    from pdoc.render_helpers import to_html

    return to_html(text)


def _concepts() -> str:
    from fieldshift.policy import POLICY_NAMES

    text = (ROOT / "docs" / "concepts.md").read_text()
    return text.replace("{{policy_names}}", ", ".join(f"`{n}`" for n in POLICY_NAMES))


def _check_links(out: Path) -> list[str]:
    broken = []
    for page in out.rglob("*.html"):
        for target in _LINK.findall(page.read_text()):
            if not (page.parent / target).resolve().exists():
                broken.append(f"{page.relative_to(out)} links to missing {target}")
    return broken


def build(out: Path) -> list[Path]:
    """Write the site into ``out`` (replaced); returns the pages written. Warnings raise."""
    import pdoc
    import pdoc.render

    from fieldshift.cli.app import app
    from fieldshift.cli.reference import cli_reference

    if out.exists():
        shutil.rmtree(out)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a docstring pdoc cannot render fails the build
        pdoc.render.configure(docformat="markdown", show_source=False, footer_text="fieldshift")
        pdoc.pdoc("fieldshift", "fieldshift.spark", output_directory=out)
    sources = {"concepts.html": _concepts(), "cli.html": cli_reference(app),
               "architecture.html": (ROOT / "ARCHITECTURE.md").read_text()}
    for name, text in sources.items():
        (out / name).write_text(_page(PAGES[name], _markdown(text)))
    index = ("# fieldshift documentation\n\n"
             "- [API reference: `fieldshift`](fieldshift.html) — every public name, from its docstring\n"
             "- [API reference: `fieldshift.spark`](fieldshift/spark.html) — sessions, reads, writes, "
             "schema conversions\n"
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
