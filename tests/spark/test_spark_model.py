"""The table model test with every scan also read through the Spark data source, and its row changes (merge,
update, delete by a filter) run through ``fieldshift.spark`` (a short run)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

import fieldshift.spark as fss
from tests.table.test_table_model import STATS, TableMachine, run_machine


class SparkTableMachine(TableMachine):
    def _opened(self) -> dict[str, Any]:
        return {"catalog": self.catalog, "name": "main"} if self.shared else {}

    def _merge_builder(self, source: pa.Table, on: str) -> Any:
        STATS["spark row changes"] += 1
        return fss.merge(self.spark.createDataFrame(source), str(self.table.location), on, **self._opened())

    def _update(self, set: dict[str, Any], where: Any) -> int:
        STATS["spark row changes"] += 1
        return fss.update(self.spark, str(self.table.location), set=set, where=where, **self._opened()).rows_updated

    def _delete(self, where: Any) -> int | None:
        STATS["spark row changes"] += 1
        return fss.delete(self.spark, str(self.table.location), where=where, **self._opened()).rows_deleted


def test_table_model_through_spark(spark: Any) -> None:
    SparkTableMachine.spark = spark
    run_machine(SparkTableMachine, examples=6, steps=15, derandomize=True,
                required=("spark reads", "scan rows", "spark row changes", "merge", "rows updated"))
