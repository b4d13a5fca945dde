"""The catalog's SQL lives in one package: no string literal outside ``engine/table/catalog/`` holds a SQL
statement or names a catalog table (issue 30), so a statement is found, and changed for every dialect, there."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
PACKAGE_DIRS = ("engine", "kernels", "spark")  # pyproject's package-dir: everything fieldshift ships
CATALOG = Path("engine/table/catalog")
OTHER_DATABASES = {
    # DuckLake keeps its metadata in a SQL catalog: reading another format is reading its tables
    "engine/open_tables/ducklake.py", "engine/open_tables/ducklake_db.py", "engine/open_tables/ducklake_inlined.py",
    # the demo prints the ALTER TABLE / INSERT / SELECT statements a user would type
    "engine/cli/demo.py", "engine/cli/demo_partitions.py",
}
"""Modules whose SQL is not the catalog's (each with its reason)."""

SQL = re.compile(
    r"\bSELECT\b.*\bFROM\b|\bINSERT\s+(OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\bCREATE\s+(TABLE|INDEX)\b|\bALTER\s+TABLE\s+\w+\s+(ADD|DROP)\s+COLUMN\b|\bPRAGMA\b|\bBEGIN\s+IMMEDIATE\b"
    r"|\bsqlite_master\b|\binformation_schema\b|\bpg_advisory\w*|\bfs_(metadata|table|snapshot|schema|column|data_file"
    r"|file_column_stats|quarantine_file|partition_spec|stream_commit|captured_file|deletion_vector)\b",
    re.DOTALL,
)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring nodes of a module, its classes and functions (prose may name a statement)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def sql_literals(path: Path) -> list[str]:
    """``line: text`` of every string literal (f-string pieces included) in ``path`` that looks like catalog SQL."""
    tree = ast.parse(path.read_text(), str(path))
    skip = _docstrings(tree)
    return [f"{node.lineno}: {node.value[:80]!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            and SQL.search(node.value)]


def test_no_sql_outside_the_catalog_package() -> None:
    found = {}
    for top in PACKAGE_DIRS:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel.is_relative_to(CATALOG) or rel.as_posix() in OTHER_DATABASES:
                continue
            hits = sql_literals(path)
            if hits:
                found[rel.as_posix()] = hits
    assert found == {}, "SQL outside engine/table/catalog/: move it into a record module there"


def test_the_check_sees_sql_where_it_is() -> None:
    """The pattern is not vacuous: it finds the record modules' statements, f-string pieces, and none in prose."""
    assert sql_literals(ROOT / CATALOG / "files.py")
    assert len(sql_literals(ROOT / CATALOG / "sql.py")) >= 3  # the DDL, the version read, the upgrade
    for path in OTHER_DATABASES:
        assert (ROOT / path).exists(), f"{path} is gone: drop it from OTHER_DATABASES"
    sample = ROOT / "tests/project/test_catalog_sql.py"
    assert sql_literals(sample) != []  # this module's own pattern strings name catalog tables
    tree_text = 'x = f"SELECT a FROM {t} WHERE b = ?"\ndef f():\n    """SELECT a FROM b, in prose."""\n'
    tmp = ast.parse(tree_text)
    assert [n.lineno for n in ast.walk(tmp) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and SQL.search(n.value) and id(n) not in _docstrings(tmp)] == [1]
