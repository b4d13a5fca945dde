"""Footers converted and checked once per shape (``OpenScan.footer_shapes``, ``files/footer_shapes``): the same rows
in the same order, and the same errors, as converting and checking every file's footer on its own; a shape is
reused only for a footer that would give the same Arrow schema. Schema versions' plans kept across scans
(``OpenScan.shared_plans``) read alike too."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fieldshift as fs
from fieldshift.errors import DataFileError
from fieldshift.table.files import footer_shapes
from fieldshift.table.files.footer_shapes import FileShapes
from fieldshift.table.scan import open_scan
from tests.table.scan.scan_switches import data_path

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.int32()), ("s", pa.string()),
                    ("st", pa.struct([("x", pa.int32()), ("y", pa.string())]))])


def _rows(lo: int, n: int, wide: bool = False) -> pa.Table:
    ids = np.arange(lo, lo + n)
    return pa.table({"id": ids, "a": pa.array(ids % 50, pa.int64() if wide else pa.int32()),
                     "s": [None if i % 7 == 0 else f"s{i % 13}" for i in ids],
                     "st": pa.array([{"x": int(i % 5), "y": f"y{i}"} for i in ids],
                                    pa.struct([("x", pa.int32()), ("y", pa.string())]))})


def _table(tmp_path: Path) -> fs.Table:
    """Twelve small files under three schema versions (a widening, a rename, an added column)."""
    table = fs.Table.create(tmp_path / "t", SCHEMA)
    for i in range(4):
        table.append(_rows(i * 100, 100))
    table.update_schema().update_column("a", pa.int64()).rename_column("s", "label").commit()
    for i in range(4, 8):
        table.append(_rows(i * 100, 100, wide=True).rename_columns(["id", "a", "label", "st"]))
    table.update_schema().add_column("e", pa.int32()).commit()
    for i in range(8, 12):
        rows = _rows(i * 100, 100, wide=True).rename_columns(["id", "a", "label", "st"])
        table.append(rows.append_column("e", pa.array(np.arange(100), pa.int32())))
    return table


def _reads(table: fs.Table, shapes: bool, **options: object) -> tuple[pa.Table, pa.Table]:
    scan = table.scan(**options)  # type: ignore[arg-type]
    scan.pipeline().footer_shapes = shapes
    got = scan.to_arrow()
    scan = table.scan(**options)  # type: ignore[arg-type]
    scan.pipeline().footer_shapes = shapes
    return got, pa.Table.from_batches(list(scan.to_batches()), schema=got.schema)


def test_shapes_read_the_same_rows_and_check_once_per_schema_version(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path)
    checks: list[str] = []
    original = footer_shapes.check_file_columns
    monkeypatch.setattr(footer_shapes, "check_file_columns",
                        lambda path, found, expected: (checks.append(str(path)), original(path, found, expected)))
    fast = _reads(table, True)
    assert len(checks) == 2 * 3 * 2  # two scans; per schema version, its first two files (a shape is kept from the 2nd)
    slow = _reads(table, False)
    assert len(checks) == 2 * 3 * 2  # the path without shapes checks every file itself
    for got, want in zip(fast, slow, strict=True):
        assert got.equals(want) and got.num_rows == 1_200
    assert fast[0].column("e").null_count == 800 and fast[0].column("a").type == pa.int64()
    for options in ({"columns": ["label", "id"]}, {"filter": "a < 10"}, {"columns": ["e"], "limit": 250}):
        for got, want in zip(_reads(table, True, **options), _reads(table, False, **options), strict=True):
            assert got.equals(want)


def _parquet(table: pa.Table, metadata: dict[bytes, bytes] | None = None) -> pq.ParquetFile:
    out = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(metadata) if metadata else table, out)
    return pq.ParquetFile(pa.BufferReader(out.getvalue()))


def _with_ids(*fields: pa.Field) -> pa.Schema:
    return pa.schema([f.with_metadata({b"PARQUET:field_id": str(i + 1).encode()}) for i, f in enumerate(fields)])


def test_a_shape_is_reused_only_for_footers_that_convert_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """Footers one conversion apart: a field id, a nested child's type, a string layout only the stored Arrow schema
    tells (the same Parquet schema), a time zone likewise, the schema's own metadata. Each gets its own Arrow schema,
    exactly the one pyarrow converts for it; the same footer again reuses the first."""
    base = _with_ids(pa.field("id", pa.int64()), pa.field("s", pa.string()),
                     pa.field("st", pa.struct([("x", pa.int32())])), pa.field("t", pa.timestamp("us", "UTC")))
    rows = {"id": [1, 2], "s": ["a", None], "st": [{"x": 1}, None], "t": [0, 1]}
    variants = [
        base,
        base.set(0, pa.field("id", pa.int64(), metadata={b"PARQUET:field_id": b"9"})),
        base.set(2, base.field("st").with_type(pa.struct([("x", pa.int64())]))),
        base.set(1, base.field("s").with_type(pa.large_string())),
        base.set(3, base.field("t").with_type(pa.timestamp("us", "Europe/Paris"))),
    ]
    files = [_parquet(pa.table(rows, schema=s)) for s in variants]
    files.append(_parquet(pa.table(rows, schema=base), {b"note": b"other"}))
    assert files[3].metadata.schema.equals(files[0].metadata.schema)  # the layout is in the stored schema only
    monkeypatch.setattr(footer_shapes, "MAX_SHAPES", 16)
    shapes = FileShapes()
    kept = []
    for _ in range(3):  # a key's shapes are kept from its second file on
        seen = []
        for pf in files:
            expected = pf.schema_arrow  # every file passes its own check: only the conversion is compared
            shape = shapes.shape(0, "f", pf, expected)
            assert shape.found.equals(pf.schema_arrow, check_metadata=True)
            seen.append(shape)
        assert len({id(s) for s in seen}) == len(files)
        kept.append(seen)
    assert all(a is b for a, b in zip(kept[1], kept[2], strict=True))  # every footer found its own shape again


def test_shapes_kept_are_bounded() -> None:
    """A scan keeps the shapes of at most ``MAX_KEYS`` keys (each holds its file's parsed footer)."""
    pf = _parquet(pa.table({"id": [1]}))
    shapes = FileShapes()
    for key in range(footer_shapes.MAX_KEYS + 10):
        for _ in range(3):
            shapes.shape(key, "f", pf, pf.schema_arrow)
    assert len(shapes._known) == footer_shapes.MAX_KEYS and 0 not in shapes._known


def _replace(table: fs.Table, index: int, rows: pa.Table) -> None:
    victim = data_path(table, table.scan().live_files()[index])
    pq.write_table(rows, victim)


def _outcome(table: fs.Table, shapes: bool) -> tuple[str, str] | pa.Table:
    try:
        return _reads(table, shapes)[0]
    except Exception as e:  # the two paths must fail alike
        return type(e).__name__, str(e)


@pytest.mark.parametrize("change", ["nested child", "missing column", "field id"])
def test_a_replaced_file_fails_or_reads_as_without_shapes(tmp_path: Path, change: str) -> None:
    """A file replaced under the same schema id after another file of that version was checked: one nested field
    apart, a column missing, another field id. The scan fails (or reads) exactly as without shapes."""
    table = _table(tmp_path)
    original = pq.read_table(Path(table.location) / table.scan().live_files()[1].path)
    schema = original.schema
    if change == "nested child":
        st = schema.field("st")
        child = pa.struct([st.type.field(0).with_type(pa.int64()), st.type.field(1)])
        rows = original.set_column(3, st.with_type(child), original.column("st").cast(child))
    elif change == "missing column":
        rows = original.drop_columns(["s"])
    else:
        rows = original.replace_schema_metadata(None)
        rows = pa.Table.from_arrays(rows.columns, schema=schema.set(1, schema.field("a").with_metadata(
            {b"PARQUET:field_id": b"77"})))
    _replace(table, 3, rows)  # the fourth file of its version: read after the version's shape was kept
    fast, slow = _outcome(table, True), _outcome(table, False)
    if isinstance(fast, pa.Table):
        assert isinstance(slow, pa.Table) and fast.equals(slow)
    else:
        assert fast == slow
    if change != "nested child":
        assert isinstance(fast, tuple) and fast[0] == DataFileError.__name__


def test_version_plans_shared_across_scans_read_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Schema versions' plans kept across scans (``OpenScan.shared_plans``): the same rows as each scan planning
    its versions itself, for other columns, filters, an older snapshot and after the schema changed again; a
    second scan of the same read plans nothing."""
    table = _table(tmp_path)
    built: list[int] = []
    original = open_scan._version_plan
    monkeypatch.setattr(open_scan, "_version_plan",
                        lambda fsch, rs, policy: (built.append(fsch.schema_id), original(fsch, rs, policy))[1])
    first = next(s.snapshot_id for s in table.history() if s.schema_id == 0 and s.operation == "append")

    def reads(shared: bool) -> list[pa.Table]:
        out = []
        for options in ({}, {"columns": ["label", "id"]}, {"filter": "a < 10"}, {"columns": ["e", "st"]},
                        {"snapshot_id": first}):
            scan = table.scan(**options)  # type: ignore[arg-type]
            scan.pipeline().shared_plans = shared
            out.append(scan.to_arrow())
        return out

    plain = reads(False)
    assert len(built) == 3 + 3 + 3 + 3 + 1  # every scan plans each of its versions
    built.clear()
    assert all(a.equals(b) for a, b in zip(reads(True), plain, strict=True))
    built.clear()
    assert all(a.equals(b) for a, b in zip(reads(True), plain, strict=True)) and built == []  # all kept
    table.update_schema().rename_column("label", "tag").commit()
    scan = table.scan()
    got = scan.to_arrow()
    assert got.column_names == ["id", "a", "tag", "st", "e"] and sorted(built) == [0, 1, 2]  # a new read schema
    slow = table.scan()
    slow.pipeline().shared_plans = False
    assert got.equals(slow.to_arrow())


def test_version_plans_kept_across_scans_are_bounded_by_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plans kept across scans are bounded by their columns, as the plan cache is (``plan_columns``): a count
    alone let 4,096 plans of 2,000-column versions (~1.2 MB each) stay alive after ``clear_plan_cache``."""
    from fieldshift.planner.cache import plan_columns
    from fieldshift.schema.model import Schema

    monkeypatch.setattr(open_scan, "_VERSION_PLANS", {})
    monkeypatch.setattr(open_scan, "_version_plan_columns", 0, raising=False)
    monkeypatch.setattr(open_scan, "MAX_VERSION_PLAN_COLUMNS", 300, raising=False)

    def version(k: int) -> Schema:
        return Schema.from_arrow(_with_ids(*[pa.field(f"c{i}", pa.int32()) for i in range(30 + k)]), schema_id=k)

    read = version(10)
    versions = [version(k) for k in range(10)]
    for v in versions:
        _, p = open_scan._shared_version_plan(v, read, None)
        assert p.output_schema.names == read.names
    kept = open_scan._VERSION_PLANS
    assert 0 < sum(plan_columns(entry[1][1]) for entry in kept.values()) <= 300
    assert any(entry[0] is versions[-1] for entry in kept.values())  # the newest is kept, the oldest went first
    assert all(entry[0] is not versions[0] for entry in kept.values())
