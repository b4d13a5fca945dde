"""Kernels by name: plans refer to a kernel by a string key so they pickle and ship to executors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["get_kernel", "kernel", "kernel_names"]

F = TypeVar("F", bound=Callable[..., Any])
_KERNELS: dict[str, Callable[..., Any]] = {}


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
