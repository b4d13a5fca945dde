"""The pinned peers of `make test-conformance`: a DuckDB connection with its extensions loaded from their
packages (DuckDB cannot download extensions on these machines, so each comes from the PyPI package of
the same version, ``duckdb-extension-<name>``, and is LOADed from the file inside it)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

__all__ = ["DUCKDB_VERSION", "EXTENSIONS", "duckdb_connection", "extension_file"]

DUCKDB_VERSION = "1.5.5"
# avro before iceberg: the iceberg extension reads manifests through the avro one
EXTENSIONS = ("ducklake", "sqlite_scanner", "postgres_scanner", "avro", "iceberg")


def extension_file(name: str) -> Path:
    """The ``.duckdb_extension`` file inside the ``duckdb-extension-<name>`` package of the pinned version."""
    try:
        module = importlib.import_module(f"duckdb_extension_{name}")
    except ImportError:
        raise RuntimeError(f"the DuckDB extension package duckdb-extension-{name.replace('_', '-')} is not installed; "
                           "run `make test-conformance` (it installs the `conformance` extra)") from None
    root = Path(module.__file__).parent / "extensions" / f"v{DUCKDB_VERSION}"
    found = sorted(root.glob("*.duckdb_extension"))
    if not found:
        raise RuntimeError(f"no {name} extension for DuckDB {DUCKDB_VERSION} under {root}")
    return found[0]


def duckdb_connection(database: str = ":memory:", extensions: tuple[str, ...] = EXTENSIONS) -> Any:
    """A DuckDB connection of the pinned version with ``extensions`` loaded (all of them by default)."""
    import duckdb

    if duckdb.__version__ != DUCKDB_VERSION:
        raise RuntimeError(f"the conformance tests pin DuckDB {DUCKDB_VERSION}, found {duckdb.__version__}; "
                           "run `make test-conformance` (it installs the `conformance` extra)")
    conn = duckdb.connect(database)
    for name in sorted(extensions, key=lambda n: n == "iceberg"):  # avro first
        conn.execute(f"LOAD '{extension_file(name)}'")
    return conn
