"""The README's Python examples run exactly as written (in a fresh directory), and say what they show."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).parent.parent / "README.md"


def _block(heading: str) -> str:
    text = README.read_text()
    start = text.index("```python", text.index(heading)) + len("```python")
    return text[start:text.index("```", start)]


def test_readme_python_and_table_store_tours_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("polars")
    monkeypatch.chdir(tmp_path)
    scope: dict[str, Any] = {}
    for heading in ("### Python", "### The table store"):
        exec(compile(_block(heading), f"README.md ({heading})", "exec"), scope)
    fs, t = scope["fs"], scope["t"]
    assert scope["new_batch"].to_pylist() == [{"id": 1, "full_name": "ada", "t": {"x": 5, "z": 0}}]
    assert t.location == tmp_path / "trips"
    rows = t.scan(columns=["rowId", "note"], filter=[("intToLong", ">", 5)]).to_arrow().to_pylist()
    assert rows == [{"rowId": "r2", "note": "x"}]
    assert t.scan(snapshot_id=1).to_arrow().to_pylist() == [{"rowId": "r1", "intToLong": 1}]
    quarantined = t.quarantine()
    assert quarantined.num_rows == 1 and "intToLong" in quarantined.column("_fieldshift_reason")[0].as_py()
    assert t.policy == fs.CastPolicy.hudi()
    assert t.to_arrow().num_rows == 2
