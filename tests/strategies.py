"""Hypothesis strategies for fieldshift schemas and the Arrow data that goes with them.

Shared by the round-trip, engine and property tests. Everything is importable as
``from tests.strategies import ...`` (or ``from strategies import ...`` with ``tests/`` on the path).

Strategies
----------
``primitive_types(profile=ALL)``
    Arrow primitive types fieldshift stores. ``profile`` narrows them:

    * ``ALL`` - everything, including physical variants that share a logical type (large/view
      strings and binaries, decimal32/64/256 of small precision) and decimal256 of precision > 38;
    * ``CANONICAL`` - one physical type per logical type (what Iceberg JSON round-trips exactly);
    * ``SPARK_EXACT`` - only types that survive ``spark_to_schema(schema_to_spark(s))`` unchanged.

``field_types(max_depth=2, profile=ALL, ...)``
    A FieldType: a primitive, or struct / list / map nesting up to ``max_depth`` containers deep,
    with unique ids (1, 2, ... parents before children) on every nested field.

``schemas(max_depth=2, max_fields=5, profile=ALL, defaults=True, ...)``
    A random :class:`fieldshift.Schema`: nested structs, lists (``list`` and ``large_list`` by default,
    more layouts by profile), maps with primitive keys, random nullability, ids unique at every depth
    and shuffled (not in tree order, with gaps, sometimes from 0), sometimes a highest_field_id above the
    largest id (as after a drop), sometimes identifier fields, and sometimes valid initial/write defaults.
    ``defaults`` may be a predicate on the field type to choose which types get defaults.

``default_values(field_type)``
    A valid default for a type (structs inside are ``None`` or ``{}``, as Iceberg requires).

``arrow_data(schema, rows=st.integers(0, 20))``
    A ``pa.Table`` with ``schema.to_arrow()`` as its schema (ids in the field metadata). Every
    nullable field - top-level, struct child, list element, map value - gets its own null rate
    between 5 and 20 %; required fields are never null. Map keys are unique within a map.

Values avoid NaN (it breaks equality) and keep temporal values between 1900 and 2200, so they fit
nanosecond timestamps and Spark. Default values come from a Hypothesis-controlled ``random.Random``
(they shrink); table data from a ``random.Random`` seeded by one Hypothesis draw (whole tables stay
cheap and reproducible, but do not shrink value by value). Edge values (min/max/0/empty) come up
often.
"""

from __future__ import annotations

import datetime as dt
import decimal
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import strategies as st

from fieldshift import Field, Schema
from fieldshift.schema.types import FieldType, ListType, MapType, StructType

__all__ = [
    "ALL",
    "CANONICAL",
    "SPARK_EXACT",
    "arrow_data",
    "default_values",
    "field_names",
    "field_types",
    "primitive_types",
    "random_value",
    "remap_ids",
    "schemas",
    "walk_fields",
]

ALL = "all"
CANONICAL = "canonical"
SPARK_EXACT = "spark_exact"
_PROFILES = (ALL, CANONICAL, SPARK_EXACT)

_ZONES = (None, "UTC", "Europe/Paris")

_SIMPLE_CANONICAL = (
    pa.bool_(), pa.int8(), pa.int16(), pa.int32(), pa.int64(),
    pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
    pa.float16(), pa.float32(), pa.float64(),
    pa.string(), pa.binary(), pa.date32(), pa.date64(),
    pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns"),
    *(pa.timestamp(unit, tz=tz) for unit in ("s", "ms", "us", "ns") for tz in _ZONES),
)
_SIMPLE_VARIANTS = (pa.large_string(), pa.string_view(), pa.large_binary(), pa.binary_view())
_SIMPLE_SPARK = (
    pa.bool_(), pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.float32(), pa.float64(),
    pa.string(), pa.binary(), pa.date32(), pa.timestamp("us"), pa.timestamp("us", tz="UTC"),
    pa.time32("s"), pa.time32("ms"), pa.time64("us"),
)


def _check_profile(profile: str) -> None:
    if profile not in _PROFILES:
        raise ValueError(f"profile must be one of {_PROFILES}, got {profile!r}")


@st.composite
def _decimals(draw: st.DrawFn, profile: str) -> pa.DataType:
    if profile == SPARK_EXACT:
        p = draw(st.integers(1, 38))
        return pa.decimal128(p, draw(st.integers(0, p)))
    p = draw(st.integers(1, 76))
    s = draw(st.integers(0, p))
    if p > 38:
        return pa.decimal256(p, s)
    if profile == CANONICAL:
        return pa.decimal128(p, s)
    make = draw(st.sampled_from(
        [pa.decimal128, pa.decimal256]
        + ([pa.decimal64] if p <= 18 else []) + ([pa.decimal32] if p <= 9 else [])
    ))
    return make(p, s)


