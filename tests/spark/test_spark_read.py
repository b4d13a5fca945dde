"""Seed scenarios read through mapInArrow, the data source and ``fieldshift.spark.read`` in real Spark.

Each route must equal the standalone engine (``Table.scan().to_arrow()``) value for value and type
for type (in Spark's types).
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from conftest import assert_same, rows, spark_arrow

import fieldshift as fs
from fieldshift.spark import evolve, evolve_batch, plan_read, read, schema_to_spark

pytestmark = pytest.mark.spark

UTC = dt.UTC


def _struct(t: fs.Table, path: str) -> pa.DataType:
    return t.schema.find(path).to_arrow().type


# ------------------------------------------------------------------------------------------------
# the seed scenarios as small tables (several files, several schema versions each)
# ------------------------------------------------------------------------------------------------
def table_store(loc: Path) -> tuple[fs.Table, fs.CastPolicy | None]:
    """Flink Table Store FLIP: T(a, b, c); drop c; add c -> old rows read NULL for c."""
    t = fs.Table.create(loc, pa.schema([("a", pa.string()), ("b", pa.string()), ("c", pa.string())]))
    t.append({"a": ["a1"], "b": ["b1"], "c": ["c1"]})
    t.update_schema().drop_column("c").commit()
    t.update_schema().add_column("c", pa.string()).commit()
    t.append({"a": ["a2"], "b": ["b2"], "c": ["c2"]})
    return t, None


def hudi_trips(loc: Path) -> tuple[fs.Table, fs.CastPolicy | None]:
    """Hudi quickstart: add newField and widen intToLong int -> long on write."""
    schema = pa.schema([("rowId", pa.string()), ("partitionId", pa.string()), ("preComb", pa.int64()),
                        ("name", pa.string()), ("versionId", pa.string()), ("intToLong", pa.int32())])
    t = fs.Table.create(loc, schema)
    t.append(pa.table({"rowId": ["row_1", "row_2", "row_3"], "partitionId": ["part_0"] * 3,
                       "preComb": [0, 0, 0],
                       "name": ["bob", "john", "tom"], "versionId": ["v_0"] * 3,
                       "intToLong": pa.array([0, 0, 0], pa.int32())}, schema=schema))
    t.append(pa.table({"rowId": ["row_2", "row_5", "row_9"], "partitionId": ["part_0"] * 3,
                       "preComb": [5, 5, 5],
                       "name": ["john", "maroon", "michael"], "versionId": ["v_3", "v_2", "v_2"],
                       "intToLong": pa.array([3, 2**40, 2], pa.int64()), "newField": ["newField_1"] * 3}))
    return t, None


def ducklake(loc: Path) -> tuple[fs.Table, fs.CastPolicy | None]:
    """DuckLake: defaults, nested add/rename/drop, int8 -> int16 -> int32 -> int64, float -> double."""
    st = pa.struct([("x", pa.int32()), ("w", pa.string())])
    schema = pa.schema([("c", pa.int8()), ("f", pa.float32()), ("s", st)])
    t = fs.Table.create(loc, schema)
    t.append(pa.table({"c": pa.array([-1, 127, None], pa.int8()),
                       "f": pa.array([0.5, float("nan"), None], pa.float32()),
                       "s": [{"x": 1, "w": "p"}, None, {"x": None, "w": None}]}, schema=schema))
    (t.update_schema().add_column("v", pa.string(), default="my_default")
     .add_column("s.new_field", pa.int32()).rename_column("s.x", "y").commit())
    t.update_schema().update_column("c", pa.int16()).commit()
    t.append(pa.table({"c": pa.array([300], pa.int16()), "f": pa.array([1.25], pa.float32()),
                       "s": pa.array([{"y": 2, "w": "q", "new_field": 5}], _struct(t, "s")),
                       "v": ["given"]}, schema=t.schema.to_arrow()))
    for target in (pa.int32(), pa.int64()):
        t.update_schema().update_column("c", target).commit()
    t.update_schema().update_column("f", pa.float64()).drop_column("s.w").commit()
    t.update_schema().add_column("s.d", pa.int32(), default=7).commit()  # a nested default: not native
    t.append(pa.table({"c": pa.array([2**40], pa.int64()), "f": pa.array([-0.0], pa.float64()),
                       "s": pa.array([{"y": 3, "new_field": None, "d": 8}], _struct(t, "s")),
                       "v": [None]}, schema=t.schema.to_arrow()))
    return t, None


def onehouse(loc: Path) -> tuple[fs.Table, fs.CastPolicy | None]:
    """Onehouse: col1 Int, then Long arrives and widens the table; Int is cast up; strings quarantined."""
    t = fs.Table.create(loc, pa.schema([("k", pa.string()), ("col1", pa.int32())]))
    t.append(pa.table({"k": ["r0"], "col1": pa.array([7], pa.int32())}))
    t.append(pa.table({"k": ["r1"], "col1": pa.array([2**40], pa.int64())}))
    t.append(pa.table({"k": ["r2"], "col1": pa.array([3], pa.int32())}))
    t.append(pa.table({"k": ["r3", "r4"], "col1": ["text", "12"]}), on_incompatible="quarantine")
    return t, None


def renames(loc: Path) -> tuple[fs.Table, fs.CastPolicy | None]:
    """Renames by id: top level, nested, and two columns swapping names."""
    st = pa.struct([("x", pa.int32()), ("y", pa.string())])
    t = fs.Table.create(loc, pa.schema([("a", pa.int32()), ("b", pa.string()), ("s", st)]))
    t.append(pa.table({"a": pa.array([1, 2], pa.int32()), "b": ["one", "two"],
                       "s": pa.array([{"x": 10, "y": "ten"}, None], st)}))
    t.update_schema().rename_column("a", "alpha").rename_column("s.x", "ex").commit()
    t.append(pa.table({"alpha": pa.array([3], pa.int32()), "b": ["three"],
                       "s": pa.array([{"ex": 30, "y": "thirty"}], _struct(t, "s"))}),
             evolve=False)
    (t.update_schema().rename_column("alpha", "tmp").rename_column("b", "alpha").rename_column("tmp", "b")
     .update_column("b", pa.int64()).commit())
    return t, None


def drop_readd(loc: Path) -> tuple[fs.Table, fs.CastPolicy | None]:
    """Drop and re-add a name: old files never show the dropped values; the new column has a default."""
    t = fs.Table.create(loc, pa.schema([("k", pa.int64()), ("n", pa.int32())]))
    t.append(pa.table({"k": [1, 2], "n": pa.array([10, 20], pa.int32())}))
    t.update_schema().drop_column("n").commit()
    t.update_schema().add_column("n", pa.int32(), default=-1).commit()
    t.append(pa.table({"k": [3], "n": pa.array([30], pa.int32())}))
    return t, None


def hudi_matrix(loc: Path) -> tuple[fs.Table, fs.CastPolicy | None]:
    """Hudi's read-side matrix (int -> string, float -> string, long -> double), read as CastPolicy.hudi()."""
    t = fs.Table.create(loc, pa.schema([("i", pa.int32()), ("g", pa.float32()), ("l", pa.int64())]))
    t.append(pa.table({"i": pa.array([1, None, -5], pa.int32()),
                       "g": pa.array([1.5, 2.0, None], pa.float32()),
                       "l": [2**53, 3, None]}))
    hudi = fs.CastPolicy.hudi()
    (t.update_schema(policy=hudi).update_column("i", pa.string()).update_column("g", pa.string())
     .update_column("l", pa.float64()).commit())
    t.append(pa.table({"i": ["x"], "g": ["y"], "l": [0.25]}), evolve=False)
    return t, hudi


