"""Iceberg's Spark SQL partition statements, parsed into partition spec changes.

``ALTER TABLE t ADD PARTITION FIELD hours(ts) [AS name]``, ``DROP PARTITION FIELD days(ts)`` (or a
field name), ``REPLACE PARTITION FIELD days(ts) WITH hours(ts) [AS name]``; several separated by ``;``.
Terms: ``col``, ``years/months/days/hours(col)`` (and the singular names), ``bucket(N, col)``,
``truncate(N, col)`` (or ``truncate(col, N)``), ``void(col)``. Each change replays on a
:class:`~fieldshift.table.partitions.spec_update.UpdateSpec`; a syntax error points a caret at the word.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from fieldshift.ddl.parser import DDLParser
from fieldshift.ddl.tokens import DDLSyntaxError, apply_changes, tokenize
from fieldshift.errors import SchemaEvolutionError
from fieldshift.table.partitions.partitioning import PartitionTerm
from fieldshift.table.partitions.spec_update import UpdateSpec
from fieldshift.table.partitions.transforms import parse_transform

__all__ = ["AddPartitionField", "DropPartitionField", "PartitionChange", "ReplacePartitionField",
           "apply_partition_alter", "is_partition_statement", "parse_partition_alter"]


@dataclass(frozen=True)
class PartitionChange:
    span: tuple[int, int]

    def apply(self, update: UpdateSpec) -> None:
        raise NotImplementedError

    def sql(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.sql()


@dataclass(frozen=True)
class AddPartitionField(PartitionChange):
    term: PartitionTerm

    def apply(self, update: UpdateSpec) -> None:
        update.add_field(self.term)

    def sql(self) -> str:
        return f"ADD PARTITION FIELD {self.term}"


@dataclass(frozen=True)
class DropPartitionField(PartitionChange):
    ref: PartitionTerm | str

    def apply(self, update: UpdateSpec) -> None:
        update.remove_field(self.ref)

    def sql(self) -> str:
        return f"DROP PARTITION FIELD {self.ref}"


@dataclass(frozen=True)
class ReplacePartitionField(PartitionChange):
    ref: PartitionTerm | str
    term: PartitionTerm

    def apply(self, update: UpdateSpec) -> None:
        update.replace_field(self.ref, self.term)

    def sql(self) -> str:
        return f"REPLACE PARTITION FIELD {self.ref} WITH {self.term}"


class _Parser(DDLParser):
    def changes(self) -> list[PartitionChange]:
        out: list[PartitionChange] = []
        while True:
            while self.accept(";"):
                pass
            if self.ended():
                break
            if self.at("ALTER") and self.at("TABLE", k=1):
                self.advance()
                self.advance()
                self.path("a table name")
            out.append(self.change())
            if not self.ended() and not self.at(";"):
                raise self.error("';' or the end of the statement")
        if not out:
            raise self.error("ADD, DROP or REPLACE PARTITION FIELD")
        return out

    def change(self) -> PartitionChange:
        start = self.peek().pos
        verb = self.accept("ADD", "DROP", "REPLACE")
        if verb is None:
            raise self.error("ADD, DROP or REPLACE PARTITION FIELD")
        self.expect("PARTITION")
        self.expect("FIELD")
        kind = verb.text.upper()
        if kind == "ADD":
            term = self.term(named=True)
            return AddPartitionField((start, self.toks[self.i - 1].end), term)
        ref = self.reference()
        if kind == "DROP":
            return DropPartitionField((start, self.toks[self.i - 1].end), ref)
        self.expect("WITH")
        term = self.term(named=True)
        return ReplacePartitionField((start, self.toks[self.i - 1].end), ref, term)

    def reference(self) -> PartitionTerm | str:
        """A field name, or a term (``days(ts)``) naming the field by what it computes."""
        if self.peek().kind in ("word", "qident") and self.at("(", k=1):
            return self.term(named=False)
        return self.path("a partition field name or term, e.g. ts_day or days(ts)")

    def term(self, named: bool) -> PartitionTerm:
        expected = "a partition term: a column, or years/months/days/hours(col), bucket(N, col), truncate(N, col)"
        if self.peek().kind in ("word", "qident") and self.at("(", k=1):
            tok = self.advance()
            self.advance()
            number: int | None = None
            if self.peek().kind == "number":
                number = self._count(tok.text)
                self.expect(",")
            column = self.path("a column name")
            if number is None and self.accept(","):
                number = self._count(tok.text)
            self.expect(")", "')'" if number is not None else "')' (or ', N' for bucket and truncate)")
            try:
                transform = parse_transform(f"{tok.text}[{number}]" if number is not None else tok.text)
            except SchemaEvolutionError as e:
                raise DDLSyntaxError(self.text, tok.pos, f"a known transform ({e})", tok.text, tok.end) from None
        else:
            if self.peek().kind not in ("word", "qident"):
                raise self.error(expected)
            column = self.path(expected)
            transform = parse_transform("identity")
        name = self.ident("a partition field name") if named and self.accept("AS") else None
        return PartitionTerm(column, transform, name)

    def _count(self, transform: str) -> int:
        tok = self.peek()
        if tok.kind != "number" or not tok.text.isdigit():
            raise self.error(f"a whole number of {'buckets' if transform.lower() == 'bucket' else 'characters'}")
        self.advance()
        return int(tok.text)


def is_partition_statement(statement: str) -> bool:
    """Whether a statement speaks of partition fields (``... PARTITION FIELD ...``); parse it with
    :func:`parse_partition_alter`, whose syntax errors then say what a partition statement expects."""
    try:
        words = [t.text.upper() for t in tokenize(statement) if t.kind == "word"]
    except SchemaEvolutionError:
        return False
    return any(a == "PARTITION" and b == "FIELD" for a, b in itertools.pairwise(words))


def parse_partition_alter(statement: str) -> list[PartitionChange]:
    """Parse ``ADD/DROP/REPLACE PARTITION FIELD`` statements (with or without ``ALTER TABLE name``)."""
    return _Parser(statement).changes()


def apply_partition_alter(update: UpdateSpec, statement: str | Sequence[PartitionChange]) -> UpdateSpec:
    """Apply a statement's partition changes to ``update`` in order; a refusal points at the change."""
    changes = parse_partition_alter(statement) if isinstance(statement, str) else statement
    return apply_changes(update, statement, changes)
