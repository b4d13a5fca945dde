"""Kernels by name: plans refer to a kernel by a string key so they pickle and ship to executors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "ARROW_CAST",
    "CHECKED_CAST",
    "INT_TO_STRING",
    "NUMPY_WIDEN",
    "RANGE_CHECKED",
    "STRING_TO_DATE32",
    "STRING_TO_DECIMAL",
    "STRING_TO_FLOAT",
    "STRING_TO_INT",
    "STRING_TO_TIMESTAMP",
    "VIEW_CAST",
    "VIEW_CAST_CHECKED",
    "get_kernel",
    "kernel",
    "kernel_names",
]

F = TypeVar("F", bound=Callable[..., Any])
_KERNELS: dict[str, Callable[..., Any]] = {}

# The keys of the kernels other modules name: plans, the choice of a cast's kernel (cast_choice), and the
# warm-up run (warm), which reaches the numba kernels through the registry because they import it.
ARROW_CAST, CHECKED_CAST = "cast.arrow", "cast.checked"
VIEW_CAST, VIEW_CAST_CHECKED = "cast.view", "cast.view.checked"
RANGE_CHECKED = "cast.checked.range"
NUMPY_WIDEN = "cast.numpy.widen"
INT_TO_STRING = "cast.numba.int_to_string"
STRING_TO_INT = "cast.numba.string_to_int"
STRING_TO_DATE32 = "cast.numba.string_to_date32"
STRING_TO_TIMESTAMP = "cast.numba.string_to_timestamp"
STRING_TO_FLOAT = "cast.masked.string_to_float"
STRING_TO_DECIMAL = "cast.masked.string_to_decimal"


def kernel(name: str) -> Callable[[F], F]:
    """Register a function under ``name`` (a name may be registered once)."""

    def register(fn: F) -> F:
        if name in _KERNELS and _KERNELS[name] is not fn:
            raise ValueError(f"kernel {name!r} is already registered")
        _KERNELS[name] = fn
        return fn

    return register


def get_kernel(name: str) -> Callable[..., Any]:
    """The kernel registered as ``name`` (plans name kernels by key, so they pickle).

    Raises:
        KeyError: no kernel has that name (the message lists those that do).
    """
    try:
        return _KERNELS[name]
    except KeyError:
        raise KeyError(f"no kernel named {name!r}; known kernels: {sorted(_KERNELS)}") from None


def kernel_names() -> list[str]:
    """Every registered kernel's name, sorted."""
    return sorted(_KERNELS)
