"""The main job, run as a user runs it: `fieldshift demo`, a real subprocess on real tables."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FIELDSHIFT = [sys.executable, "-m", "fieldshift.cli"]


def _demo(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "NO_COLOR": "1", **(env or {})}
    return subprocess.run([*FIELDSHIFT, "demo", "--dir", str(tmp_path / "demo"), *args],
                          capture_output=True, text=True, env=env, timeout=600)


_HIDE_PYSPARK = """
import sys
class HidePySpark:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pyspark", "py4j"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, HidePySpark())
"""


def test_demo_without_pyspark_says_so_in_one_line_and_passes_every_standalone_check(tmp_path: Path) -> None:
    """Without PySpark (hidden from the subprocess, as if not installed) `fieldshift demo` says so in one
    line and runs what `--no-spark` runs."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(_HIDE_PYSPARK)
    run = _demo(tmp_path, env={"PYTHONPATH": os.pathsep.join([str(hide), *sys.path])})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    first = run.stdout.splitlines()[0]
    assert first.startswith("Spark is not installed") and "pip install 'fieldshift[spark]'" in first, first
    assert "--no-spark" in first and "Spark data source" not in run.stdout
    assert "0 failed" in run.stdout
    for seed in ("Hudi", "Table Store", "DuckLake", "Onehouse", "Rename, drop and re-add"):
        assert seed in run.stdout
    # piped output never cuts a title (the longest is wider than 80 columns)
    assert "Onehouse: Int then Long widens to Long; a String into the column is quarantined" in run.stdout
    assert (tmp_path / "demo" / "T" / "fieldshift.db").exists()  # --dir keeps the tables
    assert "read 1 of 3 day files and 2 of 8 hour files" in run.stdout  # the day -> hour change prunes both


@pytest.mark.slow
def test_demo_with_spark_passes_every_check(tmp_path: Path) -> None:
    run = _demo(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Spark data source equals standalone" in run.stdout
    assert "0 failed" in run.stdout


def test_demo_without_java_says_how_to_install_it(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(Path(sys.executable).parent), "NO_COLOR": "1"}
    run = subprocess.run([*FIELDSHIFT, "demo", "--dir", str(tmp_path / "d")], capture_output=True, text=True,
                         env=env, timeout=120)
    assert run.returncode != 0
    assert "Java" in run.stdout and "openjdk-17" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr
