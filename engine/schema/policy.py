"""Cast policies: which primitive type changes are allowed, and what happens when a value cannot cast.

A policy is a frozen set of named rules plus an ``on_error`` mode. Presets name the rule sets the
seeds describe: ``lossless`` (default), ``iceberg``, ``hudi`` (schema-on-read matrix), ``onehouse``
(the on-write matrix) and ``explicit`` (the Table Store proposal's explicit casts).

Each rule answers "may a value of file type A be read as type B?" with a :class:`CastKind`:
``WIDEN`` never fails on a value; ``CHECKED`` may fail on some values (overflow, unparsable text,
invalid UTF-8) and then follows ``on_error``.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import pyarrow as pa

from fieldshift.errors import InvalidOptionError
from fieldshift.options import OnError, check_option
from fieldshift.schema.policy_names import POLICY_NAMES

__all__ = ["POLICY_NAMES", "RULES", "CastKind", "CastPolicy"]

T = pa.types


class CastKind(enum.Enum):
    """What a policy's decision does to values: keep them, widen them losslessly, or cast each and check it."""

    IDENTITY = "identity"
    WIDEN = "widen"
    CHECKED = "checked"


_INT_DIGITS = {8: 3, 16: 5, 32: 10, 64: 19}
_FLOAT_RANK = {pa.float16(): 0, pa.float32(): 1, pa.float64(): 2}
_FLOAT_MANTISSA = {pa.float16(): 11, pa.float32(): 24, pa.float64(): 53}
_UNITS = ("s", "ms", "us", "ns")


def _int_bits(t: pa.DataType) -> tuple[bool, int]:
    return T.is_signed_integer(t), t.bit_width


def _is_string(t: pa.DataType) -> bool:
    return T.is_string(t) or T.is_large_string(t) or T.is_string_view(t)


def _is_binary(t: pa.DataType) -> bool:
    return T.is_binary(t) or T.is_large_binary(t) or T.is_binary_view(t)


def _is_number(t: pa.DataType) -> bool:
    return T.is_integer(t) or T.is_floating(t) or T.is_decimal(t)


def _int_digits(t: pa.DataType) -> int:
    return _INT_DIGITS[t.bit_width] + (1 if T.is_unsigned_integer(t) and t.bit_width == 64 else 0)


Rule = Callable[[pa.DataType, pa.DataType], CastKind | None]


def _w(ok: bool) -> CastKind | None:
    return CastKind.WIDEN if ok else None


