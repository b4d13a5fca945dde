"""The schema model: fields with ids and defaults, types, cast policies, schema changes, and their other forms.

``fieldshift.schema`` is also a public path: ``Schema``, ``join_path`` and ``split_path`` are imported from it."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fieldshift.schema.field_paths import join_path, split_path
    from fieldshift.schema.model import Schema

__all__ = [
    "Schema",
    "join_path",
    "split_path",
]

_LAZY = {
    "Schema": "fieldshift.schema.model",
    "join_path": "fieldshift.schema.field_paths",
    "split_path": "fieldshift.schema.field_paths",
}


def __getattr__(name: str) -> Any:
    """A name of this face, imported on first use: importing one module of the package loads only what it needs."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
