"""A Spark Python data source that yields one ready-made Arrow batch over and over (bench_spark.py).

It reads no files and evolves nothing, so its time is what Spark spends taking Arrow batches from a
Python data source: the floor under the ``fieldshift`` data source's time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

FORMAT = "fieldshift_bench_ready_batches"
PARTITIONS = 2  # local[2]: one partition per core, as the fieldshift data source packs this table


def make_source(batch: pa.RecordBatch, spark_schema: Any, rows: int) -> type[DataSource]:
    """A data source class yielding ``rows`` rows of ``spark_schema`` in copies of ``batch``
    (already in the exact Arrow schema Spark expects for ``spark_schema``)."""

    class ReadyBatches(DataSource):
        @classmethod
        def name(cls) -> str:
            return FORMAT

        def schema(self) -> Any:
            return spark_schema

        def reader(self, schema: Any) -> DataSourceReader:
            return _Reader(batch, rows)

    return ReadyBatches


class _Reader(DataSourceReader):
    def __init__(self, batch: pa.RecordBatch, rows: int) -> None:
        self.batch = batch
        self.rows = rows

    def partitions(self) -> list[InputPartition]:
        share = -(-self.rows // PARTITIONS)
        return [InputPartition(min(share, self.rows - i * share)) for i in range(PARTITIONS)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        left = partition.value
        while left > 0:
            take = min(left, self.batch.num_rows)
            yield self.batch if take == self.batch.num_rows else self.batch.slice(0, take)
            left -= take
