"""`fieldshift demo`: replay each seed's scenario on real tables and check every read.

Each step changes a table (DDL or an evolving append), then reads it standalone and, when Spark is
available, through ``mapInArrow`` and the ``fieldshift`` data source; every read is compared with
the rows the seed promises. The demo exits non-zero if any check fails.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

import fieldshift as fs
from fieldshift.cli.console import out_console
from fieldshift.cli.demo_partitions import partition_evolution
from fieldshift.cli.demo_stream import stream_capture

__all__ = ["run_demo"]

Rows = list[dict[str, Any]]


def _sorted(rows: Rows) -> Rows:
    return sorted(rows, key=repr)


class _Demo:
    def __init__(self, root: Path, console: Console, spark: Any) -> None:
        self.root = root
        self.console = console
        self.spark = spark
        self.passed = 0
        self.failed: list[str] = []

    # -- output ---------------------------------------------------------------------------------
    def scenario(self, title: str, source: str) -> None:
        """The title on a line of its own (wrapped, never cut); a rule above it only on a terminal."""
        self.console.print()
        if self.console.is_terminal:
            self.console.rule()
        self.console.print(Text(title, style="bold") + Text(f"  ({source})", style="dim"))

    def step(self, text: str) -> None:
        self.console.print(f"[cyan]▶[/cyan] {text}")

    def show(self, table: pa.Table, title: str) -> None:
        view = RichTable(title=title, title_justify="left", show_lines=False)
        for name, t in zip(table.schema.names, table.schema.types, strict=True):
            view.add_column(f"{name}\n[dim]{t}[/dim]")
        for row in _sorted(table.to_pylist()):
            view.add_row(*("NULL" if v is None else repr(v) for v in row.values()))
        self.console.print(view)

    def check(self, name: str, ok: bool, detail: str = "") -> None:
        if ok:
            self.passed += 1
            self.console.print(f"  [green]✔[/green] {name}")
        else:
            self.failed.append(name)
            self.console.print(f"  [red]✘ {name}[/red] {detail}")

    # -- reads ----------------------------------------------------------------------------------
    def read_and_check(self, table: fs.Table, expected: Rows, label: str = "rows") -> None:
        """Read standalone (and through Spark), show the rows, and compare with ``expected``."""
        got = table.scan().to_arrow()
        self.show(got, f"{label} (schema {table.schema.schema_id})")
        self.check(f"standalone read gives the seed's {label}", _sorted(got.to_pylist()) == _sorted(expected),
                   f"\n    expected {_sorted(expected)}\n    got      {_sorted(got.to_pylist())}")
        if self.spark is None:
            return
        from fieldshift.spark.arrow_for_spark import schema_for_spark

        want = fs.evolve(got, schema_for_spark(table.schema))
        routes = (("mapInArrow", self._spark_map_in_arrow), ("data source", self._spark_source),
                  ("fieldshift.spark.read", self._spark_read))
        for route, read in routes:
            if table.keys is not None and read == self._spark_map_in_arrow:
                self.console.print("  [dim](a per-file mapInArrow cannot merge keys: the keyed routes follow)[/dim]")
                continue
            try:
                spark_rows = read(table).select(*want.schema.names).toArrow()
            except Exception as e:
                self.check(f"Spark {route} read", False, f"raised {type(e).__name__}: {e}")
                continue
            same = _sorted(spark_rows.to_pylist()) == _sorted(want.to_pylist())
            typed = spark_rows.schema.types == want.schema.types
            self.check(f"Spark {route} equals standalone, value for value and type for type", same and typed,
                       f"\n    spark {spark_rows.schema}\n    rows  {_sorted(spark_rows.to_pylist())}")

    def _spark_map_in_arrow(self, table: fs.Table) -> Any:
        """Spark reads each file by itself; mapInArrow evolves its batches on the executors."""
        from functools import reduce

        import fieldshift.spark as fss

        schemas = table.schemas_by_id()
        frames = []
        for f in table.scan().files():
            df = self.spark.read.parquet(str(table.location / f.path))
            frames.append(fss.evolve(df, schemas[f.schema_id], table.schema))
        if not frames:
            return self.spark.createDataFrame([], fss.schema_to_spark(table.schema))
        return reduce(lambda a, b: a.unionByName(b), frames)

    def _spark_read(self, table: fs.Table) -> Any:
        """Spark's native field-id scan where that is exact, the executors' pyarrow route elsewhere."""
        import fieldshift.spark as fss

        return fss.read(self.spark, str(table.location))

    def _spark_source(self, table: fs.Table) -> Any:
        return self.spark.read.format("fieldshift").load(str(table.location))


# -- the seed scenarios -----------------------------------------------------------------------------

def _hudi_trips(d: _Demo) -> None:
    d.scenario("Hudi: the trips example — upsert by key, add newField, promote intToLong", "hudi-schema-evolution")
    schema = pa.schema([pa.field("rowId", pa.string(), nullable=False),
                        pa.field("partitionId", pa.string(), nullable=False), ("preComb", pa.int64()),
                        ("name", pa.string()), ("versionId", pa.string()), ("intToLong", pa.int32())])
    d.step("create with record key rowId (+ partition path partitionId) and precombine field preComb")
    t = fs.Table.create(d.root / "hudi_trips_cow", schema, identifier_fields=["rowId", "partitionId"],
                        precombine="preComb")
    d.step("write three rows with intToLong as int")
    t.upsert(pa.table({"rowId": ["row_1", "row_2", "row_3"], "partitionId": ["part_0"] * 3, "preComb": [0, 0, 0],
                       "name": ["bob", "john", "tom"], "versionId": ["v_0"] * 3,
                       "intToLong": pa.array([0, 0, 0], pa.int32())}, schema=schema))
    d.step("upsert rows whose intToLong is long and that carry a new newField (on-write evolution)")
    r = t.upsert(pa.table({"rowId": ["row_2", "row_5", "row_9"], "partitionId": ["part_0"] * 3,
                           "preComb": [5, 5, 5], "name": ["john", "maroon", "michael"],
                           "versionId": ["v_3", "v_2", "v_2"], "intToLong": pa.array([3, 2, 2], pa.int64()),
                           "newField": ["newField_1"] * 3}))
    d.console.print(f"  schema evolved: {', '.join(r.changes)}")
    d.check("intToLong widened to long and newField appended",
            t.schema.find("intToLong").type == pa.int64() and t.schema.names[-1] == "newField")
    old = [{"rowId": f"row_{i}", "partitionId": "part_0", "preComb": 0, "name": n, "versionId": "v_0",
            "intToLong": 0, "newField": None} for i, n in ((1, "bob"), (3, "tom"))]
    new = [{"rowId": k, "partitionId": "part_0", "preComb": 5, "name": n, "versionId": v, "intToLong": x,
            "newField": "newField_1"} for k, n, v, x in (("row_2", "john", "v_3", 3), ("row_5", "maroon", "v_2", 2),
                                                         ("row_9", "michael", "v_2", 2))]
    d.read_and_check(t, old + new)
    d.step("compact: every bucket rewritten into the current schema, the merge applied")
    t.compact()
    d.check("after compaction every live file has the current schema and the rows are the same",
            {f.schema_id for f in t.scan().live_files()} == {t.schema.schema_id}
            and _sorted(t.to_arrow().to_pylist()) == _sorted(old + new))


def _table_store(d: _Demo) -> None:
    d.scenario("Table Store: drop c, add c — the old row reads NULL", "flink-table-store FLIP")
    t = fs.Table.create(d.root / "T", pa.schema([("a", pa.string()), ("b", pa.string()), ("c", pa.string())]))
    d.step("INSERT INTO T VALUES ('a1', 'b1', 'c1')")
    t.append({"a": ["a1"], "b": ["b1"], "c": ["c1"]})
    d.step("ALTER TABLE T DROP COLUMN c")
    t.update_schema().drop_column("c").commit()
    d.step("ALTER TABLE T ADD COLUMN c STRING  (a new field id: the old c is not resurrected)")
    t.update_schema().add_column("c", pa.string()).commit()
    d.step("INSERT INTO T VALUES ('a2', 'b2', 'c2')")
    t.append({"a": ["a2"], "b": ["b2"], "c": ["c2"]})
    d.read_and_check(t, [{"a": "a1", "b": "b1", "c": None}, {"a": "a2", "b": "b2", "c": "c2"}])


def _ducklake(d: _Demo) -> None:
    d.scenario("DuckLake: defaults, nested add/rename/drop, int8→int64 chain, float→double",
               "ducklake-schema-evolution")
    schema = pa.schema([("id", pa.int32()), ("col1", pa.int8()), ("f", pa.float32()),
                        ("nested_column", pa.struct([("x", pa.int32()), ("old_field", pa.string())]))])
    t = fs.Table.create(d.root / "tbl", schema)
    t.append(pa.table({"id": pa.array([1], pa.int32()), "col1": pa.array([-8], pa.int8()),
                       "f": pa.array([1.5], pa.float32()),
                       "nested_column": [{"x": 10, "old_field": "gone soon"}]}, schema=schema))
    statements = [
        ("ALTER TABLE tbl ADD COLUMN new_column INTEGER", lambda u: u.add_column("new_column", pa.int32())),
        ("ALTER TABLE tbl ADD COLUMN v VARCHAR DEFAULT 'my_default'",
         lambda u: u.add_column("v", pa.string(), default="my_default")),
        ("ALTER TABLE tbl ADD COLUMN nested_column.new_field INTEGER",
         lambda u: u.add_column("nested_column.new_field", pa.int32())),
        ("ALTER TABLE tbl RENAME new_column TO new_name", lambda u: u.rename_column("new_column", "new_name")),
        ("ALTER TABLE tbl RENAME nested_column.x TO x_renamed",
         lambda u: u.rename_column("nested_column.x", "x_renamed")),
        ("ALTER TABLE tbl DROP COLUMN nested_column.old_field",
         lambda u: u.drop_column("nested_column.old_field")),
        ("ALTER TABLE tbl ALTER col1 SET TYPE SMALLINT", lambda u: u.update_column("col1", pa.int16())),
        ("ALTER TABLE tbl ALTER col1 SET TYPE INTEGER", lambda u: u.update_column("col1", pa.int32())),
        ("ALTER TABLE tbl ALTER col1 SET TYPE BIGINT", lambda u: u.update_column("col1", pa.int64())),
        ("ALTER TABLE tbl ALTER f SET TYPE DOUBLE", lambda u: u.update_column("f", pa.float64())),
    ]
    for sql, change in statements:
        d.step(sql)
        change(t.update_schema()).commit()
    d.step("ALTER TABLE tbl ALTER col1 SET TYPE TINYINT  (a narrowing: refused)")
    try:
        t.update_schema().update_column("col1", pa.int8()).commit()
        d.check("narrowing bigint → tinyint is refused", False)
    except fs.TypeChangeNotAllowedError as e:
        d.check("narrowing bigint → tinyint is refused", True)
        d.console.print(f"  [dim]{e}[/dim]")
    d.step("append a row written under the final schema")
    t.append(pa.Table.from_pylist([{"id": 2, "col1": 2**40, "f": 2.25, "v": "given", "new_name": 5,
                                    "nested_column": {"x_renamed": 20, "new_field": 7}}],
                                  schema=t.schema.to_arrow()))
    d.read_and_check(t, [
        {"id": 1, "col1": -8, "f": 1.5, "nested_column": {"x_renamed": 10, "new_field": None},
         "new_name": None, "v": "my_default"},
        {"id": 2, "col1": 2**40, "f": 2.25, "nested_column": {"x_renamed": 20, "new_field": 7},
         "new_name": 5, "v": "given"},
    ])


def _onehouse(d: _Demo) -> None:
    d.scenario("Onehouse: Int then Long widens to Long; a String into the column is quarantined",
               "onehouse-schema-evolution")
    t = fs.Table.create(d.root / "stream_capture", pa.schema([("key", pa.string()), ("col1", pa.int32())]))
    d.step("record r1 has col1 of type Long → the table's col1 widens to Long")
    t.append(pa.table({"key": ["r1"], "col1": pa.array([2**40], pa.int64())}))
    d.check("col1 is now long", t.schema.find("col1").type == pa.int64())
    d.step("record r2 has col1 of type Int → written as Long")
    t.append(pa.table({"key": ["r2"], "col1": pa.array([7], pa.int32())}))
    d.step("record r3 has col1 of type String, with on_incompatible='fail' → the append fails, nothing written")
    before = t.current_snapshot.snapshot_id
    try:
        t.append(pa.table({"key": ["r3"], "col1": ["not a number"]}))
        d.check("a String into a Long column fails the append", False)
    except fs.IncompatibleTypeError as e:
        d.check("a String into a Long column fails the append", t.current_snapshot.snapshot_id == before)
        d.console.print(f"  [dim]{e}[/dim]")
    d.step("the same record with on_incompatible='quarantine' → r3 goes to the quarantine table")
    r = t.append(pa.table({"key": ["r3"], "col1": ["not a number"]}), on_incompatible="quarantine")
    (q,) = t.quarantine(grouped=True)  # one source schema: its rows in the types they arrived with
    d.check("r3 is quarantined with its reason",
            r.rows_quarantined == 1 and q.column("key").to_pylist() == ["r3"])
    d.show(q.select(["key", "col1", "_fieldshift_reason"]), "quarantine")
    d.read_and_check(t, [{"key": "r1", "col1": 2**40}, {"key": "r2", "col1": 7}])


def _rename_drop_readd(d: _Demo) -> None:
    d.scenario("Rename, drop and re-add: ids, not names, decide", "all seeds")
    t = fs.Table.create(d.root / "people", pa.schema([("id", pa.int64()), ("name", pa.string()),
                                                      ("b", pa.string())]))
    t.append({"id": [1], "name": ["ada"], "b": ["old b"]})
    d.step("RENAME name TO full_name; DROP b; ADD b STRING")
    t.update_schema().rename_column("name", "full_name").drop_column("b").add_column("b", pa.string()).commit()
    t.append({"id": [2], "full_name": ["grace"], "b": ["new b"]})
    d.read_and_check(t, [{"id": 1, "full_name": "ada", "b": None}, {"id": 2, "full_name": "grace", "b": "new b"}])
    d.step("time travel: snapshot 1 reads with the schema it was written with")
    old = t.scan(snapshot_id=1).to_arrow().to_pylist()
    d.check("the first snapshot reads ('ada', 'old b') under the old names",
            old == [{"id": 1, "name": "ada", "b": "old b"}])


SCENARIOS: tuple[Callable[[_Demo], None], ...] = (_hudi_trips, _table_store, _ducklake, _onehouse,
                                                   _rename_drop_readd, partition_evolution, stream_capture)


def _spark_installed() -> bool:
    """Whether PySpark can be imported here (looked up, not imported: that starts nothing)."""
    import importlib.util

    try:
        return importlib.util.find_spec("pyspark") is not None
    except (ImportError, ValueError):
        return False


def _start_spark(console: Console) -> Any:
    if shutil.which("java") is None:
        console.print("[red]Java was not found.[/red] Spark needs Java 17: install it with "
                      "`apt-get install openjdk-17-jre-headless` (Debian/Ubuntu) or `brew install openjdk@17` "
                      "(macOS), or run `fieldshift demo --no-spark` for the standalone part only.")
        return None
    import fieldshift.spark as fss

    console.print("[dim]starting Spark (local[*]) …[/dim]")
    return fss.session(app_name="fieldshift-demo")


def run_demo(directory: Path | None, *, keep: bool = False, use_spark: bool = True) -> int:
    """Run every scenario; returns the exit code (0 when every check passed)."""
    console = out_console()
    root = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="fieldshift-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    if use_spark and not _spark_installed():
        console.print(Text("Spark is not installed (pip install 'fieldshift[spark]' adds PySpark): running the "
                           "standalone part only, as --no-spark does."))
        use_spark = False
    spark = _start_spark(console) if use_spark else None
    if use_spark and spark is None:
        return 1
    demo = _Demo(root, console, spark)
    try:
        for scenario in SCENARIOS:
            try:
                scenario(demo)
            except Exception as e:
                demo.check(f"{scenario.__name__.strip('_')} ran to the end", False, f"{type(e).__name__}: {e}")
    finally:
        if spark is not None:
            spark.stop()
        if not keep and directory is None:
            shutil.rmtree(root, ignore_errors=True)
    elapsed = time.perf_counter() - started
    console.print()
    console.print(Text("summary", style="bold"))
    console.print(f"{demo.passed} checks passed, {len(demo.failed)} failed in {elapsed:.1f} s"
                  + (f" — tables kept in {root}" if keep or directory else ""))
    for name in demo.failed:
        console.print(f"  [red]✘ {name}[/red]")
    return 0 if not demo.failed else 1
