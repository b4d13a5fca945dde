"""fieldshift's errors through Spark: the message last in Spark's error, and first again at our entry points.

Spark reports an exception from Python code it runs (the data source on its planner workers,
``mapInArrow`` functions on executors) as its own error whose first line it fixes
(``[PYTHON_DATA_SOURCE_ERROR] ...``, ``PythonException``) and whose last line is the Python
exception. So the code Spark runs raises a one-line copy of a fieldshift error with no traceback
behind it (``one_line_errors``): the fieldshift message is the last line of Spark's error. And
fieldshift's own Spark entry points (``read``, ``evolve``, ``write``) run under
``fieldshift_errors()``, which finds that line in Spark's error and raises the fieldshift exception
type again with its message first (Spark's error stays attached as ``__cause__``). A Spark error
whose Python workers could not import fieldshift at all (a Spark Connect server started without
``PYSPARK_PYTHON`` pointing at fieldshift's Python) becomes ``SparkWorkerImportError``, saying so.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import fieldshift.errors as fs_errors
from fieldshift.errors import FieldshiftError

__all__ = ["GUARDED_METHODS", "WORKERS_WITHOUT_FIELDSHIFT", "fieldshift_errors", "from_spark_error", "one_line",
           "one_line_errors", "workers_without_fieldshift"]

# the methods Spark calls on data sources, readers, writers and mapInArrow functions
GUARDED_METHODS = ("schema", "reader", "writer", "partitions", "read", "pushFilters", "write", "commit", "__call__")
_RAISED = re.compile(r"fieldshift\.errors\.([A-Za-z]+Error): (.*)")
_NO_FIELDSHIFT = re.compile(r"ModuleNotFoundError: No module named '(fieldshift[\w.]*)'")

WORKERS_WITHOUT_FIELDSHIFT = (
    "Spark's Python workers cannot import fieldshift (No module named {module!r}). Spark runs fieldshift's data "
    "source and mapInArrow functions in Python workers of its own, which need fieldshift installed: start the "
    "Spark Connect server with PYSPARK_PYTHON pointing at a Python that has fieldshift, e.g. "
    "`PYSPARK_PYTHON=/path/to/venv/bin/python sbin/start-connect-server.sh ...` (a cluster's workers likewise, "
    "or ship the wheel to the executors: see the README's 'Running on a cluster').")


def _copy(error: FieldshiftError, message: str) -> FieldshiftError:
    """The same exception type and attributes, with ``message`` as its text (any constructor signature)."""
    copy = type(error).__new__(type(error))
    copy.__dict__.update(error.__dict__)
    copy.args = (message,)
    return copy


def one_line(error: FieldshiftError) -> FieldshiftError:
    """``error`` with its message on one line (lines joined with ' | '), ready to be Spark's last line."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    lines += [note.strip() for note in getattr(error, "__notes__", ()) if note.strip()]
    return _copy(error, " | ".join(lines))


def _guard_iterator(items: Iterator[Any]) -> Iterator[Any]:
    try:
        yield from items
    except FieldshiftError as e:  # raised right here: Spark shows this one frame above the message
        raise one_line(e).with_traceback(None) from None


def _guard(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            result = method(*args, **kwargs)
        except FieldshiftError as e:
            raise one_line(e).with_traceback(None) from None
        if isinstance(result, Iterator):  # generators raise while Spark iterates them
            return _guard_iterator(result)
        return result

    return guarded


def one_line_errors(*classes: type) -> None:
    """Make the methods Spark calls on ``classes`` raise one-line fieldshift errors (in place)."""
    for cls in classes:
        for name in GUARDED_METHODS:
            method = cls.__dict__.get(name)
            if callable(method) and not getattr(method, "_fieldshift_guarded", False):
                guarded = _guard(method)
                guarded._fieldshift_guarded = True  # type: ignore[attr-defined]
                setattr(cls, name, guarded)


def workers_without_fieldshift(error: BaseException) -> fs_errors.SparkWorkerImportError | None:
    """``SparkWorkerImportError`` if ``error`` is Spark's report of workers that could not import fieldshift."""
    missing = _NO_FIELDSHIFT.search(str(error))
    if missing is None:
        return None
    return fs_errors.SparkWorkerImportError(WORKERS_WITHOUT_FIELDSHIFT.format(module=missing.group(1)))


def from_spark_error(error: BaseException) -> FieldshiftError | None:
    """The fieldshift exception a Spark error reports as its Python cause, or None if it holds none."""
    text = str(error)
    found = _RAISED.findall(text)
    if not found:
        return workers_without_fieldshift(error)
    name, message = found[-1]
    cls = getattr(fs_errors, name, None)
    if not (isinstance(cls, type) and issubclass(cls, FieldshiftError)):
        cls = FieldshiftError
    raised = cls.__new__(cls)
    raised.args = (message.strip(),)
    return raised


@contextmanager
def fieldshift_errors() -> Iterator[None]:
    """Re-raise a Spark error that carries a fieldshift error as that fieldshift error, message first."""
    try:
        yield
    except FieldshiftError:
        raise
    except Exception as e:
        raised = from_spark_error(e)
        if raised is None:
            raise
        raise raised from e