def int_widening(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    if not (T.is_integer(a) and T.is_integer(b)):
        return None
    (sa, wa), (sb, wb) = _int_bits(a), _int_bits(b)
    if sa == sb:
        return _w(wb > wa)
    return _w(not sa and sb and wb > wa)  # unsigned -> strictly wider signed


def int_to_float_exact(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    if not (T.is_integer(a) and T.is_floating(b)):
        return None
    value_bits = a.bit_width - (1 if T.is_signed_integer(a) else 0)
    return _w(value_bits <= _FLOAT_MANTISSA[b])


def int_to_float_lossy(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return _w(T.is_integer(a) and b in (pa.float32(), pa.float64()))


def float_widening(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return _w(T.is_floating(a) and T.is_floating(b) and _FLOAT_RANK[b] > _FLOAT_RANK[a])


def decimal_widening(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    if not (T.is_decimal(a) and T.is_decimal(b)) or (a.precision, a.scale) == (b.precision, b.scale):
        return None
    return _w(b.scale >= a.scale and b.precision - b.scale >= a.precision - a.scale)


def decimal_precision_widening(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return _w(T.is_decimal(a) and T.is_decimal(b) and a.scale == b.scale and b.precision > a.precision)


def int_to_decimal(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return _w(T.is_integer(a) and T.is_decimal(b) and b.precision - b.scale >= _int_digits(a))


def float_to_decimal(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return CastKind.CHECKED if T.is_floating(a) and T.is_decimal(b) else None


def date_widening(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return _w(T.is_date32(a) and T.is_date64(b))


def date_to_timestamp(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    if not (T.is_date(a) and T.is_timestamp(b) and b.tz is None):
        return None
    # date32 spans +-5.8 million years: ns overflows past 2262 and us past year 294,000
    return CastKind.CHECKED if b.unit in ("us", "ns") else CastKind.WIDEN


def timestamp_unit_widening(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    if not (T.is_timestamp(a) and T.is_timestamp(b) and (a.tz is None) == (b.tz is None)):
        return None
    if _UNITS.index(b.unit) < _UNITS.index(a.unit):
        return None
    if a.unit == b.unit:  # only the zone name differs: the same instants
        return _w(a.tz != b.tz)
    return CastKind.CHECKED  # multiplying by 1000^k can overflow int64


def timestamp_zone_change(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    """TIMESTAMP <-> TIMESTAMPTZ of the same unit (DuckLake allows it; wall time is read as UTC)."""
    return _w(T.is_timestamp(a) and T.is_timestamp(b) and a.unit == b.unit
              and (a.tz is None) != (b.tz is None))


def time_unit_widening(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return _w(T.is_time(a) and T.is_time(b) and _UNITS.index(b.unit) > _UNITS.index(a.unit))


def string_to_binary(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return _w(_is_string(a) and _is_binary(b))


def binary_to_string(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return CastKind.CHECKED if _is_binary(a) and _is_string(b) else None  # must be valid UTF-8


def fixed_to_binary(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return _w(T.is_fixed_size_binary(a) and _is_binary(b))


def null_to_any(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return _w(T.is_null(a))


def number_to_string(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return _w(_is_number(a) and _is_string(b))


def date_to_string(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return _w(T.is_date(a) and _is_string(b))


def string_to_date(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return CastKind.CHECKED if _is_string(a) and T.is_date(b) else None


def string_to_decimal(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    return CastKind.CHECKED if _is_string(a) and T.is_decimal(b) else None


def any_castable(a: pa.DataType, b: pa.DataType) -> CastKind | None:
    """Anything Arrow can cast (narrowing, text parsing, ...); values that fail follow on_error."""
    return CastKind.CHECKED if _arrow_can_cast(a, b) else None


@lru_cache(maxsize=4096)
def _arrow_can_cast(a: pa.DataType, b: pa.DataType) -> bool:
    if T.is_integer(a) and T.is_decimal(b):
        return True  # Arrow wants a wide decimal first; the kernel casts through decimal(20, 0)
    try:
        pa.nulls(1, type=a).cast(b)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, TypeError):
        return False
    return True


RULES: dict[str, Rule] = {
    f.__name__: f
    for f in (
        int_widening, int_to_float_exact, int_to_float_lossy, float_widening, decimal_widening,
        decimal_precision_widening, int_to_decimal, float_to_decimal, date_widening,
        date_to_timestamp, timestamp_unit_widening, timestamp_zone_change, time_unit_widening,
        string_to_binary, binary_to_string, fixed_to_binary, null_to_any, number_to_string,
        date_to_string, string_to_date, string_to_decimal, any_castable,
    )
}

_LOSSLESS = frozenset({
    "int_widening", "int_to_float_exact", "float_widening", "decimal_widening", "int_to_decimal",
    "date_widening", "date_to_timestamp", "timestamp_unit_widening", "time_unit_widening",
    "string_to_binary", "binary_to_string", "fixed_to_binary", "null_to_any",
})
_ICEBERG = frozenset({
    "int_widening", "float_widening", "decimal_precision_widening", "date_to_timestamp",
    "timestamp_unit_widening", "null_to_any",
})
_HUDI = frozenset({
    "int_widening", "int_to_float_lossy", "float_widening", "number_to_string", "int_to_decimal",
    "float_to_decimal", "decimal_widening", "string_to_date", "string_to_decimal", "date_to_string",
    "string_to_binary", "binary_to_string", "null_to_any",
})
_ONEHOUSE = _LOSSLESS | {"int_to_float_lossy", "number_to_string"}


@dataclass(frozen=True, slots=True)
class CastPolicy:
    """Which type changes a read (or an on-write widening) may make, and how value failures go.

    ``on_error``: ``"raise"`` stops with the column path, row and value; ``"null"`` reads a failing
    value as null and counts it. ``widen_to_string`` (on-write only) lets a numeric table column
    become a string column when strings arrive, as the Onehouse matrix shows; Onehouse's own
    Example 2 quarantines instead, which is the default.
    """

    name: str
    rules: frozenset[str]
    on_error: OnError = "raise"
    widen_to_string: bool = False

    def __post_init__(self) -> None:
        unknown = self.rules - RULES.keys()
        if unknown:
            raise InvalidOptionError(f"unknown cast rules {sorted(unknown)}; known: {sorted(RULES)}")
        check_option("on_error", self.on_error, OnError)

    # -- presets --------------------------------------------------------------------------------
    @classmethod
    def lossless(cls) -> CastPolicy:
        """Widening that never changes a value (the default)."""
        return cls("lossless", _LOSSLESS)

    @classmethod
    def iceberg(cls) -> CastPolicy:
        """Iceberg v3's promotions: int->long, float->double, decimal precision, date->timestamp."""
        return cls("iceberg", _ICEBERG)

    @classmethod
    def hudi(cls) -> CastPolicy:
        """Hudi's schema-on-read type-change table (and its on-write string<->bytes)."""
        return cls("hudi", _HUDI, widen_to_string=True)

    @classmethod
    def onehouse(cls, *, widen_to_string: bool = False) -> CastPolicy:
        """The Onehouse/Hudi on-write matrix: int->long->float->double->string, string<->bytes."""
        return cls("onehouse", _ONEHOUSE, widen_to_string=widen_to_string)

    @classmethod
    def explicit(cls, on_error: OnError = "raise") -> CastPolicy:
        """The Table Store proposal's explicit casts: anything Arrow can cast, failures per on_error."""
        return cls(f"explicit({on_error})", frozenset(RULES), on_error=on_error, widen_to_string=True)

    @classmethod
    def presets(cls) -> list[CastPolicy]:
        """The named presets, in the order ``suggest`` looks through them: ``lossless``, ``iceberg``, ``hudi``,
        ``onehouse``, ``explicit``.
        """
        return [cls.lossless(), cls.iceberg(), cls.hudi(), cls.onehouse(), cls.explicit()]

    # -- questions ------------------------------------------------------------------------------
    def classify(self, file_type: pa.DataType, read_type: pa.DataType) -> CastKind | None:
        """How a primitive of ``file_type`` reads as ``read_type``, or None when forbidden."""
        return _classify(self.rules, file_type, read_type)

    def allows(self, file_type: pa.DataType, read_type: pa.DataType) -> bool:
        """Whether a primitive written as ``file_type`` may be read as ``read_type`` under this policy (``classify``
        is not None).
        """
        return self.classify(file_type, read_type) is not None

    def reads(self, file_type: pa.DataType, read_type: pa.DataType, *, map_key: bool = False) -> bool:
        """Whether a plan under this policy reads a primitive of ``file_type`` as ``read_type``: the
        policy allows the change, a kernel can do the cast, and a map key only widens losslessly."""
        from fieldshift.kernels import select_cast_kernel

        kind = self.classify(file_type, read_type)
        if kind is None or kind is CastKind.IDENTITY:
            return kind is CastKind.IDENTITY
        if map_key and CastPolicy.lossless().classify(file_type, read_type) is not CastKind.WIDEN:
            return False
        return select_cast_kernel(file_type, read_type, kind is CastKind.CHECKED) is not None

    def suggested_preset(self, file_type: pa.DataType, read_type: pa.DataType, *, map_key: bool = False,
                         keeping: CastPolicy | None = None) -> CastPolicy | None:
        """The first other preset whose plans read this change (:meth:`reads`), or None; with
        ``keeping``, only a preset that allows everything ``keeping`` does (a table's files that read
        under its policy read under the preset too)."""
        for preset in CastPolicy.presets():
            if preset.name == self.name or (keeping is not None and not keeping.rules <= preset.rules):
                continue
            if preset.reads(file_type, read_type, map_key=map_key):
                return preset
        return None

    def suggest(self, file_type: pa.DataType, read_type: pa.DataType, *, map_key: bool = False) -> str:
        """Which preset would read this change, phrased as what to do (only a preset that does)."""
        preset = self.suggested_preset(file_type, read_type, map_key=map_key)
        if preset is None:
            return "no preset allows it: rewrite the data or add a new column"
        return f"use CastPolicy.{preset.call}"

    @property
    def call(self) -> str:
        """How a preset is made in Python (``explicit()``, ``onehouse(widen_to_string=True)``); another
        policy by its name."""
        if self.name.startswith("explicit"):
            return "explicit()" if self.on_error == "raise" else f"explicit(on_error={self.on_error!r})"
        if self.name == "onehouse" and self.widen_to_string:
            return "onehouse(widen_to_string=True)"
        return f"{self.name}()" if self.name in ("lossless", "iceberg", "hudi", "onehouse") else self.name

    # -- names --------------------------------------------------------------------------------
    @property
    def option_name(self) -> str:
        """A stable text that :meth:`from_name` turns back into this policy.

        Presets have short names (``lossless``, ``iceberg``, ``hudi``, ``onehouse``,
        ``onehouse-widen-to-string``, ``explicit``, ``explicit-null``); any other policy is written as
        JSON with its rules, so a table can record it too.
        """
        for name, make in _NAMED.items():
            if make() == self:
                return name
        return json.dumps({"name": self.name, "rules": sorted(self.rules), "on_error": self.on_error,
                           "widen_to_string": self.widen_to_string}, separators=(",", ":"))

    @classmethod
    def from_name(cls, text: str) -> CastPolicy:
        """The policy a name (or :attr:`option_name` text) stands for; the one parser of policy names.

        Case, ``_``/``-`` and the ``explicit(null)`` spelling of :attr:`name` are accepted.
        """
        raw = str(text).strip()
        if raw.startswith("{"):
            try:
                spec = json.loads(raw)
                return cls(str(spec["name"]), frozenset(spec["rules"]), spec.get("on_error", "raise"),
                           bool(spec.get("widen_to_string", False)))
            except (ValueError, KeyError, TypeError) as e:
                raise InvalidOptionError(f"policy {raw!r} is not a valid policy description ({e})") from None
        key = raw.lower().replace("_", "-").replace("(", "-").replace(")", "").replace(":", "-")
        key = _ALIASES.get(key, key)
        if key not in _NAMED:
            raise InvalidOptionError(f"unknown policy {raw!r}; use one of {', '.join(_NAMED)}")
        return _NAMED[key]()

    def __str__(self) -> str:
        return self.name


_NAMED: dict[str, Callable[[], CastPolicy]] = {
    "lossless": CastPolicy.lossless,
    "iceberg": CastPolicy.iceberg,
    "hudi": CastPolicy.hudi,
    "onehouse": CastPolicy.onehouse,
    "onehouse-widen-to-string": lambda: CastPolicy.onehouse(widen_to_string=True),
    "explicit": CastPolicy.explicit,
    "explicit-null": lambda: CastPolicy.explicit("null"),
}
_ALIASES = {"explicit-raise": "explicit", "onehouse-widen": "onehouse-widen-to-string"}
if tuple(_NAMED) != POLICY_NAMES:  # the light list the command line's help prints is this one
    raise AssertionError(f"policy_names.POLICY_NAMES {POLICY_NAMES} != the presets {tuple(_NAMED)}")


@lru_cache(maxsize=8192)
def _classify(rules: frozenset[str], a: pa.DataType, b: pa.DataType) -> CastKind | None:
    from fieldshift.schema.types import logical_type

    if logical_type(a) == logical_type(b):
        return CastKind.IDENTITY
    kinds = [k for k in (RULES[r](a, b) for r in sorted(rules)) if k is not None]
    if not kinds:
        return None
    return CastKind.WIDEN if CastKind.WIDEN in kinds else CastKind.CHECKED
