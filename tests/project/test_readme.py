"""The README's Python examples run exactly as written (in a fresh directory), and say what they show."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

README = Path(__file__).parents[2] / "README.md"


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


# -- every finite block ---------------------------------------------------------------------------------
# A fence may be preceded by `<!-- readme-test: skip (why) -->` (make targets, never-ending or Spark-heavy
# commands) or `<!-- readme-test: spark (...) -->` (run by tests/spark/test_spark_readme.py); every
# other ```python and ```bash block runs here, in document order, in one directory and one scope.
_FENCE = re.compile(r"(?:<!-- readme-test: (\w+)[^>]*-->\s*\n)?```(\w*)\n(.*?)```", re.S)


def readme_blocks() -> list[tuple[str | None, str, str]]:
    """(marker, language, code) of every fenced block of the README, in order."""
    return [(m.group(1), m.group(2), m.group(3)) for m in _FENCE.finditer(README.read_text())]


def _run_cli_line(line: str) -> None:
    argv = shlex.split(line, comments=True)
    if not argv:
        return
    assert argv[0] == "fieldshift", f"README bash line is not a fieldshift command (mark its block): {line}"
    from typer.testing import CliRunner

    from fieldshift.cli import app

    # in-process (tests/cli/test_cli.py runs the real console script); cwd is the test's directory
    done = CliRunner().invoke(app, argv[1:], env={"COLUMNS": "200"})
    assert done.exit_code == 0 and (done.exception is None or isinstance(done.exception, SystemExit)), \
        f"{line}\n{done.stdout}\n{done.stderr}\n{done.exception!r}"


def test_every_finite_readme_block_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("polars")
    monkeypatch.chdir(tmp_path)
    blocks = readme_blocks()
    assert all(marker in (None, "skip", "spark") for marker, _, _ in blocks), [b[0] for b in blocks]
    scope: dict[str, Any] = {}
    ran = 0
    for marker, language, code in blocks:
        if marker is not None:
            continue
        if language == "python":
            exec(compile(code, "README.md", "exec"), scope)
        elif language == "bash":
            for line in code.splitlines():
                _run_cli_line(line)
        else:
            continue
        ran += 1
    assert ran >= 3
    import fieldshift as fs

    rides = fs.Table.open(tmp_path / "rides")  # made by the CLI block from the tour's trips
    assert rides.schema.find("intToLong").type == pa.int64() and "note" in rides.schema.names
    assert sorted(rides.to_arrow().column("rowId").to_pylist()) == ["r1", "r2"]
    fares = fs.Table.open(catalog="lake.db", name="fares")  # a shared catalog's table, by the name it was given
    assert fares.location == tmp_path / "lake" / "fares"
    got = sorted(fares.to_arrow().select(["rowId", "comment"]).to_pylist(), key=lambda r: r["rowId"])
    assert got == [{"rowId": r, "comment": None} for r in ("r1", "r1", "r2", "r2")]  # "" read back as null
    k = scope["k"]  # the keyed example: after expiring all but the head, vacuum left only the head's file
    on_disk = sorted(str(f.relative_to(k.location)) for f in (k.location / "data").rglob("*.parquet"))
    assert on_disk == sorted(f.path for f in k.scan().live_files()) and len(on_disk) == 1
