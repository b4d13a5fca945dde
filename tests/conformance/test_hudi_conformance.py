"""hudi-rs' sample tables (``data/hudi``, copied with their licence: copy-on-write and merge-on-read, table
versions 6, 8 and 9, partitioned by simple, complex and time-based key generators, Hive-style or not,
with and without meta columns, overwrites, rollbacks, deletes, log files of Avro and Parquet blocks)
read through ``fs.open_table`` at every instant, equal to hudi-rs' own snapshot read at that instant."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import fieldshift as fs
from fieldshift.errors import SnapshotNotFoundError

sys.path.insert(0, str(Path(__file__).parents[1]))
from tests.open_tables.hudi_tables import SAMPLES, unzip_sample

pytestmark = pytest.mark.conformance

TABLES = sorted(p.stem for p in SAMPLES.glob("*.zip"))
EMPTY = [t for t in TABLES if t.endswith("_empty")]


def hudi_rs(base: Path, instant: str) -> pa.Table:
    from hudi import HudiReadOptions, HudiTableBuilder

    table = HudiTableBuilder.from_base_uri(str(base)).build()
    batches = table.read(HudiReadOptions().with_as_of_timestamp(instant))
    return pa.Table.from_batches(batches) if batches else pa.table({})


def rows(table: pa.Table) -> list[str]:
    return sorted(repr(sorted(r.items())) for r in table.to_pylist())


@pytest.mark.parametrize("sample", [t for t in TABLES if t not in EMPTY])
def test_every_instant_equals_hudi_rs(tmp_path: Path, sample: str) -> None:
    base = unzip_sample(sample, tmp_path)
    table = fs.open_table(base, format="hudi")
    history = table.history()
    assert history, f"{sample} has no completed instant"
    for snap in history:
        ours = table.to_arrow(snapshot_id=snap.snapshot_id)
        theirs = hudi_rs(base, snap.snapshot_id)
        assert ours.column_names == theirs.column_names, snap.snapshot_id
        assert [f.type for f in ours.schema] == [f.type for f in theirs.schema], snap.snapshot_id
        assert rows(ours) == rows(theirs), snap.snapshot_id
        assert table.scan(snapshot_id=snap.snapshot_id).count() == theirs.num_rows, snap.snapshot_id
        assert table.scan(as_of=snap.timestamp).snapshot_id == snap.snapshot_id


@pytest.mark.parametrize("sample", [t for t in TABLES if t not in EMPTY])
def test_filters_and_columns_equal_hudi_rs_rows(tmp_path: Path, sample: str) -> None:
    """A filter on each partition column (pruned by the partition paths) and on a data column, with a
    projection, equal hudi-rs' rows filtered afterwards."""
    base = unzip_sample(sample, tmp_path)
    table = fs.open_table(base, format="hudi")
    latest = table.current_snapshot.snapshot_id
    theirs = hudi_rs(base, latest)
    fields = [f for f in table.source.props.get("hoodie.table.partition.fields", "").split(",") if f]
    data = [n for n in table.schema.names if not n.startswith("_hoodie") and n not in fields]
    for column in [*fields[:1], data[0]]:
        value = next(v for v in theirs[column].to_pylist() if v is not None)
        scan = table.scan(columns=data[:2], filter=[(column, "=", value)])
        want = theirs.filter(pc.equal(theirs[column], pa.scalar(value, theirs[column].type))).select(data[:2])
        assert rows(scan.to_arrow()) == rows(want), column
        assert scan.count() == want.num_rows


@pytest.mark.parametrize("sample", EMPTY)
def test_empty_tables_have_no_snapshot(tmp_path: Path, sample: str) -> None:
    table = fs.open_table(unzip_sample(sample, tmp_path), format="hudi")
    assert table.history() == []
    with pytest.raises(SnapshotNotFoundError, match="has no snapshot"):
        table.to_arrow()