def spark_types(loc: Path) -> tuple[fs.Table, fs.CastPolicy | None]:
    """Types Spark holds differently: unsigned, large layouts, fixed binary, decimals, zones, maps."""
    schema = pa.schema([
        ("u8", pa.uint8()), ("u32", pa.uint32()), ("u64", pa.uint64()), ("ls", pa.large_string()),
        ("lb", pa.large_binary()), ("fb", pa.binary(2)), ("ll", pa.large_list(pa.int16())),
        ("d", pa.decimal128(12, 3)), ("ts", pa.timestamp("ms", tz="UTC")), ("ntz", pa.timestamp("us")),
        ("day", pa.date32()), ("m", pa.map_(pa.string(), pa.struct([("q", pa.int8())]))),
        ("ls_of_st", pa.list_(pa.struct([("e", pa.float32())]))),
    ])
    data = pa.table({
        "u8": pa.array([255, 0], pa.uint8()), "u32": pa.array([2**32 - 1, None], pa.uint32()),
        "u64": pa.array([2**64 - 1, 0], pa.uint64()), "ls": pa.array(["x", None], pa.large_string()),
        "lb": pa.array([b"\x00\xff", b""], pa.large_binary()), "fb": pa.array([b"ab", None], pa.binary(2)),
        "ll": pa.array([[1, None], []], pa.large_list(pa.int16())),
        "d": pa.array([decimal.Decimal("-123456789.123"), None], pa.decimal128(12, 3)),
        "ts": pa.array([dt.datetime(1960, 1, 1, 0, 0, 0, 1000, tzinfo=UTC), None],
                       pa.timestamp("ms", tz="UTC")),
        "ntz": pa.array([dt.datetime(2024, 2, 29, 23, 59, 59, 999999), None], pa.timestamp("us")),
        "day": pa.array([dt.date(1, 1, 1), dt.date(9999, 12, 31)], pa.date32()),
        "m": pa.array([[("k", {"q": 1})], None], pa.map_(pa.string(), pa.struct([("q", pa.int8())]))),
        "ls_of_st": pa.array([[{"e": float("nan")}, None], [{"e": -0.0}]],
                             pa.list_(pa.struct([("e", pa.float32())]))),
    }, schema=schema)
    t = fs.Table.create(loc, schema)
    t.append(data, evolve=False)
    (t.update_schema().update_column("u8", pa.int32()).update_column("u32", pa.int64())
     .update_column("ts", pa.timestamp("us", tz="UTC")).update_column("ll.element", pa.int64())
     .update_column("m.value.q", pa.int64()).update_column("ls_of_st.element.e", pa.float64())
     .update_column("d", pa.decimal128(20, 3)).rename_column("m", "mm")
     .add_column("added", pa.date32(), default=dt.date(2000, 1, 2)).commit())
    t.append(data.rename_columns([*data.column_names[:11], "mm", "ls_of_st"]), evolve=False)
    return t, None


