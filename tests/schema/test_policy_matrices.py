"""Every cell of the type matrices in the seed docs, one test each (the test id names the cell).

Seeds (``/work/shared/seeds``):

* Onehouse "Widening Column Types": incoming type (row) x table type (column) -> the table's new
  type, ``X`` = incompatible. Checked with ``supertype(incoming, table, CastPolicy.onehouse(
  widen_to_string=True))``. Under the default ``CastPolicy.onehouse()`` the four String-into-numeric
  cells fail instead, as Onehouse's Example 2 describes (the record is quarantined / the write fails).
* Hudi "Type Promotions" (on write): the same 6x6 table, checked with ``CastPolicy.hudi()``.
* Hudi "column type change" (schema on read): Source x Target, Y/N, checked with
  ``CastPolicy.hudi().allows(file_type, read_type)``.
* DuckLake "valid type promotions": each listed pair allowed by ``CastPolicy.lossless()`` and its
  reverse refused.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift import CastPolicy, supertype
from fieldshift.schema.type_names import primitive_name

# -- Onehouse / Hudi on-write 6x6 ---------------------------------------------------------------------
WRITE_TYPES = {
    "int": pa.int32(), "long": pa.int64(), "float": pa.float32(), "double": pa.float64(),
    "string": pa.string(), "bytes": pa.binary(),
}
WRITE_COLUMNS = ["int", "long", "float", "double", "string", "bytes"]
# Copied from the seed: rows are the incoming type, columns the table type.
WRITE_MATRIX = """
int    | int    | long   | float  | double | string | X
long   | long   | long   | float  | double | string | X
float  | float  | float  | float  | double | string | X
double | double | double | double | double | string | X
string | string | string | string | string | string | bytes
bytes  | X      | X      | X      | X      | string | bytes
"""

def _write_cells() -> list:
    cells = []
    for line in WRITE_MATRIX.strip().splitlines():
        incoming, *row = (c.strip() for c in line.split("|"))
        for table, expected in zip(WRITE_COLUMNS, row, strict=True):
            cells.append(pytest.param(incoming, table, expected,
                                      id=f"incoming={incoming}-table={table}"))
    return cells


def _check_write_cell(incoming: str, table: str, expected: str, policy: CastPolicy) -> None:
    if expected == "X":
        with pytest.raises(fs.IncompatibleTypeError, match="incoming"):
            supertype(WRITE_TYPES[incoming], WRITE_TYPES[table], policy, path="col1")
    else:
        assert supertype(WRITE_TYPES[incoming], WRITE_TYPES[table], policy) == WRITE_TYPES[expected]


@pytest.mark.parametrize(("incoming", "table", "expected"), _write_cells())
def test_onehouse(incoming: str, table: str, expected: str) -> None:
    _check_write_cell(incoming, table, expected, CastPolicy.onehouse(widen_to_string=True))


@pytest.mark.parametrize("table", ["int", "long", "float", "double"])
def test_onehouse_default_quarantines_string_into_numeric(table: str) -> None:
    """Example 2: table col1 Int, incoming String -> the record is quarantined or the write fails."""
    with pytest.raises(fs.IncompatibleTypeError, match="widen_to_string=True"):
        supertype(pa.string(), WRITE_TYPES[table], CastPolicy.onehouse(), path="col1")


@pytest.mark.parametrize(("incoming", "table", "expected"), [
    pytest.param(i, t, e, id=f"incoming={i}-table={t}")
    for line in WRITE_MATRIX.strip().splitlines()
    for i, *row in [[c.strip() for c in line.split("|")]]
    for t, e in zip(WRITE_COLUMNS, row, strict=True)
    if not (i == "string" and t in ("int", "long", "float", "double"))
])
def test_onehouse_default_agrees_elsewhere(incoming: str, table: str, expected: str) -> None:
    """Outside those four cells the default preset gives the matrix's type (or refuses an X)."""
    policy = CastPolicy.onehouse()
    if expected == "X":
        with pytest.raises(fs.IncompatibleTypeError):
            supertype(WRITE_TYPES[incoming], WRITE_TYPES[table], policy)
    else:
        assert supertype(WRITE_TYPES[incoming], WRITE_TYPES[table], policy) == WRITE_TYPES[expected]


