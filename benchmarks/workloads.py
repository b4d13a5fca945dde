"""Benchmark workloads: W1 from issue 7, its variants, the scale series, and the peers' implementations.

Everything here is plain functions so the benchmarks, the report and a REPL can share them. Data is
generated with numpy + Arrow buffers (no Python loops over rows), deterministic from a seed.

Scale: ``FIELDSHIFT_BENCH_SCALE=small`` shrinks W1 to 200,000 rows and the row series to 1 M so the
whole suite can be smoke-run in a minute; anything else (default ``full``) is the issue's W1.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import fieldshift as fs
from fieldshift.kernels.constants import clear_constant_cache
from fieldshift.schema.types import ListType, MapType, StructType

SCALE = os.environ.get("FIELDSHIFT_BENCH_SCALE", "full").strip().lower() or "full"
SMALL = SCALE == "small"
W1_ROWS = 200_000 if SMALL else 2_000_000
BATCH_ROWS = 131_072
NULL_FRACTION = 0.05
SEED = 20240607
W1_POLICY = fs.CastPolicy.hudi()  # int -> string needs it (lossless/iceberg refuse)
THREADS = int(os.environ.get("FIELDSHIFT_BENCH_THREADS", "2"))

Field = fs.Field
I32, I64, F32, F64, STR = pa.int32(), pa.int64(), pa.float32(), pa.float64(), pa.string()

# ------------------------------------------------------------------------------------------------
# environment
# ------------------------------------------------------------------------------------------------
def set_fieldshift_threads(n: int) -> int | None:
    """Use fieldshift's one threads setting if this build has it; returns the value in effect."""
    setter = getattr(fs, "set_threads", None)
    getter = getattr(fs, "get_threads", None)
    if setter is None:
        try:
            from fieldshift.kernels import threads as kt
        except ImportError:
            return None
        setter, getter = kt.set_threads, kt.get_threads
    setter(n)
    return getter() if getter else n

def environment_info() -> dict[str, object]:
    """Put into every benchmark's extra_info so the JSON says how it was measured."""
    return {
        "scale": SCALE,
        "threads": THREADS,
        "fieldshift_threads": set_fieldshift_threads(THREADS),
        "pool": pa.default_memory_pool().backend_name,
        "mimalloc_purge_delay": os.environ.get("MIMALLOC_PURGE_DELAY"),
        "load_avg_1m": os.getloadavg()[0],
    }

def run(benchmark: Any, fn: Callable[[], Any], *, role: str, rounds: int = 5, warmup: int = 1,
        iterations: int = 1, per: int = 1, setup: Callable[[], Any] | None = None, **info: Any) -> Any:
    benchmark.extra_info.update(environment_info())
    benchmark.extra_info.update(role=role, per=per, **info)
    if setup is not None:
        def with_setup() -> tuple[tuple[()], dict[str, Any]]:
            setup()
            return (), {}
        return benchmark.pedantic(fn, setup=with_setup, rounds=rounds, warmup_rounds=warmup)
    return benchmark.pedantic(fn, rounds=rounds, warmup_rounds=warmup, iterations=iterations)

_EVICT = np.zeros(0, dtype=np.uint8)


def caches_cold() -> None:
    """Evict the CPU caches (write a buffer larger than the last-level cache) and drop cached constants.

    A batch repeated round after round stays in the cache when its inputs and outputs fit and goes to
    DRAM when they do not, so a warm series steps up by the memory hierarchy alone (a plain copy does
    too); a cold one measures every size the way a batch arriving from the decoder is processed.
    """
    global _EVICT
    if not _EVICT.size:
        _EVICT = np.zeros(1 << 30, dtype=np.uint8)
    _EVICT += 1
    clear_constant_cache()


def dropped(fn: Callable[[], Any]) -> Callable[[], int]:
    """Time ``fn`` and the release of its result, returning only its length.

    pytest-benchmark keeps each round's return value alive through the next round, so a benchmark
    returning hundreds of MB would make every round fault in fresh pages while its peers reuse the
    pool's warm ones. Every peer here returns a length instead, so all of them free their output
    (cheap: the Arrow pool keeps the pages) before the next round starts.
    """
    return lambda: len(fn())


