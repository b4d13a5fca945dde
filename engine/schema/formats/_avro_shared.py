"""What reading and writing Avro schemas share: Iceberg's id attributes, the error, small rules.

A private module serving :mod:`~fieldshift.schema.formats.avro_parse` and
:mod:`~fieldshift.schema.formats.avro_write`; users import
from :mod:`fieldshift.schema.formats.avro`.
"""

from __future__ import annotations

import decimal
import re

import pyarrow as pa

from fieldshift.schema.field_paths import join_path
from fieldshift.schema.types import FieldType

FIELD_ID, ELEMENT_ID, KEY_ID, VALUE_ID = "field-id", "element-id", "key-id", "value-id"
FIELD_NAME_PROP = "iceberg-field-name"
_WIDE = decimal.Context(prec=100)
_VALID_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

Path = tuple[str, ...]


def _where(path: Path) -> str:
    return join_path(path) or "<root>"


def _is_null(t: FieldType) -> bool:
    return isinstance(t, pa.DataType) and pa.types.is_null(t)


def avro_name(name: str) -> str:
    """Iceberg's ``makeCompatibleName``: invalid characters become ``_x<HEX>``, a leading digit gets ``_``."""
    if _VALID_NAME.match(name):
        return name
    out = []
    for i, ch in enumerate(name):
        if ch.isascii() and (ch.isalpha() or ch == "_" or (ch.isdigit() and i > 0)):
            out.append(ch)
        elif ch.isascii() and ch.isdigit():
            out.append("_" + ch)
        else:
            out.append(f"_x{ord(ch):X}")
    return "".join(out)
