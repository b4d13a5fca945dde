"""Keyed tables against a plain-Python model: the merge equals the model at every snapshot.

The model keeps, per snapshot, one row per key (README "Primary-key tables"): an upsert replaces a row when
its precombine value is at least the stored one (null lowest; the later row of a batch on ties), a delete
removes the key whatever its precombine, an insert-only append refuses known keys. A hypothesis state machine
drives a real keyed table (SQLite catalog, Parquet files, hidden buckets) through upserts with duplicate keys
and precombine ties, updates by filter (of v, of pre upward only; the key never), on-write evolution (a
widened column, a new column), renames of the precombine and other columns, deletes by key and by random
filter trees, compaction, expiry, time travel and upserts written as Spark's executors write them (no deletion
vectors), comparing every read (pruned and unpruned, with deletion vectors and without them — the full merge
is the oracle — with key and non-key filters, and ``count()``) with the model; an insert-only append's pruned
key lookup is compared with the unpruned one. Stream upserts and marked insert-only appends (a replay commits
nothing) and landed files captured with ``operation="upsert"`` follow the same rules.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import fieldshift as fs
from fieldshift.table.catalog.stream_marks import StreamMark
from fieldshift.table.evolution.on_write import prepare_append
from fieldshift.table.keyed.key_lookup import live_keys
from fieldshift.table.keyed.keys import dedupe_latest
from fieldshift.table.partitions.partition_write import write_partitioned
from fieldshift.table.streams.stream_commit import append_once
from fieldshift.table.updates import AddFiles
from tests.table.filter_model import keeps, spec_trees, to_expression, to_text

Row = dict[str, Any]  # logical column -> value; logical columns: id, pre, v, w
KEYS = st.integers(0, 12)
PRE = st.none() | st.integers(0, 3)
V = st.none() | st.integers(-5, 5)
BATCH = st.lists(st.tuples(KEYS, PRE, V), min_size=1, max_size=8)
SPECS = [[], ["id"], ["bucket(3, id)"], ["truncate(4, id)"]]  # partition sources must be key columns
_SMALL = st.integers(-5, 12)
_LEAF = st.one_of(  # logical columns; v's literals are scaled like its values once v is a long
    st.tuples(st.just("leaf"), st.sampled_from([("id",), ("v",), ("pre",)]),
              st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), _SMALL),
    st.tuples(st.just("leaf"), st.sampled_from([("id",), ("v",)]), st.sampled_from(["in", "not in"]),
              st.lists(_SMALL, min_size=1, max_size=3)),
    st.tuples(st.just("leaf"), st.sampled_from([("v",), ("pre",)]), st.sampled_from(["is_null", "not_null"]),
              st.none()))


def _scaled(spec: tuple, v_long: bool) -> tuple:
    """v's literals times 2**33 when v holds longs (as its values are)."""
    if spec[0] == "leaf":
        _, path, op, lit = spec
        if path != ("v",) or not v_long or lit is None:
            return spec
        return ("leaf", path, op, [x * 2**33 for x in lit] if isinstance(lit, list) else lit * 2**33)
    if spec[0] == "not":
        return ("not", _scaled(spec[1], v_long))
    return (spec[0], [_scaled(x, v_long) for x in spec[1]])


def _renamed(spec: tuple, names: dict[str, str]) -> tuple:
    """The spec on the table's current column names (the model keeps logical ones)."""
    if spec[0] == "leaf":
        return ("leaf", (names[spec[1][0]],), spec[2], spec[3])
    if spec[0] == "not":
        return ("not", _renamed(spec[1], names))
    return (spec[0], [_renamed(x, names) for x in spec[1]])


def _newer(new: Any, old: Any) -> bool:
    """Whether an upserted precombine value wins over the stored one (null lowest, ties to the later)."""
    if new is None:
        return old is None
    return old is None or new >= old


class KeyedMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="fs-keyed-model-"))
        self.snaps: dict[int, tuple[dict[str, str], dict[int, Row]]] = {}
        self.expired: set[int] = set()
        self.batches = 0

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    @initialize(buckets=st.integers(1, 3), partition=st.sampled_from(SPECS))
    def create(self, buckets: int, partition: list[str]) -> None:
        schema = pa.schema([pa.field("id", pa.int32(), nullable=False), ("pre", pa.int32()), ("v", pa.int32())])
        self.t = fs.Table.create(self.dir / "t", schema, identifier_fields=["id"], precombine="pre",
                                 buckets=buckets, partition_by=partition)
        self.partition = partition
        self.names = {"id": "id", "pre": "pre", "v": "v"}
        self.v_long = False
        self.rows: dict[int, Row] = {}
        self._record()

    # -- the model ------------------------------------------------------------------------------
    def _record(self) -> None:
        self.snaps[self.t.current_snapshot.snapshot_id] = (dict(self.names), {k: dict(r) for k, r in self.rows.items()})

    def _arrow(self, batch: list[tuple[int, Any, Any]], long_v: bool, w: bool) -> pa.Table:
        cols: dict[str, Any] = {
            self.names["id"]: pa.array([k for k, _, _ in batch], pa.int64() if long_v else pa.int32()),
            self.names["pre"]: pa.array([p for _, p, _ in batch], pa.int32()),
            self.names["v"]: pa.array([v if v is None or not long_v else v * 2**33 for _, _, v in batch],
                                      pa.int64() if long_v else pa.int32()),
        }
        if w:
            cols["w"] = pa.array([None if v is None else f"w{v}" for _, _, v in batch], pa.string())
        return pa.table(cols)

    def _model_rows(self, batch: list[tuple[int, Any, Any]], long_v: bool, w: bool) -> dict[int, Row]:
        out: dict[int, Row] = {}
        for k, p, v in batch:  # within a batch: the highest precombine, the later row on ties
            row = {"id": k, "pre": p, "v": v if v is None or not long_v else v * 2**33}
            if w:
                row["w"] = None if v is None else f"w{v}"
            if k not in out or _newer(p, out[k]["pre"]):
                out[k] = row
        return out

    def _absorb(self, long_v: bool, w: bool) -> None:
        self.v_long |= long_v
        if w:
            self.names.setdefault("w", "w")

    def _upserted(self, batch: list[tuple[int, Any, Any]], long_v: bool, w: bool) -> None:
        """The model after an upsert of ``batch``: per key, the higher precombine value wins."""
        self._absorb(long_v, w)
        for k, row in self._model_rows(batch, long_v, w).items():
            if k not in self.rows or _newer(row["pre"], self.rows[k]["pre"]):
                self.rows[k] = row
        self._record()

    # -- writes ---------------------------------------------------------------------------------
    @rule(batch=BATCH, long_v=st.booleans(), w=st.booleans())
    def upsert(self, batch: list[tuple[int, Any, Any]], long_v: bool, w: bool) -> None:
        self.t.upsert(self._arrow(batch, long_v, w))
        self._upserted(batch, long_v, w)

    @rule(batch=BATCH, long_v=st.booleans(), w=st.booleans())
    def stream_upsert(self, batch: list[tuple[int, Any, Any]], long_v: bool, w: bool) -> None:
        """A micro-batch upserted with its mark; replaying it commits nothing."""
        mark = StreamMark("keyed-stream", self.batches)
        assert append_once(self.t, self._arrow(batch, long_v, w), mark, operation="upsert") is not None
        self.batches += 1
        head = self.t.current_snapshot.snapshot_id
        assert append_once(self.t, self._arrow(batch, long_v, w), mark, operation="upsert") is None
        assert self.t.current_snapshot.snapshot_id == head
        self._upserted(batch, long_v, w)

    @rule(batch=BATCH, long_v=st.booleans(), w=st.booleans())
    def capture_upsert(self, batch: list[tuple[int, Any, Any]], long_v: bool, w: bool) -> None:
        """A landed Parquet file captured with operation='upsert'; a second capture takes nothing."""
        land = self.dir / "land"
        land.mkdir(exist_ok=True)
        pq.write_table(self._arrow(batch, long_v, w), land / f"f{self.batches:05}.parquet")
        self.batches += 1
        assert fs.capture(land, self.t, operation="upsert").files == 1
        head = self.t.current_snapshot.snapshot_id
        assert fs.capture(land, self.t, operation="upsert").files == 0
        assert self.t.current_snapshot.snapshot_id == head
        self._upserted(batch, long_v, w)

    @rule(batch=BATCH)
    def upsert_unresolved(self, batch: list[tuple[int, Any, Any]]) -> None:
        """An upsert as Spark's executors write it: files committed with no lookup, no deletion vectors
        (unresolved), so their groups merge on read while later upserts keep writing vectors."""
        head = self.t.catalog.head(self.t.table_id)
        prepared = prepare_append(self._arrow(batch, False, False), self.t.schemas_by_id()[head.schema_id],
                                  evolve=True, on_incompatible="fail", policy=self.t.policy)
        if prepared.evolved:
            return
        files = write_partitioned(self.t.storage, prepared.schema, self.t.spec,
                                  dedupe_latest(prepared.data, self.t.keys), [], keys=self.t.keys)
        self.t.catalog.commit(self.t.table_id, head.snapshot_id, [],
                              [AddFiles(tuple(files), prepared.schema.schema_id)], operation="upsert")
        for k, row in self._model_rows(batch, False, False).items():
            if k not in self.rows or _newer(row["pre"], self.rows[k]["pre"]):
                self.rows[k] = {**row, **({"w": None} if "w" in self.names else {})}
        self._record()

    @rule(batch=BATCH, carry_pre=st.booleans(), carry_v=st.booleans())
    def partial_upsert(self, batch: list[tuple[int, Any, Any]], carry_pre: bool, carry_v: bool) -> None:
        """``upsert(partial=True)`` of the key and some columns: the others keep the live row's values (null for
        a new key); the precombine then decides as in any upsert (a filled one ties: the new row wins)."""
        cols: dict[str, Any] = {self.names["id"]: pa.array([k for k, _, _ in batch], pa.int32())}
        if carry_pre:
            cols[self.names["pre"]] = pa.array([p for _, p, _ in batch], pa.int32())
        if carry_v:
            cols[self.names["v"]] = pa.array([v for _, _, v in batch], pa.int32())
        result = self.t.upsert(pa.table(cols), partial=True)
        latest: dict[int, tuple[Any, Any]] = {}
        for k, p, v in batch:  # the batch's own winner per key (the later row when the precombine is not carried)
            if k not in latest or not carry_pre or _newer(p, latest[k][0]):
                latest[k] = (p, v)
        inserted = updated = 0
        for k, (p, v) in latest.items():
            old = self.rows.get(k)
            row = dict(old) if old is not None else dict.fromkeys(self.names)
            row["id"] = k
            if carry_pre:
                row["pre"] = p
            if carry_v:
                row["v"] = v
            if old is None or _newer(row["pre"], old["pre"]):
                self.rows[k] = row
                inserted, updated = inserted + (old is None), updated + (old is not None)
        if result.rows_updated is not None:  # None only where a bucket merges on read (unresolved upserts; rows
            # that lose to a live row are then written too, and lose on read)
            assert (result.rows_written, result.rows_inserted, result.rows_updated) == (inserted + updated, inserted,
                                                                                         updated)
        self._record()

    @rule(batch=st.lists(st.tuples(KEYS, PRE, V), max_size=6), update=st.booleans(), insert=st.booleans(),
          delete=st.sampled_from([None, "always", "v null"]), by_source=st.booleans())
    def merge(self, batch: list[tuple[int, Any, Any]], update: bool, insert: bool, delete: str | None,
              by_source: bool) -> None:
        """MERGE INTO by the key with whole source rows (id, pre, v): a matched delete (always, or where the
        source's v is null), an update, an insert, a by-source delete; refused when a key is matched twice,
        inserted twice, or an update would lower its precombine value."""
        if not (update or insert or delete or by_source):
            insert = True
        source = pa.table({self.names["id"]: pa.array([k for k, _, _ in batch], pa.int32()),
                           self.names["pre"]: pa.array([p for _, p, _ in batch], pa.int32()),
                           self.names["v"]: pa.array([v for _, _, v in batch], pa.int32())})
        b = self.t.merge(source, on=self.names["id"])
        if delete:
            b.when_matched_delete(condition=None if delete == "always" else (["source", self.names["v"]], "is_null"))
        if update:
            b.when_matched_update()
        if insert:
            b.when_not_matched_insert()
        if by_source:
            b.when_not_matched_by_source_delete()
        rows, counts, refused = {k: dict(r) for k, r in self.rows.items()}, [0, 0, 0], False
        keys = [k for k, _, _ in batch]
        if (update or delete) and any(keys.count(k) > 1 for k in self.rows):
            refused = True
        new_keys = [k for k in keys if k not in self.rows]
        if insert and len(set(new_keys)) < len(new_keys):
            refused = True
        for k, p, v in batch:
            old = self.rows.get(k)
            if old is not None and delete and (delete == "always" or v is None):
                rows.pop(k, None)
                counts[2] += 1
            elif old is not None and update:
                if not _newer(p, old["pre"]):
                    refused = True
                rows[k] = {**old, "id": k, "pre": p, "v": v}
                counts[1] += 1
            elif old is None and insert:
                rows[k] = {**dict.fromkeys(self.names), "id": k, "pre": p, "v": v}
                counts[0] += 1
        if by_source:
            for k in set(self.rows) - set(keys):
                rows.pop(k)
                counts[2] += 1
        head = self.t.current_snapshot.snapshot_id
        if refused:
            with pytest.raises(fs.SchemaEvolutionError):
                b.execute()
            assert self.t.current_snapshot.snapshot_id == head
            return
        result = b.execute()
        assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == tuple(counts)
        self.rows = rows
        if any(counts):
            self._record()
        else:
            assert self.t.current_snapshot.snapshot_id == head and result.snapshot_id is None

    @rule(batch=BATCH, marked=st.booleans())
    def append(self, batch: list[tuple[int, Any, Any]], marked: bool) -> None:
        """Insert-only, by ``Table.append`` or as a stream's micro-batch (then a replay commits nothing)."""
        keys = [k for k, _, _ in batch]
        head = self.t.current_snapshot.snapshot_id
        mark = StreamMark("keyed-stream", self.batches)
        incoming = pa.table({"id": pa.array(keys, pa.int32())})
        pruned = set(live_keys(self.t.io, self.t.io.metadata(head), incoming).column("id").to_pylist())
        full = set(live_keys(self.t.io, self.t.io.metadata(head), incoming, prune=False).column("id").to_pylist())
        assert pruned & set(keys) == full & set(keys) == set(self.rows) & set(keys)  # the pruned check is exact

        def write() -> Any:
            if marked:
                return append_once(self.t, self._arrow(batch, False, False), mark)
            return self.t.append(self._arrow(batch, False, False))

        if len(set(keys)) < len(keys) or set(keys) & set(self.rows):
            with pytest.raises(fs.DuplicateKeyError):
                write()
            assert self.t.current_snapshot.snapshot_id == head
            return
        assert write() is not None
        if marked:
            self.batches += 1
            assert write() is None and self.t.current_snapshot.snapshot_id == head + 1
        self.rows.update(self._model_rows(batch, False, False))
        self._record()

    @rule(keys=st.lists(KEYS, min_size=1, max_size=4))
    def delete_keys(self, keys: list[int]) -> None:
        self.t.delete(keys)
        for k in keys:
            self.rows.pop(k, None)
        self._record()

    def _tree(self, data: st.DataObject, names: dict[str, str]) -> tuple[tuple, Any]:
        """A random filter tree on id (the key), v and pre, and one of its spellings (expression or text)."""
        spec = data.draw(spec_trees(_LEAF, max_leaves=4), label="filter")
        scaled = _scaled(spec, self.v_long)
        real = _renamed(scaled, names)
        form = data.draw(st.sampled_from(["expression", "text"]), label="filter form")
        return scaled, to_expression(real) if form == "expression" else to_text(real)

    @rule(data=st.data())
    def delete_where(self, data: st.DataObject) -> None:
        """A delete by a random filter tree (OR, NOT, IN / NOT IN over nulls): the model drops the rows
        the filter keeps."""
        head = self.t.current_snapshot.snapshot_id
        spec, flt = self._tree(data, self.names)
        result = self.t.delete(filter=flt)
        gone = [k for k, r in self.rows.items() if keeps(spec, lambda path, r=r: r.get(path[0]))]
        assert result.keys_deleted == len(gone), (spec, flt)
        assert result.rows_deleted == len(gone), (spec, flt)
        for k in gone:
            del self.rows[k]
        if gone:
            self._record()
        else:
            assert self.t.current_snapshot.snapshot_id == head

    @rule(data=st.data(), column=st.sampled_from(["v", "v", "pre", "id"]), value=st.none() | st.integers(-5, 5))
    def update_where(self, data: st.DataObject, column: str, value: Any) -> None:
        """An update by a random filter tree (after renames and widenings): v takes any value, pre only one at
        least each matched row's own (else RowChangeError), the key never (RowChangeError); nothing is written
        when refused or when nothing matches."""
        head = self.t.current_snapshot.snapshot_id
        spec, flt = self._tree(data, self.names)
        if column == "v" and value is not None and self.v_long:
            value *= 2**33
        matched = [k for k, r in self.rows.items() if keeps(spec, lambda path, r=r: r.get(path[0]))]
        lower = column == "pre" and any(
            self.rows[k]["pre"] is not None and (value is None or value < self.rows[k]["pre"]) for k in matched)
        if column == "id" or (matched and lower):
            with pytest.raises(fs.RowChangeError):
                self.t.update({self.names[column]: value}, where=flt)
            assert self.t.current_snapshot.snapshot_id == head
            return
        result = self.t.update({self.names[column]: value}, where=flt)
        assert result.rows_updated == len(matched), (spec, flt)
        for k in matched:
            self.rows[k][column] = value
        if matched:
            self._record()
        else:
            assert self.t.current_snapshot.snapshot_id == head

    @rule()
    def compact(self) -> None:
        self.t.compact()
        self._record()

    @rule(which=st.sampled_from(["pre", "v"]), suffix=st.sampled_from(["_a", "_b"]))
    def rename(self, which: str, suffix: str) -> None:
        new = which + suffix
        if new == self.names[which]:
            return
        self.t.update_schema().rename_column(self.names[which], new).commit()
        self.names[which] = new
        self._record()

    @rule(kind=st.sampled_from(["string", "float", "long", "double"]))
    def retype_pre(self, kind: str) -> None:
        """The precombine column widens only in ways that keep order (int -> long, int -> double); a change
        that reorders or merges values (-> string, int -> float) is refused and changes nothing."""
        new = {"string": pa.string(), "float": pa.float32(), "long": pa.int64(), "double": pa.float64()}[kind]
        current = self.t.schema.find(self.names["pre"]).type
        head = self.t.current_snapshot.snapshot_id
        if current != new and not (current == pa.int32() and kind in ("long", "double")):
            with pytest.raises(fs.SchemaEvolutionError):  # the precombine rule, or the policy's narrowing
                self.t.update_schema().update_column(self.names["pre"], new).commit()
            assert self.t.current_snapshot.snapshot_id == head
            return
        self.t.update_schema().update_column(self.names["pre"], new).commit()
        self._record()

    @rule(new_spec=st.sampled_from(SPECS))
    def change_spec(self, new_spec: list[str]) -> None:
        """A new partition spec: files written before keep theirs, and merges still meet every version."""
        if new_spec == self.partition:
            return
        with self.t.update_spec() as update:
            for term in self.partition:
                update.remove_field(term)
            for term in new_spec:
                update.add_field(term)
        self.partition = new_spec
        self._record()

    @precondition(lambda self: len(self.snaps) > 2)
    @rule(retain=st.integers(1, 3))
    def expire(self, retain: int) -> None:
        result = self.t.expire_snapshots(older_than=0, retain_last=retain)
        for sid in result.expired_snapshots:
            del self.snaps[sid]
            self.expired.add(sid)
        self.t.vacuum(older_than=0)
        self._check_published()

    def _check_published(self) -> None:
        """Publishing as an Iceberg table (sampled: at expiries, no draws of its own): PyIceberg reads the
        oldest kept and the newest snapshot with the model's rows (unresolved buckets resolved at publish
        time), or a refusal (a cast Iceberg does not make) wrote nothing."""
        from pyiceberg.table import StaticTable

        try:
            self.t.publish()
        except fs.UnpublishableError as e:
            assert "nothing was written" in str(e)
            return
        published = StaticTable.from_metadata(str(self.t.location))
        for sid in sorted({min(self.snaps), self.t.current_snapshot.snapshot_id} - {0}):
            got = published.scan(snapshot_id=sid).to_arrow().to_pylist()
            assert sorted(got, key=lambda x: x["id"]) == self._expected(sid, None), sid

    # -- reads ----------------------------------------------------------------------------------
    def _expected(self, sid: int, spec: tuple | None) -> list[Row]:
        names, rows = self.snaps[sid]
        out = [{names[c]: r.get(c) for c in names} for r in rows.values()
               if spec is None or keeps(spec, lambda path, r=r: r.get(path[0]))]
        return sorted(out, key=lambda x: x["id"])

    @rule(data=st.data())
    def read(self, data: st.DataObject) -> None:
        sid = data.draw(st.sampled_from(sorted(self.snaps)))
        names = self.snaps[sid][0]
        spec, flt = self._tree(data, names) if data.draw(st.booleans(), label="filtered") else (None, None)
        want = self._expected(sid, spec)
        for prune, vectors in ((True, True), (False, True), (True, False)):
            scan = self.t.scan(snapshot_id=sid, filter=flt)
            scan.prune, scan.use_vectors = prune, vectors  # vectors off: the full merge, the oracle
            got = sorted(scan.to_arrow().to_pylist(), key=lambda x: x["id"])
            assert got == want, (sid, flt, prune, vectors)
            assert scan.count() == len(want)
            streamed = [r for b in scan.to_batches() for r in b.to_pylist()]
            assert sorted(streamed, key=lambda x: x["id"]) == want

    @precondition(lambda self: bool(self.expired))
    @rule()
    def expired_snapshots_refuse_time_travel(self) -> None:
        with pytest.raises(fs.SnapshotExpiredError):
            self.t.scan(snapshot_id=max(self.expired))

    @invariant()
    def head_matches(self) -> None:
        if hasattr(self, "t"):
            got = sorted(self.t.to_arrow().to_pylist(), key=lambda x: x["id"])
            assert got == self._expected(self.t.current_snapshot.snapshot_id, None)
            oracle = self.t.scan()
            oracle.use_vectors = False
            assert sorted(oracle.to_arrow().to_pylist(), key=lambda x: x["id"]) == got


TestKeyedModel = KeyedMachine.TestCase
TestKeyedModel.settings = settings(max_examples=25, stateful_step_count=20, deadline=None,
                                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
