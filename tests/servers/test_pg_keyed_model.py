"""The keyed-table model test (tests/table/keyed/test_keyed_model.py: upserts, deletes, merges, buckets,
partitions, compaction, expiry) with the table in a PostgreSQL catalog."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize

import fieldshift as fs
from fieldshift.table.catalog.postgres import close_pools
from tests.servers.conftest import fresh_catalog_uri
from tests.table.keyed.test_keyed_model import SPECS, KeyedMachine


class PgKeyedMachine(KeyedMachine):
    server: Any = None

    def __init__(self) -> None:
        super().__init__()
        self.catalog = fresh_catalog_uri(self.server)

    def teardown(self) -> None:
        close_pools(self.catalog)
        super().teardown()

    @initialize(buckets=st.integers(1, 3), partition=st.sampled_from(SPECS))
    def create(self, buckets: int, partition: list[str]) -> None:
        schema = pa.schema([pa.field("id", pa.int32(), nullable=False), ("pre", pa.int32()), ("v", pa.int32())])
        self.t = fs.Table.create(self.dir / "t", schema, identifier_fields=["id"], precombine="pre",
                                 buckets=buckets, partition_by=partition, catalog=self.catalog, name="t")
        self.partition = partition  # the rest as KeyedMachine.create
        self.names = {"id": "id", "pre": "pre", "v": "v"}
        self.v_long = False
        self.rows: dict[int, Any] = {}
        self._record()
        assert type(self.t.catalog).__name__ == "PostgresCatalog"


def test_keyed_tables_against_the_model_on_postgresql(pg_server: Any) -> None:
    PgKeyedMachine.server = pg_server
    PgKeyedMachine.TestCase.settings = settings(max_examples=12, stateful_step_count=20, deadline=None,
                                                derandomize=True, database=None,
                                                suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.filter_too_much])
    PgKeyedMachine.TestCase().runTest()
