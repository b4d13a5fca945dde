"""The table model test with every scan also read through the Spark data source (a short run)."""

from __future__ import annotations

from typing import Any

from hypothesis import settings

from tests.table.test_table_model import SETTINGS, TableMachine


class SparkTableMachine(TableMachine):
    pass


def test_table_model_through_spark(spark: Any) -> None:
    SparkTableMachine.spark = spark
    SparkTableMachine.TestCase.settings = settings(SETTINGS, max_examples=3, stateful_step_count=12)
    SparkTableMachine.TestCase().runTest()