# ------------------------------------------------------------------------------------------------
# W1 schemas (ids exactly as issue 7 defines them)
# ------------------------------------------------------------------------------------------------
def w1_file_fields() -> list[fs.Field]:
    fields = [Field(1 + i, f"c{i}", I32) for i in range(16)]
    fields += [Field(17 + i, f"f{i}", F32) for i in range(8)]
    fields += [Field(25 + i, f"s{i}", STR) for i in range(8)]
    fields += [Field(33 + i, f"l{i}", I64) for i in range(4)]
    fields += [
        Field(37 + i, f"st{i}", StructType((Field(100 + 2 * i, "x", I32), Field(101 + 2 * i, "y", STR))))
        for i in range(4)
    ]
    fields.append(Field(41, "li", ListType(Field(108, "element", I32))))
    fields.append(Field(42, "m", MapType(Field(109, "key", STR, nullable=False), Field(110, "value", I32))))
    return fields

def w1_file_schema() -> fs.Schema:
    return fs.Schema(w1_file_fields(), schema_id=0)

def w1_read_fields(*, with_int_to_string: bool = True) -> list[fs.Field]:
    """The W1 read schema's top-level fields (already in the reversed order)."""
    fields = [Field(1 + i, f"c{i}", I64) for i in range(10)]
    if with_int_to_string:
        fields += [Field(11, "c10", STR), Field(12, "c11", STR)]
    fields += [Field(1 + i, f"c{i}", I32) for i in range(12, 15)]  # c15 dropped
    fields += [Field(17 + i, f"f{i}", F64 if i < 4 else F32) for i in range(8)]
    fields += [Field(25 + i, f"name{i}", STR) for i in range(6)]
    fields.append(Field(31, "s6", STR))  # s7 dropped
    fields += [Field(33 + i, f"l{i}", I64) for i in range(4)]
    fields += [
        Field(37 + i, f"st{i}", StructType((
            Field(100 + 2 * i, "x", I64),
            Field(101 + 2 * i, "y_renamed", STR),
            Field(112 + i, "z", I32, initial_default=0),
        )))
        for i in range(4)
    ]
    fields.append(Field(41, "li", ListType(Field(108, "element", I64))))
    fields.append(Field(42, "m", MapType(Field(109, "key", STR, nullable=False), Field(110, "value", I64))))
    fields += [
        Field(43, "n_int", I64, initial_default=7),
        Field(44, "n_str", STR, initial_default="x"),
        Field(45, "n_dbl", F64),
        Field(46, "n_struct", StructType((Field(111, "a", I32),))),
    ]
    return fields[::-1]

def w1_read_schema(*, with_int_to_string: bool = True) -> fs.Schema:
    return fs.Schema(w1_read_fields(with_int_to_string=with_int_to_string), schema_id=1, highest_field_id=115)

def w1_rename_only_schema() -> fs.Schema:
    """Same order and types as the file; only s0..s5 -> name0..name5 and st*.y -> y_renamed."""
    out = []
    for f in w1_file_fields():
        if f.name[0] == "s" and f.name[1:].isdigit() and int(f.name[1:]) < 6:
            f = f.with_(name=f"name{f.name[1:]}")
        elif isinstance(f.type, StructType):
            x, y = f.type.fields
            f = f.with_(type=StructType((x, y.with_(name="y_renamed"))))
        out.append(f)
    return fs.Schema(out, schema_id=2)

def subset_schema(schema: fs.Schema, drop: Sequence[str] = ("c10", "c11")) -> fs.Schema:
    """The part of W1 PyIceberg can project (it cannot cast int -> string)."""
    return fs.Schema([f for f in schema.fields if f.name not in drop], schema_id=schema.schema_id)

# ------------------------------------------------------------------------------------------------
# data generation (numpy -> Arrow buffers)
# ------------------------------------------------------------------------------------------------
_LETTERS = (np.arange(256) % 26 + ord("a")).astype(np.uint8)  # random byte -> a letter

