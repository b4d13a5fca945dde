"""On-write widening: the table type that holds both the table's values and the incoming ones."""

from __future__ import annotations

import pyarrow as pa

from fieldshift.errors import IncompatibleTypeError
from fieldshift.schema.policy import CastKind, CastPolicy
from fieldshift.schema.type_names import primitive_name
from fieldshift.schema.types import FieldType, logical_type

__all__ = ["decoded_type", "supertype"]

T = pa.types

# Common supertypes tried when neither side widens to the other (e.g. int32 and uint32 -> int64).
_MEETING_POINTS = (pa.int16(), pa.int32(), pa.int64(), pa.float64())


def _name(t: pa.DataType) -> str:
    try:
        return primitive_name(t)
    except TypeError:
        return str(t)


def _is_numeric_or_temporal(t: pa.DataType) -> bool:
    return T.is_integer(t) or T.is_floating(t) or T.is_decimal(t) or T.is_temporal(t) or T.is_boolean(t)


def _is_text(t: pa.DataType) -> bool:
    return T.is_string(t) or T.is_large_string(t) or T.is_string_view(t)


def supertype(
    incoming: pa.DataType | FieldType, table: pa.DataType | FieldType, policy: CastPolicy | None = None,
    *, path: str = "", map_key: bool = False,
) -> pa.DataType:
    """The table's type after writing ``incoming`` values into a ``table`` column.

    A narrower incoming type is cast up (the table keeps its type); a wider one widens the table.
    Structs are matched by child name (new children are appended), lists and maps recurse.
    Raises :class:`IncompatibleTypeError` when no type holds both under ``policy`` (a map key, also
    ``map_key``, widens only losslessly).
    """
    from fieldshift.schema.formats.arrow_conversion import type_to_arrow

    policy = policy or CastPolicy.onehouse()
    return _supertype(type_to_arrow(incoming), type_to_arrow(table), policy, path or "<value>", map_key)


def _fail(inc: pa.DataType, tab: pa.DataType, path: str, policy: CastPolicy, why: str, also: str = "") -> None:
    """Refuse with the fixes that work whatever the table: cast the input, or quarantine the rows (and
    ``also``, a fix that works for this refusal)."""
    raise IncompatibleTypeError(
        f"column {path!r}: incoming {_name(inc)} cannot be written into table type {_name(tab)} "
        f"under CastPolicy.{policy.name}: {why}. Cast the input to {_name(tab)}{also}, or quarantine the rows "
        "(on_incompatible='quarantine')."
    )


def _widen_to_string_advice(policy: CastPolicy) -> str:
    """The policy that widens the column to string instead (the table's policy reads old values as text
    when it allows number -> string, as onehouse does)."""
    call = "onehouse(widen_to_string=True)" if policy.name == "onehouse" else \
        f"{policy.name} with widen_to_string=True"
    return f", append with policy=CastPolicy.{call} to widen the column to string as the Onehouse matrix does"