SCENARIOS: dict[str, Callable[[Path], tuple[fs.Table, fs.CastPolicy | None]]] = {
    f.__name__: f for f in (table_store, hudi_trips, ducklake, onehouse, renames, drop_readd, hudi_matrix,
                            spark_types)
}


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[fs.Table, fs.CastPolicy | None]]:
    root = tmp_path_factory.mktemp("spark_seeds")
    return {name: make(root / name) for name, make in SCENARIOS.items()}


def _policy_option(policy: fs.CastPolicy | None) -> dict[str, str]:
    return {} if policy is None else {"policy": policy.name}


# ------------------------------------------------------------------------------------------------
# the three routes
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SCENARIOS)
def test_map_in_arrow_equals_engine(spark: Any, tables: dict, name: str) -> None:
    t, policy = tables[name]
    expected = t.scan(policy=policy).to_arrow()
    schemas = t.schemas_by_id()
    frames = []
    for sid in sorted({f.schema_id for f in t.scan().files()}):
        paths = [str(t.location / f.path) for f in t.scan().files() if f.schema_id == sid]
        # Spark reads the old files by name, with no field ids and in Spark's own Arrow types
        frames.append(evolve(spark.read.parquet(*paths), schemas[sid], t.schema, policy))
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other)
    assert_same(df, expected, t.schema)


@pytest.mark.parametrize("name", SCENARIOS)
def test_datasource_equals_engine(spark: Any, tables: dict, name: str) -> None:
    t, policy = tables[name]
    df = spark.read.format("fieldshift").options(**_policy_option(policy)).load(str(t.location))
    assert_same(df, t.scan(policy=policy).to_arrow(), t.schema)


@pytest.mark.parametrize("name", SCENARIOS)
def test_read_equals_engine(spark: Any, tables: dict, name: str) -> None:
    t, policy = tables[name]
    df = read(spark, t.location, policy=policy)
    assert_same(df, t.scan(policy=policy).to_arrow(), t.schema, exact_nullability=False)


