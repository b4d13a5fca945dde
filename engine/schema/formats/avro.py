"""Avro record schemas <-> fieldshift :class:`~fieldshift.Schema` (Hudi and Onehouse users think in Avro).

Field ids follow Iceberg's Avro convention: ``field-id`` on record fields, ``element-id`` on arrays,
``key-id``/``value-id`` on maps. Avro rarely carries them, so by default missing ids are numbered in
pre-order (parent before children, from 1, skipping ids the schema already uses).

Reading (Avro -> fieldshift):

- ``["null", T]`` and ``[T, "null"]`` are a nullable ``T``; any other type is required. A union of two
  or more non-null types has no table equivalent and is refused (:class:`AvroSchemaError`).
- records -> struct, arrays -> list, maps -> map with string keys, enums -> string, fixed -> fixed[n].
  Iceberg's map with non-string keys (an array of ``key``/``value`` records with ``logicalType: map``)
  -> map. Named types may be referenced by (full) name; a recursive type is refused.
- logical types: decimal (bytes or fixed) -> decimal128 (decimal256 above precision 38), uuid ->
  string (fixed[16] for a fixed uuid), date -> date32, time-millis -> time32[ms], time-micros ->
  time64[us], timestamp-millis/micros/nanos -> timestamp with tz UTC (no tz when Iceberg's
  ``adjust-to-utc`` is false), local-timestamp-* -> timestamp without tz. As the Avro spec asks,
  unknown logical types, and logical types on the wrong base type, are ignored.
- ``doc`` -> doc; ``default`` -> both ``initial_default`` and ``write_default`` (a default that does not
  fit raises InvalidDefaultError naming the path). A non-null default on a
  ``["null", T]`` union is accepted as a ``T`` value (lenient; strict Avro wants null there). A record
  default must be ``{}``-equivalent: every value it sets must equal that field's own default, because
  struct defaults are only ``null`` or ``{}`` (Iceberg's rule).
- ``iceberg-field-name`` (written by Iceberg and by :func:`schema_to_avro` when a name is not a valid
  Avro name) wins over ``name``.

Writing (fieldshift -> Avro) maps types Avro lacks to the closest type that holds every value:

=====================================  =========================================================
int8, int16, uint8, uint16             int
uint32                                 long
uint64                                 bytes decimal(20, 0) (exact; a long would overflow)
float16                                float
large/view strings and binaries        string / bytes
decimal128/256                         bytes with logicalType decimal
date64                                 int date (date64 holds whole days)
time32[s]                              time-millis
time64[ns]                             long with logicalType ``time-nanos`` (not in the Avro spec,
                                       so other readers see the raw nanoseconds; read back here)
timestamp[s]                           timestamp-millis / local-timestamp-millis
timestamp with a non-UTC zone          timestamp-* (the instant is kept, the zone name is not)
large lists, list views, fixed lists   array (the fixed size is not kept)
map with non-string keys               Iceberg's array of key/value records (logicalType map)
=====================================  =========================================================

Only the ``initial_default`` is written (Avro has one default, applied by readers to records written
without the field); a nullable field with a non-null default is written as ``[T, "null"]``. Nested
records are named ``r<id>`` and fixed types ``fixed_<id>`` so names never clash. So
``schema_from_avro(schema_to_avro(s))`` is logically equal to ``s`` for Avro-native types only.

The work is done below ``Schema`` (``avro_parse`` reads, ``avro_write`` writes), so ``Schema.from_avro`` and
``Schema.to_avro`` can delegate to it; this module is the users' face over those methods.
"""

from __future__ import annotations

from typing import Any

from fieldshift.errors import AvroSchemaError
from fieldshift.schema.formats._avro_shared import (
    ELEMENT_ID,
    FIELD_ID,
    FIELD_NAME_PROP,
    KEY_ID,
    VALUE_ID,
    avro_name,
)
from fieldshift.schema.formats.avro_write import schema_to_avro
from fieldshift.schema.model import Schema

__all__ = [
    "ELEMENT_ID",
    "FIELD_ID",
    "FIELD_NAME_PROP",
    "KEY_ID",
    "VALUE_ID",
    "AvroSchemaError",
    "avro_name",
    "schema_from_avro",
    "schema_to_avro",
]


def schema_from_avro(avro: str | dict[str, Any], *, schema_id: int = 0, assign_ids: bool = True) -> Schema:
    """``Schema.from_avro``: an Avro record schema (JSON text or parsed) as a Schema, ids from Iceberg's
    attributes (``assign_ids=False`` refuses fields without one: MissingFieldIdError)."""
    return Schema.from_avro(avro, schema_id=schema_id, assign_ids=assign_ids)
