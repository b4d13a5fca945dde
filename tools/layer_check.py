"""fieldshift's layer check: upward imports, import cycles between files, private names imported across modules.

Every import counts — at module level, inside functions and under ``if TYPE_CHECKING:`` — because each one
is a dependency a reader has to hold in mind, and an import moved into a function only hides a cycle.
The layers are ARCHITECTURE.md's, bottom to top:

0. kernels, ``errors``, ``options``, ``extras``
1. the schema model and the open-table sources (every module not named below)
2. the planner (``fieldshift.planner``)
3. the table store and DDL (``fieldshift.table``, ``fieldshift.ddl``)
4. Spark and the CLI (``fieldshift.spark``, ``fieldshift.cli``)

and the package face ``fieldshift`` (which re-exports all of them) above every layer, for layer 4 only.
A module imports its own layer or lower ones. Findings listed in ``KNOWN`` (each with the reason it still
exists) do not fail the check, but a ``KNOWN`` entry that is no longer found does: the list only shrinks.

Run ``make layers`` (``make lint`` runs it too) or ``python tools/layer_check.py [-v] [--root DIR]``; the
exit status is 1 when anything is found beyond ``KNOWN`` or a ``KNOWN`` entry is stale. ``-v`` lists the
imports that make up each cycle.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import os
import sys
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "FACE",
    "KNOWN",
    "LAYERS",
    "PUBLIC_PATHS",
    "Finding",
    "Import",
    "Report",
    "check",
    "cycles",
    "imports",
    "layer_of",
    "main",
    "modules",
    "package_roots",
    "private_imports",
    "upward_imports",
]

FACE = "fieldshift"
"""The package face: it re-exports every layer, so only layer 4 may import it."""
PUBLIC_PATHS = ("fieldshift.types", "fieldshift.policy")
"""Old public paths that re-export a module of the schema model for users: the package face's layer, too."""
_FACE_LAYER = 5

LAYERS: dict[int, tuple[str, ...]] = {
    0: ("fieldshift.kernels", "fieldshift.kernels.*", "fieldshift.errors", "fieldshift.options", "fieldshift.gc_pause",
        "fieldshift.extras"),
    2: ("fieldshift.planner", "fieldshift.planner.*"),
    3: ("fieldshift.table", "fieldshift.table.*", "fieldshift.ddl", "fieldshift.ddl.*"),
    4: ("fieldshift.spark", "fieldshift.spark.*", "fieldshift.cli", "fieldshift.cli.*"),
}
"""Module-name patterns (``fnmatch``) of each layer but 1; a module no pattern matches is in layer 1."""
_DEFAULT_LAYER = 1


@dataclass(frozen=True, order=True)
class Finding:
    """One thing the check reports. ``modules`` holds names without the ``fieldshift.`` prefix:
    ``(importer, imported)`` for an upward import, the sorted modules of a cycle, or
    ``(importer, module, name)`` for a private import."""

    kind: str
    modules: tuple[str, ...]

    def __str__(self) -> str:
        if self.kind == "upward import":
            (importer, imported) = self.modules
            return (f"upward import: {importer} (layer {layer_of(_full(importer))}) -> {imported} "
                    f"(layer {layer_of(_full(imported))})")
        if self.kind == "import cycle":
            return "import cycle: " + " <-> ".join(self.modules)
        importer, module, name = self.modules
        return f"private import: {importer} imports {module}.{name}"


KNOWN: dict[Finding, str] = {}
"""Findings that still exist, each with the issue that removes it, e.g.
``Finding("import cycle", ("table.merge", "table.scan")): "issue 29 removes it"`` (a cycle's modules sorted,
without the ``fieldshift.`` prefix). Empty since issue 30: keep it so. An entry no longer found fails the check."""


@dataclass(frozen=True)
class Import:
    """One import of a fieldshift module: ``name`` is the name taken from it (``from m import name``), or
    None for ``import m`` and for ``from package import module``. ``where`` is ``module``, ``function``
    (inside a def or lambda) or ``type-checking`` (under ``if TYPE_CHECKING:``)."""

    importer: str
    imported: str
    name: str | None
    where: str
    path: Path
    line: int


@dataclass(frozen=True)
class Report:
    """What ``check`` found: every finding, those not in ``KNOWN``, and ``KNOWN`` entries no longer found."""

    findings: tuple[Finding, ...]
    new: tuple[Finding, ...]
    stale: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not self.new and not self.stale


def package_roots(root: Path) -> dict[str, str]:
    """Source folder -> package name, from pyproject.toml's ``[tool.setuptools] package-dir``."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    package_dir: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    return {folder: package for package, folder in package_dir.items()}


def modules(root: Path, roots: Mapping[str, str]) -> dict[str, Path]:
    """Every module's dotted name -> its file (a package's name -> its ``__init__.py``)."""
    out: dict[str, Path] = {}
    for folder, package in roots.items():
        base = root / folder
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for filename in sorted(filenames):
                if not filename.endswith(".py"):
                    continue
                path = Path(dirpath) / filename
                parts = path.relative_to(base).with_suffix("").parts
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                out[".".join((package, *parts))] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(nodes: Iterable[ast.AST], where: str = "module") -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement in ``nodes`` and below, with where it runs (a def under TYPE_CHECKING: ``function``)."""
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, where
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _import_nodes(ast.iter_child_nodes(node), "function")
        elif isinstance(node, ast.If) and _is_type_checking(node.test) and where == "module":
            yield from _import_nodes(node.body, "type-checking")
            yield from _import_nodes(node.orelse, where)
        else:
            yield from _import_nodes(ast.iter_child_nodes(node), where)


