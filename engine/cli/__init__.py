"""The ``fieldshift`` command line: ``main`` (the console script) and ``app``, the whole command tree (built on
first use: a command run from the console script imports only its own module)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fieldshift.cli.command_tree import main

if TYPE_CHECKING:
    import typer

    app: typer.Typer

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if name == "app":
        from fieldshift.cli.command_tree import whole_app

        return whole_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
