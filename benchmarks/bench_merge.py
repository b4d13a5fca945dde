"""Issue 34: MERGE of 200,000 source rows (half matching) into a 2,000,000-row table, fieldshift's ``merge``
(an unkeyed and a keyed target) against delta-rs' ``merge`` of the same rows, in the same run.

Target: ``id long, a int, b string, f double``, ids 0..N-1 (N = 2,000,000; 200,000 with
``FIELDSHIFT_BENCH_SCALE=small``). Source: N/20 ids drawn from the table and N/20 new ids, new values.
Clauses: update every column when matched, insert when not (``when_matched_update(set="*")
.when_not_matched_insert()``; delta-rs: ``when_matched_update_all().when_not_matched_insert_all()``).
Each timed merge runs on a fresh copy of the table (copied outside the timing). Target: ≤ 1.0×.

Run: ``.venv/bin/python benchmarks/bench_merge.py`` (prints the numbers and writes ``merge.md``), or
through pytest with ``-m ""`` (pytest-benchmark timings).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import fieldshift as fs

pytestmark = [pytest.mark.bench, pytest.mark.slow]

SMALL = os.environ.get("FIELDSHIFT_BENCH_SCALE", "full").strip().lower() == "small"
ROWS = 200_000 if SMALL else 2_000_000


def _rows(ids: np.ndarray, salt: int) -> pa.Table:
    return pa.table({"id": ids, "a": ((ids + salt) % 1000).astype(np.int32),
                     "b": pa.array(np.char.mod("s%d", (ids + salt) % 100)), "f": (ids * 0.5 + salt)})


def source_rows(rows: int = ROWS) -> pa.Table:
    rng = np.random.default_rng(34)
    matched = rng.choice(rows, rows // 20, replace=False).astype(np.int64)
    new = np.arange(rows, rows + rows // 20, dtype=np.int64)
    return _rows(rng.permutation(np.concatenate([matched, new])), 7)


def build(root: Path, rows: int = ROWS) -> dict[str, str]:
    """The three targets (fieldshift unkeyed and keyed, Delta) of the same rows; their directories."""
    from deltalake import write_deltalake

    data = _rows(np.arange(rows, dtype=np.int64), 0)
    plain = fs.Table.create(root / "plain", data.schema)
    plain.append(data)
    key_schema = pa.schema([pa.field("id", pa.int64(), nullable=False), *list(data.schema)[1:]])
    keyed = fs.Table.create(root / "keyed", key_schema, identifier_fields=["id"])
    keyed.append(data.cast(key_schema))
    write_deltalake(str(root / "delta"), data)
    return {"plain": str(root / "plain"), "keyed": str(root / "keyed"), "delta": str(root / "delta")}


def fieldshift_merge(path: str, source: pa.Table) -> Any:
    return fs.Table.open(path).merge(source, on="id").when_matched_update().when_not_matched_insert().execute()


def delta_rs_merge(path: str, source: pa.Table) -> Any:
    from deltalake import DeltaTable

    return (DeltaTable(path).merge(source, predicate="t.id = s.id", source_alias="s", target_alias="t")
            .when_matched_update_all().when_not_matched_insert_all().execute())


@pytest.fixture(scope="module")
def tables() -> Iterator[dict[str, str]]:
    pytest.importorskip("deltalake")
    with tempfile.TemporaryDirectory(prefix="fieldshift-bench-merge-") as d:
        yield build(Path(d))


@pytest.mark.parametrize("case", ["plain", "keyed", "delta"])
def test_merge_200k_into_2m(benchmark: Any, tables: dict[str, str], case: str, tmp_path: Path) -> None:
    benchmark.group = "merge"
    source = source_rows()
    run = delta_rs_merge if case == "delta" else fieldshift_merge
    copies = iter(range(100))

    def setup() -> tuple[tuple[str, pa.Table], dict[str, Any]]:
        target = tmp_path / f"{case}-{next(copies)}"
        shutil.copytree(tables[case], target)
        return (str(target), source), {}

    benchmark.pedantic(run, setup=setup, rounds=3, iterations=1)


def _timed(fn: Callable[[str, pa.Table], Any], original: str, source: pa.Table, scratch: Path,
           rounds: int) -> float:
    times = []
    for i in range(rounds):
        target = scratch / f"{Path(original).name}-{i}"
        shutil.copytree(original, target)
        began = time.perf_counter()
        fn(str(target), source)
        times.append(time.perf_counter() - began)
        shutil.rmtree(target)
    return statistics.median(times)


def main() -> None:
    """Build the targets, time each merge alternately, write ``benchmarks/merge.md``."""
    source = source_rows()
    with tempfile.TemporaryDirectory(prefix="fieldshift-bench-merge-") as d:
        root = Path(d)
        paths = build(root)
        for name in ("plain", "keyed"):  # the same answer as delta-rs'
            check = root / f"check-{name}"
            shutil.copytree(paths[name], check)
            fieldshift_merge(str(check), source)
            shutil.copytree(paths["delta"], root / f"check-delta-{name}")
            delta_rs_merge(str(root / f"check-delta-{name}"), source)
            from deltalake import DeltaTable

            ours = fs.Table.open(check).to_arrow().sort_by("id")
            theirs = DeltaTable(str(root / f"check-delta-{name}")).to_pyarrow_table().sort_by("id")
            assert ours.num_rows == theirs.num_rows == ROWS + ROWS // 20
            assert ours.cast(theirs.schema).equals(theirs), name
        runs: dict[str, list[float]] = {"plain": [], "keyed": [], "delta": []}
        for _ in range(3):
            for case in runs:
                runs[case].append(_timed(delta_rs_merge if case == "delta" else fieldshift_merge, paths[case],
                                         source, root, 2))
    load = os.getloadavg()[0]
    med = {k: statistics.median(v) for k, v in runs.items()}
    lines = ["## Issue 34: merge (`bench_merge.py`)", "",
             f"Run by hand (`.venv/bin/python benchmarks/bench_merge.py`). {ROWS // 10:,} source rows (half matching) "
             f"into {ROWS:,} rows; each merge on a fresh copy, 2 merges per round in 3 alternating rounds, medians. "
             f"1-minute load average at the end: {load:.1f} on {os.cpu_count()} cores.", "",
             "| target | fieldshift | delta-rs `merge` | fieldshift ÷ delta-rs | target |", "|---|---|---|---|---|",
             f"| unkeyed | {med['plain'] * 1000:.0f} ms | {med['delta'] * 1000:.0f} ms | "
             f"{med['plain'] / med['delta']:.2f}× | ≤ 1.0× |",
             f"| keyed (`id`) | {med['keyed'] * 1000:.0f} ms | {med['delta'] * 1000:.0f} ms | "
             f"{med['keyed'] / med['delta']:.2f}× | ≤ 1.0× |"]
    (Path(__file__).parent / "merge.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