class Gen:
    """Random Arrow arrays with ``NULL_FRACTION`` nulls at every level, built from numpy buffers."""

    def __init__(self, seed: int = SEED, null_fraction: float = NULL_FRACTION) -> None:
        self.rng = np.random.default_rng(seed)
        self.null_fraction = null_fraction

    def validity(self, n: int, nullable: bool = True) -> tuple[pa.Buffer | None, int, np.ndarray]:
        if not nullable or self.null_fraction <= 0:
            return None, 0, np.ones(n, dtype=bool)
        valid = self.rng.random(n, dtype=np.float32) >= self.null_fraction
        nulls = int(n - np.count_nonzero(valid))
        return pa.py_buffer(np.packbits(valid, bitorder="little")), nulls, valid

    def primitive(self, t: pa.DataType, n: int, nullable: bool = True) -> pa.Array:
        if pa.types.is_string(t):
            return self.strings(n, 4, 20, nullable)
        if pa.types.is_integer(t):
            info = np.iinfo(t.to_pandas_dtype())
            values = self.rng.integers(info.min, info.max, size=n, dtype=info.dtype, endpoint=True)
        elif pa.types.is_floating(t):
            values = (self.rng.standard_normal(n) * 1000).astype(t.to_pandas_dtype())
        else:
            raise TypeError(f"no generator for {t}")
        vbuf, nulls, _ = self.validity(n, nullable)
        return pa.Array.from_buffers(t, n, [vbuf, pa.py_buffer(values)], null_count=nulls)

    def strings(self, n: int, lo: int, hi: int, nullable: bool = True, t: pa.DataType = STR,
                first: np.ndarray | None = None) -> pa.Array:
        """Random lowercase strings of ``lo``..``hi`` letters; ``first`` overrides each one's first byte."""
        vbuf, nulls, valid = self.validity(n, nullable)
        lengths = self.rng.integers(lo, hi, size=n, dtype=np.int32, endpoint=True)
        lengths[~valid] = 0
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(lengths, out=offsets[1:])
        data = _LETTERS[np.frombuffer(self.rng.bytes(int(offsets[-1])), dtype=np.uint8)]
        if first is not None and n:
            data[offsets[:-1]] = first
        return pa.Array.from_buffers(t, n, [vbuf, pa.py_buffer(offsets), pa.py_buffer(data)], null_count=nulls)

    def offsets(self, n: int, lo: int, hi: int, valid: np.ndarray) -> np.ndarray:
        lengths = self.rng.integers(lo, hi, size=n, dtype=np.int32, endpoint=True)
        lengths[~valid] = 0
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(lengths, out=offsets[1:])
        return offsets

    def array(self, f: pa.Field, n: int) -> pa.Array:
        """An array for Arrow field ``f`` (W1 shapes: struct, list 0-8, map 0-6, strings 4-20)."""
        t = f.type
        if pa.types.is_struct(t):
            vbuf, nulls, _ = self.validity(n, f.nullable)
            kids = [self._struct_child(t.field(i), n) for i in range(t.num_fields)]
            return pa.Array.from_buffers(t, n, [vbuf], null_count=nulls, children=kids)
        if pa.types.is_list(t):
            vbuf, nulls, valid = self.validity(n, f.nullable)
            offsets = self.offsets(n, 0, 8, valid)
            values = self.array(t.value_field, int(offsets[-1]))
            return pa.Array.from_buffers(t, n, [vbuf, pa.py_buffer(offsets)], null_count=nulls, children=[values])
        if pa.types.is_map(t):
            vbuf, nulls, valid = self.validity(n, f.nullable)
            offsets = self.offsets(n, 0, 6, valid)
            m = int(offsets[-1])
            # keys must be unique within a map: the first letter is the entry's position in its map
            position = np.arange(m, dtype=np.int32) - np.repeat(offsets[:-1], np.diff(offsets))
            keys = self.strings(m, 3, 12, nullable=False, first=(position + ord("a")).astype(np.uint8))
            items = self.array(t.item_field, m)
            entries = pa.Array.from_buffers(pa.struct([t.key_field, t.item_field]), m, [None], null_count=0,
                                            children=[keys, items])
            return pa.Array.from_buffers(t, n, [vbuf, pa.py_buffer(offsets)], null_count=nulls,
                                         children=[entries])
        return self.primitive(t, n, f.nullable)

    def _struct_child(self, f: pa.Field, n: int) -> pa.Array:
        if pa.types.is_string(f.type):  # W1: struct<x int32, y string of 2-14 letters>
            return self.strings(n, 2, 14, f.nullable)
        return self.array(f, n)

    def batch(self, schema: pa.Schema, n: int) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([self.array(f, n) for f in schema], schema=schema)

