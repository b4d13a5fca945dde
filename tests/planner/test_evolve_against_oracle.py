"""The engine against a row-at-a-time oracle, over random nested schemas and random change histories.

For every schema version of a random history (>= 10 changes made with ``Schema.update()``: adds at
the top level and inside structs, list-element structs and map-value structs, with and without
defaults; drops; renames; lossless widenings; drop-then-re-add of a name; moves; relaxed
nullability), random data written with that version must read, under the current schema, exactly as
the oracle in ``tests/oracle.py`` says, whatever the input shape (table, batch, slices, chunks).
Plans must also pickle, identity plans must hand back the very object, and rename-only plans must
share the input's buffers.
"""

from __future__ import annotations

import pickle
import random
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import fieldshift as fs
from fieldshift import ListType, Schema
from tests.engine_strategies import LAYOUTS, History, histories, physical_variant, random_table, random_value
from tests.oracle import missing_value, oracle_evolve

SETTINGS = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _note_history(history: History) -> None:
    note(f"start:\n{history.schemas[0]}")
    for i, change in enumerate(history.changes, 1):
        note(f"v{i}: {'; '.join(change)}")
    note(f"final:\n{history.final}")



def _shapes(table: pa.Table, rnd: random.Random) -> dict[str, tuple[Any, slice]]:
    """The same rows as a table, a batch, slices of both and a table of uneven chunks."""
    n = table.num_rows
    i = rnd.randint(0, n)
    j = rnd.randint(i, n)
    batch = (
        table.combine_chunks().to_batches()[0] if n else pa.RecordBatch.from_pylist([], schema=table.schema)
    )
    shapes = {
        "table": (table, slice(0, n)),
        "batch": (batch, slice(0, n)),
        "table slice": (table.slice(i, j - i), slice(i, j)),
        "batch slice": (batch.slice(i, j - i), slice(i, j)),
        "chunks": (pa.concat_tables([table.slice(0, i), table.slice(i, j - i), table.slice(j)]), slice(0, n)),
    }
    return shapes


def _constants(rnd: random.Random, old: Schema, final: Schema) -> dict[int, Any]:
    """Constants (as for identity partitions) for some top-level primitive columns the file lacks."""
    out: dict[int, Any] = {}
    for f in final.fields:
        if not old.has_field(f.id) and isinstance(f.type, pa.DataType) and rnd.random() < 0.5:
            out[f.id] = pa.scalar(random_value(rnd, f.with_(nullable=False)), type=f.type).as_py()
    return out


@SETTINGS
@given(history=histories(), seed=st.integers(0, 2**32 - 1))
def test_every_version_reads_like_the_oracle(history: History, seed: int) -> None:
    _note_history(history)
    assert len(history.changes) >= 10
    rnd = random.Random(seed)
    final = history.final
    expected_schema = final.to_arrow()
    for old in history.schemas:
        table = random_table(rnd, old, rnd.randint(0, 10))
        constants = _constants(rnd, old, final) if rnd.random() < 0.3 else {}
        rows = table.to_pylist()
        expected = oracle_evolve(rows, old, final, fs.CastPolicy.lossless(), constants)
        plan = fs.plan(old, final, constants=constants)
        shipped = pickle.loads(pickle.dumps(plan))
        assert shipped == plan
        for shape, (data, rows_slice) in _shapes(table, rnd).items():
            for which, p in (("plan", plan), ("unpickled plan", shipped)):
                out = p.apply(data)
                assert type(out) is type(data)
                assert out.schema.equals(expected_schema, check_metadata=True), (shape, which)
                out.validate(full=True)
                assert out.to_pylist() == expected[rows_slice], (f"v{old.schema_id}", shape, which)
        # evolve() recovers the file schema from the field ids the data carries
        assert fs.evolve(table, final, constants=constants).to_pylist() == expected


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(history=histories(), seed=st.integers(0, 2**32 - 1), layout=st.sampled_from(LAYOUTS))
def test_other_physical_layouts_read_like_the_oracle(history: History, seed: int, layout: str) -> None:
    """The same data as large strings/binaries/lists, string/binary views or dictionaries: the file schema
    comes from the data's own ids and the output is exactly the canonical read schema."""
    _note_history(history)
    rnd = random.Random(seed)
    final = history.final
    for old in history.schemas:
        table = random_table(rnd, old, rnd.randint(1, 8))
        data = physical_variant(table, layout)
        assert data.to_pylist() == table.to_pylist()
        out = fs.evolve(data, final)
        assert out.schema.equals(final.to_arrow(), check_metadata=True)
        out.validate(full=True)
        assert out.to_pylist() == oracle_evolve(table.to_pylist(), old, final), f"v{old.schema_id}"