def test_read_options_and_the_datasource_route(spark: Any, tables: dict, tmp_path: Path) -> None:
    t, _ = tables["ducklake"]
    first = next(s for s in t.history() if s.operation == "append")
    df = read(spark, t.location, snapshot_id=first.snapshot_id, schema_id=3, columns=["v", "c", "s"])
    expected = t.scan(snapshot_id=first.snapshot_id, schema_id=3, columns=["v", "c", "s"]).to_arrow()
    assert_same(df, expected, t.schemas_by_id()[3].select(["v", "c", "s"]), exact_nullability=False)
    # the groups Spark cannot read natively, through the data source instead of mapInArrow
    via_ds = read(spark, t.location, via="datasource")
    assert_same(via_ds, t.scan().to_arrow(), t.schema, exact_nullability=False)
    # a location with glob characters is read as it is, not expanded
    odd, _ = renames(tmp_path / "t[1]{a,b}*")
    assert_same(read(spark, odd.location), odd.scan().to_arrow(), odd.schema, exact_nullability=False)


def test_read_routes(tables: dict) -> None:
    """Which groups go native: the obstacles named are the ones verified against Spark."""
    routes = {name: plan_read(t, policy=p).reasons for name, (t, p) in tables.items()}
    assert all(why is None for why in routes["hudi_trips"].values())
    assert all(why is None for why in routes["renames"].values())  # swapped names included
    assert all(why is None for why in routes["onehouse"].values())
    assert "name of one it has" in routes["table_store"][0] and routes["table_store"][2] is None
    assert "name of one it has" in routes["drop_readd"][0]
    duck = routes["ducklake"]
    assert all("s.d" in why for why in duck.values() if why), duck  # the nested default
    assert "cannot fill" in duck[min(duck)]
    assert all("not reproduced" in why for why in routes["hudi_matrix"].values() if why)
    assert routes["hudi_matrix"][1] is None


def test_read_is_the_same_with_field_id_reading_off(spark: Any, tables: dict) -> None:
    """The native scans request the files' own names, so a later conf change cannot alter the answer."""
    t, _ = tables["renames"]
    df = read(spark, t.location)
    spark.conf.set("spark.sql.parquet.fieldId.read.enabled", "false")
    try:
        target = spark_arrow(t.schema)
        assert rows(df.toArrow().cast(target)) == rows(t.scan().to_arrow().cast(target))
        assert df.filter("alpha = 'three'").count() == 1 and df.filter("b = 3").count() == 1
    finally:
        spark.conf.set("spark.sql.parquet.fieldId.read.enabled", "true")


# ------------------------------------------------------------------------------------------------
# the data source's options
# ------------------------------------------------------------------------------------------------
def test_datasource_time_travel_schema_and_columns(spark: Any, tables: dict) -> None:
    t, _ = tables["ducklake"]
    first = next(s for s in t.history() if s.operation == "append")
    old = spark.read.format("fieldshift").option("snapshot_id", first.snapshot_id).load(str(t.location))
    assert_same(old, t.scan(snapshot_id=first.snapshot_id).to_arrow(), t.schemas_by_id()[first.schema_id])
    # the first files read as a later schema version (renamed, defaulted, widened)
    later = (spark.read.format("fieldshift").options(snapshot_id=first.snapshot_id, schema_id=3)
             .load(str(t.location)))
    assert_same(later, t.scan(snapshot_id=first.snapshot_id, schema_id=3).to_arrow(), t.schemas_by_id()[3])
    some = spark.read.format("fieldshift").option("columns", "v,c").load(str(t.location))
    assert some.columns == ["v", "c"]
    assert_same(some, t.scan(columns=["v", "c"]).to_arrow(), t.schema.select(["v", "c"]))
    projected = spark.read.format("fieldshift").schema("c bigint, v string").load(str(t.location))
    assert_same(projected, t.scan(columns=["c", "v"]).to_arrow(), t.schema.select(["c", "v"]))


def test_datasource_filters_prune_files_exactly(spark: Any, tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "f", pa.schema([("k", pa.int32()), ("x", pa.float64())]))
    for start in (0, 100, 200):
        t.append(pa.table({"k": pa.array(range(start, start + 100), pa.int32()),
                           "x": [float("nan") if i % 7 == 0 else i / 3 for i in range(start, start + 100)]}))
    t.update_schema().update_column("k", pa.int64()).commit()
    df = spark.read.format("fieldshift").option("max_partitions", 100).load(str(t.location))
    assert df.rdd.getNumPartitions() == 3  # one per file (by default small files share partitions)
    hit = df.filter("k >= 250")
    assert hit.rdd.getNumPartitions() == 1  # two files ruled out by their k statistics
    assert hit.count() == 50
    assert df.filter("k = 5000000000").count() == 0  # a literal outside int32: no wrong pruning
    # NaN: Spark orders it above every number; files with NaN are never pruned on x
    assert df.filter("x > 1000").count() == len([i for i in range(300) if i % 7 == 0])
    assert df.filter("x is null").count() == 0 and df.filter("k in (1, 299)").count() == 2


