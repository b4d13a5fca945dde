"""A schema change re-checks only the fields it changed; it must accept and refuse exactly what the
whole check (every field of every file's schema) does, and every accepted change must stay readable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fieldshift as fs
from fieldshift.table.evolution.readability import changed_fields, check_readable
from fieldshift.table.evolution.value_check import check_values

TYPES = [pa.int32(), pa.int64(), pa.float64(), pa.string(), pa.binary(), pa.timestamp("us"), pa.date32()]
COLUMNS = ["a", "b", "c"]
ROWS = {"a": pa.array([1, None, 300], pa.int32()), "b": pa.array(["7", "x", None]),
        "c": pa.array([0.5, 2.0, None])}

change = st.one_of(
    st.tuples(st.just("retype"), st.sampled_from(COLUMNS), st.sampled_from(TYPES)),
    st.tuples(st.just("rename"), st.sampled_from(COLUMNS), st.just(None)),
    st.tuples(st.just("add"), st.sampled_from([pa.int64(), pa.string()]), st.booleans()),
    st.tuples(st.just("doc"), st.sampled_from(COLUMNS), st.just(None)),
)


def _whole_check(t: fs.Table, new: fs.Schema) -> bool:
    """The unrestricted check: every file's schema planned and value-checked into ``new``, every field."""
    schemas = {**t.schemas_by_id(), new.schema_id: new}
    pairs = {(sid, new.schema_id): 1 for _, sid in t.catalog.all_data_files(t.table_id)}
    try:
        check_readable(pairs, schemas, t.policy, table=t.name, change="test")
        check_values(t.storage, lambda: t.catalog.all_data_files(t.table_id), t.schemas_by_id(), new, t.policy,
                     table=t.name, change="test")
    except fs.HistoryUnreadableError:
        return False
    return True


def _apply(update: Any, step: tuple[Any, ...], schema: fs.Schema, k: int) -> bool:
    kind, a, b = step
    names = [f.name for f in schema.fields]
    if kind in ("retype", "rename", "doc"):
        live = [n for n in names if n.rstrip("0123456789_") == a]
        if not live:
            return False
        name = live[0]
        if kind == "retype":
            update.update_column(name, b)
        elif kind == "rename":
            update.rename_column(name, f"{a}_{k}")
        else:
            update.update_column(name, doc=f"doc {k}")
    else:
        update.add_column(f"n{k}", a, nullable=not b, default=(7 if a == pa.int64() else "d") if b else None)
    return True


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(change, min_size=1, max_size=6), st.sampled_from(["onehouse", "hudi", "lossless"]))
def test_incremental_checks_agree_with_the_whole_check(tmp_path_factory: pytest.TempPathFactory,
                                                     steps: list[tuple[Any, ...]], policy: str) -> None:
    root: Path = tmp_path_factory.mktemp("inc")
    t = fs.Table.create(root / "t", pa.schema([(n, ROWS[n].type) for n in COLUMNS]), policy=policy)
    t.append(pa.table(ROWS))
    for k, step in enumerate(steps):
        base = t.schema
        update = t.update_schema(policy=fs.CastPolicy.explicit())
        try:
            if not _apply(update, step, base, k):
                continue
            new = update.apply()
        except fs.FieldshiftError:
            continue  # refused by the builder itself: nothing to compare
        whole = _whole_check(t, new)
        assert changed_fields(base, new) <= {f.id for f in new.fields}
        try:
            update.commit()
            accepted = True
        except fs.HistoryUnreadableError:
            accepted = False
        assert accepted == whole, (step, base, new)
        if accepted:
            t.to_arrow()  # the accepted schema reads every file
            t.append(t.to_arrow().slice(0, 1))  # a file in the new schema, for the next change to meet