def _resolve(name: str, known: Mapping[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a known module (``a.b.c`` -> ``a.b`` when c is a name in it)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(mods: Mapping[str, Path]) -> list[Import]:
    """Every import, in every module of ``mods``, of another module of ``mods``."""
    out: list[Import] = []
    for module, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node, where in _import_nodes(tree.body):
            targets: list[tuple[str, str | None]]
            if isinstance(node, ast.Import):
                targets = [(alias.name, None) for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*kept, base] if base else kept)
                targets = [(f"{base}.{alias.name}", None) if f"{base}.{alias.name}" in mods else (base, alias.name)
                           for alias in node.names]
            for target, name in targets:
                resolved = _resolve(target, mods)
                if resolved is not None and resolved != module:
                    out.append(Import(module, resolved, name, where, path, node.lineno))
    return out


def layer_of(module: str) -> int:
    """The layer of a dotted module name (``FACE`` sits above every layer)."""
    if module == FACE or module in PUBLIC_PATHS:
        return _FACE_LAYER
    for layer, patterns in LAYERS.items():
        if any(fnmatch.fnmatchcase(module, p) for p in patterns):
            return layer
    return _DEFAULT_LAYER


def _short(module: str) -> str:
    return module.removeprefix(FACE + ".")


def _full(short: str) -> str:
    return short if short == FACE or short.startswith(FACE + ".") else f"{FACE}.{short}"


def upward_imports(found: Sequence[Import]) -> list[Finding]:
    """Imports of a higher layer (a package's face, its ``__init__``, is in its package's layer), and of the
    package face ``fieldshift`` from below layer 4."""
    out = set()
    for imp in found:
        low, high = layer_of(imp.importer), layer_of(imp.imported)
        if high > low and (high != _FACE_LAYER or low < 4):
            out.add(Finding("upward import", (_short(imp.importer), _short(imp.imported))))
    return sorted(out)


def cycles(graph: Mapping[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[tuple[str, ...]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(tuple(sorted(component)))
    return sorted(out)


def _graph(found: Sequence[Import]) -> dict[str, set[str]]:
    """Module -> the modules it imports (a package's face included: a module that imports names through
    its own package's face, which imports the module, is in a cycle too)."""
    graph: dict[str, set[str]] = {}
    for imp in found:
        graph.setdefault(imp.importer, set()).add(imp.imported)
    return graph


def private_imports(found: Sequence[Import]) -> list[Finding]:
    """Names starting with one underscore taken from another module (a private module's names are its
    package's to share, so they do not count)."""
    out = {
        Finding("private import", (_short(imp.importer), _short(imp.imported), imp.name))
        for imp in found
        if imp.name is not None and imp.name.startswith("_") and not imp.name.startswith("__")
        and not imp.imported.rpartition(".")[2].startswith("_")
    }
    return sorted(out)


def check(root: Path, roots: Mapping[str, str] | None = None,
          known: Mapping[Finding, str] = KNOWN) -> tuple[Report, list[Import]]:
    """Every finding in the tree at ``root`` (``roots``: folder -> package, by default pyproject's), compared
    with ``known``; also every import found, for ``-v``."""
    mods = modules(root, package_roots(root) if roots is None else roots)
    found = imports(mods)
    findings = [*upward_imports(found),
                *(Finding("import cycle", tuple(sorted(map(_short, c)))) for c in cycles(_graph(found))),
                *private_imports(found)]
    new = tuple(f for f in findings if f not in known)
    stale = tuple(sorted(k for k in known if k not in findings))
    return Report(tuple(findings), new, stale), found


def _cycle_edges(finding: Finding, found: Sequence[Import], root: Path) -> Iterator[str]:
    """One line per import statement between two modules of a cycle."""
    members = {_full(m) for m in finding.modules}
    edges = {(imp.importer, imp.imported, imp.where, imp.path, imp.line) for imp in found
             if imp.importer in members and imp.imported in members}
    for importer, imported, where, path, line in sorted(edges):
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        yield f"      {_short(importer)} -> {_short(imported)} ({where}, {shown}:{line})"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the findings and return the exit status (0: nothing beyond ``KNOWN``, and all of it found)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the project root (holding pyproject.toml); default: this file's project")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the imports that make up each cycle")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    report, found = check(root)
    for finding in report.findings:
        reason = KNOWN.get(finding)
        print(f"  {finding}" + (f"  [known: {reason}]" if reason else "  [NEW]"))
        if args.verbose and finding.kind == "import cycle":
            for line in _cycle_edges(finding, found, root):
                print(line)
    for finding in report.stale:
        print(f"  no longer found, remove it from KNOWN in tools/layer_check.py: {finding}")
    counts = {kind: sum(f.kind == kind for f in report.findings)
              for kind in ("upward import", "import cycle", "private import")}
    print(f"layers: {counts['upward import']} upward imports, {counts['import cycle']} import cycles, "
          f"{counts['private import']} private cross-module imports (goal 0/0/0); {len(report.new)} not in KNOWN, "
          f"{len(report.stale)} stale KNOWN entries")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
