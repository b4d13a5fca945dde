"""The table model test with every scan also read through the Spark data source (a short run)."""

from __future__ import annotations

from typing import Any

from tests.table.test_table_model import TableMachine, run_machine


class SparkTableMachine(TableMachine):
    pass


def test_table_model_through_spark(spark: Any) -> None:
    SparkTableMachine.spark = spark
    run_machine(SparkTableMachine, examples=6, steps=15, derandomize=True, required=("spark reads", "scan rows"))
