"""``fs.open_table``'s options as flat ``KEY=VALUE`` text: what the CLI's ``--source-option`` and Spark's
``.option(...)`` carry, since neither can pass a dict.

A dotted key fills one of ``open_table``'s dict arguments: ``catalog.KEY`` (PyIceberg catalog properties,
``catalog.type=sql``), ``properties.KEY`` (PyIceberg FileIO properties, ``properties.s3.endpoint=...``),
``storage_options.KEY`` (hudi-rs / object-store options); ``data_path`` is passed as it is. Everything
after the first dot is the inner key, dots included. Which of these a format takes is ``open_table``'s
check (it names the format and what it takes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from fieldshift.errors import InvalidOptionError

__all__ = ["DICT_OPTIONS", "PLAIN_OPTIONS", "is_open_option", "open_options", "parse_pairs"]

DICT_OPTIONS = ("catalog", "properties", "storage_options")
"""Dotted prefixes: ``PREFIX.KEY=VALUE`` sets ``KEY`` of ``open_table``'s ``PREFIX=`` dict."""
PLAIN_OPTIONS = ("data_path",)
"""Keys passed to ``open_table`` as they are."""

_FORMS = "data_path=PATH, catalog.KEY=VALUE, properties.KEY=VALUE or storage_options.KEY=VALUE"


def is_open_option(key: str) -> bool:
    """Whether ``key`` is one ``open_options`` takes (a plain key, or a known prefix and a non-empty inner key)."""
    head, dot, rest = key.partition(".")
    return key in PLAIN_OPTIONS or (bool(dot) and head in DICT_OPTIONS and bool(rest))


def parse_pairs(texts: Sequence[str], flag: str = "--source-option") -> list[tuple[str, str]]:
    """``KEY=VALUE`` texts as pairs (the value may hold ``=``); a text without ``=`` or a key is refused."""
    pairs = []
    for text in texts:
        key, eq, value = text.partition("=")
        if not eq or not key.strip():
            raise InvalidOptionError(f"{flag} {text!r}: write KEY=VALUE ({_FORMS})")
        pairs.append((key.strip(), value))
    return pairs


def open_options(pairs: Iterable[tuple[str, Any]], where: str = "option") -> dict[str, Any]:
    """``open_table`` keyword arguments from flat pairs: dotted keys gathered into their dicts.

    An unknown key is refused naming it, ``where`` it came from, and the forms taken; so is a key given twice.
    """
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in PLAIN_OPTIONS:
            if key in out:
                raise InvalidOptionError(f"{where} {key!r} is given twice")
            out[key] = value
            continue
        head, dot, rest = key.partition(".")
        if not dot or head not in DICT_OPTIONS:
            raise InvalidOptionError(f"unknown {where} {key!r}: the table's options are {_FORMS}")
        if not rest:
            raise InvalidOptionError(f"{where} {key!r} names no key after {head!r}: write {head}.KEY=VALUE")
        group = out.setdefault(head, {})
        if rest in group:
            raise InvalidOptionError(f"{where} {key!r} is given twice")
        group[rest] = value
    return out
