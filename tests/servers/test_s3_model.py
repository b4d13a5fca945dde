"""The stateful model test (tests/table/test_table_model.py) with the table on the S3 server and its
catalog in a SQLite file (a neighbour table of that catalog stays local): every write, alter, scan, time
travel, quarantine, stream batch, vacuum and reopen compared with the model."""

from __future__ import annotations

import uuid

from hypothesis import strategies as st
from hypothesis.stateful import initialize

from tests.servers.conftest import S3_BUCKET
from tests.table.test_table_model import EXERCISED, NAMES, POLICIES, TableMachine, any_kind, run_machine


class S3TableMachine(TableMachine):
    def __init__(self) -> None:
        super().__init__()
        self.main_location = f"s3://{S3_BUCKET}/model-{uuid.uuid4().hex[:12]}/main"  # a fresh prefix per example

    @initialize(policy=st.sampled_from(sorted(POLICIES)),
                cols=st.lists(st.tuples(st.sampled_from(NAMES[:9]), any_kind),
                              min_size=1, max_size=4, unique_by=lambda c: c[0]))
    def create(self, policy: str, cols: list[tuple[str, str]]) -> None:
        TableMachine.create(self, policy, cols, shared=True)  # an object store needs a catalog elsewhere


def test_table_against_model_on_s3(s3_server: str) -> None:
    # publishing on an object store has its own test (test_publish_servers.py); the model publishes local tables
    run_machine(S3TableMachine, examples=40, steps=30, derandomize=True,
                required=tuple(k for k in EXERCISED if k != "published"))
