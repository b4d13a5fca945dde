"""The session's default parallelism, with or without a SparkContext.

Spark Connect sessions have no ``sparkContext``; there the settings Spark itself consults are read
from the session's conf (``spark.sql.leafNodeDefaultParallelism``, then ``spark.default.parallelism``).
A classic session without them asks its SparkContext, which knows the cluster's cores.
"""

from __future__ import annotations

from typing import Any

__all__ = ["default_parallelism"]

_KEYS = ("spark.sql.leafNodeDefaultParallelism", "spark.default.parallelism")


def default_parallelism(spark: Any) -> int | None:
    """How many partitions Spark's own scans aim for; None when a Connect session's conf does not say."""
    for key in _KEYS:
        try:
            value = spark.conf.get(key, None)
        except Exception:  # a key this Spark does not know
            value = None
        if value and str(value).strip().isdigit() and int(value) > 0:
            return int(value)
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # Spark Connect: no SparkContext
        return None
