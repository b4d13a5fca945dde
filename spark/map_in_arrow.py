"""Evolve a DataFrame's rows on the executors with ``mapInArrow``, using a plan built on the driver.

Spark's Arrow batches carry no Parquet field ids and use Spark's Arrow types (no unsigned, no large
or view layouts, microsecond timestamps), so the plan is built from the Spark-compatible form of the
file schema (``schema_for_spark``) into the Spark-compatible form of the read schema, and matches
columns by position and id — the caller says which schema the DataFrame's columns were written with.

    f = evolve_batch(file_schema, read_schema)
    df.mapInArrow(f, schema_to_spark(read_schema))
    # or, selecting the file's columns by name first:
    evolve(df, file_schema, read_schema)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from fieldshift.errors import SchemaEvolutionError
from fieldshift.planner import EvolutionPlan, cached_plan
from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.spark._arrow import BatchConformer, spark_arrow_schema
from fieldshift.spark.arrow_for_spark import schema_for_spark
from fieldshift.spark.errors_bridge import fieldshift_errors, one_line_errors
from fieldshift.spark.types import schema_to_spark

__all__ = ["EvolveBatches", "evolve", "evolve_batch"]


def _session_timezone() -> str | None:
    try:
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
    except Exception:  # pragma: no cover - no Spark at all
        return None
    return active.conf.get("spark.sql.session.timeZone") if active is not None else None


class EvolveBatches:
    """``Iterator[pa.RecordBatch] -> Iterator[pa.RecordBatch]`` for ``DataFrame.mapInArrow``.

    Picklable: it holds the frozen plan (built here, on the driver, so every schema mismatch is
    raised before a job starts), the Spark schema of the output and the exact Arrow schema Spark
    expects back. ``output_schema`` is what to pass as ``mapInArrow``'s schema.
    """

    __slots__ = ("output_schema", "plan", "read_schema", "target")

    def __init__(self, file_schema: Schema, read_schema: Schema, policy: CastPolicy | None = None, *,
                 timezone: str | None = None) -> None:
        spark_file = schema_for_spark(file_schema)
        spark_read = schema_for_spark(read_schema)
        self.plan: EvolutionPlan = cached_plan(spark_file, spark_read, policy)
        self.read_schema = read_schema
        self.output_schema = schema_to_spark(read_schema)
        self.target = spark_arrow_schema(self.output_schema, timezone or _session_timezone() or "UTC")

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        plan, conform = self.plan, BatchConformer(self.target)
        for batch in batches:
            yield conform(plan.apply(batch))

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.plan, self.read_schema, self.output_schema, self.target)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.plan, self.read_schema, self.output_schema, self.target = state

    def __repr__(self) -> str:
        return f"EvolveBatches({self.plan!r})"


def evolve_batch(file_schema: Schema, read_schema: Schema, policy: CastPolicy | None = None) -> EvolveBatches:
    """A picklable callable for ``df.mapInArrow(f, schema_to_spark(read_schema))``.

    ``df``'s columns must be the file schema's top-level columns, in order (Spark Arrow types).
    Raises :class:`fieldshift.SchemaMismatchError` here, on the driver, if the plan is impossible.
    """
    return EvolveBatches(file_schema, read_schema, policy)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def evolve(df: Any, file_schema: Schema, read_schema: Schema, policy: CastPolicy | None = None) -> Any:
    """``df`` (columns written with ``file_schema``) evolved into ``read_schema`` through ``mapInArrow``.

    The file schema's top-level columns are selected from ``df`` by name first, so extra columns
    are ignored and the order does not matter.
    """
    missing = [f.name for f in file_schema.fields if f.name not in df.columns]
    if missing:
        raise SchemaEvolutionError(f"the DataFrame lacks column(s) {missing} of the file schema; it has "
                                   f"{df.columns}")
    with fieldshift_errors():
        f = EvolveBatches(file_schema, read_schema, policy,
                          timezone=df.sparkSession.conf.get("spark.sql.session.timeZone"))
        selected = df.select(*[_quote(fld.name) for fld in file_schema.fields])
        return selected.mapInArrow(f, f.output_schema)


one_line_errors(EvolveBatches)  # a failing batch: the fieldshift message is Spark's last line
