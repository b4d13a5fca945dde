"""fieldshift on PySpark. Importing this package does not import pyspark or start a JVM.

Names are loaded on first use from the submodule that defines them (see ``_LAZY``), so
``import fieldshift.spark`` works on machines without Spark and costs nothing on executors.
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> submodule of fieldshift.spark that defines it
_LAZY: dict[str, str] = {
    "EvolveBatches": "map_in_arrow",
    "FieldshiftDataSource": "datasource",
    "OpenReadPlan": "open_native",
    "JavaNotFoundError": "local_session",
    "ReadPlan": "table_read",
    "UnsupportedSparkTypeError": "types",
    "arrow_type_for_spark": "arrow_for_spark",
    "delete": "row_writes",
    "field_to_spark": "types",
    "parse_spark_literal": "sql_literals",
    "plan_open_read": "open_frame",
    "schema_for_spark": "arrow_for_spark",
    "schema_to_spark": "types",
    "spark_literal": "types",
    "spark_to_schema": "types",
    "type_to_spark": "types",
    "update": "row_writes",
    "evolve": "map_in_arrow",
    "evolve_batch": "map_in_arrow",
    "merge": "row_merge",
    "native_reason": "table_read",
    "plan_read": "table_read",
    "read": "table_read",
    "register": "datasource",
    "session": "local_session",
    "write": "writer_helpers",
}

__all__ = sorted(_LAZY)


def require_pyspark() -> None:
    """Raise ``SparkNotInstalledError`` (naming the ``[spark]`` extra) unless PySpark can be imported."""
    try:
        importlib.import_module("pyspark")
    except ModuleNotFoundError as e:
        missing = spark_missing(e)
        if missing is e:
            raise
        raise missing from None


def spark_missing(error: ModuleNotFoundError) -> Exception:
    """The error to raise for ``error``: one that says how to install Spark if PySpark is what is missing."""
    from fieldshift.errors import SparkNotInstalledError

    if (error.name or "").split(".")[0] not in ("pyspark", "py4j"):
        return error
    return SparkNotInstalledError(
        f"fieldshift.spark needs PySpark, which is not installed ({error}); install it with "
        "pip install 'fieldshift[spark]' (PySpark 4 and pandas; Spark also needs Java 17 or 21)")


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    except ModuleNotFoundError as e:
        missing = spark_missing(e)
        if missing is e:
            raise
        raise missing from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