def test_unreadable_plan_fails_on_the_driver(spark: Any, tables: dict) -> None:
    t, _ = tables["hudi_matrix"]  # int -> string reads under the table's policy; lossless refuses it
    with pytest.raises(Exception, match=r"CastPolicy\.lossless does not allow"):
        spark.read.format("fieldshift").option("policy", "lossless").load(str(t.location)).collect()
    with pytest.raises(fs.SchemaMismatchError):
        read(spark, t.location, policy=fs.CastPolicy.lossless())
    with pytest.raises(fs.SchemaMismatchError):
        evolve_batch(t.schemas_by_id()[0], t.schema)


def test_evolve_batch_pickles_with_its_plan(tables: dict) -> None:
    t, _ = tables["renames"]
    f = evolve_batch(t.schemas_by_id()[0], t.schema)
    g = pickle.loads(pickle.dumps(f))
    assert g.plan == f.plan and g.output_schema == schema_to_spark(t.schema)
    st = pa.struct([("x", pa.int32()), ("y", pa.string())])
    batch = pa.record_batch({"a": pa.array([1], pa.int32()), "b": ["one"],
                             "s": pa.array([{"x": 10, "y": "ten"}], st)})
    out = next(g(iter([batch])))
    assert out.schema.names == ["b", "alpha", "s"] and out.to_pylist() == [
        {"b": 1, "alpha": "one", "s": {"ex": 10, "y": "ten"}}]


# ------------------------------------------------------------------------------------------------
# what the native route relies on, checked against this Spark (vectorized and row readers)
# ------------------------------------------------------------------------------------------------
_WIDENINGS = [  # (file type, read type, values): every pair plan_read sends to Spark's own scan
    (pa.int8(), pa.int16(), [-128, 127, None]), (pa.int8(), pa.int64(), [-128, None]),
    (pa.int16(), pa.int32(), [-32768, None]), (pa.int32(), pa.int64(), [-2**31, 2**31 - 1, None]),
    (pa.uint8(), pa.int16(), [255, None]), (pa.uint16(), pa.int64(), [65535, None]),
    (pa.uint32(), pa.int64(), [2**32 - 1, None]), (pa.int32(), pa.float64(), [2**31 - 1, None]),
    (pa.float32(), pa.float64(), [1.1, float("nan"), -0.0, None]),
    (pa.decimal128(5, 2), pa.decimal128(12, 4), [decimal.Decimal("-999.99"), None]),
    (pa.date32(), pa.timestamp("us"), [dt.date(1970, 1, 2), None]),
    (pa.timestamp("ms", tz="+05:00"), pa.timestamp("us", tz="UTC"),
     [dt.datetime(2020, 1, 1, tzinfo=UTC), None]),
    (pa.large_string(), pa.string(), ["é", None]), (pa.binary(3), pa.binary(), [b"abc", None]),
    (pa.uint64(), pa.uint64(), [2**64 - 1, None]),
]
_DEFAULTS = [  # top-level initial defaults Spark fills from EXISTS_DEFAULT
    (pa.int8(), -5), (pa.int64(), -2**63), (pa.uint32(), 2**32 - 1), (pa.float32(), 1.1),
    (pa.float64(), float("-inf")), (pa.decimal128(10, 3), decimal.Decimal("-1.500")), (pa.bool_(), False),
    (pa.string(), "it's \\ \"q\" ünï"), (pa.date32(), dt.date(1960, 1, 1)),
    (pa.timestamp("us", tz="UTC"), dt.datetime(1960, 1, 1, 1, 2, 3, 4, tzinfo=UTC)),
    (pa.timestamp("us"), dt.datetime(2020, 1, 1, 1, 2, 3, 4)),
]