def primitive_types(profile: str = ALL, *, null: bool = True) -> st.SearchStrategy[pa.DataType]:
    """Arrow primitive types fieldshift stores (see the module docs for ``profile``)."""
    _check_profile(profile)
    simple = {ALL: _SIMPLE_CANONICAL + _SIMPLE_VARIANTS, CANONICAL: _SIMPLE_CANONICAL,
              SPARK_EXACT: _SIMPLE_SPARK}[profile]
    if null:
        simple = (*simple, pa.null())
    kinds: list[Any] = [*simple, "decimal"] + (["fixed"] if profile != SPARK_EXACT else [])

    def expand(kind: Any) -> st.SearchStrategy[pa.DataType]:
        if kind == "decimal":
            return _decimals(profile)
        if kind == "fixed":
            return st.integers(1, 16).map(pa.binary)  # fixed_size_binary
        return st.just(kind)

    return st.sampled_from(kinds).flatmap(expand)


def _list_variants(profile: str) -> tuple[str, ...]:
    return {ALL: ("list", "large_list", "list_view", "large_list_view", "fixed_size_list"),
            CANONICAL: ("list", "fixed_size_list"), SPARK_EXACT: ("list",)}[profile]


_NAME_CHARS = "abcdefxyz_"
_ODD_NAMES = ("a.b", "with space", "élan", "Name", "_hidden", "x`y", "数据", "key", "value", "element")


def field_names() -> st.SearchStrategy[str]:
    """Mostly short ascii names, sometimes dots, spaces, unicode, backticks or reserved words."""
    return st.one_of(st.text(_NAME_CHARS, min_size=1, max_size=4), st.sampled_from(_ODD_NAMES))


# ------------------------------------------------------------------------------------------------
# random values (shared by defaults and data)
# ------------------------------------------------------------------------------------------------
_EPOCH = dt.datetime(1900, 1, 1)
_SPAN_SECONDS = 300 * 365 * 86400  # 1900 .. ~2199
_TEXT_CHARS = "abcXYZ 019'\"\\\n\t%_é€😀\x00"
_WIDE = decimal.Context(prec=100)  # decimal256 has up to 76 digits; the default context rounds at 28
_UNIT_MICROS = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": 1}


def _edge(rng: random.Random) -> bool:
    return rng.random() < 0.2


def _int_value(rng: random.Random, t: pa.DataType) -> int:
    bits = t.bit_width
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if pa.types.is_signed_integer(t) else (0, 2**bits - 1)
    if _edge(rng):
        return rng.choice([lo, hi, 0, min(hi, 1), max(lo, -1)])
    return rng.randint(lo, hi) if rng.random() < 0.5 else rng.randint(max(lo, -100), min(hi, 100))


def _float_value(rng: random.Random, t: pa.DataType) -> float:
    width = {16: np.float16, 32: np.float32, 64: np.float64}[t.bit_width]
    if _edge(rng):
        return float(rng.choice([0.0, -0.0, 1.0, float("inf"), float("-inf"), float(np.finfo(width).max)]))
    x = rng.uniform(-1000, 1000) if rng.random() < 0.7 else rng.uniform(-1, 1) * 10.0 ** rng.randint(-30, 30)
    with np.errstate(over="ignore"):
        narrowed = width(x)
    return float(narrowed) if np.isfinite(narrowed) else 0.0


def _decimal_value(rng: random.Random, t: pa.DataType) -> decimal.Decimal:
    top = 10**t.precision - 1
    n = rng.choice([top, -top, 0, 1]) if _edge(rng) else rng.randint(-top, top)
    return decimal.Decimal(n).scaleb(-t.scale, context=_WIDE)


def _datetime_value(rng: random.Random, unit: str) -> dt.datetime:
    seconds = rng.randrange(_SPAN_SECONDS)
    step = _UNIT_MICROS[unit]
    micros = 0 if step == 1_000_000 else rng.randrange(0, 1_000_000, step)
    return _EPOCH + dt.timedelta(seconds=seconds, microseconds=micros)


def _time_value(rng: random.Random, unit: str) -> dt.time:
    step = _UNIT_MICROS[unit]
    micros = 0 if step == 1_000_000 else rng.randrange(0, 1_000_000, step)
    return dt.time(rng.randrange(24), rng.randrange(60), rng.randrange(60), micros)


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_TEXT_CHARS) for _ in range(rng.randint(0, 8)))