@SETTINGS
@given(history=histories(min_steps=10, max_steps=12), seed=st.integers(0, 2**32 - 1))
def test_identity_plan_returns_the_same_object(history: History, seed: int) -> None:
    rnd = random.Random(seed)
    final = history.final
    plan = fs.plan(final, final)
    assert plan.identity
    table = random_table(rnd, final, rnd.randint(1, 6))
    batch = table.combine_chunks().to_batches()[0]
    assert plan.apply(table) is table
    assert plan.apply(batch) is batch
    assert fs.evolve(batch, final) is batch
    out, report = plan.apply_with_report(batch)
    assert out is batch and report.total == 0
    assert pickle.loads(pickle.dumps(plan)).apply(batch) is batch


def _buffer_addresses(arr: pa.Array) -> list[int]:
    return [b.address for b in arr.buffers() if b is not None]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    history=histories(min_steps=3, max_steps=6, ops=("rename", "move_top", "relax")),
    seed=st.integers(0, 2**32 - 1),
)
def test_rename_only_plan_shares_buffers(history: History, seed: int) -> None:
    _note_history(history)
    rnd = random.Random(seed)
    final = history.final
    old = history.schemas[0]
    plan = fs.plan(old, final)
    assert plan.rename_only
    batch = random_table(rnd, old, rnd.randint(1, 8)).combine_chunks().to_batches()[0]
    out = plan.apply(batch)
    assert out.schema.equals(final.to_arrow(), check_metadata=True)
    assert out.to_pylist() == oracle_evolve(batch.to_pylist(), old, final)
    position = {f.id: i for i, f in enumerate(old.fields)}
    for i, f in enumerate(final.fields):
        source = batch.column(position[f.id])
        assert _buffer_addresses(out.column(i)) == _buffer_addresses(source), f.name


def test_history_changes_are_real() -> None:
    """The generator really makes the changes the property relies on (guards against a dull generator)."""
    seen: set[str] = set()

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(history=histories())
    def collect(history: History) -> None:
        for change in history.changes:
            for c in change:
                seen.add(c.split()[0])
                if c.startswith("add") and (".element." in c or ".value." in c):
                    seen.add("add-in-container")
                if "re-add" in c:
                    seen.add("re-add")

    collect()
    assert {"add", "drop", "rename", "widen", "move", "make", "re-add", "add-in-container"} <= seen


def test_oracle_fills_missing_fields_in_order() -> None:
    """The oracle's own resolution order (constant, initial default, {} from children, None)."""
    s = fs.Schema([fs.Field(1, "a", pa.int32())])
    t = (
        s.update()
        .add_column("c", pa.int32(), default=7)
        .add_column("s", pa.struct([("x", pa.int32())]), default={})
        .add_column("s.y", pa.string(), default="d")
        .add_column("n", pa.int32())
        .apply()
    )
    rows = oracle_evolve([{"a": 1}], s, t, constants={t.find("n").id: 5})
    assert rows == [{"a": 1, "c": 7, "s": {"x": None, "y": "d"}, "n": 5}]
    assert missing_value(t.find("c"), {t.find("c").id: 9}) == 9


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q"])


# -- value-level casts: number -> string by the oracle, text -> int against Arrow one value at a time ---
INTEGERS = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]


