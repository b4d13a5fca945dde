"""A local (or cluster) SparkSession set up for fieldshift: Arrow on, Python workers on this interpreter.

On a real cluster, build the wheel (``python -m build --wheel``), install it with its dependencies
(pyarrow, numpy, numba) into a virtualenv, pack it (``venv-pack -o env.tar.gz``) and ship that with
the job (``spark-submit --archives env.tar.gz#env`` with ``PYSPARK_PYTHON=./env/bin/python``), or
``pip install`` the wheel on the executors' Python. Nothing else is needed there: the data source,
the ``mapInArrow`` functions and the plans they carry are plain picklable Python (not tested here
beyond one machine: ``make test-servers`` runs them on a standalone cluster of separate processes and
over Spark Connect). Table locations must be reachable from every executor (a shared filesystem, or
an object store opened from its URI and the executor's environment); the catalog (SQLite or
PostgreSQL) is opened on the driver, or where the data source's writer commits.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

from fieldshift.errors import JavaNotFoundError

__all__ = ["DEFAULT_CONF", "JavaNotFoundError", "session"]

# Applied before the caller's **conf, which wins.
DEFAULT_CONF: dict[str, str] = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
    # mapInArrow matches output columns by position and checks types only when a value is read,
    # unless this is on (Spark 4.1+; older versions ignore the unknown key).
    "spark.sql.execution.arrow.pyspark.validateSchema.enabled": "true",
    # fieldshift's data source implements pushFilters, which Spark refuses unless this is on.
    "spark.sql.python.filterPushdown.enabled": "true",
    # Only Parquet schemas that carry `parquet.field.id` metadata are affected (fieldshift.spark.read).
    "spark.sql.parquet.fieldId.read.enabled": "true",
    # Spark 4.1+ maps time columns to TimeType, which counts and aggregates refuse unless this is on.
    "spark.sql.timeType.enabled": "true",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
}

_INSTALL_JAVA = (
    "Spark needs a Java runtime (17 or 21) and none was found: `java` is not on PATH and JAVA_HOME is "
    "not set. Install one, e.g.\n"
    "    Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless\n"
    "    macOS:         brew install openjdk@17\n"
    "    conda:         conda install -c conda-forge openjdk=17\n"
    "then open a new shell (or set JAVA_HOME to the JDK folder) and try again."
)


def _java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return True
    return shutil.which("java") is not None


def session(app_name: str = "fieldshift", master: str = "local[*]", *, verbose: bool = False, **conf: Any) -> Any:
    """Get or create a SparkSession ready for fieldshift, with the data source registered.

    Arrow is on (with output-schema validation where Spark has it), the UI is off, shuffles use few
    partitions, and Python workers run on this interpreter (``PYSPARK_PYTHON`` and
    ``PYSPARK_DRIVER_PYTHON`` are set before the JVM starts; on a cluster master an existing
    ``PYSPARK_PYTHON`` is kept). Extra Spark settings go in ``conf``, e.g.
    ``session(**{"spark.driver.memory": "4g"})``; they override the defaults. A new JVM starts quiet
    (errors only, no start-up notices: ``quiet_jvm``); ``verbose=True`` keeps Spark's own logging.

    ``master="sc://host:port"`` connects to a Spark Connect server instead (no JVM here): the
    session-level SQL settings above are set on the remote session and the data source registered;
    the server's own settings (Python workers, UI) are the server's.
    """
    if master.startswith("sc://"):
        return _connect_session(app_name, master, conf)
    if not _java_available():
        raise JavaNotFoundError(_INSTALL_JAVA)
    local = master.startswith("local")
    if local:
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

    from fieldshift.spark import require_pyspark

    require_pyspark()
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    settings = dict(DEFAULT_CONF)
    settings["spark.sql.shuffle.partitions"] = str(max(2, 2 * (os.cpu_count() or 1)) if local else 200)
    settings.update({k: str(v) for k, v in conf.items()})
    builder = SparkSession.builder.appName(app_name).master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        if not verbose and SparkContext._active_spark_context is None and SparkContext._gateway is None:
            from fieldshift.spark.quiet_jvm import quiet_context

            quiet_context(app_name, master, settings)  # the builder below picks this context up
        spark = builder.getOrCreate()
    except Exception as e:  # the JVM did not start: say why in words, not a gateway trace
        if "JAVA_GATEWAY_EXITED" in str(e) or "Java gateway process exited" in str(e):
            raise JavaNotFoundError(f"Spark's JVM did not start ({e}).\n{_INSTALL_JAVA}") from None
        raise
    # getOrCreate() on an existing session ignores builder settings that are not runtime SQL
    # settings; the SQL ones fieldshift relies on are set again here.
    for key in ("spark.sql.execution.arrow.pyspark.enabled", "spark.sql.python.filterPushdown.enabled",
                "spark.sql.parquet.fieldId.read.enabled", "spark.sql.timeType.enabled"):
        spark.conf.set(key, settings[key])
    from fieldshift.spark.datasource import register

    register(spark)
    if not verbose:
        spark.sparkContext.setLogLevel("ERROR")
    return spark


def _connect_session(app_name: str, remote: str, conf: dict[str, Any]) -> Any:
    """A Spark Connect client session with fieldshift's SQL settings and the data source registered."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.remote(remote).appName(app_name).getOrCreate()
    settings = {k: v for k, v in DEFAULT_CONF.items()  # (Connect has no pandas fallback to turn off)
                if k.startswith("spark.sql.") and k != "spark.sql.execution.arrow.pyspark.fallback.enabled"}
    settings.update({k: str(v) for k, v in conf.items()})
    for key, value in settings.items():
        try:
            spark.conf.set(key, value)
        except Exception:  # a static or unknown setting this server refuses at run time: the server's own
            if key in conf:
                raise
    from fieldshift.spark.datasource import register

    register(spark)
    return spark
