"""Time travel by time on fieldshift's own tables: ``Table.scan(as_of=)`` and the CLI's ``--as-of`` (an id
or an ISO-8601 time), one rule shared with ``fs.open_table`` (issue 31)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

import fieldshift as fs
from fieldshift.cli import app
from fieldshift.errors import InvalidOptionError, SnapshotNotFoundError

RUNNER = CliRunner()


@pytest.fixture
def table(tmp_path: Path) -> fs.Table:
    t = fs.Table.create(tmp_path / "t", fs.Schema.from_arrow(pa.schema([("v", pa.int64())]), assign_ids=True))
    for v in (1, 2, 3):
        t.append(pa.table({"v": pa.array([v], pa.int64())}))
    return t


def _at(snap: object) -> dt.datetime:
    return dt.datetime.fromisoformat(snap.committed_at)  # type: ignore[attr-defined]


def test_as_of_reads_the_latest_snapshot_at_or_before(table: fs.Table) -> None:
    snaps = [s for s in table.history() if s.operation == "append"]
    first, second = snaps[0], snaps[1]
    assert table.scan(as_of=_at(second)).to_arrow()["v"].to_pylist() == [1, 2]
    just_before = _at(second) - dt.timedelta(microseconds=1)
    assert just_before >= _at(first)
    assert table.scan(as_of=just_before).snapshot_id == first.snapshot_id
    # ISO text and a naive time (UTC) mean the same instant
    naive = _at(second).astimezone(dt.UTC).replace(tzinfo=None)
    assert table.scan(as_of=naive).snapshot_id == second.snapshot_id
    assert table.scan(as_of=_at(second).isoformat()).snapshot_id == second.snapshot_id
    later = (_at(snaps[-1]) + dt.timedelta(days=1)).isoformat().replace("+00:00", "Z")
    assert table.scan(as_of=later).to_arrow()["v"].to_pylist() == [1, 2, 3]


def test_as_of_errors(table: fs.Table) -> None:
    first = table.history()[0]
    with pytest.raises(SnapshotNotFoundError, match="no snapshot at or before"):
        table.scan(as_of=_at(first) - dt.timedelta(seconds=1))
    with pytest.raises(InvalidOptionError, match="not both"):
        table.scan(snapshot_id=first.snapshot_id, as_of=_at(first))
    with pytest.raises(InvalidOptionError, match="not an ISO-8601 time"):
        table.scan(as_of="yesterday")


def test_cli_as_of_takes_an_id_or_a_time(table: fs.Table) -> None:
    snaps = [s for s in table.history() if s.operation == "append"]
    loc = str(table.location)
    by_id = RUNNER.invoke(app, ["read", loc, "--as-of", str(snaps[0].snapshot_id), "-f", "json"])
    assert by_id.exit_code == 0, by_id.output
    assert by_id.output.split() == ['{"v":', "1}"]
    when = snaps[1].committed_at
    by_time = RUNNER.invoke(app, ["read", loc, "--as-of", when, "-f", "json"])
    assert by_time.exit_code == 0, by_time.output
    assert by_time.output.split() == ['{"v":', "1}", '{"v":', "2}"]
    shown = RUNNER.invoke(app, ["schema", "show", loc, "--as-of", when])
    assert shown.exit_code == 0, shown.output
    explained = RUNNER.invoke(app, ["explain", loc, "--as-of", when])
    assert explained.exit_code == 0, explained.output
    assert f"snapshot {snaps[1].snapshot_id}:" in explained.output
    early = RUNNER.invoke(app, ["read", loc, "--as-of", "2000-01-01T00:00:00Z"])
    assert early.exit_code != 0
    assert "no snapshot at or before" in early.output
