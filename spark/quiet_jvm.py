"""Start Spark's JVM without its start-up chatter: log4j at ERROR, and the launcher's notices dropped.

A plain ``SparkSession.builder.getOrCreate()`` prints about eight lines before the first result
(Spark's default log4j profile, the log level hint, hostname and native-hadoop warnings, the JVM's
incubator-module notice). ``fieldshift.spark.session()`` instead launches the JVM (PySpark's
``launch_gateway``) with a log4j2 configuration at ERROR and reads its stderr through a filter that
drops only those known notices; everything else (errors, a crash) still reaches stderr.
``session(verbose=True)`` starts Spark the plain way.
"""

from __future__ import annotations

import hashlib
import re
import sys
import tempfile
import threading
from pathlib import Path
from subprocess import PIPE
from typing import IO, Any

__all__ = ["LOG4J2_QUIET", "NOISE", "quiet_context"]

LOG4J2_QUIET = """\
# fieldshift.spark.session(): Spark's JVM logs errors only (session(verbose=True) keeps Spark's defaults)
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
# a failing task is reported to the caller as its exception; the executor's copy of it is noise
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = off
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = off
"""

# Lines the JVM or the launcher print before log4j is configured, or outside it.
NOISE = re.compile(r"^(WARNING: Using incubator modules|Using Spark's default log4j profile|"
                   r"Setting default log level to|To adjust logging level use)")


def _log4j_file() -> Path:
    digest = hashlib.sha256(LOG4J2_QUIET.encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / f"fieldshift-log4j2-{digest}.properties"
    if not path.exists():
        tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
        tmp.write_text(LOG4J2_QUIET)
        tmp.replace(path)
    return path


def _forward(stream: IO[bytes]) -> None:
    for line in iter(stream.readline, b""):
        if not NOISE.match(line.decode(errors="replace")):
            sys.stderr.write(line.decode(errors="replace"))
            sys.stderr.flush()


def quiet_context(app_name: str, master: str, settings: dict[str, str]) -> Any:
    """A SparkContext on a JVM launched with the quiet log4j configuration and filtered stderr."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    conf = SparkConf(loadDefaults=False).setAppName(app_name).setMaster(master)
    for key, value in settings.items():
        conf.set(key, value)
    option = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
    java_options = settings.get("spark.driver.extraJavaOptions", "")
    if "log4j2.configurationFile" not in java_options:
        conf.set("spark.driver.extraJavaOptions", f"{java_options} {option}".strip())
    gateway = launch_gateway(conf, popen_kwargs={"stderr": PIPE})
    if gateway.proc is not None:
        threading.Thread(target=_forward, args=(gateway.proc.stderr,), name="fieldshift-jvm-stderr",
                         daemon=True).start()
    return SparkContext(conf=conf, gateway=gateway)
