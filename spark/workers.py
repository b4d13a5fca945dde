"""Whether a Spark Connect server's Python workers can run fieldshift, asked once when a session is set up.

Spark runs the data source and ``mapInArrow`` functions in Python workers; over Spark Connect those are
the server's, started with the server's ``PYSPARK_PYTHON``. Without fieldshift there, every use fails
with a ``ModuleNotFoundError`` buried in a Java stack trace, on whichever call first needs a worker
(often a plain ``spark.read.format("fieldshift").load(...)``, which no fieldshift code wraps). So the
session set-up runs one tiny ``mapInArrow`` job through a fieldshift function and, if the server's
workers cannot import it, raises ``SparkWorkerImportError`` saying how to start the server.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from fieldshift.spark.errors_bridge import workers_without_fieldshift

__all__ = ["check_connect_workers", "is_connect", "prepare_session"]

_CHECKED: set[str] = set()  # servers (by their application id) whose workers import fieldshift


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect client session (its workers are a server's)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def prepare_session(spark: Any) -> None:
    """Session settings the data source needs (Python filter pushdown) and, over Spark Connect, the check
    that the server's Python workers can import fieldshift."""
    try:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    except Exception:  # pragma: no cover - a Spark without the setting
        pass
    if is_connect(spark):
        check_connect_workers(spark)


def _imports_fieldshift(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Run on a worker: being unpickled there imports this module, so it fails where fieldshift is missing."""
    for batch in batches:
        yield pa.RecordBatch.from_pydict({"fieldshift": pa.array([True] * batch.num_rows)})


def check_connect_workers(spark: Any) -> None:
    """Raise ``SparkWorkerImportError`` if the Spark Connect server's Python workers cannot import fieldshift
    (once per server and process: a server's workers do not change)."""
    try:
        server = str(spark.conf.get("spark.app.id"))
    except Exception:
        server = ""
    if server and server in _CHECKED:
        return
    try:
        spark.range(1).mapInArrow(_imports_fieldshift, "fieldshift boolean").collect()
    except Exception as e:
        missing = workers_without_fieldshift(e)
        if missing is not None:
            raise missing from None
        # anything else is not this check's to decide: later calls report it where it matters
        logging.getLogger("fieldshift").warning("could not check that the Spark Connect server's Python workers "
                                                "import fieldshift: %s", str(e).splitlines()[0] if str(e) else e)
        return
    if server:
        _CHECKED.add(server)