def batch_sizes(rows: int, batch_rows: int = BATCH_ROWS) -> list[int]:
    return [min(batch_rows, rows - lo) for lo in range(0, rows, batch_rows)]

def make_batches(schema: pa.Schema, rows: int, batch_rows: int = BATCH_ROWS, seed: int = SEED) -> list[pa.RecordBatch]:
    """Independent batches (each array starts at offset 0, like whole Parquet row groups)."""
    gen = Gen(seed)
    return [gen.batch(schema, n) for n in batch_sizes(rows, batch_rows)]

@dataclass
class W1:
    file_schema: fs.Schema
    read_schema: fs.Schema
    file_arrow: pa.Schema
    batches: list[pa.RecordBatch]

    @property
    def rows(self) -> int:
        return sum(b.num_rows for b in self.batches)

    @property
    def table(self) -> pa.Table:
        return pa.Table.from_batches(self.batches, schema=self.file_arrow)

# ------------------------------------------------------------------------------------------------
# the plain per-column pyarrow implementation (the baseline)
# ------------------------------------------------------------------------------------------------
Getter = Callable[[Any], pa.Array]

def plain_evolver(file_schema: fs.Schema, read_schema: fs.Schema) -> Callable[[pa.RecordBatch], pa.RecordBatch]:
    """A straightforward per-column pyarrow implementation, resolved by field id once per schema pair.

    Per batch: ``pc.cast`` where the type differs, ``StructArray.from_arrays`` /
    ``ListArray.from_arrays`` / ``MapArray.from_arrays`` for nested columns, ``pa.repeat`` /
    ``pa.nulls`` for missing columns. This is what a careful user writes without fieldshift.
    """
    out_schema = read_schema.to_arrow()
    columns = [_plain_field(rf, out_schema.field(i), file_schema.fields) for i, rf in enumerate(read_schema.fields)]

    def run(batch: pa.RecordBatch) -> pa.RecordBatch:
        cols = batch.columns
        n = batch.num_rows
        return pa.RecordBatch.from_arrays([c(cols, n) for c in columns], schema=out_schema)

    return run

def _child_range(arr: pa.Array, children: Sequence[pa.Array]) -> tuple[pa.Array, list[pa.Array]]:
    """A slice's offsets from 0 and the children range it covers (from_arrays refuses sliced offsets
    with a mask, and casting the whole shared child would make a slice cost the whole row group)."""
    offsets = arr.offsets
    start = offsets[0].as_py()
    if start == 0 and len(children[0]) == offsets[-1].as_py():
        return offsets, list(children)
    end = offsets[-1].as_py()
    return pc.subtract(offsets, pa.scalar(start, pa.int32())), [c.slice(start, end - start) for c in children]

def _plain_field(rf: fs.Field, target: pa.Field, file_fields: Sequence[fs.Field]) -> Callable[..., pa.Array]:
    by_id = {f.id: (i, f) for i, f in enumerate(file_fields)}
    t = target.type
    if rf.id not in by_id:
        if rf.initial_default is None:
            return lambda _cols, n: pa.nulls(n, type=t)
        if isinstance(rf.type, StructType):
            raise NotImplementedError("struct defaults are not part of these workloads")
        value = pa.scalar(rf.initial_default, type=t)
        return lambda _cols, n: pa.repeat(value, n)
    index, ff = by_id[rf.id]
    if isinstance(rf.type, StructType):
        kids = [_plain_field(c, t.field(i), ff.type.fields) for i, c in enumerate(rf.type.fields)]
        fields = list(t)

        def struct(cols: Sequence[pa.Array], n: int) -> pa.Array:
            arr = cols[index]
            inner = [arr.field(i) for i in range(arr.type.num_fields)]
            mask = arr.is_null() if arr.null_count else None
            return pa.StructArray.from_arrays([k(inner, len(arr)) for k in kids], fields=fields, mask=mask)

        return struct
    if isinstance(rf.type, ListType):
        elem = _plain_field(rf.type.element, t.value_field, (ff.type.element,))

        def list_(cols: Sequence[pa.Array], n: int) -> pa.Array:
            arr = cols[index]
            offsets, (values,) = _child_range(arr, (arr.values,))
            mask = arr.is_null() if arr.null_count else None
            return pa.ListArray.from_arrays(offsets, elem([values], len(values)), type=t, mask=mask)

        return list_
    if isinstance(rf.type, MapType):
        key = _plain_field(rf.type.key, t.key_field, (ff.type.key,))
        item = _plain_field(rf.type.value, t.item_field, (ff.type.key, ff.type.value))

        def map_(cols: Sequence[pa.Array], n: int) -> pa.Array:
            arr = cols[index]
            offsets, (k, v) = _child_range(arr, (arr.keys, arr.items))
            mask = arr.is_null() if arr.null_count else None
            return pa.MapArray.from_arrays(offsets, key([k], len(k)), item([k, v], len(v)), type=t, mask=mask)

        return map_

    def prim(cols: Sequence[pa.Array], n: int) -> pa.Array:
        arr = cols[index]
        return arr if arr.type == t else pc.cast(arr, t)

    return prim

