"""The ``fieldshift`` command line."""

from fieldshift.cli.app import app, main

__all__ = ["app", "main"]
