"""The fieldshift streaming sink with stopwatches (bench_streams.py): each executor ``write`` (whose wall
time includes waiting for Spark to hand over the rows), its ``_flush`` (evolution and the Parquet file:
fieldshift's own executor work) and each driver ``commit`` (with the writer's planning) append their
durations to the file named by the ``timings`` option."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from fieldshift.spark.datasource import FieldshiftDataSource
from fieldshift.spark.stream_sink import FieldshiftStreamWriter

FORMAT = "fieldshift_timed"


def _log(path: str, kind: str, batch: int | None, seconds: float) -> None:
    with open(path, "a") as fh:
        fh.write(json.dumps({"kind": kind, "batch": batch, "s": seconds, "pid": os.getpid()}) + "\n")


class TimedWriter(FieldshiftStreamWriter):
    def __init__(self, options: Any, schema: Any, overwrite: bool) -> None:
        start = time.perf_counter()
        super().__init__(options, schema, overwrite)
        self.timings = str(options.get("timings"))
        self.init_seconds = time.perf_counter() - start  # planning on the driver, once per micro-batch

    def write(self, iterator: Any) -> Any:
        start = time.perf_counter()
        self.flush_seconds = 0.0
        out = super().write(iterator)
        _log(self.timings, "write", None, time.perf_counter() - start)
        _log(self.timings, "flush", None, self.flush_seconds)
        return out

    def _flush(self, *args: Any) -> None:  # evolution (plan.split) and the Parquet file: fieldshift's own work
        start = time.perf_counter()
        super()._flush(*args)
        self.flush_seconds += time.perf_counter() - start

    def commit(self, messages: Any, batchId: int) -> None:
        start = time.perf_counter()
        super().commit(messages, batchId)
        _log(self.timings, "commit", batchId, time.perf_counter() - start + self.init_seconds)


class TimedSource(FieldshiftDataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def streamWriter(self, schema: Any, overwrite: bool) -> Any:
        return TimedWriter(self.options, schema, overwrite)
