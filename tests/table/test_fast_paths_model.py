"""The two model state machines (plain and keyed tables) with issue 35's fast paths taken on their small tables:
the thresholds that keep them for large inputs lowered, so every read and write of the machines goes through the
columnar statistics and partition tests, zero-copy live-row slices, skipped row groups (two-row groups), the key
checks beside the file writes and the key hash in row ranges. The machines compare every answer with their
models, so a fast path that answers differently from the path without it fails here. (The keyed machine found
a keyed table's entries misaligned with their statistics this way: ``test_keyed_entry_order``.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from fieldshift.table.files import write_layout
from fieldshift.table.keyed import keys
from fieldshift.table.scan import live_rows, open_scan
from fieldshift.table.write import write_commit
from tests.table import test_table_model as table_model
from tests.table.keyed.test_keyed_model import KeyedMachine


@pytest.fixture(autouse=True)
def fast_paths_everywhere(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(open_scan, "MIN_FILES", 1)  # columnar statistics and partition tests
    monkeypatch.setattr(live_rows, "MIN_SLICE_ROWS", 1)  # live rows as zero-copy slices
    monkeypatch.setattr(write_commit, "_OVERLAP_ROWS", 1)  # key checks while the files are written
    monkeypatch.setattr(keys, "_PARALLEL_ROWS", 2)  # key hash in row ranges
    # two-row groups (whole groups deleted are skipped) and five-row files
    monkeypatch.setattr(write_layout, "DEFAULT_LAYOUT", write_layout.WriteLayout(row_group_rows=2, file_rows=5))
    yield


def _run_keyed(monkeypatch: pytest.MonkeyPatch, examples: int, derandomize: bool) -> None:
    monkeypatch.setattr(KeyedMachine.TestCase, "settings", settings(  # restored after: the keyed model's own test
        max_examples=examples, stateful_step_count=25, deadline=None, derandomize=derandomize,
        database=None, suppress_health_check=list(HealthCheck)))
    KeyedMachine.TestCase().runTest()


def test_keyed_model_with_fast_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    _run_keyed(monkeypatch, 30, derandomize=True)


def test_table_model_with_fast_paths() -> None:
    table_model.run_machine(table_model.TableMachine, examples=10, steps=25, derandomize=True, required=())


@pytest.mark.slow
def test_keyed_model_with_fast_paths_long(monkeypatch: pytest.MonkeyPatch) -> None:
    _run_keyed(monkeypatch, 200, derandomize=False)


@pytest.mark.slow
def test_table_model_with_fast_paths_long() -> None:
    table_model.run_machine(table_model.TableMachine, examples=150, steps=40, derandomize=False, required=())