def _primitive_value(rng: random.Random, t: pa.DataType) -> Any:
    T = pa.types
    if T.is_null(t):
        return None
    if T.is_boolean(t):
        return rng.random() < 0.5
    if T.is_integer(t):
        return _int_value(rng, t)
    if T.is_floating(t):
        return _float_value(rng, t)
    if T.is_decimal(t):
        return _decimal_value(rng, t)
    if T.is_string(t) or T.is_large_string(t) or T.is_string_view(t):
        return _text(rng)
    if T.is_fixed_size_binary(t):
        return rng.randbytes(t.byte_width)
    if T.is_binary(t) or T.is_large_binary(t) or T.is_binary_view(t):
        return rng.randbytes(rng.randint(0, 8))
    if T.is_date(t):
        return _datetime_value(rng, "s").date()
    if T.is_timestamp(t):
        value = _datetime_value(rng, t.unit)
        return value.replace(tzinfo=dt.UTC) if t.tz is not None else value
    if T.is_time(t):
        return _time_value(rng, t.unit)
    raise TypeError(f"no value generator for {t}")


def random_value(rng: random.Random, t: FieldType, *, for_default: bool = False,
                 null_rate: Callable[[Field], float] | None = None) -> Any:
    """A random non-null Python value of ``t`` (children may be null where nullable).

    ``for_default``: structs (at any depth) become ``{}`` or ``None`` as Iceberg defaults require.
    ``null_rate(field)``: probability that a nullable child is null (default 0.1).
    """
    def child(f: Field) -> Any:
        rate = null_rate(f) if null_rate is not None else 0.1
        if (f.nullable and rng.random() < rate) or _is_null_type(f.type):
            return None
        return random_value(rng, f.type, for_default=for_default, null_rate=null_rate)

    if isinstance(t, StructType):
        if for_default:
            return {}
        return {f.name: child(f) for f in t.fields}
    if isinstance(t, ListType):
        n = t.size if t.size is not None else rng.choice([0, 1, 2, 3, rng.randint(0, 6)])
        return [child(t.element) for _ in range(n)]
    if isinstance(t, MapType):
        keys: list[Any] = []
        for _ in range(rng.choice([0, 1, 2, 3])):
            k = random_value(rng, t.key.type, for_default=for_default)
            if k not in keys:
                keys.append(k)
        pairs = [(k, child(t.value)) for k in keys]
        return dict(pairs) if for_default else pairs
    return _primitive_value(rng, t)


def _is_null_type(t: FieldType) -> bool:
    return isinstance(t, pa.DataType) and pa.types.is_null(t)


def default_values(t: FieldType) -> st.SearchStrategy[Any]:
    """A valid (non-None) default value for type ``t``."""
    return st.randoms(use_true_random=False).map(lambda rng: random_value(rng, t, for_default=True))


# ------------------------------------------------------------------------------------------------
# types and schemas
# ------------------------------------------------------------------------------------------------
class _Ids:
    def __init__(self) -> None:
        self.next = 1

    def take(self) -> int:
        fid = self.next
        self.next += 1
        return fid


class _TypeBuilder:
    def __init__(self, draw: st.DrawFn, ids: _Ids, profile: str, primitives: st.SearchStrategy | None,
                 defaults: bool | Callable[[FieldType], bool], docs: bool, max_children: int) -> None:
        self.draw, self.ids, self.profile = draw, ids, profile
        self.primitives = primitives if primitives is not None else primitive_types(profile)
        self.keys = self.primitives.filter(lambda t: not pa.types.is_null(t))
        self.defaults, self.docs, self.max_children = defaults, docs, max_children

    def type(self, depth: int) -> FieldType:
        draw = self.draw
        kind = draw(st.sampled_from(["primitive", "struct", "list", "map"])) if depth > 0 else "primitive"
        if kind == "primitive":
            return draw(self.primitives)
        if kind == "struct":
            names = draw(st.lists(field_names(), min_size=1, max_size=self.max_children, unique=True))
            return StructType(tuple(self.field(n, depth - 1) for n in names))
        if kind == "list":
            variant = draw(st.sampled_from(_list_variants(self.profile)))
            size = draw(st.integers(1, 3)) if variant == "fixed_size_list" else None
            element = self.field("element", depth - 1, member=True)
            return ListType(element, variant, size)
        key = self.field("key", 0, key=True)
        value = self.field("value", depth - 1, member=True)
        sorted_keys = self.profile != SPARK_EXACT and draw(st.integers(0, 4)) == 0
        return MapType(key, value, keys_sorted=sorted_keys)

    def field(self, name: str, depth: int, *, key: bool = False, member: bool = False) -> Field:
        """A field; list elements and map keys/values (``member``/``key``) get no doc or defaults,
        which Iceberg JSON and Spark have no place for."""
        fid = self.ids.take()
        ftype = self.draw(self.keys) if key else self.type(depth)
        nullable = False if key else (True if _is_null_type(ftype) else self.draw(st.booleans()))
        plain = key or member
        doc = None
        if self.docs and not plain:
            doc = self.draw(st.one_of(st.none(), st.text(min_size=1, max_size=5)))
        initial = write = None
        wants = self.defaults(ftype) if callable(self.defaults) else self.defaults
        if wants and not plain and not _is_null_type(ftype) and self.draw(st.integers(0, 3)) == 0:
            initial = self.draw(default_values(ftype))
            choice = self.draw(st.sampled_from(["same", "none", "other"]))
            if choice == "same":
                write = initial
            elif choice == "other":
                write = self.draw(default_values(ftype))
        return Field(fid, name, ftype, nullable=nullable, doc=doc, initial_default=initial,
                     write_default=write)