def _int_range(t: pa.DataType) -> tuple[int, int]:
    if pa.types.is_signed_integer(t):
        return -(2 ** (t.bit_width - 1)), 2 ** (t.bit_width - 1) - 1
    return 0, 2**t.bit_width - 1


@settings(max_examples=60, deadline=None)
@given(t=st.sampled_from(INTEGERS), data=st.data(), offset=st.integers(0, 9))
def test_number_to_string_matches_the_oracle(t: pa.DataType, data: st.DataObject, offset: int) -> None:
    lo, hi = _int_range(t)
    values = data.draw(
        st.lists(
            st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0, -1 if lo else 1]), st.none()),
            max_size=60,
        )
    )
    file = Schema([fs.Field(1, "n", t), fs.Field(2, "l", ListType(fs.Field(3, "element", t)))])
    read = Schema(
        [fs.Field(1, "n", pa.string()), fs.Field(2, "l", ListType(fs.Field(3, "element", pa.string())))]
    )
    rows = [{"n": v, "l": None if v is None else [v, None, v]} for v in values]
    batch = pa.RecordBatch.from_pylist(rows, schema=file.to_arrow()).slice(min(offset, len(rows)))
    for policy in (fs.CastPolicy.hudi(), fs.CastPolicy.onehouse()):
        out = fs.plan(file, read, policy=policy).apply(batch)
        assert out.to_pylist() == oracle_evolve(batch.to_pylist(), file, read, policy)


def _arrow_one(value: str, t: pa.DataType) -> Any:
    try:
        return pa.array([value], pa.string()).cast(t, safe=True)[0].as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError):
        return None


TEXT = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.text(alphabet="0123456789+- .eExa_", max_size=22),
    st.none(),
)


@settings(max_examples=60, deadline=None)
@given(
    t=st.sampled_from(INTEGERS),
    values=st.lists(st.lists(TEXT, max_size=4) | st.none(), max_size=30),
    offset=st.integers(0, 9),
)
def test_checked_text_to_int_fails_exactly_the_values_arrow_refuses(
    t: pa.DataType, values: list[Any], offset: int
) -> None:
    """explicit(on_error='null') inside list elements: each value reads as Arrow's own cast of it alone; the
    report counts exactly the refused values and names their top-level rows; apply_split partitions rows."""
    file = Schema(
        [fs.Field(1, "id", pa.int32()), fs.Field(2, "l", ListType(fs.Field(3, "element", pa.string())))]
    )
    read = Schema([fs.Field(1, "id", pa.int32()), fs.Field(2, "l", ListType(fs.Field(3, "element", t)))])
    rows = [{"id": i, "l": v} for i, v in enumerate(values)]
    batch = pa.RecordBatch.from_pylist(rows, schema=file.to_arrow()).slice(min(offset, len(rows)))
    rows = batch.to_pylist()
    expected = [
        {
            "id": r["id"],
            "l": None if r["l"] is None else [None if v is None else _arrow_one(v, t) for v in r["l"]],
        }
        for r in rows
    ]
    failing = [
        (i, v)
        for i, r in enumerate(rows)
        for v in (r["l"] or [])
        if v is not None and _arrow_one(v, t) is None
    ]
    out, report = fs.plan(file, read, policy=fs.CastPolicy.explicit("null")).apply_with_report(batch)
    assert out.to_pylist() == expected
    assert report.total == len(failing)
    bad_rows = sorted({i for i, _ in failing})
    assert (report.rows["l.element"].tolist() if failing else []) == bad_rows
    plan = fs.plan(file, read, policy=fs.CastPolicy.explicit())
    if failing:
        with pytest.raises(fs.CastValueError) as info:
            plan.apply(batch)
        assert (info.value.path, info.value.row, info.value.value) == ("l.element", *failing[0])
    good, bad = plan.apply_split(batch)
    assert [r["id"] for r in bad.to_pylist()] == [rows[i]["id"] for i in bad_rows]
    assert good.to_pylist() == [e for i, e in enumerate(expected) if i not in set(bad_rows)]
