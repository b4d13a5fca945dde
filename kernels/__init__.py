"""fieldshift.kernels: the only code that touches values. Plans name kernels by registry key.

Numba is imported (and its kernels compiled or loaded from the on-disk cache) only when a numba
kernel first runs; importing this package registers every kernel without touching numba.
"""

from fieldshift.kernels.cast_choice import select_cast_kernel
from fieldshift.kernels.casts import arrow_cast, checked_cast
from fieldshift.kernels.checked import range_checked_cast
from fieldshift.kernels.constants import constant_array
from fieldshift.kernels.layout import (
    conform,
    decoded,
    list_child_range,
    list_from_view,
    needs_rebuild,
    rebuild_as,
    rebuild_list,
    rebuild_map,
    rebuild_struct,
    validity_buffer,
    without_views,
)
from fieldshift.kernels.numba_format import int_to_string
from fieldshift.kernels.numba_parse import (
    string_to_date32,
    string_to_decimal,
    string_to_float,
    string_to_int,
    string_to_timestamp,
)
from fieldshift.kernels.outcome import CastOutcome
from fieldshift.kernels.registry import get_kernel, kernel, kernel_names
from fieldshift.kernels.threads import get_threads, set_threads
from fieldshift.kernels.widen import numpy_widen

__all__ = [
    "CastOutcome",
    "arrow_cast",
    "checked_cast",
    "conform",
    "constant_array",
    "decoded",
    "get_kernel",
    "get_threads",
    "int_to_string",
    "kernel",
    "kernel_names",
    "list_child_range",
    "list_from_view",
    "needs_rebuild",
    "numpy_widen",
    "range_checked_cast",
    "rebuild_as",
    "rebuild_list",
    "rebuild_map",
    "rebuild_struct",
    "select_cast_kernel",
    "set_threads",
    "string_to_date32",
    "string_to_decimal",
    "string_to_float",
    "string_to_int",
    "string_to_timestamp",
    "validity_buffer",
    "without_views",
]
