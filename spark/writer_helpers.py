"""``fieldshift.spark.write``: a DataFrame into a fieldshift table, fieldshift's errors raised as themselves.

The same as ``df.write.format("fieldshift").mode(mode).options(...).save(location)``, except that a
refusal (a type the table's policy cannot take, a commit conflict) is raised as the fieldshift
exception with its message first instead of a Spark error whose last line holds it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from fieldshift.options import OnIncompatible, check_option
from fieldshift.schema.policy import CastPolicy
from fieldshift.spark.errors_bridge import fieldshift_errors
from fieldshift.table.files.storage import location_key

__all__ = ["write"]


def write(df: Any, location: str | Path, *, mode: Literal["append", "overwrite"] = "append",
          on_incompatible: OnIncompatible = "fail", evolve: bool = True, policy: CastPolicy | str | None = None,
          catalog: str | None = None, table: str | None = None,
          operation: Literal["append", "upsert", "delete"] = "append", partial: bool = False) -> None:
    """Append ``df``'s rows to the table at ``location`` (or replace its rows: ``mode="overwrite"``).

    Executors write the files, the driver commits them in one transaction (all or nothing); the
    table schema evolves on write unless ``evolve=False``; ``on_incompatible="quarantine"`` sets rows
    that cannot fit aside. A location without a table gets one, with ``df``'s schema. On a keyed table
    ``operation="upsert"`` / ``"delete"`` (option ``operation``) upserts or deletes by key, and
    ``partial=True`` (option ``partial``) makes an upsert partial-column, as ``Table.upsert(partial=True)``:
    the columns ``df`` lacks keep each key's current values.
    """
    check_option("mode", mode, Literal["append", "overwrite"])
    check_option("on_incompatible", on_incompatible, OnIncompatible)
    check_option("operation", operation, Literal["append", "upsert", "delete"])
    from fieldshift.spark import require_pyspark

    require_pyspark()
    from fieldshift.spark.datasource import FORMAT, register

    register(df.sparkSession)
    writer = df.write.format(FORMAT).mode(mode).option("on_incompatible", on_incompatible)
    writer = writer.option("evolve", str(evolve).lower()).option("operation", operation)
    if partial:
        writer = writer.option("partial", "true")
    if policy is not None:
        writer = writer.option("policy", policy if isinstance(policy, str) else policy.option_name)
    if catalog is not None:
        writer = writer.option("catalog", catalog)
    if table is not None:
        writer = writer.option("table", table)
    with fieldshift_errors():
        writer.save(str(location_key(location)))
