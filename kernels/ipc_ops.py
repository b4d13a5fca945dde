"""The op codes of the small-batch IPC programs (shared by the numba code and their compiler).

A program row is ``OP_WIDTH`` int64: opcode, source child index (-1: none), number of child ops,
``a``, ``b``, constant start, constant length, null check (1: a null in the range declines the batch).
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ["NUMBER_CODES", "OP_WIDTH", "RAW", "Op"]

OP_WIDTH = 8

NUMBER_CODES = {pa.int8(): 1, pa.int16(): 2, pa.int32(): 3, pa.int64(): 4, pa.uint8(): 5, pa.uint16(): 6,
                pa.uint32(): 7, pa.uint64(): 8, pa.float32(): 9, pa.float64(): 10}
"""The numeric types a program converts between (int8..int64, uint8..uint64, float32, float64)."""

RAW = 100
"""``a`` of a FIXED op at ``RAW + width``: the values' bytes copied as they are."""


class Op:
    """Opcodes, with what ``a`` and ``b`` mean for each."""

    FIXED = 1  # fixed-width values: a, b = source and target number codes, or both RAW + byte width
    BOOL = 2  # bit-packed booleans
    VAR = 3  # string/binary: a = offset width (4 or 8)
    INT_TO_STRING = 4  # a = source integer code; 32-bit offsets
    STRUCT = 5  # validity, then its children
    LIST = 6  # validity and offsets from 0 (a = offset width), then the element (a map: its entries)
    NULLS = 7  # all null: a = layout (1 fixed, 2 bool, 3 var, 4 struct, 5 list), b = byte or offset width
    CONST_FIXED = 8  # the constant's bytes as every row's value
    CONST_BOOL = 9  # a = the value (0 or 1)
    CONST_VAR = 10  # the constant's bytes as every row's value: a = offset width
    ZEROS = 11  # valid placeholders (zero, empty text or list) under a null struct: a, b as for NULLS