@st.composite
def field_types(draw: st.DrawFn, max_depth: int = 2, *, profile: str = ALL,
                primitives: st.SearchStrategy[pa.DataType] | None = None,
                defaults: bool | Callable[[FieldType], bool] = False) -> FieldType:
    """A random FieldType nesting up to ``max_depth`` containers; nested ids are 1, 2, ..."""
    _check_profile(profile)
    builder = _TypeBuilder(draw, _Ids(), profile, primitives, defaults, docs=False, max_children=3)
    return builder.type(max_depth)


@st.composite
def schemas(
    draw: st.DrawFn,
    max_depth: int = 2,
    max_fields: int = 5,
    *,
    profile: str = ALL,
    primitives: st.SearchStrategy[pa.DataType] | None = None,
    defaults: bool | Callable[[FieldType], bool] = True,
    docs: bool = True,
    identifier_fields: bool = True,
    shuffle_ids: bool = True,
) -> Schema:
    """A random nested Schema with unique ids at every depth (see the module docs)."""
    _check_profile(profile)
    ids = _Ids()
    builder = _TypeBuilder(draw, ids, profile, primitives, defaults, docs, max_children=3)
    names = draw(st.lists(field_names(), min_size=1, max_size=max_fields, unique=True))
    fields = [builder.field(n, max_depth) for n in names]
    count = ids.next - 1
    if shuffle_ids:
        first = draw(st.sampled_from([0, 1, 1]))  # Paimon numbers fields from 0, Iceberg from 1
        pool = list(range(first, count + 1 + draw(st.integers(0, 5))))
        chosen = draw(st.permutations(pool))[:count]
        mapping = dict(zip(range(1, count + 1), chosen, strict=True))
        fields = [remap_ids(f, mapping) for f in fields]
    top = max((f.id for f in walk_fields(fields)), default=0)
    highest = top + draw(st.sampled_from([0, 0, 1, 7]))
    ident: tuple[int, ...] = ()
    if identifier_fields:
        candidates = [f.id for f in fields if not f.nullable and isinstance(f.type, pa.DataType)]
        if candidates:
            ident = tuple(draw(st.lists(st.sampled_from(candidates), unique=True, max_size=2)))
    return Schema(fields, schema_id=draw(st.integers(0, 9)), identifier_field_ids=ident,
                  highest_field_id=highest)


def walk_fields(fields: Any) -> list[Field]:
    """Every field at every depth of a sequence of fields (or a Schema), parents first."""
    out: list[Field] = []
    for f in fields:
        out.append(f)
        out.extend(walk_fields(f.children()))
    return out


def remap_ids(f: Field, mapping: dict[int, int]) -> Field:
    """A copy of ``f`` with every id at every depth replaced through ``mapping``."""
    t = f.type
    if isinstance(t, StructType):
        t = StructType(tuple(remap_ids(c, mapping) for c in t.fields))
    elif isinstance(t, ListType):
        t = ListType(remap_ids(t.element, mapping), t.variant, t.size)
    elif isinstance(t, MapType):
        t = MapType(remap_ids(t.key, mapping), remap_ids(t.value, mapping), t.keys_sorted)
    return f.with_(id=mapping.get(f.id, f.id), type=t)


# ------------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------------
@st.composite
def arrow_data(draw: st.DrawFn, schema: Schema, rows: int | st.SearchStrategy[int] | None = None) -> pa.Table:
    """A table of ``schema.to_arrow()`` with 5-20 % nulls wherever a field is nullable."""
    n = rows if isinstance(rows, int) else draw(rows if rows is not None else st.integers(0, 20))
    rng = random.Random(draw(st.integers(0, 2**64 - 1)))  # one draw: tables stay cheap to generate
    rates = {f.id: rng.uniform(0.05, 0.2) for f in schema.all_fields()}

    def rate(f: Field) -> float:
        return rates.get(f.id, 0.1)

    arrow_schema = schema.to_arrow()
    columns = []
    for f, af in zip(schema.fields, arrow_schema, strict=True):
        values = []
        for _ in range(n):
            if _is_null_type(f.type) or (f.nullable and rng.random() < rate(f)):
                values.append(None)
            else:
                values.append(random_value(rng, f.type, null_rate=rate))
        columns.append(pa.array(values, type=af.type))
    return pa.Table.from_arrays(columns, schema=arrow_schema)
