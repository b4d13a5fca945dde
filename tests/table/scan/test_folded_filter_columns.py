"""A filter leaf whose literal makes it constant (``c >= 2**64`` on an int column binds to false) still names
its column: a scan that cannot read that column from some file is refused as ``c < 0`` is, whatever the literal
(the scan used to return no rows, having no column left to read). Found by the fast-path table model."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs


@pytest.fixture
def widened(tmp_path: Path) -> fs.Table:
    """c was int (schema 0) and is long now; a file of the newer schema holds a value an int cannot."""
    t = fs.Table.create(tmp_path / "t", pa.schema([("a", pa.float64()), ("c", pa.int32())]))
    t.append(pa.table({"a": [1.0, 2.0], "c": pa.array([1, 2], pa.int32())}))
    t.update_schema().update_column("c", pa.int64()).commit()
    t.append(pa.table({"a": [3.0], "c": pa.array([5_000_000_000], pa.int64())}))
    return t


@pytest.mark.parametrize("flt", ["c < 0", "c >= 18446744073709551616", "c = 1.5", "c >= 3000000000 or a < 2.5",
                                 [("c", ">=", 2**64)]])
def test_a_filter_naming_an_unreadable_column_is_refused_whatever_its_literal(widened: fs.Table, flt: object) -> None:
    with pytest.raises(fs.SchemaEvolutionError, match="cannot be read"):
        widened.scan(columns=["a"], filter=flt, schema_id=0).to_arrow()
    with pytest.raises(fs.SchemaEvolutionError, match="cannot be read"):
        widened.scan(columns=["a"], filter=flt, schema_id=0).files()


def test_filters_on_readable_columns_and_the_current_schema_still_read(widened: fs.Table) -> None:
    assert widened.scan(columns=["a"], filter="a < 2.5", schema_id=0).to_arrow().num_rows == 2
    assert widened.scan(columns=["a"], schema_id=0).to_arrow().num_rows == 3  # c not read at all
    assert widened.scan(filter="c >= 18446744073709551616").to_arrow().num_rows == 0  # long reads every file
