"""The table as a whole against a plain-Python model: write -> alter -> read -> filter -> time travel.

A hypothesis state machine drives a real table (SQLite catalog, Parquet files) and `ModelTable`
side by side: appends and overwrites with drifting schemas (new, missing, widened, narrowed and
incompatible columns, hostile names, nulls everywhere), every builder operation, scans with random
columns, filters of every operator and literal kind, snapshot and schema-id time travel, quarantine,
vacuum, reopening, and a second table in the same shared catalog. Every scan is compared with the
model, and the pruned scan with the same scan unpruned. `make test` runs a few hundred steps;
`make test-slow` runs thousands.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any
from unittest import mock

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from typer.testing import CliRunner

import fieldshift as fs
from fieldshift.cli import app
from fieldshift.schema.model import join_path
from fieldshift.table.catalog.stream_marks import StreamMark
from fieldshift.table.partitions.partition_write import source_column
from fieldshift.table.streams.stream_commit import append_once
from fieldshift.table.write import row_changes
from tests.table.filter_model import spec_leaves, spec_trees, to_expression, to_text, to_tuples
from tests.table.publish_helpers import fieldshift_rows, pyiceberg_rows
from tests.table.table_model import ARROW, Col, ModelError, ModelTable, arrow_type, canon_rows, leaves

POLICIES = {
    "lossless": fs.CastPolicy.lossless(),
    "iceberg": fs.CastPolicy.iceberg(),
    "hudi": fs.CastPolicy.hudi(),
    "onehouse": fs.CastPolicy.onehouse(),
    "onehouse_ws": fs.CastPolicy.onehouse(widen_to_string=True),
}
KINDS = ("int", "long", "double", "string")
NAMES = ("a", "b", "c", "note", "a.b", "`x`", "ünï", "sp ace", "x``y", "new", "_hidden", "Total")
# Which incoming kinds a column of each kind may receive (double -> string formatting is Arrow's own
# business, so doubles never meet strings here).
INCOMING = {"int": KINDS, "long": KINDS, "double": ("int", "long", "double"), "string": ("int", "long", "string")}

STATS: Counter[str] = Counter()  # what the runs exercised: the tests check it was not vacuous
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=4)


def values_of(kind: str, *, bad: bool = False) -> st.SearchStrategy[Any]:
    if bad:  # strings that no number parses
        return st.none() | text.map(lambda s: "x" + s)
    return st.none() | {
        "int": st.integers(-2**31, 2**31 - 1) | st.sampled_from([0, -1, 2**31 - 1, -2**31, -2**31 + 1]),
        "long": st.integers(-2**63, 2**63 - 1) | st.sampled_from([2**53 + 1, -(2**53) - 1, 2**62, 0, -(2**63)]),
        "double": st.floats(allow_nan=True) | st.sampled_from([0.0, -0.0, 2.0**53, 1.5]),
        "string": text | st.sampled_from(["", "6", "50", "100", "2", "é", "a.b"]),
    }[kind]


def literal_of(kind: str) -> st.SearchStrategy[Any]:
    if kind == "string":
        return text | st.sampled_from(["", "6", "50", "100", "2"])
    return (st.integers(-2**64, 2**64) | st.sampled_from([2**53, 2**53 + 1, 2**31, -2**31 - 1, 0])
            | st.floats(allow_nan=False) | st.sampled_from([1.5, -0.0, 2.0**53, 1e300]))


def arrow_of(kind: Any) -> pa.DataType:
    """A primitive kind's Arrow type, or a struct's from its [(child, kind)] list."""
    if isinstance(kind, list):
        return pa.struct([(n, arrow_of(k)) for n, k in kind])
    return ARROW[kind]


primitive_kind = st.sampled_from(KINDS)
struct_kind = st.lists(st.tuples(st.sampled_from(NAMES[:9]), primitive_kind), min_size=1, max_size=3,
                       unique_by=lambda c: c[0])
any_kind = primitive_kind | struct_kind


def struct_values(children: list[tuple[str, str]]) -> st.SearchStrategy[Any]:
    return st.none() | st.fixed_dictionaries({n: values_of(k) for n, k in children})


def small_values(kind: str, in_double: bool) -> st.SearchStrategy[Any]:
    """Values of ``kind``; longs headed for a double column stay exact (the cast up is checked)."""
    if kind == "long" and in_double:
        return st.none() | st.integers(-2**53, 2**53)
    return values_of(kind)


def _leaf(primitives: list[tuple[tuple[str, ...], Col]]) -> st.SearchStrategy[tuple]:
    """A condition on one primitive column: every operator, literals of the column's kind."""
    @st.composite
    def leaf(draw: Any) -> tuple:
        path, col = draw(st.sampled_from(primitives))
        ops = ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "is_null", "not_null"]
        ops += ["is_nan", "not_nan"] if col.kind != "string" else ["starts_with", "not_starts_with"]
        op = draw(st.sampled_from(ops))
        if op in ("is_null", "not_null", "is_nan", "not_nan"):
            return ("leaf", path, op, None)
        if op in ("in", "not in"):
            return ("leaf", path, op, draw(st.lists(literal_of(col.kind), min_size=1, max_size=3)))
        return ("leaf", path, op, draw(literal_of(col.kind)))
    return leaf()


