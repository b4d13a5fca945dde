"""The fieldshift streaming sink with stopwatches (bench_streams.py): each executor ``write`` and each
driver ``commit`` appends its duration to the file named by the ``timings`` option, so the benchmark
measures fieldshift's own work per micro-batch (evolution, files, catalog) apart from Spark's."""

from __future__ import annotations

import json
import time
from typing import Any

from fieldshift.spark.datasource import FieldshiftDataSource
from fieldshift.spark.stream_sink import FieldshiftStreamWriter

FORMAT = "fieldshift_timed"


def _log(path: str, kind: str, batch: int | None, seconds: float) -> None:
    with open(path, "a") as fh:
        fh.write(json.dumps({"kind": kind, "batch": batch, "s": seconds}) + "\n")


class TimedWriter(FieldshiftStreamWriter):
    def __init__(self, options: Any, schema: Any, overwrite: bool) -> None:
        start = time.perf_counter()
        super().__init__(options, schema, overwrite)
        self.timings = str(options.get("timings"))
        self.init_seconds = time.perf_counter() - start  # planning on the driver, once per micro-batch

    def write(self, iterator: Any) -> Any:
        start = time.perf_counter()
        out = super().write(iterator)
        _log(self.timings, "write", None, time.perf_counter() - start)
        return out

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