# ------------------------------------------------------------------------------------------------
# PyIceberg schemas from fieldshift schemas
# ------------------------------------------------------------------------------------------------
def to_iceberg_schema(schema: fs.Schema) -> Any:
    from pyiceberg.schema import Schema as IcebergSchema

    return IcebergSchema(*(_iceberg_field(f) for f in schema.fields), schema_id=schema.schema_id)

def _iceberg_field(f: fs.Field) -> Any:
    from pyiceberg.types import NestedField

    return NestedField(field_id=f.id, name=f.name, field_type=_iceberg_type(f.type), required=not f.nullable,
                       initial_default=f.initial_default)

def _iceberg_type(t: Any) -> Any:
    from pyiceberg import types as it

    if isinstance(t, StructType):
        return it.StructType(*(_iceberg_field(c) for c in t.fields))
    if isinstance(t, ListType):
        e = t.element
        return it.ListType(element_id=e.id, element=_iceberg_type(e.type), element_required=not e.nullable)
    if isinstance(t, MapType):
        return it.MapType(key_id=t.key.id, key_type=_iceberg_type(t.key.type), value_id=t.value.id,
                          value_type=_iceberg_type(t.value.type), value_required=not t.value.nullable)
    simple = {I32: it.IntegerType(), I64: it.LongType(), F32: it.FloatType(), F64: it.DoubleType(),
              STR: it.StringType()}
    return simple[t]

def iceberg_evolver(file_schema: fs.Schema, read_schema: fs.Schema) -> Callable[[pa.RecordBatch], pa.RecordBatch]:
    from pyiceberg.io.pyarrow import _to_requested_schema

    ifile, iread = to_iceberg_schema(file_schema), to_iceberg_schema(read_schema)

    def run(batch: pa.RecordBatch) -> pa.RecordBatch:
        return _to_requested_schema(iread, ifile, batch)

    return run

# ------------------------------------------------------------------------------------------------
# bytes an evolved output must newly write
# ------------------------------------------------------------------------------------------------
def _all_buffers(arr: pa.Array) -> list[pa.Buffer]:
    return [b for b in arr.buffers() if b is not None]

def new_bytes_by_column(pairs: Sequence[tuple[pa.RecordBatch, pa.RecordBatch]]) -> dict[str, int]:
    """Per output column: bytes in output buffers that are not (slices of) input buffers, by address.

    Each distinct buffer counts once, so a constant column an engine caches across batches of the
    same length counts once (a buffer reused is a buffer written once).
    """
    seen: set[tuple[int, int]] = set()
    out_bytes: dict[str, int] = {}
    for inp, out in pairs:
        ranges = sorted({(b.address, b.address + b.size) for c in inp.columns for b in _all_buffers(c)})
        starts = np.array([r[0] for r in ranges], dtype=np.uint64)
        ends = np.array([r[1] for r in ranges], dtype=np.uint64)
        for name, col in zip(out.schema.names, out.columns, strict=True):
            total = out_bytes.get(name, 0)
            for b in _all_buffers(col):
                key = (b.address, b.size)
                if key in seen or b.size == 0:
                    continue
                seen.add(key)
                i = int(np.searchsorted(starts, np.uint64(b.address), side="right")) - 1
                if not (i >= 0 and b.address + b.size <= int(ends[i])):
                    total += b.size
            out_bytes[name] = total
    return out_bytes

