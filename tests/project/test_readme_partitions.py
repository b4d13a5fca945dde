"""The README's partition example runs exactly as written (in a fresh directory)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).parents[2] / "README.md"


def test_readme_partition_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = README.read_text()
    start = text.index("```python", text.index("### Partitions")) + len("```python")
    monkeypatch.chdir(tmp_path)
    scope: dict[str, Any] = {}
    exec(compile(text[start:text.index("```", start)], "README.md (### Partitions)", "exec"), scope)
    events = scope["events"]
    assert [s.describe(events.schema) for s in events.specs()] == [
        "day(ts) AS ts_day, bucket[16](id) AS id_bucket_16, region",
        "hour(ts) AS ts_hour, bucket[16](id) AS id_bucket_16, region"]
    assert scope["scan"].to_arrow().column("id").to_pylist() == [3]
