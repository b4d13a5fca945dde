"""Fixtures for the PyIceberg conformance suite: a SQLite catalog with a local warehouse per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Any]:
    """A PyIceberg ``SqlCatalog`` (SQLite file) with a ``file://`` warehouse and a ``db`` namespace."""
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    cat = SqlCatalog("conformance", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=warehouse.as_uri())
    cat.create_namespace("db")
    yield cat
    cat.engine.dispose()
