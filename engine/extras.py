"""Optional libraries: imported where a call needs one, or a ``MissingDependencyError`` naming the extra."""

from __future__ import annotations

import importlib
from types import ModuleType

from fieldshift.errors import MissingDependencyError

__all__ = ["require"]


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` for ``purpose`` (e.g. ``"Scan.to_pandas()"``).

    Raises:
        MissingDependencyError: ``module`` is not installed; the message names the fieldshift ``extra``
            that installs it. An import error from inside an installed library is raised as it is.
    """
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if (e.name or module).split(".")[0] != module.split(".")[0]:
            raise  # the library is installed but something it imports is broken: that error says more
        raise MissingDependencyError(
            f"{purpose} needs {module}, which is not installed: pip install {module}, or install fieldshift "
            f"with its {extra!r} extra (pip install '.[{extra}]' in a fieldshift checkout)") from e
