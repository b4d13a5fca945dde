"""The fieldshift streaming sink with stopwatches (bench_streams.py): each executor ``write`` (whose wall
time includes waiting for Spark to hand over the rows), its ``_flush`` (evolution and the Parquet file:
fieldshift's own executor work), the driver's planning (``plan_now``) and each driver ``commit`` append their
durations to the file named by the ``timings`` option: wall time (``s``) and the thread's CPU time
(``cpu``), which a loaded machine inflates far less (it leaves out waiting for a core and for fsync)."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from fieldshift.spark.datasource import FieldshiftDataSource
from fieldshift.spark.stream_sink import FieldshiftStreamWriter

FORMAT = "fieldshift_timed"


def _log(path: str, kind: str, batch: int | None, seconds: float, cpu: float) -> None:
    with open(path, "a") as fh:
        fh.write(json.dumps({"kind": kind, "batch": batch, "s": seconds, "cpu": cpu, "pid": os.getpid()}) + "\n")


class TimedWriter(FieldshiftStreamWriter):
    def __init__(self, options: Any, schema: Any, overwrite: bool) -> None:
        start, cpu = time.perf_counter(), time.thread_time()
        super().__init__(options, schema, overwrite)
        self.timings = str(options.get("timings"))
        self.init_seconds = time.perf_counter() - start  # the commit's writer: options only (it plans nothing)
        self.init_cpu = time.thread_time() - cpu

    def plan_now(self) -> None:  # planning against the head, on the driver, once per micro-batch
        if self._planned:
            return
        start, cpu = time.perf_counter(), time.thread_time()
        super().plan_now()
        _log(self.timings, "plan", None, time.perf_counter() - start, time.thread_time() - cpu)

    def write(self, iterator: Any) -> Any:
        start, cpu = time.perf_counter(), time.thread_time()
        self.flush_seconds = self.flush_cpu = 0.0
        out = super().write(iterator)
        _log(self.timings, "write", None, time.perf_counter() - start, time.thread_time() - cpu)
        _log(self.timings, "flush", None, self.flush_seconds, self.flush_cpu)
        return out

    def _flush(self, *args: Any) -> None:  # evolution (plan.split) and the Parquet file: fieldshift's own work
        start, cpu = time.perf_counter(), time.thread_time()
        super()._flush(*args)
        self.flush_seconds += time.perf_counter() - start
        self.flush_cpu += time.thread_time() - cpu

    def commit(self, messages: Any, batchId: int) -> None:
        start, cpu = time.perf_counter(), time.thread_time()
        super().commit(messages, batchId)
        _log(self.timings, "commit", batchId, time.perf_counter() - start + self.init_seconds,
             time.thread_time() - cpu + self.init_cpu)


class TimedSource(FieldshiftDataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def streamWriter(self, schema: Any, overwrite: bool) -> Any:
        return TimedWriter(self.options, schema, overwrite)