def _supertype(inc: pa.DataType, tab: pa.DataType, policy: CastPolicy, path: str, key: bool = False) -> pa.DataType:
    inc = decoded_type(inc)
    if T.is_null(inc):  # an all-null column (pandas/polars infer it) fits any column, nested ones too
        return tab
    if T.is_struct(inc) or T.is_struct(tab):
        return _struct(inc, tab, policy, path)
    if T.is_map(inc) or T.is_map(tab):
        if not (T.is_map(inc) and T.is_map(tab)):
            _fail(inc, tab, path, policy, "a map and a non-map never share a type")
        key = _supertype(inc.key_type, tab.key_type, policy, f"{path}.key", key=True)
        value = _supertype(inc.item_type, tab.item_type, policy, f"{path}.value")
        return pa.map_(tab.key_field.with_type(key), tab.item_field.with_type(value))
    if _is_list(inc) or _is_list(tab):
        if not (_is_list(inc) and _is_list(tab)):
            _fail(inc, tab, path, policy, "a list and a non-list never share a type")
        element = _supertype(inc.value_type, tab.value_type, policy, f"{path}.element")
        return _relist(tab, tab.value_field.with_type(element))
    if logical_type(inc) == logical_type(tab) or T.is_null(inc):
        return tab
    if policy.allows(inc, tab) and not (_narrows(policy, inc, tab) and policy.allows(tab, inc)):
        return tab  # the narrower incoming values are cast up
    if policy.allows(tab, inc):
        if key and CastPolicy.lossless().classify(tab, inc) is not CastKind.WIDEN:
            _fail(inc, tab, path, policy, "map keys may only widen losslessly (e.g. int -> long)")
        if _is_text(inc) and _is_numeric_or_temporal(tab) and not policy.widen_to_string:
            _fail(inc, tab, path, policy, "widening a numeric column to string is off (Onehouse's Example 2 "
                  "quarantines it)", _widen_to_string_advice(policy))
        return inc
    if T.is_decimal(inc) and T.is_decimal(tab):  # the decimal holding both (Spark's and Hudi's rule)
        scale = max(inc.scale, tab.scale)
        precision = max(inc.precision - inc.scale, tab.precision - tab.scale) + scale
        candidate = pa.decimal128(precision, scale) if precision <= 38 else None
        if candidate is not None and policy.allows(inc, candidate) and policy.allows(tab, candidate):
            return candidate
    for candidate in _MEETING_POINTS:
        if policy.allows(inc, candidate) and policy.allows(tab, candidate):
            return candidate
    _fail(inc, tab, path, policy, "no rule of the policy widens either type to the other")
    raise AssertionError("unreachable")


def decoded_type(t: pa.DataType) -> pa.DataType:
    """The value type behind an encoding (dictionary, run-end) or an extension type (e.g. uuid)."""
    while True:
        if T.is_dictionary(t):
            t = t.value_type
        elif T.is_run_end_encoded(t):
            t = t.value_type
        elif isinstance(t, pa.BaseExtensionType):
            t = t.storage_type
        else:
            return t


def _narrows(policy: CastPolicy, inc: pa.DataType, tab: pa.DataType) -> bool:
    """Writing ``inc`` into ``tab`` would be a checked cast while ``tab`` widens to ``inc`` losslessly
    (int -> long, float -> double): a policy that allows everything (explicit) must still widen the
    table there, not narrow the values. Text stays as the Onehouse matrix says (bytes into string)."""
    return _is_numeric_or_temporal(inc) and _is_numeric_or_temporal(tab) \
        and policy.classify(inc, tab) is CastKind.CHECKED and policy.classify(tab, inc) is CastKind.WIDEN \
        and CastPolicy.lossless().classify(tab, inc) is CastKind.WIDEN


def _is_list(t: pa.DataType) -> bool:
    return T.is_list(t) or T.is_large_list(t) or T.is_fixed_size_list(t) or T.is_list_view(t) \
        or T.is_large_list_view(t)


def _relist(like: pa.DataType, element: pa.Field) -> pa.DataType:
    if T.is_large_list(like):
        return pa.large_list(element)
    return pa.list_(element)


def _struct(inc: pa.DataType, tab: pa.DataType, policy: CastPolicy, path: str) -> pa.DataType:
    if not (T.is_struct(inc) and T.is_struct(tab)):
        _fail(inc, tab, path, policy, "a struct and a non-struct never share a type")
    incoming = {inc.field(i).name: inc.field(i) for i in range(inc.num_fields)}
    out = []
    for i in range(tab.num_fields):
        child = tab.field(i)
        if child.name in incoming:
            widened = _supertype(incoming.pop(child.name).type, child.type, policy, f"{path}.{child.name}")
            out.append(child.with_type(widened))
        else:
            out.append(child)
    out.extend(f.with_nullable(True) for f in incoming.values())  # new children append, nullable
    return pa.struct(out)
