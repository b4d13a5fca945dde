"""The README's Spark tour runs exactly as written, after its Python and table-store tours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.project.test_readme import _block


def test_readme_spark_tour_runs_as_written(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("polars")
    monkeypatch.chdir(tmp_path)
    scope: dict[str, Any] = {}
    for heading in ("### Python", "### The table store", "### Spark"):
        exec(compile(_block(heading), f"README.md ({heading})", "exec"), scope)
    assert scope["spark"] is spark  # fss.session() returns the running session
    assert scope["new_df"].collect()[0].asDict(recursive=True) == {"id": 7, "full_name": "bob", "t": {"x": 3, "z": 0}}
    rows = sorted(scope["t"].to_arrow().to_pylist(), key=lambda r: r["rowId"])
    assert [r["rowId"] for r in rows] == ["r1", "r2", "r4"] and rows[2]["note"] == "from Spark"
    assert sorted(r.rowId for r in scope["df"].collect()) == ["r1", "r2"]