def must_write_bytes(*per_impl: dict[str, int]) -> int:
    """Bytes the evolved output must newly write: per column, the least any implementation wrote."""
    names = set().union(*per_impl)
    return sum(min(d.get(n, 0) for d in per_impl) for n in names)

# ------------------------------------------------------------------------------------------------
# scale-series workloads
# ------------------------------------------------------------------------------------------------
def simple_schemas() -> tuple[fs.Schema, fs.Schema]:
    """The row series: int widening + a rename + a default (a int32 -> int64, b renamed, new c = 7)."""
    file = fs.Schema([Field(1, "a", I32), Field(2, "b", I32), Field(3, "s", STR)])
    read = fs.Schema([Field(1, "a", I64), Field(2, "b_renamed", I32), Field(3, "s", STR),
                      Field(4, "c", I64, initial_default=7)], schema_id=1)
    return file, read

def wide_schemas(columns: int) -> tuple[fs.Schema, fs.Schema]:
    """``columns`` file columns cycling int32 -> int64, float32 -> float64, a string rename, pass-through.

    The read schema also adds one int64 default column per ten file columns.
    """
    file_fields, read_fields = [], []
    for i in range(columns):
        kind = i % 4
        ft, rt, rname = [(I32, I64, f"c{i}"), (F32, F64, f"c{i}"), (STR, STR, f"r{i}"), (I64, I64, f"c{i}")][kind]
        file_fields.append(Field(i + 1, f"c{i}", ft))
        read_fields.append(Field(i + 1, rname, rt))
    extra = max(1, columns // 10)
    read_fields += [Field(columns + 1 + j, f"d{j}", I64, initial_default=j) for j in range(extra)]
    return fs.Schema(file_fields), fs.Schema(read_fields, schema_id=1)

def nested_schemas(depth: int) -> tuple[fs.Schema, fs.Schema]:
    """One column: struct nested ``depth`` levels; the innermost struct<x int32 -> int64, y renamed, new z=0>.

    Every level also carries a pass-through int64 sibling ``k`` so the structs are not trivial.
    """
    ids = iter(range(1, 10_000))

    def build(level: int) -> tuple[fs.Field, fs.Field]:
        sid, kid = next(ids), next(ids)
        k = Field(kid, "k", I64)
        if level == depth:
            xid, yid, zid = next(ids), next(ids), next(ids)
            fkids = (k, Field(xid, "x", I32), Field(yid, "y", STR))
            rkids = (k, Field(xid, "x", I64), Field(yid, "y_renamed", STR), Field(zid, "z", I32, initial_default=0))
        else:
            fchild, rchild = build(level + 1)
            fkids, rkids = (k, fchild), (k, rchild)
        return Field(sid, f"s{level}", StructType(fkids)), Field(sid, f"s{level}", StructType(rkids))

    f, r = build(1)
    return fs.Schema([f]), fs.Schema([r], schema_id=1)

def planning_schemas(columns: int = 1000) -> tuple[fs.Schema, fs.Schema]:
    """A ``columns``-column nested schema and its evolution (widen, rename, struct/list/map, defaults).

    The pattern (per 8 columns): int widen, float widen, string rename, pass-through long,
    struct<x int->long, y renamed, new z default>, list<int -> long>, map<string, int -> long>,
    and a column only in the read schema (with a default).
    """
    nid = iter(range(columns + 1, 1_000_000))
    file_fields, read_fields = [], []
    for i in range(columns):
        kind = i % 8
        name = f"c{i}"
        if kind == 0:
            file_fields.append(Field(i + 1, name, I32))
            read_fields.append(Field(i + 1, name, I64))
        elif kind == 1:
            file_fields.append(Field(i + 1, name, F32))
            read_fields.append(Field(i + 1, name, F64))
        elif kind == 2:
            file_fields.append(Field(i + 1, name, STR))
            read_fields.append(Field(i + 1, f"r{i}", STR))
        elif kind == 3:
            file_fields.append(Field(i + 1, name, I64))
            read_fields.append(Field(i + 1, name, I64))
        elif kind == 4:
            x, y, z = next(nid), next(nid), next(nid)
            file_fields.append(Field(i + 1, name, StructType((Field(x, "x", I32), Field(y, "y", STR)))))
            read_fields.append(Field(i + 1, name, StructType((
                Field(x, "x", I64), Field(y, "y_renamed", STR), Field(z, "z", I32, initial_default=0)))))
        elif kind == 5:
            e = next(nid)
            file_fields.append(Field(i + 1, name, ListType(Field(e, "element", I32))))
            read_fields.append(Field(i + 1, name, ListType(Field(e, "element", I64))))
        elif kind == 6:
            k, v = next(nid), next(nid)
            file_fields.append(Field(i + 1, name, MapType(Field(k, "key", STR, nullable=False),
                                                          Field(v, "value", I32))))
            read_fields.append(Field(i + 1, name, MapType(Field(k, "key", STR, nullable=False),
                                                          Field(v, "value", I64))))
        else:
            read_fields.append(Field(i + 1, f"new{i}", I64, initial_default=i))
    return fs.Schema(file_fields), fs.Schema(read_fields, schema_id=1)

# ------------------------------------------------------------------------------------------------
# end-to-end peers: polars and DuckDB doing W1's casts/renames/defaults
# ------------------------------------------------------------------------------------------------
def polars_w1_exprs() -> list[Any]:
    import polars as pl

    exprs: list[Any] = []
    for f in w1_read_fields():  # already reversed
        name = f.name
        if name == "n_int":
            exprs.append(pl.lit(7, dtype=pl.Int64).alias(name))
        elif name == "n_str":
            exprs.append(pl.lit("x", dtype=pl.String).alias(name))
        elif name == "n_dbl":
            exprs.append(pl.lit(None, dtype=pl.Float64).alias(name))
        elif name == "n_struct":
            exprs.append(pl.lit(None, dtype=pl.Struct({"a": pl.Int32})).alias(name))
        elif name == "m":
            exprs.append(pl.col("m").cast(pl.List(pl.Struct({"key": pl.String, "value": pl.Int64}))))
        elif name == "li":
            exprs.append(pl.col("li").cast(pl.List(pl.Int64)))
        elif name.startswith("st"):
            s = pl.col(name)
            packed = pl.struct(
                s.struct.field("x").cast(pl.Int64).alias("x"),
                s.struct.field("y").alias("y_renamed"),
                pl.lit(0, dtype=pl.Int32).alias("z"),
            )
            exprs.append(pl.when(s.is_not_null()).then(packed).otherwise(None).alias(name))
        elif name.startswith("name"):
            exprs.append(pl.col(f"s{name[4:]}").alias(name))
        else:
            target = {I64: pl.Int64, I32: pl.Int32, F64: pl.Float64, F32: pl.Float32, STR: pl.String}[f.type]
            exprs.append(pl.col(name).cast(target))
    return exprs

def duckdb_w1_sql(path: str) -> str:
    cols: list[str] = []
    for f in w1_read_fields():
        name = f.name
        if name == "n_int":
            cols.append("7::BIGINT AS n_int")
        elif name == "n_str":
            cols.append("'x'::VARCHAR AS n_str")
        elif name == "n_dbl":
            cols.append("NULL::DOUBLE AS n_dbl")
        elif name == "n_struct":
            cols.append("NULL::STRUCT(a INTEGER) AS n_struct")
        elif name == "m":
            cols.append("m::MAP(VARCHAR, BIGINT) AS m")
        elif name == "li":
            cols.append("li::BIGINT[] AS li")
        elif name.startswith("st"):
            cols.append(f"CASE WHEN {name} IS NULL THEN NULL ELSE struct_pack(x := {name}.x::BIGINT, "
                        f"y_renamed := {name}.y, z := 0::INTEGER) END AS {name}")
        elif name.startswith("name"):
            cols.append(f"s{name[4:]} AS {name}")
        else:
            sql_type = {I64: "BIGINT", I32: "INTEGER", F64: "DOUBLE", F32: "FLOAT", STR: "VARCHAR"}[f.type]
            cols.append(f"{name}::{sql_type} AS {name}")
    return f"SELECT {', '.join(cols)} FROM read_parquet('{path}')"


def timed(fn: Callable[[Any], Any], arg: Any, rounds: int) -> tuple[float, float]:
    """``fn(arg)`` run ``rounds`` times by hand (the peers' scripts alternate readers round by round): the
    median and the fastest wall time."""
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        fn(arg)
        times.append(time.perf_counter() - began)
    return statistics.median(times), min(times)
