"""String options are Literal types, checked once, refused with InvalidOptionError; dead kernels are gone."""

from __future__ import annotations

from pathlib import Path
from typing import get_args, get_type_hints

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.kernels import kernel_names
from fieldshift.options import MatchMode, OnError, OnIncompatible
from fieldshift.table.evolution.on_write import plan_write

SCHEMA = fs.Schema([fs.Field(1, "a", pa.int32())])


@pytest.mark.parametrize(("fn", "option", "values"), [
    (fs.evolve, "match", ("id", "name")),
    (fs.plan, "match", ("id", "name")),
    (fs.CastPolicy.explicit, "on_error", ("raise", "null")),
    (fs.Table.append, "on_incompatible", ("fail", "quarantine")),
    (fs.Table.overwrite, "on_incompatible", ("fail", "quarantine")),
])
def test_string_options_are_literal_types(fn: object, option: str, values: tuple[str, ...]) -> None:
    assert get_args(get_type_hints(fn)[option]) == values


def test_an_unknown_cast_error_mode_is_refused() -> None:
    with pytest.raises(fs.InvalidOptionError, match=r"on_error must be 'raise' or 'null', got 'ignore'"):
        fs.CastPolicy.explicit("ignore")  # type: ignore[arg-type]
    assert get_args(OnError) == ("raise", "null")


def test_an_unknown_match_mode_is_refused() -> None:
    batch = pa.RecordBatch.from_pylist([{"a": 1}])
    with pytest.raises(fs.InvalidOptionError, match=r"match must be 'id' or 'name', got 'position'"):
        fs.evolve(batch, SCHEMA, match="position")  # type: ignore[arg-type]
    assert get_args(MatchMode) == ("id", "name")


def test_an_unknown_on_incompatible_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    table = fs.Table.create(tmp_path / "t", SCHEMA)
    data = pa.table({"a": pa.array([1, 2], pa.int32())})
    with pytest.raises(fs.InvalidOptionError, match=r"on_incompatible must be 'fail' or 'quarantine', got 'skip'"):
        table.append(data, on_incompatible="skip")  # type: ignore[arg-type]
    assert fs.Table.open(tmp_path / "t").scan().to_arrow().num_rows == 0
    with pytest.raises(ValueError, match="on_incompatible"):  # still a ValueError for code catching that
        plan_write(data.schema, SCHEMA, evolve=True, on_incompatible="skip")  # type: ignore[arg-type]
    assert get_args(OnIncompatible) == ("fail", "quarantine")


def test_only_kernels_plans_look_up_are_registered() -> None:
    """Constant columns and layout conformance are called directly, never by name from a plan."""
    assert not {"constant", "conform"} & set(kernel_names())
