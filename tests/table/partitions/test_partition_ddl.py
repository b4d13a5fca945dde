"""Iceberg's Spark SQL partition statements: parsing, carets on errors, and applying them to a table."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.table.partitions.ddl_partitions import (
    apply_partition_alter,
    is_partition_statement,
    parse_partition_alter,
)


@pytest.mark.parametrize(("statement", "canonical"), [
    ("ALTER TABLE db.t ADD PARTITION FIELD hours(ts) AS h", ["ADD PARTITION FIELD hour(ts) AS h"]),
    ("alter table t add partition field bucket(16, id)", ["ADD PARTITION FIELD bucket(16, id)"]),
    ("ADD PARTITION FIELD truncate(name, 4)", ["ADD PARTITION FIELD truncate(4, name)"]),
    ("ADD PARTITION FIELD `a.b`", ["ADD PARTITION FIELD `a.b`"]),
    ("ADD PARTITION FIELD s.region; DROP PARTITION FIELD days(ts)",
     ["ADD PARTITION FIELD s.region", "DROP PARTITION FIELD day(ts)"]),
    ("REPLACE PARTITION FIELD ts_day WITH hours(ts) AS hr", ["REPLACE PARTITION FIELD ts_day WITH hour(ts) AS hr"]),
    ("ALTER TABLE t DROP PARTITION FIELD years(ts)", ["DROP PARTITION FIELD year(ts)"]),
])
def test_statements_parse_to_canonical_changes(statement: str, canonical: list[str]) -> None:
    assert is_partition_statement(statement)
    assert [c.sql() for c in parse_partition_alter(statement)] == canonical


@pytest.mark.parametrize(("statement", "expected"), [
    ("ADD PARTITION FIELD weeks(ts)", "known transform"),
    ("ADD PARTITION hours(ts)", "expected FIELD"),
    ("DROP PARTITION FIELD", "partition field name or term"),
    ("ADD PARTITION FIELD bucket(16, id", "expected '\\)'"),
    ("ADD PARTITION FIELD hours(ts) junk", "';' or the end"),
    ("ADD PARTITION FIELD bucket(1.5, id)", "whole number"),
])
def test_syntax_errors_point_at_the_word(statement: str, expected: str) -> None:
    with pytest.raises(fs.DDLSyntaxError, match=expected) as info:
        parse_partition_alter(statement)
    assert "^" in str(info.value)


def test_schema_statements_are_not_partition_statements() -> None:
    assert not is_partition_statement("ALTER TABLE t ADD COLUMN partition_field int")
    assert not is_partition_statement("DROP COLUMN x")


def test_statements_apply_to_a_table(tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us"))]))
    apply_partition_alter(t.update_spec(), "ALTER TABLE t ADD PARTITION FIELD days(ts); "
                                           "ADD PARTITION FIELD bucket(8, id) AS b").commit()
    assert t.spec.describe(t.schema) == "day(ts) AS ts_day, bucket[8](id) AS b"
    apply_partition_alter(t.update_spec(), "REPLACE PARTITION FIELD days(ts) WITH hours(ts)").commit()
    apply_partition_alter(t.update_spec(), "DROP PARTITION FIELD b").commit()
    assert [s.describe(t.schema) for s in t.specs()] == [
        "unpartitioned", "day(ts) AS ts_day, bucket[8](id) AS b", "hour(ts) AS ts_hour, bucket[8](id) AS b",
        "hour(ts) AS ts_hour"]
    with pytest.raises(fs.PartitionSpecError) as info:
        apply_partition_alter(t.update_spec(), "DROP PARTITION FIELD days(ts)")
    assert "while applying DROP PARTITION FIELD day(ts)" in "\n".join(info.value.__notes__)
    assert len(t.specs()) == 4
