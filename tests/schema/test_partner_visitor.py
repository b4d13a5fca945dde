"""The partner visitor (fieldshift.schema.partner_visitor): one walk of a read schema with a file schema by id."""

from __future__ import annotations

import pyarrow as pa

from fieldshift.schema.field import Field
from fieldshift.schema.partner_visitor import PartnerVisitor, visit_level
from fieldshift.schema.types import ListType, MapType, StructType


def _schemas() -> tuple[tuple[Field, ...], tuple[Field, ...]]:
    file_fields = (
        Field(9, "gone", pa.int8()),
        Field(1, "a", pa.int32()),
        Field(2, "s", StructType((Field(4, "old", pa.string()), Field(5, "y", pa.int64())))),
        Field(3, "l", ListType(Field(6, "element", pa.int16()))),
        Field(7, "m", MapType(Field(10, "key", pa.string()), Field(11, "value", pa.int32()))),
        Field(12, "shape", pa.int32()),
    )
    read_fields = (
        Field(2, "s", StructType((Field(5, "y", pa.int64()), Field(4, "new", pa.string()),
                                  Field(8, "added", StructType((Field(13, "deep", pa.bool_()),)))))),
        Field(1, "a", pa.int64()),
        Field(3, "l", ListType(Field(6, "element", pa.int32()))),
        Field(7, "m", MapType(Field(10, "key", pa.string()), Field(11, "value", pa.int64()))),
        Field(12, "shape", StructType((Field(14, "x", pa.int32()),))),
    )
    return read_fields, file_fields


class _Trace(PartnerVisitor[str, str]):
    """Records every callback as 'kind path <- file name @ index'."""

    def __init__(self, descend: bool) -> None:
        self.descend_missing = descend
        self.wraps_fields = True
        self.seen: list[str] = []

    def field_contexts(self, ctx: str, read_fields: tuple[Field, ...]) -> list[str]:
        return [f"{ctx}.{rf.name}" if ctx else rf.name for rf in read_fields]

    def element_context(self, ctx: str, rf: Field) -> str:
        return f"{ctx}.element"

    def key_context(self, ctx: str, rf: Field) -> str:
        return f"{ctx}.key"

    def value_context(self, ctx: str, rf: Field) -> str:
        return f"{ctx}.value"

    def _note(self, kind: str, ff: Field | None, index: int, ctx: str) -> str:
        self.seen.append(f"{kind} {ctx} <- {ff.name if ff else None} @ {index}")
        return ctx

    def missing(self, rf: Field, ctx: str) -> str:
        return self._note("missing", None, -1, ctx)

    def mismatch(self, rf: Field, ff: Field, index: int, ctx: str) -> str:
        return self._note("mismatch", ff, index, ctx)

    def primitive(self, rf: Field, ff: Field | None, index: int, ctx: str) -> str:
        return self._note("primitive", ff, index, ctx)

    def struct(self, rf: Field, ff: Field | None, index: int, ctx: str, children: list[str]) -> str:
        return self._note(f"struct[{','.join(children)}]", ff, index, ctx)

    def list(self, rf: Field, ff: Field | None, index: int, ctx: str, element: str) -> str:
        return self._note(f"list[{element}]", ff, index, ctx)

    def map(self, rf: Field, ff: Field | None, index: int, ctx: str, key: str, value: str) -> str:
        return self._note(f"map[{key},{value}]", ff, index, ctx)


def test_partners_are_found_by_id_with_file_positions_and_children_first() -> None:
    read_fields, file_fields = _schemas()
    trace = _Trace(descend=False)
    assert visit_level(trace, read_fields, file_fields, "") == ["s", "a", "l", "m", "shape"]
    assert trace.seen == [
        "primitive s.y <- y @ 1",
        "primitive s.new <- old @ 0",  # renamed: matched by id, not by name
        "missing s.added <- None @ -1",  # no partner: not walked into
        "struct[s.y,s.new,s.added] s <- s @ 2",
        "primitive a <- a @ 1",
        "primitive l.element <- element @ 0",
        "list[l.element] l <- l @ 3",
        "primitive m.key <- key @ 0",
        "primitive m.value <- value @ 1",
        "map[m.key,m.value] m <- m @ 4",
        "mismatch shape <- shape @ 5",  # another shape: not walked into
    ]


def test_descend_missing_walks_on_without_a_partner_like_pyiceberg() -> None:
    read_fields, file_fields = _schemas()
    trace = _Trace(descend=True)
    visit_level(trace, read_fields, file_fields, "")
    assert "primitive s.added.deep <- None @ 0" in trace.seen
    assert "struct[s.added.deep] s.added <- None @ 0" in trace.seen
    assert "primitive shape.x <- None @ 0" in trace.seen  # the file's int has no struct children
    assert "struct[shape.x] shape <- shape @ 5" in trace.seen
    assert not any(s.startswith(("missing", "mismatch")) for s in trace.seen)


def test_field_hook_sees_every_result() -> None:
    class Wrapped(_Trace):
        def field(self, rf: Field, ff: Field | None, ctx: str, result: str) -> str:
            return f"<{result}>"

    read_fields, file_fields = _schemas()
    assert visit_level(Wrapped(descend=False), read_fields, file_fields, "")[0] == "<s>"
    trace = Wrapped(descend=False)
    visit_level(trace, read_fields, file_fields, "")
    assert "struct[<s.y>,<s.new>,<s.added>] s <- s @ 2" in trace.seen
    assert "map[<m.key>,<m.value>] m <- m @ 4" in trace.seen
