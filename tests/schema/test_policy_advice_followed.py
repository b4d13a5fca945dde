"""Issue 27: every fix a policy refusal advises works when followed (or none is advised).

Map-key narrowing advised "use CastPolicy.explicit()", which refuses it too. Each test below takes a
refusal's advice at its word, follows it, and checks the change then goes through.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.schema.policy import CastPolicy

PRESETS = {"lossless()": CastPolicy.lossless(), "iceberg()": CastPolicy.iceberg(), "hudi()": CastPolicy.hudi(),
           "onehouse()": CastPolicy.onehouse(), "explicit()": CastPolicy.explicit()}
ADVICE = re.compile(r"use CastPolicy\.(\w+\(\))")
TYPES = [pa.int8(), pa.int32(), pa.int64(), pa.uint32(), pa.uint64(), pa.float16(), pa.float32(), pa.float64(),
         pa.decimal128(9, 2), pa.decimal128(38, 10), pa.string(), pa.large_string(), pa.binary(), pa.binary(4),
         pa.bool_(), pa.date32(), pa.timestamp("us"), pa.timestamp("ns", "UTC"), pa.time64("us")]


def _md(i: int) -> dict[str, str]:
    return {"PARQUET:field_id": str(i)}


def _schema(t: pa.DataType, where: str) -> fs.Schema:
    if where == "top":
        f = pa.field("c", t, metadata=_md(1))
    elif where == "key":
        f = pa.field("c", pa.map_(pa.field("key", t, nullable=False, metadata=_md(2)),
                                  pa.field("value", pa.int32(), metadata=_md(3))), metadata=_md(1))
    else:
        f = pa.field("c", pa.list_(pa.field("element", t, metadata=_md(2))), metadata=_md(1))
    return fs.Schema.from_arrow(pa.schema([f]))


def test_map_key_narrowing_advises_no_policy_that_refuses_it() -> None:
    file, read = _schema(pa.int64(), "key"), _schema(pa.int32(), "key")
    for policy in CastPolicy.presets():
        with pytest.raises(fs.SchemaMismatchError) as e:
            fs.plan(file, read, policy=policy)
        (m,) = e.value.mismatches
        assert m.why == "map keys may only widen losslessly" and "CastPolicy" not in m.fix, m
    widened = _schema(pa.int64(), "key")  # what the advice says works: keep the key type, or widen it
    assert fs.plan(_schema(pa.int32(), "key"), widened, policy=CastPolicy.iceberg()) is not None
    assert fs.plan(file, file, policy=CastPolicy.iceberg()) is not None


@pytest.mark.parametrize("where", ["top", "key", "element"])
def test_every_advised_preset_reads_the_change(where: str) -> None:
    """Reads (plans) and schema changes, every pair of types, every preset: a preset advised plans it,
    and a change a builder refuses with advice applies under the advised preset and reads after it."""
    advised = 0
    path = {"top": "c", "key": "c.key", "element": "c.element"}[where]
    for a, b in itertools.permutations(TYPES, 2):
        if where == "key" and (pa.types.is_floating(a) or pa.types.is_floating(b)):
            continue  # Arrow refuses floating map keys here; nothing to advise
        old, new = _schema(a, where), _schema(b, where)
        for policy in CastPolicy.presets():
            try:
                fs.plan(old, new, policy=policy)
            except fs.SchemaMismatchError as e:
                for m in e.mismatches:
                    found = ADVICE.fullmatch(m.fix)
                    if found:
                        advised += 1
                        fs.plan(old, new, policy=PRESETS[found.group(1)])  # raises if the advice is wrong
            try:
                old.update(policy=policy).update_column(path, b).apply()
            except fs.TypeChangeNotAllowedError as e:
                found = ADVICE.search(str(e))
                if found:
                    advised += 1
                    preset = PRESETS[found.group(1)]
                    fs.plan(old, old.update(policy=preset).update_column(path, b).apply(), policy=preset)
    assert advised > (0 if where == "key" else 100)


@pytest.fixture
def longs(tmp_path: Path) -> fs.Table:
    t = fs.Table.create(tmp_path / "t", pa.schema([("x", pa.int64()), ("m", pa.map_(pa.int64(), pa.string()))]))
    t.append(pa.table({"x": pa.array([7], pa.int64()), "m": pa.array([[(1, "a")]], pa.map_(pa.int64(), pa.string()))}))
    return t


def _follow_set_policy(t: fs.Table, text: str) -> CastPolicy:
    found = re.search(r"table\.set_policy\(CastPolicy\.(\w+\(\))\)", text)
    assert found, text
    t.set_policy(PRESETS[found.group(1)])
    return PRESETS[found.group(1)]


def test_a_table_schema_change_refused_by_its_policy_advises_a_policy_that_commits(longs: fs.Table) -> None:
    """On a table the builder's advice is the table's policy (its commit reads every file under it):
    "use CastPolicy.explicit()" led to HistoryUnreadableError."""
    with pytest.raises(fs.TypeChangeNotAllowedError) as e:
        longs.update_schema().update_column("x", pa.int32())
    assert "use CastPolicy" not in str(e.value)
    _follow_set_policy(longs, str(e.value))
    longs.update_schema().update_column("x", pa.int32()).commit()
    assert longs.to_arrow().column("x").to_pylist() == [7] and longs.schema.find("x").type == pa.int32()


def test_history_unreadable_names_a_policy_that_reads_the_files(longs: fs.Table) -> None:
    with pytest.raises(fs.HistoryUnreadableError) as e:
        longs.update_schema(policy=CastPolicy.explicit()).update_column("x", pa.int16()).commit()
    text = str(e.value)
    assert "no snapshot expiry" not in text  # expire_snapshots exists; the files are referenced by live snapshots
    _follow_set_policy(longs, text)
    longs.update_schema().update_column("x", pa.int16()).commit()
    assert longs.to_arrow().column("x").to_pylist() == [7]


def test_on_write_refusals_advise_only_fixes_that_work(longs: fs.Table) -> None:
    strings = pa.table({"x": ["eight"]})
    with pytest.raises(fs.IncompatibleTypeError) as e:
        longs.append(strings)
    text = str(e.value)
    assert "ALTER" not in text and "policy=CastPolicy.onehouse(widen_to_string=True)" in text
    assert "on_incompatible='quarantine'" in text and "Cast the input to long" in text
    longs.append(pa.table({"x": pa.array([8], pa.int64())}))  # cast the input
    longs.append(strings, on_incompatible="quarantine")  # quarantine
    assert len(longs.quarantine()) == 1
    longs.append(strings, policy=CastPolicy.onehouse(widen_to_string=True))  # widen the column as advised
    assert sorted(longs.to_arrow().column("x").to_pylist()) == ["7", "8", "eight"]

    bools = pa.table({"x": [True]})
    with pytest.raises(fs.IncompatibleTypeError) as e:
        longs.append(bools)
    assert "ALTER" not in str(e.value)  # no ALTER under the table's policy makes a boolean column of it
    with pytest.raises(fs.TypeChangeNotAllowedError):
        longs.update_schema().update_column("x", pa.bool_())


def test_a_map_key_on_write_advises_no_widening_that_refuses_it(longs: fs.Table) -> None:
    text_keys = pa.table({"m": pa.array([[("k", "v")]], pa.map_(pa.string(), pa.string()))})
    for policy in (None, CastPolicy.onehouse(widen_to_string=True)):
        with pytest.raises(fs.IncompatibleTypeError, match="map keys may only widen losslessly") as e:
            longs.append(text_keys, policy=policy)
        assert "widen_to_string" not in str(e.value)
    longs.append(text_keys, on_incompatible="quarantine")
    assert len(longs.quarantine()) == 1 and longs.scan().count() == 1


def test_a_failing_checked_cast_advises_what_reads_it() -> None:
    file = fs.Schema.from_arrow(pa.schema([pa.field("d", pa.string(), metadata=_md(1))]))
    read = fs.Schema.from_arrow(pa.schema([pa.field("d", pa.date32(), metadata=_md(1))]))
    batch = pa.RecordBatch.from_pylist([{"d": "2024-01-02"}, {"d": "not a date"}], schema=file.to_arrow())
    with pytest.raises(fs.CastValueError, match=r"CastPolicy\.explicit\(on_error='null'\).*apply_split"):
        fs.plan(file, read, policy=CastPolicy.hudi()).apply(batch)
    nulled = fs.plan(file, read, policy=CastPolicy.explicit(on_error="null")).apply(batch)
    assert nulled.column(0).null_count == 1
    good, bad = fs.plan(file, read, policy=CastPolicy.hudi()).apply_split(batch)
    assert good.num_rows == 1 and bad.num_rows == 1
