"""Parsed catalog metadata kept across calls: a schema's JSON is parsed once per process, not per scan.

A scan reads every schema version of its table; a 10,000-column schema takes a tenth of a second to
parse and a table with 1,000 versions would re-parse all of them for every scan and commit. Schemas
are immutable, so one parsed object per distinct JSON text serves every catalog and every table.
The cache is bounded by the number of fields it holds, oldest out first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from fieldshift.gc_pause import paused_gc
from fieldshift.schema.formats.iceberg_json import reads_back_exactly
from fieldshift.schema.model import Schema

__all__ = ["FIELD_BUDGET", "clear_schema_cache", "parsed_schema", "remember_schema"]

FIELD_BUDGET = 500_000
"""Fields (at every depth) the cache may hold before it forgets the least recently used schemas."""

_CACHE: OrderedDict[str, tuple[Schema, int]] = OrderedDict()
_LOCK = threading.Lock()
_held = 0


def parsed_schema(text: Any) -> Schema:
    """``Schema.from_json(text)``, parsed once per distinct text (errors are raised, never cached; a
    driver's already decoded JSON is parsed every time)."""
    if not isinstance(text, str):
        return Schema.from_json(text)
    with _LOCK:
        hit = _CACHE.get(text)
        if hit is not None:
            _CACHE.move_to_end(text)
            return hit[0]
    with paused_gc():  # a 10,000-column schema is 100,000s of objects, none in a cycle
        schema = Schema.from_json(text)
    _keep(text, schema)
    return schema


def remember_schema(text: str, schema: Schema) -> None:
    """Keep the object a writer just serialised as ``text``, when parsing ``text`` would give the same
    schema: the next update of a wide table then starts without parsing what it just wrote."""
    if reads_back_exactly(schema):
        _keep(text, schema)


def _keep(text: str, schema: Schema) -> None:
    global _held
    size = sum(1 for _ in schema.all_fields()) + 1
    with _LOCK:
        if text not in _CACHE:
            _CACHE[text] = (schema, size)
            _held += size
            while _held > FIELD_BUDGET and len(_CACHE) > 1:
                _, (_, dropped) = _CACHE.popitem(last=False)
                _held -= dropped


def clear_schema_cache() -> None:
    """Forget every parsed schema (tests compare a cold parse with a cached one)."""
    global _held
    with _LOCK:
        _CACHE.clear()
        _held = 0
