"""Which kernel serves a cast, decided at plan time: a specialised one (``fast_casts``), Arrow's (``casts``),
or, for a string or binary view Arrow cannot cast, the plain layout's kernel behind a view cast.

It sits above every cast kernel it chooses from, so none of them imports it.
"""

from __future__ import annotations

import functools

import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.kernels.casts import arrow_can_cast
from fieldshift.kernels.fast_casts import fast_kernel_for
from fieldshift.kernels.outcome import CastOutcome
from fieldshift.kernels.registry import ARROW_CAST, CHECKED_CAST, VIEW_CAST, VIEW_CAST_CHECKED, get_kernel, kernel

__all__ = ["select_cast_kernel", "view_cast", "view_cast_checked"]

_VIEW_PLAIN = {pa.string_view(): pa.string(), pa.binary_view(): pa.binary()}


@functools.lru_cache(maxsize=4096)
def select_cast_kernel(source: pa.DataType, target: pa.DataType, checked: bool) -> str | None:
    """The registry key of the fastest kernel for this cast (decided at plan time, once per type pair),
    or None when no kernel can do it."""
    fast = fast_kernel_for(source, target, checked)
    if fast is not None:
        return fast
    if not arrow_can_cast(source, target):
        plain = _VIEW_PLAIN.get(source)  # views reach the plain type's kernels (Arrow lacks many)
        if plain is not None and select_cast_kernel(plain, target, checked) is not None:
            return VIEW_CAST_CHECKED if checked else VIEW_CAST
        return None
    return CHECKED_CAST if checked else ARROW_CAST


def _via_plain(values: pa.Array, target: pa.DataType, checked: bool) -> CastOutcome:
    plain = _VIEW_PLAIN[values.type]
    key = select_cast_kernel(plain, target, checked)
    return get_kernel(key)(pc.cast(values, plain), target)


@kernel(VIEW_CAST)
def view_cast(values: pa.Array, target: pa.DataType) -> CastOutcome:
    """A string/binary view cast through the plain layout, whose kernels Arrow (and we) have."""
    return _via_plain(values, target, False)


@kernel(VIEW_CAST_CHECKED)
def view_cast_checked(values: pa.Array, target: pa.DataType) -> CastOutcome:
    """``view_cast`` whose failing rows become null and are marked (the plain layout's checked kernel)."""
    return _via_plain(values, target, True)