@pytest.mark.parametrize(("incoming", "table", "expected"), _write_cells())
def test_hudi_on_write(incoming: str, table: str, expected: str) -> None:
    _check_write_cell(incoming, table, expected, CastPolicy.hudi())


def test_onehouse_widens_inside_lists_and_maps() -> None:
    """Usage note: evolving an Array from Int[] to Long[] is supported; structure changes are not."""
    policy = CastPolicy.onehouse()
    assert supertype(pa.list_(pa.int64()), pa.list_(pa.int32()), policy) == pa.list_(pa.int64())
    assert supertype(pa.map_(pa.string(), pa.int64()), pa.map_(pa.string(), pa.int32()), policy) == \
        pa.map_(pa.string(), pa.int64())
    with pytest.raises(fs.IncompatibleTypeError, match="list"):
        supertype(pa.list_(pa.int32()), pa.map_(pa.int32(), pa.int32()), policy)


@pytest.mark.parametrize("t", [pa.bool_(), pa.decimal128(10, 2), pa.date32(), pa.timestamp("us")])
def test_onehouse_logical_types_do_not_evolve(t: pa.DataType) -> None:
    """Usage note: Booleans and logical types (Decimal, Date, Timestamp) do not evolve to int/long."""
    with pytest.raises(fs.IncompatibleTypeError):
        supertype(t, pa.int64(), CastPolicy.onehouse())


# -- Hudi schema-on-read 7x7 -------------------------------------------------------------------------
READ_TYPES = {
    "int": pa.int32(), "long": pa.int64(), "float": pa.float32(), "double": pa.float64(),
    "string": pa.string(), "decimal": pa.decimal128(38, 10), "date": pa.date32(),
}
READ_COLUMNS = ["long", "float", "double", "string", "decimal", "date", "int"]
# Copied from the seed: rows are the source (file) type, columns the target (read) type.
READ_MATRIX = """
int     | Y | Y | Y | Y | Y | N | Y
long    | Y | Y | Y | Y | Y | N | N
float   | N | Y | Y | Y | Y | N | N
double  | N | N | Y | Y | Y | N | N
decimal | N | N | N | Y | Y | N | N
string  | N | N | N | Y | Y | Y | N
date    | N | N | N | Y | N | Y | N
"""


@pytest.mark.parametrize(("source", "target", "expected"), [
    pytest.param(s, t, e == "Y", id=f"file={s}-read={t}")
    for line in READ_MATRIX.strip().splitlines()
    for s, *row in [[c.strip() for c in line.split("|")]]
    for t, e in zip(READ_COLUMNS, row, strict=True)
])
def test_hudi_on_read(source: str, target: str, expected: bool) -> None:
    assert CastPolicy.hudi().allows(READ_TYPES[source], READ_TYPES[target]) is expected


# -- DuckLake promotions ------------------------------------------------------------------------------
DUCKLAKE = {
    "int8": ["int16", "int32", "int64"],
    "int16": ["int32", "int64"],
    "int32": ["int64"],
    "uint8": ["uint16", "uint32", "uint64"],
    "uint16": ["uint32", "uint64"],
    "uint32": ["uint64"],
    "float32": ["float64"],
}
DUCKLAKE_PAIRS = [(s, t) for s, targets in DUCKLAKE.items() for t in targets]


@pytest.mark.parametrize(("source", "target"), DUCKLAKE_PAIRS,
                         ids=[f"source={s}-target={t}" for s, t in DUCKLAKE_PAIRS])
def test_ducklake(source: str, target: str) -> None:
    policy = CastPolicy.lossless()
    assert policy.allows(pa.type_for_alias(source), pa.type_for_alias(target))
    assert policy.classify(pa.type_for_alias(source), pa.type_for_alias(target)) is fs.CastKind.WIDEN


@pytest.mark.parametrize(("source", "target"), DUCKLAKE_PAIRS,
                         ids=[f"source={t}-target={s}" for s, t in DUCKLAKE_PAIRS])
def test_ducklake_reverse_is_refused(source: str, target: str) -> None:
    assert not CastPolicy.lossless().allows(pa.type_for_alias(target), pa.type_for_alias(source))


