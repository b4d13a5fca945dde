"""The stateful model test (tests/table/test_table_model.py) with the table in a PostgreSQL catalog:
every write, alter, scan, time travel, quarantine, vacuum and reopen compared with the model."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize

from fieldshift.table.catalog.postgres import close_pools
from tests.servers.conftest import fresh_catalog_uri
from tests.table.test_table_model import NAMES, POLICIES, TableMachine, any_kind, run_machine


class PgTableMachine(TableMachine):
    server: Any = None

    def __init__(self) -> None:
        super().__init__()
        self.catalog = fresh_catalog_uri(self.server)  # an empty catalog schema per example

    def teardown(self) -> None:
        close_pools(self.catalog)
        super().teardown()

    @initialize(policy=st.sampled_from(sorted(POLICIES)),
                cols=st.lists(st.tuples(st.sampled_from(NAMES[:9]), any_kind),
                              min_size=1, max_size=4, unique_by=lambda c: c[0]))
    def create(self, policy: str, cols: list[tuple[str, str]]) -> None:
        TableMachine.create(self, policy, cols, shared=True)  # always the shared (PostgreSQL) catalog


def test_table_against_model_on_postgresql(pg_server: Any) -> None:
    PgTableMachine.server = pg_server
    run_machine(PgTableMachine, examples=40, steps=30, derandomize=True)