def _text_safe(spec: tuple, kinds: dict[tuple[str, ...], str]) -> bool:
    """Whether filter text says the spec's literals exactly (text literals are typed like their column)."""
    def ok(v: Any, kind: str) -> bool:
        if isinstance(v, float):
            return math.isfinite(v)
        if isinstance(v, int) and kind == "double":
            return abs(v) <= 2**53
        return True
    for _, path, _, lit in spec_leaves(spec):
        if not all(ok(v, kinds[path]) for v in (lit if isinstance(lit, list) else [lit])):
            return False
    return True


def _spelled(data: st.DataObject, spec: tuple | None, kinds: dict[tuple[str, ...], str]) -> tuple[Any, str]:
    """The filter as tuples (a conjunction of conditions), expression objects or text, at random."""
    if spec is None:
        return None, "none"
    forms = ["expression"] + (["tuples"] if to_tuples(spec) is not None else [])
    forms += ["text"] if _text_safe(spec, kinds) else []
    form = data.draw(st.sampled_from(forms), label="filter form")
    return {"expression": to_expression, "tuples": to_tuples, "text": to_text}[form](spec), form


class TableMachine(RuleBasedStateMachine):
    spark: Any = None  # set by the Spark variant: every scan is also read through the data source
    cli: bool = False

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="fs-model-"))
        self.catalog = str(self.root / "shared.db")
        self.main_location: Any = self.root / "main"  # the object-store variant puts it on S3
        self.table: fs.Table | None = None
        self.model: ModelTable | None = None
        self.batches = 0  # the next micro-batch id of the model's stream

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    @initialize(policy=st.sampled_from(sorted(POLICIES)),
                cols=st.lists(st.tuples(st.sampled_from(NAMES[:9]), any_kind),
                              min_size=1, max_size=4, unique_by=lambda c: c[0]),
                shared=st.booleans())
    def create(self, policy: str, cols: list[tuple[str, str]], shared: bool) -> None:
        schema = pa.schema([(n, arrow_of(k)) for n, k in cols])
        kwargs: dict[str, Any] = {"catalog": self.catalog, "name": "main"} if shared else {}
        self.shared = shared
        self.table = fs.Table.create(self.main_location, schema, policy=POLICIES[policy], **kwargs)
        self.model = ModelTable.create(policy, cols)
        if shared:  # a neighbour in the same catalog, which must never disturb this table
            self.other = fs.Table.create(self.root / "other", pa.schema([("v", pa.int64())]),
                                         catalog=self.catalog, name="other")
            self.other_rows = 0

    # -- writes ---------------------------------------------------------------------------------
    @rule(data=st.data(), quarantine=st.booleans(), overwrite=st.integers(0, 9))
    def append(self, data: st.DataObject, quarantine: bool, overwrite: int) -> None:
        self._append(data, quarantine, overwrite)

    @rule(data=st.data(), quarantine=st.booleans())
    def stream_batch(self, data: st.DataObject, quarantine: bool) -> None:
        """A micro-batch committed with its (stream, batch) id, then replayed: the replay commits nothing."""
        self._append(data, quarantine, 1, stream="stream")

    @rule(data=st.data(), quarantine=st.booleans())
    def capture_file(self, data: st.DataObject, quarantine: bool) -> None:
        """The batch lands as a Parquet file and is captured; capturing again takes nothing."""
        self._append(data, quarantine, 1, stream="capture")

    def _append(self, data: st.DataObject, quarantine: bool, overwrite: int, stream: str = "") -> None:
        m = self.model
        n = data.draw(st.integers(0, 10), label="rows")
        existing = data.draw(st.lists(st.sampled_from([c.name for c in m.schema]), unique=True, max_size=4))
        columns = []
        for name in existing:
            col = m.col((name,))
            if col.kind == "struct":  # some of its children (any incoming kind), maybe a new one
                kids = data.draw(st.lists(st.sampled_from(col.children), unique=True), label=f"{name} children")
                kind = [(k.name, data.draw(st.sampled_from(INCOMING[k.kind]))) for k in kids]
                if data.draw(st.booleans(), label="new child") or not kind:
                    free = [x for x in NAMES if x not in {k.name for k in col.children}] or [f"c{m.next_id}"]
                    kind.append((data.draw(st.sampled_from(free)), data.draw(primitive_kind)))
                values = data.draw(st.lists(st.none() | st.fixed_dictionaries({
                    n: self._incoming_values(k, col.children, n) for n, k in kind}), min_size=n, max_size=n))
            else:
                kind = data.draw(st.sampled_from(INCOMING[col.kind]), label=f"{name} kind")
                values = data.draw(st.lists(self._incoming_values(kind, m.schema, name), min_size=n, max_size=n))
            columns.append((name, kind, values))
        if data.draw(st.booleans(), label="new column") or not columns:
            free = [x for x in NAMES if x not in {c.name for c in m.schema}] or [f"c{m.next_id}"]
            name = data.draw(st.sampled_from(free))
            kind = data.draw(any_kind)
            values = struct_values(kind) if isinstance(kind, list) else values_of(kind)
            columns.append((name, kind, data.draw(st.lists(values, min_size=n, max_size=n))))
        batch = pa.table({name: pa.array(values, arrow_of(kind)) for name, kind, values in columns})
        replace_all = overwrite == 0
        try:
            expected = m.append(columns, quarantine, overwrite=replace_all)
        except ModelError:
            before = self._state()
            with pytest.raises((fs.SchemaEvolutionError, fs.TableError)):
                self._write(batch, quarantine, replace_all, stream)
            assert self._state() == before
            STATS["append refused"] += 1
            return
        result = self._write(batch, quarantine, replace_all, stream)
        assert result.rows_written == expected
        STATS["append"] += 1
        STATS["rows quarantined"] += result.rows_quarantined
        STATS["schema evolved on write"] += result.schema_evolved
        self._check_state()

    @staticmethod
    def _incoming_values(kind: str, siblings: tuple[Col, ...], name: str) -> st.SearchStrategy[Any]:
        """Values of an incoming ``kind`` for the table field ``name`` among ``siblings`` (if it exists):
        strings where it holds numbers never parse, and longs headed for doubles stay exact."""
        table_kind = next((c.kind for c in siblings if c.name == name), None)
        if kind == "string" and table_kind in ("int", "long", "double"):
            return values_of(kind, bad=True)
        return small_values(kind, table_kind == "double")

    def _write(self, batch: pa.Table, quarantine: bool, replace_all: bool, stream: str = "") -> fs.AppendResult:
        mode = "quarantine" if quarantine else "fail"
        if stream == "capture":
            return self._capture(batch, mode)
        if stream:
            mark = StreamMark("model-stream", self.batches)
            result = append_once(self.table, batch, mark, on_incompatible=mode)
            assert result is not None
            self.batches += 1
            before = self._state()
            assert append_once(self.table, batch, mark, on_incompatible=mode) is None  # the replay
            assert self._state() == before
            STATS["stream batch replayed"] += 1
            return result
        if replace_all:
            return self.table.overwrite(batch, on_incompatible=mode)
        return self.table.append(batch, on_incompatible=mode)

    def _capture(self, batch: pa.Table, mode: Any) -> fs.AppendResult:
        land = self.root / "land"
        land.mkdir(exist_ok=True)
        path = land / f"f{self.batches:05}.parquet"
        self.batches += 1
        pq.write_table(batch, path)
        try:
            done = fs.capture(land, self.table, on_incompatible=mode)
        except fs.CaptureFileError:
            path.unlink()  # refused: it would be refused again by the next capture
            raise
        before = self._state()
        assert fs.capture(land, self.table).files == 0 and self._state() == before
        STATS["file captured"] += 1
        return fs.AppendResult(done.rows, done.quarantined, self.table.schema.schema_id, bool(done.schema_changes),
                               self.table.current_snapshot.snapshot_id)

    # -- merge ----------------------------------------------------------------------------------
    @rule(data=st.data())
    def merge(self, data: st.DataObject) -> None:
        """MERGE INTO by a top-level column: whole source rows (some columns), random clauses, source keys
        drawn from the table's own values (matches, double matches) and new ones (nulls too)."""
        m = self.model
        ons = [c for c in m.schema if c.kind in ("int", "long", "string")]
        if not ons:
            return
        try:
            current = m.read(m.head, None, None, None)
        except ModelError:
            return  # an unreadable table: the scans' business
        on = data.draw(st.sampled_from(ons), label="on")
        others = [c for c in m.schema if c.kind != "struct" and c.name != on.name]
        carried = data.draw(st.lists(st.sampled_from(others), unique_by=lambda c: c.name, max_size=3),
                            label="carried") if others else []
        existing = [r[on.name] for r in current if r[on.name] is not None]
        # the table's values (the first two often: one target row, two source rows) and new ones
        keys = values_of(on.kind) | st.sampled_from(existing[:2]) | st.sampled_from(existing) if existing \
            else values_of(on.kind)
        source = data.draw(st.lists(st.fixed_dictionaries(
            {on.name: keys, **{c.name: small_values(c.kind, c.kind == "double") for c in carried}}), max_size=5),
            label="source")
        primitive = [c.name for c in m.schema if c.kind != "struct"]
        update, insert = data.draw(st.booleans(), label="update"), data.draw(st.booleans(), label="insert")
        delete = data.draw(st.none() | st.just("") | st.sampled_from(primitive), label="matched delete")
        by_source = data.draw(st.none() | st.just(()) | st.tuples(st.sampled_from(primitive)), label="by source")
        if not (update or insert or delete is not None or by_source is not None):
            insert = True
        batch = pa.table({on.name: pa.array([r[on.name] for r in source], ARROW[on.kind]),
                          **{c.name: pa.array([r[c.name] for r in source], ARROW[c.kind]) for c in carried}})

        def run() -> Any:
            b = self._merge_builder(batch, on.name)
            if delete is not None:
                b.when_matched_delete(condition=None if delete == "" else (["target", delete], "is_null"))
            if update:
                b.when_matched_update()
            if insert:
                b.when_not_matched_insert()
            if by_source is not None:
                b.when_not_matched_by_source_delete(
                    condition=(["target", by_source[0]], "not_null") if by_source else None)
            # as for delete and update: a file rewritten without its matched rows moves its other rows into the
            # current schema, which the model does not follow (the rewrite rule has its own tests)
            with mock.patch.object(row_changes, "REWRITE_FRACTION", 0.0):
                return b.execute()

        try:
            counts = m.merge(on.name, source, update, delete, insert, by_source)
        except ModelError:
            before = self._state()
            with pytest.raises((fs.SchemaEvolutionError, fs.TableError)):
                run()
            assert self._state() == before
            STATS["merge refused"] += 1
            return
        result = run()
        assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == counts
        assert (result.snapshot_id is None) == (not any(counts))
        STATS["merge"] += 1
        STATS["rows merged"] += sum(counts)
        self._check_state()

    # the routes row changes take (the Spark variant runs them through fieldshift.spark)
    def _merge_builder(self, source: pa.Table, on: str) -> Any:
        return self.table.merge(source, on=on)

    def _update(self, set: dict[str, Any], where: Any) -> int:
        return self.table.update(set, where=where).rows_updated

    def _delete(self, where: Any) -> int | None:
        return self.table.delete(filter=where).rows_deleted

    # -- schema changes -------------------------------------------------------------------------
    @rule(data=st.data(), op=st.sampled_from(["add", "rename", "drop", "retype"]))
    def alter(self, data: st.DataObject, op: str) -> None:
        """One builder operation on a column or a struct's child (the four share one rule, so writes and
        reads get their share of steps)."""
        m = self.model
        fields = [path for path, _ in leaves(m.schema)]
        structs = [path for path, c in leaves(m.schema) if c.kind == "struct"]
        if op == "add":
            parent = data.draw(st.sampled_from([(), *structs]), label="parent")
            path, kind = (*parent, data.draw(st.sampled_from(NAMES))), data.draw(primitive_kind)
            default = data.draw(st.none() | values_of(kind).filter(lambda v: v is not None), label="default")
            if isinstance(default, float) and math.isnan(default):
                default = None  # NaN defaults read fine; the model's row compare is simpler without them
            self._alter(lambda m: m.add_column(path, kind, default),
                        lambda u: u.add_column(list(path), ARROW[kind], default=default))
        elif op == "rename":
            path, new = data.draw(st.sampled_from(fields)), data.draw(st.sampled_from(NAMES))
            self._alter(lambda m: m.rename(path, new), lambda u: u.rename_column(join_path(path), new))
        elif op == "drop" and len(m.schema) > 1:
            path = data.draw(st.sampled_from(fields))
            self._alter(lambda m: m.drop(path), lambda u: u.drop_column(list(path)))
        elif op == "retype":
            path, kind = data.draw(st.sampled_from(fields)), data.draw(primitive_kind)
            builder = data.draw(st.sampled_from(sorted(POLICIES)))
            if (m.col(path).kind, kind) != ("double", "string"):  # Arrow's float formatting is its own business
                self._alter(lambda m: m.retype(path, kind, builder),
                            lambda u: u.update_column(join_path(path), ARROW[kind]), policy=POLICIES[builder])

    def _alter(self, model_op: Any, table_op: Any, policy: fs.CastPolicy | None = None) -> None:
        try:
            model_op(self.model)
        except ModelError:
            before = self._state()
            with pytest.raises((fs.SchemaEvolutionError, fs.TableError)):
                table_op(self.table.update_schema(policy=policy)).commit()
            assert self._state() == before
            STATS["alter refused"] += 1
            return
        table_op(self.table.update_schema(policy=policy)).commit()
        STATS["alter"] += 1
        self._check_state()

    # -- partitions -----------------------------------------------------------------------------
    @rule(data=st.data(), op=st.sampled_from(["add", "remove", "replace"]))
    def partition(self, data: st.DataObject, op: str) -> None:
        """Add, remove or replace a partition field (a spec of its own); appends then split by it."""
        m = self.model
        names = sorted(m.spec)
        remove = data.draw(st.sampled_from(names), label="remove") if op != "add" and names else None
        add = None
        if op != "remove" or not names:
            path = data.draw(st.sampled_from([p for p, c in leaves(m.schema) if c.kind != "struct"] or [()]))
            if not path:
                return
            transform = data.draw(st.sampled_from(["identity", "bucket[3]", "bucket[16]", "truncate[2]",
                                                   "truncate[10]"]), label="transform")
            self.spec_names = getattr(self, "spec_names", 0) + 1
            add = (f"p{self.spec_names}", path, transform)

        def table_op(u: Any) -> Any:
            if remove is not None:
                u.remove_field(remove)
            if add is not None:
                u.add_field(join_path(add[1]), add[2], add[0])
            return u.commit()
        try:
            m.change_spec(remove, add)
        except ModelError:
            before = self._state()
            with pytest.raises(fs.PartitionSpecError):
                table_op(self.table.update_spec())
            assert self._state() == before
            STATS["spec change refused"] += 1
            return
        table_op(self.table.update_spec())
        STATS["spec change"] += 1
        self._check_state()
        spec, schema = self.table.spec, self.table.schema
        paths = {c.id: path for path, c in leaves(m.schema)}  # the model numbers ids on its own: compare paths
        assert {f.name: (schema.path_of(f.source_id), str(f.transform)) for f in spec.fields} == \
            {name: (join_path(paths[source]), transform) for name, (source, transform) in m.spec.items()}

    # -- row changes ----------------------------------------------------------------------------
    @rule(data=st.data(), update=st.booleans())
    def row_change(self, data: st.DataObject, update: bool) -> None:
        """A delete or update by a filter over the current schema (after renames, drops, widenings): the rows
        it reports and every later read match the model. Files always get deletion vectors here (the model
        cannot know which files a rewrite would turn into the current schema); test_row_changes covers rewrites."""
        m = self.model
        primitives = [(path, c) for path, c in leaves(m.schema) if c.kind != "struct"]
        tops = [c for c in m.schema if c.kind != "struct"]
        if not primitives or (update and not tops):
            return
        spec = data.draw(spec_trees(_leaf(primitives), max_leaves=3), label="row filter")
        flt, _ = _spelled(data, spec, {path: c.kind for path, c in primitives})
        if update:
            col = data.draw(st.sampled_from(tops), label="set column")
            value = data.draw(values_of(col.kind), label="set value")

        def table_op() -> int | None:
            if update:
                return self._update({col.name: value}, flt)
            return self._delete(flt)

        with mock.patch.object(row_changes, "REWRITE_FRACTION", 0.0):
            try:
                expected = m.update_where(spec, col.name, value) if update else m.delete_where(spec)
            except ModelError:
                with pytest.raises(fs.SchemaEvolutionError):
                    table_op()
                STATS["row change refused"] += 1
                return
            assert table_op() == expected
        STATS["rows updated" if update else "rows deleted"] += expected
        self.scan(data)  # read right after it (pruned and not, count, time travel; Spark's data source too)

    # -- reads ----------------------------------------------------------------------------------
    @rule(data=st.data())
    def scans(self, data: st.DataObject) -> None:
        for _ in range(3):
            self.scan(data)

    def scan(self, data: st.DataObject) -> None:
        m = self.model
        snapshot = data.draw(st.sampled_from(sorted(m.snapshots)) | st.none(), label="snapshot")
        schema_id = data.draw(st.none() | st.sampled_from(sorted(m.schemas)), label="schema id")
        snap_id = m.head if snapshot is None else snapshot
        schema = m.schemas[m.snapshots[snap_id].schema_id if schema_id is None else schema_id]
        names = [c.name for c in schema]
        columns = data.draw(st.none() | st.lists(st.sampled_from(names), unique=True, min_size=1), label="columns")
        primitives = [(path, c) for path, c in leaves(schema) if c.kind != "struct"]
        spec = data.draw(st.none() | spec_trees(_leaf(primitives), max_leaves=4), label="filter")
        flt, form = _spelled(data, spec, {path: c.kind for path, c in primitives})
        if spec is not None and data.draw(st.integers(0, 9), label="wrong literal") == 0:
            path, col = data.draw(st.sampled_from(primitives))
            wrong = data.draw(st.sampled_from([None, "7"] if col.kind != "string" else [None, 7, 1.5]))
            with pytest.raises(fs.SchemaEvolutionError, match=r"filter|literal|null"):
                self.table.scan(columns, [to_expression(spec), (list(path), "==", wrong)], snapshot,
                                schema_id).to_arrow()
            STATS["bad filters refused"] += 1
        try:
            expected = m.read(snap_id, schema_id, columns, spec)
        except ModelError:
            with pytest.raises(fs.SchemaEvolutionError):
                self.table.scan(columns, flt, snapshot, schema_id).to_arrow()
            STATS["scan refused"] += 1
            return
        scan = self.table.scan(columns, flt, snapshot, schema_id)
        got = scan.to_arrow()
        assert canon_rows(got.to_pylist()) == canon_rows(expected)
        unpruned = self.table.scan(columns, flt, snapshot, schema_id)
        unpruned.prune = False
        assert canon_rows(unpruned.to_arrow().to_pylist()) == canon_rows(got.to_pylist())
        assert scan.count() == len(expected)
        STATS["scan rows"] += len(expected)
        STATS["nested rows"] += sum(isinstance(v, dict) for r in expected for v in r.values())
        STATS["filtered scans"] += spec is not None
        STATS[f"filters as {form}"] += spec is not None
        STATS["filters with or/not"] += spec is not None and spec[0] in ("or", "not")
        STATS["time travel"] += snapshot is not None or schema_id is not None
        if self.spark is not None:
            self._check_spark(snapshot, schema_id, columns)
        where = to_text(spec) if spec is not None and _text_safe(spec, {p: c.kind for p, c in primitives}) else None
        if not self.shared and (spec is None or where is not None) and data.draw(st.integers(0, 4), label="cli") == 0:
            self._check_cli(snapshot, schema_id, columns, got, spec, where)

    def _check_cli(self, snapshot: int | None, schema_id: int | None, columns: list[str] | None,
                   expected: pa.Table, spec: tuple | None, where: str | None) -> None:
        out = self.root / "cli.parquet"
        args = ["read", str(self.table.location), "--format", "parquet", "--output", str(out)]
        if spec is not None and where is not None:  # a top-level AND as several --where flags
            parts = [to_text(s) for s in spec[1]] if spec[0] == "and" else [where]
            for part in parts:
                args += ["--where", part]
            STATS["cli filtered reads"] += 1
        if snapshot is not None:
            args += ["--as-of", str(snapshot)]
        if schema_id is not None:
            args += ["--schema-id", str(schema_id)]
        if columns is not None:
            args += ["--columns", ",".join(columns)]
        if columns is not None and any("," in c for c in columns):
            return  # --columns is comma-separated
        STATS["cli reads"] += 1
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        got = pq.read_table(out)
        assert canon_rows(got.to_pylist()) == canon_rows(expected.to_pylist())

    def _check_spark(self, snapshot: int | None, schema_id: int | None, columns: list[str] | None) -> None:
        """The Spark data source reads what the engine reads (no filter: Spark would re-check rows)."""
        reader = self.spark.read.format("fieldshift")
        if snapshot is not None:
            reader = reader.option("snapshot_id", snapshot)
        if schema_id is not None:
            reader = reader.option("schema_id", schema_id)
        if columns is not None:
            if any("," in c for c in columns):
                return
            reader = reader.option("columns", ",".join(columns))
        if self.shared:
            reader = reader.option("catalog", self.catalog).option("table", "main")
        STATS["spark reads"] += 1
        got = reader.load(str(self.table.location)).toArrow()
        want = self.table.scan(columns, None, snapshot, schema_id).to_arrow()
        assert got.column_names == want.column_names
        assert canon_rows(got.to_pylist()) == canon_rows(want.to_pylist())

    # -- maintenance ----------------------------------------------------------------------------
    @rule()
    def vacuum(self) -> None:
        self._check_published()  # vacuum must keep every file a published snapshot names
        removed = self.table.vacuum(older_than=dt.timedelta(0))
        assert removed == []  # nothing here crashed: every file is referenced
        self._check_state()

    def _check_published(self) -> None:
        """Publishing as an Iceberg table (sampled: at vacuums, no draws of its own): PyIceberg reads the first
        and the newest snapshot with fieldshift's rows, or a refusal wrote nothing."""
        t = self.table
        if t.storage.local_path is None:
            return  # the object-store variant: tests/servers/test_publish_servers.py
        try:
            t.publish()
        except fs.UnpublishableError as e:  # unsigned types, casts Iceberg does not make, ...
            assert "nothing was written" in str(e)
            STATS["publish refused"] += 1
            return
        for sid in sorted({s.snapshot_id for s in t.history() if s.snapshot_id} & {1, t.current_snapshot.snapshot_id}):
            try:
                want = fieldshift_rows(t, sid)
            except fs.FieldshiftError:  # a snapshot fieldshift itself refuses to read (scan refused)
                continue
            assert pyiceberg_rows(t, sid) == want, sid
            STATS["published"] += 1

    @rule()
    def reopen(self) -> None:
        if self.shared:
            self.table = fs.Table.open(self.main_location, catalog=self.catalog, name="main")
        else:
            self.table = fs.Table.open(self.main_location)
        self._check_state()

    @precondition(lambda self: self.shared)
    @rule(n=st.integers(0, 3))
    def neighbour_writes(self, n: int) -> None:
        self.other.append(pa.table({"v": pa.array(range(n), pa.int64())}))
        self.other_rows += n
        (self.root / "other" / "data").mkdir(exist_ok=True)
        (self.root / "other" / "data" / "stray.parquet.tmp").write_bytes(b"x")
        self.other.vacuum(older_than=dt.timedelta(0))
        assert self.other.to_arrow().num_rows == self.other_rows

    # -- invariants -----------------------------------------------------------------------------
    def _state(self) -> tuple[Any, ...]:
        t = self.table
        return (t.current_snapshot.snapshot_id, len(t.schemas()), canon_rows(t.to_arrow().to_pylist()),
                t.quarantine().num_rows)

    def _check_state(self) -> None:
        t, m = self.table, self.model
        schemas = t.schemas_by_id()
        specs = {s.spec_id: s for s in t.specs()}
        for f in t.scan().live_files():  # every file holds exactly its schema's columns, in order
            assert t.storage.parquet_file(f.path).schema_arrow.names == schemas[f.schema_id].names, f
            if specs[f.spec_id].fields:  # and one partition of its own spec
                rows = t.storage.read_table(f.path)
                for field, value in zip(specs[f.spec_id].fields, f.partition, strict=True):
                    column = source_column(schemas[f.schema_id], rows, field.source_id)
                    assert set(field.transform.values(column)) == {value}, (f, field)
                STATS["partitioned files"] += 1
        assert t.current_snapshot.snapshot_id == m.head
        assert len(t.schemas()) == len(m.schemas)
        assert [(f.name, f.type) for f in t.schema.to_arrow()] == [(c.name, arrow_type(c)) for c in m.schema]

    @invariant()
    def quarantine_lists_every_row(self) -> None:
        if self.table is not None:
            assert self.table.quarantine().num_rows == self.model.quarantined


