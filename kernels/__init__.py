"""fieldshift.kernels: the only code that touches values. Plans name kernels by registry key."""

from fieldshift.kernels.casts import arrow_cast, checked_cast, select_cast_kernel
from fieldshift.kernels.constants import constant_array
from fieldshift.kernels.layout import (
    conform,
    list_child_range,
    rebuild_list,
    rebuild_map,
    rebuild_struct,
    validity_buffer,
)
from fieldshift.kernels.outcome import CastOutcome
from fieldshift.kernels.registry import get_kernel, kernel, kernel_names

__all__ = [
    "CastOutcome",
    "arrow_cast",
    "checked_cast",
    "conform",
    "constant_array",
    "get_kernel",
    "kernel",
    "kernel_names",
    "list_child_range",
    "rebuild_list",
    "rebuild_map",
    "rebuild_struct",
    "select_cast_kernel",
    "validity_buffer",
]
