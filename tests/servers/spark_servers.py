"""Spark beyond local mode, started from the pyspark package itself: a standalone cluster (a master and
two workers, each its own JVM process through ``bin/spark-class``) and a Spark Connect server
(``sbin/start-connect-server.sh --wait``). Everything listens on 127.0.0.1 only; executors and the
Connect server run Python workers on this interpreter (the venv fieldshift is installed in), which is
how executors get it on one machine; a real cluster ships the wheel (see the README)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pyspark

__all__ = ["SPARK_HOME", "SparkProcesses", "free_port"]

SPARK_HOME = Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SparkProcesses:
    """JVM processes this test run started, each in its own process group (stopped by group id)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: list[subprocess.Popen[bytes]] = []
        self.master_ui = ""
        self.env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
                    "SPARK_DAEMON_MEMORY": "256m", "PYSPARK_PYTHON": sys.executable,
                    "PYSPARK_DRIVER_PYTHON": sys.executable, "SPARK_LOG_DIR": str(root / "logs"),
                    "SPARK_PID_DIR": str(root / "pids"), "SPARK_CONF_DIR": str(root / "conf")}
        for d in ("logs", "pids", "conf"):
            (root / d).mkdir(parents=True, exist_ok=True)

    def _start(self, name: str, args: list[str], **env: str) -> subprocess.Popen[bytes]:
        with open(self.root / "logs" / f"{name}.out", "wb") as log:  # the process keeps its own descriptor
            proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env={**self.env, **env}, cwd=self.root, start_new_session=True)
        self.procs.append(proc)
        return proc

    def log(self, name: str) -> str:
        logs = sorted(p for p in (self.root / "logs").iterdir() if p.is_file() and name in p.name)
        return "\n".join(p.read_text(errors="replace")[-3000:] for p in logs)

    def start_cluster(self, workers: int = 2) -> str:
        """A master and ``workers`` workers (1 core, 1 GB each); returns the master URL once all registered."""
        port, ui = free_port(), free_port()
        spark_class = str(SPARK_HOME / "bin" / "spark-class")
        self._start("master", [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(ui)])
        url = f"spark://127.0.0.1:{port}"
        self.master_ui = f"http://127.0.0.1:{ui}/json/"
        for i in range(workers):
            self._start(f"worker-{i}", [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host",
                                        "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port",
                                        str(free_port()), "--work-dir", str(self.root / f"work-{i}")])
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if self.master_state().get("aliveworkers") == workers:
                    return url
            except OSError:
                pass
            self._check_alive()
            time.sleep(1)
        raise RuntimeError(f"the standalone cluster did not come up:\n{self.log('master')}\n{self.log('worker')}")

    def master_state(self) -> dict[str, Any]:
        """The standalone master's own JSON status (workers, running and completed applications)."""
        with urllib.request.urlopen(self.master_ui, timeout=5) as r:
            return dict(json.load(r))

    def start_connect(self, master: str = "local[2]") -> str:
        """A Spark Connect server; returns its ``sc://`` URL once it accepts connections."""
        port = free_port()
        conf = {"spark.connect.grpc.binding.port": port, "spark.connect.grpc.binding.address": "127.0.0.1",
                "spark.driver.memory": "1g", "spark.ui.enabled": "false", "spark.default.parallelism": 2,
                "spark.sql.shuffle.partitions": 2, "spark.driver.host": "127.0.0.1",
                "spark.sql.execution.arrow.pyspark.enabled": "true"}
        args = [str(SPARK_HOME / "sbin" / "start-connect-server.sh"), "--wait", "--master", master]
        for key, value in conf.items():
            args += ["--conf", f"{key}={value}"]
        self._start("connect-launcher", args, SPARK_DAEMON_MEMORY="1g")  # the server is also its driver
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return f"sc://127.0.0.1:{port}"
            self._check_alive()
            time.sleep(1)
        raise RuntimeError(f"the Spark Connect server did not come up:\n{self.log('onnect')}")

    def _check_alive(self) -> None:
        for p in self.procs:
            if p.poll() is not None:
                raise RuntimeError(f"{p.args[:2]} exited with {p.returncode}:\n{self.log('')}")

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