SETTINGS = settings(deadline=None, suppress_health_check=list(HealthCheck),
                    phases=[p for p in Phase if p is not Phase.shrink or not os.environ.get("FS_NO_SHRINK")])
EXERCISED = ("append", "append refused", "stream batch replayed", "file captured",
             "rows quarantined", "schema evolved on write", "alter", "alter refused",
             "scan rows", "filtered scans", "time travel", "bad filters refused", "nested rows", "spec change",
             "spec change refused", "partitioned files", "filters as expression", "filters as tuples",
             "filters as text", "filters with or/not", "published", "rows deleted", "rows updated", "merge",
             "rows merged", "merge refused")


def run_machine(machine: type[TableMachine], examples: int, steps: int, derandomize: bool,
                required: tuple[str, ...] = EXERCISED) -> None:
    """Run the state machine; then check every kind of outcome happened (a model test can go vacuous)."""
    STATS.clear()
    machine.TestCase.settings = settings(SETTINGS, max_examples=examples, stateful_step_count=steps,
                                         derandomize=derandomize, database=None if derandomize else
                                         settings.default.database)
    machine.TestCase().runTest()
    print(dict(STATS))
    missing = [k for k in required if not STATS[k]]
    assert not missing, f"the run never exercised {missing}: {dict(STATS)}"


def test_table_against_model() -> None:
    run_machine(TableMachine, examples=40, steps=30, derandomize=True)


@pytest.mark.slow
def test_table_against_model_long() -> None:
    run_machine(TableMachine, examples=150, steps=40, derandomize=False, required=(*EXERCISED, "scan refused"))
