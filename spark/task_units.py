"""Work units handed to Spark tasks as input rows: each task receives only its own units.

A distributed merge's by-source pass and an update run one task per target unit (a data file, a merge
group, a file's matched positions). Held in the task function, every unit would travel to every task, and
the bytes shipped would grow with the square of the unit count (100,000 files: 100,000 copies of the list).
Here each unit is pickled into one row of a ``unit binary`` DataFrame with one partition per unit, so a
task's input is its own unit and the function it runs stays the same size however many units there are.

A classic session slices the rows with ``parallelize`` (no shuffle: partition ``i`` holds unit ``i``); a
Spark Connect session, which has no SparkContext, sends them as a local relation spread by a range
repartition of their index.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

__all__ = ["UNIT_COLUMN", "connect_unit_frame", "task_units", "unit_frame"]

UNIT_COLUMN = "unit"
"""The binary column holding one pickled unit per row."""

_SCHEMA = f"i long, {UNIT_COLUMN} binary"


def unit_frame(spark: Any, units: Sequence[Any]) -> Any:
    """A DataFrame of ``units`` (columns ``i`` and :data:`UNIT_COLUMN`), one partition per unit; ``units``
    must not be empty."""
    rows = [(i, pickle.dumps(u, protocol=pickle.HIGHEST_PROTOCOL)) for i, u in enumerate(units)]
    try:
        context = spark.sparkContext
    except Exception:  # Spark Connect: no SparkContext
        context = None
    if context is None:
        return connect_unit_frame(spark, rows)
    return spark.createDataFrame(context.parallelize(rows, len(rows)), _SCHEMA)


def connect_unit_frame(spark: Any, rows: list[tuple[int, bytes]]) -> Any:
    """The rows as a local relation, range-partitioned by index into one partition per row (Spark samples
    every row of so small a relation, so the ranges split exactly)."""
    table = pa.table({"i": pa.array([i for i, _ in rows], pa.int64()),
                      UNIT_COLUMN: pa.array([b for _, b in rows], pa.binary())})
    return spark.createDataFrame(table.to_pandas()).repartitionByRange(len(rows), "i")


def task_units(batches: Iterator[pa.RecordBatch]) -> Iterator[Any]:
    """The units of a task's input batches (a mapInArrow function's argument), unpickled one at a time."""
    for batch in batches:
        for blob in batch.column(UNIT_COLUMN).to_pylist():
            yield pickle.loads(blob)
