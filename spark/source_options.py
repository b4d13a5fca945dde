"""The ``fieldshift`` data source's options (the strings Spark passes) as values.

One parser per kind of value, shared by the batch reader and writer, the reader of other formats'
tables and the streaming source, so an option means the same on every route.
"""

from __future__ import annotations

import json
from typing import Any

from fieldshift.errors import InvalidOptionError
from fieldshift.schema.policy import CastPolicy

__all__ = ["bool_option", "int_option", "list_option", "parse_policy", "table_location"]


def parse_policy(text: str | None) -> CastPolicy | None:
    """A cast policy from an option string (``CastPolicy.from_name``); None keeps the table's own."""
    if text is None or str(text).strip() == "":
        return None
    return CastPolicy.from_name(str(text))


def int_option(options: Any, key: str) -> int | None:
    """An integer option; None when it is absent or blank."""
    raw = options.get(key)
    if raw is None or str(raw).strip() == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise InvalidOptionError(f"option {key!r} must be an integer, got {raw!r}") from None


def bool_option(options: Any, key: str, default: bool) -> bool:
    """A true/false option (also 1/0, yes/no); ``default`` when it is absent."""
    raw = options.get(key)
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise InvalidOptionError(f"option {key!r} must be true or false, got {raw!r}")


def list_option(options: Any, key: str) -> list[str] | None:
    """A list option, comma-separated or a JSON list (for names that hold commas); None when absent."""
    raw = options.get(key)
    if raw is None:
        return None
    text = str(raw).strip()
    if text.startswith("["):
        return [str(x) for x in json.loads(text)]
    return [part.strip() for part in text.split(",") if part.strip()]


def table_location(options: Any) -> str:
    """The table's location: the path given to ``load``/``save``."""
    path = options.get("path")
    if not path:
        raise InvalidOptionError("give the table's location: spark.read.format('fieldshift').load(location)")
    return str(path)