LOSSLESS_REFUSES = [
    (pa.int64(), pa.int32()),            # narrowing
    (pa.int16(), pa.int8()),
    (pa.uint64(), pa.uint32()),
    (pa.float64(), pa.float32()),
    (pa.int64(), pa.float64()),          # 2**53 + 1 has no double
    (pa.int32(), pa.float32()),          # 2**24 + 1 has no float
    (pa.uint64(), pa.float64()),
    (pa.uint64(), pa.int64()),           # same width, unsigned into signed
    (pa.uint32(), pa.int32()),
    (pa.int8(), pa.uint64()),            # negatives have no unsigned value
    (pa.int32(), pa.uint32()),
    (pa.int64(), pa.decimal128(18, 0)),  # 19 digits do not fit 18
    (pa.uint64(), pa.decimal128(19, 0)),
    (pa.decimal128(10, 2), pa.decimal128(10, 3)),  # loses an integer digit
    (pa.decimal128(10, 2), pa.decimal128(12, 1)),  # loses a fraction digit
    (pa.decimal128(12, 2), pa.decimal128(10, 2)),
    (pa.timestamp("ns"), pa.timestamp("us")),
    (pa.timestamp("us"), pa.timestamp("us", tz="UTC")),
    (pa.date32(), pa.timestamp("us", tz="UTC")),
    (pa.time64("ns"), pa.time64("us")),
    (pa.date64(), pa.date32()),
    (pa.int32(), pa.string()),           # a number as text is a reformatting, not a widening
    (pa.string(), pa.int32()),
    (pa.date32(), pa.string()),
    (pa.bool_(), pa.int32()),
    (pa.float32(), pa.decimal128(38, 10)),
    (pa.binary(), pa.binary(4)),
]


@pytest.mark.parametrize(("source", "target"), LOSSLESS_REFUSES,
                         ids=[f"{primitive_name(s)}->{primitive_name(t)}" for s, t in LOSSLESS_REFUSES])
def test_lossless_refuses(source: pa.DataType, target: pa.DataType) -> None:
    assert not CastPolicy.lossless().allows(source, target)


LOSSLESS_ALLOWS = [
    (pa.int32(), pa.float64(), fs.CastKind.WIDEN),
    (pa.int16(), pa.float32(), fs.CastKind.WIDEN),
    (pa.uint32(), pa.int64(), fs.CastKind.WIDEN),
    (pa.uint8(), pa.int16(), fs.CastKind.WIDEN),
    (pa.int64(), pa.decimal128(19, 0), fs.CastKind.WIDEN),
    (pa.uint64(), pa.decimal128(20, 0), fs.CastKind.WIDEN),
    (pa.decimal128(10, 2), pa.decimal128(12, 2), fs.CastKind.WIDEN),
    (pa.decimal128(10, 2), pa.decimal128(11, 3), fs.CastKind.WIDEN),
    (pa.decimal128(30, 2), pa.decimal256(50, 2), fs.CastKind.WIDEN),
    (pa.float16(), pa.float64(), fs.CastKind.WIDEN),
    (pa.date32(), pa.date64(), fs.CastKind.WIDEN),
    (pa.date32(), pa.timestamp("ms"), fs.CastKind.WIDEN),
    (pa.date32(), pa.timestamp("us"), fs.CastKind.CHECKED),   # date32 reaches past year 294,000
    (pa.date32(), pa.timestamp("ns"), fs.CastKind.CHECKED),   # overflows after 2262
    (pa.timestamp("ms"), pa.timestamp("us"), fs.CastKind.CHECKED),
    (pa.time32("s"), pa.time64("ns"), fs.CastKind.WIDEN),
    (pa.string(), pa.binary(), fs.CastKind.WIDEN),
    (pa.binary(), pa.string(), fs.CastKind.CHECKED),          # must be valid UTF-8
    (pa.binary(8), pa.binary(), fs.CastKind.WIDEN),
    (pa.null(), pa.int32(), fs.CastKind.WIDEN),
    (pa.string(), pa.large_string(), fs.CastKind.IDENTITY),
    (pa.decimal256(10, 2), pa.decimal128(10, 2), fs.CastKind.IDENTITY),
]


@pytest.mark.parametrize(("source", "target", "kind"), LOSSLESS_ALLOWS,
                         ids=[f"{primitive_name(s)}->{primitive_name(t)}" for s, t, _ in LOSSLESS_ALLOWS])
def test_lossless_allows(source: pa.DataType, target: pa.DataType, kind: fs.CastKind) -> None:
    assert CastPolicy.lossless().classify(source, target) is kind
