"""A Spark Connect server whose Python workers lack fieldshift: the client is told, in fieldshift's words,
to start the server with PYSPARK_PYTHON set (instead of a ModuleNotFoundError inside a Java stack trace)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs
from tests.servers.conftest import clean_env
from tests.servers.spark_servers import SparkProcesses

_HIDE_FIELDSHIFT = """
import sys
class HideFieldshift:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "fieldshift":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, HideFieldshift())
"""

_CLIENT = """
import sys
import fieldshift as fs
import fieldshift.spark as fss
try:
    fss.session(master=sys.argv[1])
except fs.SparkWorkerImportError as e:
    print("refused:", e)
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
try:
    fss.write(spark.range(2), sys.argv[2])  # an entry point: Spark's error comes back as fieldshift's
except fs.SparkWorkerImportError as e:
    print("write refused:", str(e).splitlines()[0][:60])
"""


def test_a_connect_server_without_fieldshift_says_to_start_it_with_pyspark_python(tmp_path: Path) -> None:
    if shutil.which("java") is None:
        pytest.skip("no Java runtime: install openjdk-17-jre-headless to run the Spark server tests")
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(_HIDE_FIELDSHIFT)
    python = tmp_path / "python-without-fieldshift"  # this interpreter, except that fieldshift cannot be imported
    python.write_text(f'#!/bin/sh\nPYTHONPATH={hide}${{PYTHONPATH:+:$PYTHONPATH}} exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    procs = SparkProcesses(tmp_path / "spark")
    procs.env["PYSPARK_PYTHON"] = str(python)
    try:
        url = procs.start_connect()
        fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64())]))
        done = subprocess.run([sys.executable, "-c", _CLIENT, url, str(tmp_path / "t")], capture_output=True,
                              text=True, timeout=600, env=clean_env(), cwd=os.getcwd())
    finally:
        procs.stop()
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    refused = next(line for line in done.stdout.splitlines() if line.startswith("refused:"))
    assert "cannot import fieldshift" in refused and "PYSPARK_PYTHON" in refused, refused
    assert "start-connect-server.sh" in refused and "Traceback" not in refused
    assert "write refused: Spark's Python workers cannot import fieldshift" in done.stdout, done.stdout
