"""A Spark Python streaming sink that writes nothing (bench_streams.py): its time per micro-batch is what
Spark spends on any Python data source sink (the driver's writer and commit round trips to Python workers,
each task's Arrow hand-over to a Python worker) — the floor under the ``fieldshift`` sink's time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamArrowWriter, WriterCommitMessage

FORMAT = "fieldshift_bench_python_noop_sink"


class _Writer(DataSourceStreamArrowWriter):
    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        for _ in iterator:  # take every row, as a sink must
            pass
        return WriterCommitMessage()

    def commit(self, messages: Any, batchId: int) -> None:
        pass

    def abort(self, messages: Any, batchId: int) -> None:
        pass


class PythonNoopSink(DataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamArrowWriter:
        return _Writer()