@pytest.mark.parametrize("vectorized", ["true", "false"])
def test_native_route_matches_engine_for_every_supported_change(spark: Any, tmp_path: Path,
                                                                  vectorized: str) -> None:
    n = 40
    data = {f"w{i}": pa.array((vals * n)[:n], ft) for i, (ft, _, vals) in enumerate(_WIDENINGS)}
    data["s"] = pa.array([{"w": v} for v in ([7, None] * n)[:n]], pa.struct([("w", pa.int16())]))
    t = fs.Table.create(tmp_path / "t", pa.table(data).schema)
    t.append(pa.table(data), evolve=False)
    update = t.update_schema(policy=fs.CastPolicy.explicit())
    for i, (_, rt, _) in enumerate(_WIDENINGS):
        update = update.update_column(f"w{i}", rt)
    update = update.update_column("s.w", pa.int64()).rename_column("s.w", "ww").rename_column("w0", "renamed")
    for i, (typ, value) in enumerate(_DEFAULTS):
        update = update.add_column(f"d{i}", typ, default=value)
    update.add_column("s.added", pa.string()).commit()
    assert plan_read(t).reasons == {0: None}
    spark.conf.set("spark.sql.parquet.enableVectorizedReader", vectorized)
    try:
        df = read(spark, t.location, route="native")
        assert_same(df, t.scan().to_arrow(), t.schema, exact_nullability=False)
    finally:
        spark.conf.set("spark.sql.parquet.enableVectorizedReader", "true")


# ------------------------------------------------------------------------------------------------
# native scans: schema ids differing only in top-level names share one scan
# ------------------------------------------------------------------------------------------------
def _file_scans(df: Any) -> int:
    return df._jdf.queryExecution().executedPlan().toString().count("FileScan parquet")


def _with_field_id_reading(spark: Any, on: bool) -> None:
    spark.conf.set("spark.sql.parquet.fieldId.read.enabled", "true" if on else "false")


def test_top_level_renames_share_one_native_scan(spark: Any, tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("a", pa.int32()), ("b", pa.string()), ("c", pa.int32())]))
    t.append(pa.table({"a": pa.array([1, None], pa.int32()), "b": ["one", None], "c": pa.array([7, 8], pa.int32())}))
    t.update_schema().rename_column("a", "alpha").update_column("alpha", pa.int64()).commit()
    t.append(pa.table({"alpha": [2], "b": [None], "c": pa.array([9], pa.int32())}), evolve=False)
    t.update_schema().rename_column("b", "beta").commit()
    t.append(pa.table({"alpha": [None], "beta": ["three"], "c": pa.array([None], pa.int32())}), evolve=False)
    t.update_schema().add_column("d", pa.int32(), default=5).commit()
    t.append(pa.table({"alpha": [4], "beta": ["four"], "c": pa.array([1], pa.int32()),
                       "d": pa.array([None], pa.int32())}), evolve=False)
    assert all(why is None for why in plan_read(t).reasons.values())
    target = spark_arrow(t.schema)
    expected = rows(t.scan().to_arrow().cast(target))
    df = read(spark, t.location)
    assert _file_scans(df) == 1
    assert_same(df, t.scan().to_arrow(), t.schema, exact_nullability=False)
    assert df.schema["alpha"].metadata["parquet.field.id"] == t.schema.find("alpha").id
    try:
        for on in (False, True):  # the conf as it is when the DataFrame runs, not when it was made
            _with_field_id_reading(spark, on)
            assert rows(df.toArrow().cast(target)) == expected
            assert df.filter("alpha = 1").count() == 1 and df.filter("beta = 'one'").count() == 1
            assert df.filter("beta IS NULL").count() == 2 and df.filter("d = 5").count() == 4
    finally:
        _with_field_id_reading(spark, True)


@pytest.mark.parametrize("change", ["rename onto a dropped name", "swap names"])
def test_renames_that_reuse_a_name_keep_separate_scans(spark: Any, tmp_path: Path, change: str) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("a", pa.int64()), ("b", pa.int64()), ("c", pa.int64())]))
    t.append(pa.table({"a": [1, 2], "b": [10, 20], "c": [100, 200]}))
    if change == "swap names":
        t.update_schema().rename_column("a", "tmp").rename_column("b", "a").rename_column("tmp", "b").commit()
        t.append(pa.table({"b": [3], "a": [30], "c": [300]}), evolve=False)
    else:
        t.update_schema().drop_column("b").commit()
        t.update_schema().rename_column("c", "b").commit()
        t.append(pa.table({"a": [3], "b": [300]}), evolve=False)
    assert all(why is None for why in plan_read(t).reasons.values())
    df = read(spark, t.location)
    assert _file_scans(df) == 2
    assert_same(df, t.scan().to_arrow(), t.schema, exact_nullability=False)
    try:
        _with_field_id_reading(spark, False)
        target = spark_arrow(t.schema)
        assert rows(df.toArrow().cast(target)) == rows(t.scan().to_arrow().cast(target))
    finally:
        _with_field_id_reading(spark, True)


