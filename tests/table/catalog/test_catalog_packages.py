"""Issue 27: a PostgreSQL catalog without its packages names the one that is missing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent("""
    import sys
    import pyarrow as pa
    blocked = sys.argv[1]
    sys.modules[blocked] = None  # import of it raises ImportError, as when it is not installed
    import fieldshift as fs
    try:
        fs.Table.create(sys.argv[2], pa.schema([("a", pa.int32())]), catalog="postgresql://u@127.0.0.1:1/db")
    except fs.MissingDependencyError as e:
        print(type(e).__name__, e)
""")


@pytest.mark.parametrize(("blocked", "named"), [("psycopg_pool", "needs psycopg-pool"),
                                                ("psycopg", "needs psycopg 3 (package psycopg)")])
def test_a_missing_postgres_package_is_named(tmp_path: Path, blocked: str, named: str) -> None:
    """With psycopg installed but not psycopg-pool, the catalog said "needs psycopg 3"."""
    out = subprocess.run([sys.executable, "-c", SCRIPT, blocked, str(tmp_path / "t")], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("MissingDependencyError catalog postgresql://u@127.0.0.1:1/db " + named), out.stdout
    assert "pip install 'fieldshift[postgres]'" in out.stdout and not (tmp_path / "t").exists()
