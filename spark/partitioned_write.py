"""The Spark writer's partitioning: the spec is fixed on the driver, every task splits its own rows by it.

Tasks write one or more files per partition they meet (each file recording its spec id and partition
values) and the driver commits them all at once, as for an unpartitioned table. A new table written
by Spark takes its spec from the ``partition_by`` option: terms separated by ``;`` or top-level commas
(``"days(ts), bucket(16, id)"``).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from fieldshift.schema.model import Schema
from fieldshift.table.evolution.on_write import WritePlan
from fieldshift.table.evolution.partition_evolution import check_schema_change
from fieldshift.table.files.storage import TableStorage
from fieldshift.table.metadata import TableMetadata
from fieldshift.table.partitions.partition_write import write_partitioned
from fieldshift.table.partitions.partitioning import UNPARTITIONED, PartitionSpec, build_spec
from fieldshift.table.records import DataFile
from fieldshift.table.table import MAX_FILE_ROWS

__all__ = ["split_terms", "write_partition_files", "writer_spec"]


def split_terms(text: str) -> list[str]:
    """``"days(ts), bucket(16, id)"`` -> ``["days(ts)", "bucket(16, id)"]`` (commas inside calls stay)."""
    terms, depth, current = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch in ",;" and depth == 0:
            terms.append(current.strip())
            current = ""
        else:
            current += ch
    terms.append(current.strip())
    return [t for t in terms if t]


def writer_spec(metadata: TableMetadata | None, base: Schema, plan: WritePlan, options: Any) -> PartitionSpec:
    """The spec tasks write with: the table's current one (checked against an evolving write), or a new
    table's from ``partition_by``."""
    if metadata is None:
        terms = split_terms(str(options.get("partition_by") or ""))
        return build_spec(base, terms) if terms else UNPARTITIONED
    spec = metadata.spec
    if plan.evolved:
        check_schema_change(spec, base, plan.schema, table=metadata.name)
    return spec


def write_partition_files(location: TableStorage, plan: WritePlan, spec: PartitionSpec,
                          good: pa.Table) -> list[DataFile]:
    """Write a task's rows split by ``spec``; a failure removes the files this call wrote."""
    return write_partitioned(location, plan.schema, spec, good, [], MAX_FILE_ROWS)