def test_merged_scan_coalesces_when_the_biggest_group_uses_the_read_name(spark: Any, tmp_path: Path) -> None:
    t = fs.Table.create(tmp_path / "t", pa.schema([("a", pa.int64()), ("k", pa.int64())]))
    t.append(pa.table({"a": [1, None], "k": [1, 2]}))
    t.update_schema().rename_column("a", "alpha").commit()
    for k in (3, 4):  # more files under the read names: their scan request comes first
        t.append(pa.table({"alpha": [k * 10], "k": [k]}), evolve=False)
    df = read(spark, t.location)
    assert _file_scans(df) == 1
    assert_same(df, t.scan().to_arrow(), t.schema, exact_nullability=False)


def test_filter_trees_read_and_push_exactly(spark: Any, tmp_path: Path) -> None:
    """Issue 28: ``read(filter=...)`` takes text and expressions (OR, NOT, IN over nulls and NaN) and
    keeps the engine's rows; Spark's pushed NOT filters prune files without losing a row."""
    t = fs.Table.create(tmp_path / "tree", pa.schema([("k", pa.int32()), ("x", pa.float64()), ("s", pa.string())]))
    for start in (0, 100, 200):
        t.append(pa.table({"k": pa.array([None if i % 11 == 0 else i for i in range(start, start + 100)], pa.int32()),
                           "x": [float("nan") if i % 7 == 0 else None if i % 5 == 0 else i / 3
                                 for i in range(start, start + 100)],
                           "s": [None if i % 3 == 0 else f"s{i % 4}" for i in range(start, start + 100)]}))
    col = fs.col
    for flt in ["not (k < 150) or s is null", "k not in (1, 2, 3) and not (x < 50 or s in ('s1'))",
                ~(col("s").starts_with("s1") | (col("k") >= 20)) | col("x").is_nan(),
                [("k", ">=", 250), "x is not nan and not s like 's2%'"]]:
        want = t.scan(filter=flt).to_arrow()
        got = read(spark, t.location, filter=flt).toArrow()
        assert rows(got) == rows(want.cast(got.schema)), flt
    df = spark.read.format("fieldshift").load(str(t.location))
    conds = ["NOT (k < 250)", "NOT (x < 50)", "NOT (k IN (1, 2) OR s IS NULL)", "NOT (x <=> 10.0)",
             "NOT (s LIKE 's1%') AND x > 60"]
    pushed = [df.filter(c).count() for c in conds]
    if not os.environ.get("FIELDSHIFT_TEST_SPARK_REMOTE"):  # a Connect client has no JVM plan to count
        assert df.filter("NOT (k < 250)").rdd.getNumPartitions() == 1  # two files ruled out by their k statistics
    plain = read(spark, t.location, route="arrow")  # no pruning at all: Spark's own answer
    assert pushed == [plain.filter(c).count() for c in conds]


def test_every_route_reads_a_table_whose_field_ids_start_at_zero(spark: Any, tmp_path: Path) -> None:
    """Issue 27: Paimon numbers fields from 0; Spark's native field-id scan, the data source and
    fieldshift.spark.read all read field 0 as the engine does, after a rename and a widening."""
    md = lambda i: {"PARQUET:field_id": str(i)}  # noqa: E731
    arrow = pa.schema([pa.field("id", pa.int32(), metadata=md(0)), pa.field("name", pa.string(), metadata=md(1))])
    t = fs.Table.create(tmp_path / "t", fs.Schema.from_arrow(arrow))
    t.append(pa.table({"id": pa.array([0, 1, None], pa.int32()), "name": ["a", "b", "c"]}, schema=arrow))
    t.update_schema().rename_column("id", "key").update_column("key", pa.int64()).commit()
    t.append({"key": pa.array([2**40], pa.int64()), "name": ["d"]})
    expected = t.scan().to_arrow()
    assert sorted(expected.column("key").to_pylist(), key=repr) == [0, 1, 2**40, None]
    assert plan_read(t).reasons[0] is None  # the old files take the native route
    for route in ("native", "arrow"):
        assert_same(read(spark, t.location, route=route), expected, t.schema, exact_nullability=False)
    assert_same(spark.read.format("fieldshift").load(str(t.location)), expected, t.schema)
