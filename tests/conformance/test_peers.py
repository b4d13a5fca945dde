"""The pinned peers load: `make test-conformance` installs them, and every conformance test relies on this."""

from __future__ import annotations

import pytest

from tests.conformance.peers import DUCKDB_VERSION, EXTENSIONS, duckdb_connection

pytestmark = pytest.mark.conformance


def test_duckdb_loads_every_pinned_extension_from_its_package() -> None:
    conn = duckdb_connection()
    loaded = {name for name, in conn.execute("SELECT extension_name FROM duckdb_extensions() WHERE loaded").fetchall()}
    assert set(EXTENSIONS) <= loaded
    assert conn.execute("SELECT version()").fetchone()[0] == f"v{DUCKDB_VERSION}"


def test_pyiceberg_is_the_pinned_minor_with_its_sql_catalog() -> None:
    import pyiceberg
    from pyiceberg.catalog.sql import SqlCatalog  # noqa: F401  (the SQL catalog is importable)

    assert pyiceberg.__version__.startswith("0.12.")
