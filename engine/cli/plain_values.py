"""Command-line values without pydantic: a command's start-up should not import it.

Newer typers (0.2x) turn every parameter's text into its Python value with a pydantic ``TypeAdapter``,
built on first use: importing pydantic and building the adapters of one command costs ~0.2 s, more
than the rest of ``fieldshift``'s start-up. Every parameter fieldshift's commands take is plain
(text, whole and decimal numbers with bounds, paths, choices, repeated text), so ``plain_values`` gives
each such parameter a coercion that does what typer's adapter does for a well-formed value (choices
and paths through typer's own functions). A value it does not recognise, one out of bounds, or any
other annotation goes to typer's own coercion, so every error message stays typer's.
"""

from __future__ import annotations

import enum
import re
from pathlib import Path
from typing import Any, get_args, get_origin

__all__ = ["PlainValues", "plain_param", "plain_values"]

_INT = re.compile(r"[+-]?[0-9]+")  # ASCII digits: Python's int() and float() take any Unicode digit, typer none
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_TYPERS = object()  # "ask typer": the value is not one this module coerces


def _bounded(value: float, info: Any) -> Any:
    if getattr(info, "clamp", False):
        return _TYPERS
    low, high = getattr(info, "min", None), getattr(info, "max", None)
    if (low is not None and value < low) or (high is not None and value > high):
        return _TYPERS
    return value


def _leaf(annotation: Any, info: Any, value: Any, ctx: Any, param: Any) -> Any:
    """``value`` as typer's adapter gives it for ``annotation``, or ``_TYPERS``."""
    if getattr(info, "parser", None) is not None:
        return _TYPERS
    if annotation is str:
        return value if isinstance(value, str) else _TYPERS
    if annotation is int:
        if isinstance(value, str) and _INT.fullmatch(value):
            return _bounded(int(value), info)
        return _bounded(value, info) if type(value) is int else _TYPERS
    if annotation is float:
        if isinstance(value, str) and _FLOAT.fullmatch(value):
            return _bounded(float(value), info)
        return _bounded(value, info) if type(value) is float else _TYPERS
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        from typer._param_types import coerce_cli_choice

        return coerce_cli_choice(value, choices=list(annotation), case_sensitive=info.case_sensitive, ctx=ctx)
    if annotation is Path and isinstance(value, str | Path) and str(value) and info.path_type is None:
        from typer._param_types import coerce_cli_path

        # a Path already (what pydantic's Path adapter makes of the text): typer checks the flags
        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
    return _TYPERS


class PlainValues:
    """A parameter's coercion (typer's ``RuntimeParam.coerce`` contract) for plain values, typer's for others."""

    def __init__(self, descriptor: Any) -> None:
        self.descriptor = descriptor
        self._typers: Any = None

    def typers(self) -> Any:
        """Typer's own coercion of this parameter (built on first need: it imports pydantic)."""
        if self._typers is None:
            from typer._coercion import build_runtime_param

            self._typers = build_runtime_param(self.descriptor)
        return self._typers

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        multi = param.multiple or param.nargs == -1
        if value is None:
            return () if multi else None
        annotation, info = self.descriptor.annotation, self.descriptor.parameter_info
        try:
            if multi and get_origin(annotation) is list and isinstance(value, list | tuple):
                (item,) = get_args(annotation)
                out = [_leaf(item, info, v, ctx, param) for v in value]
                if all(v is not _TYPERS for v in out):
                    return out
            elif not multi and self.descriptor.file_annotation is None:
                out = _leaf(annotation, info, value, ctx, param)
                if out is not _TYPERS:
                    return out
        except Exception:  # typer's coercion says what is wrong, in its own words
            pass
        return self.typers().coerce(value, param=param, ctx=ctx)


def plain_param(param: Any) -> None:
    """Give one parameter the plain coercion (in place). Typers without lazily built runtime coercion
    (before 0.2x: click's types) are left as they are."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None and hasattr(param, "_runtime_param") and param._runtime_param is None:
        param._runtime_param = PlainValues(descriptor)


def plain_values(command: Any) -> None:
    """Give every parameter of ``command`` and its sub-commands the plain coercion (in place); the
    ``--help`` option each context makes anew gets it through ``help_style``."""
    for param in getattr(command, "params", ()):
        plain_param(param)
    for sub in getattr(command, "commands", {}).values():
        plain_values(sub)
