"""Every refusal fieldshift makes, each its own class under one base, each saying what to do."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "BatchTypeError",
    "CastValueError",
    "CatalogFormatError",
    "CommitConflictError",
    "DataFileError",
    "DuplicateFieldError",
    "HistoryUnreadableError",
    "IdentifierFieldChangeError",
    "IncompatibleTypeError",
    "InvalidDefaultError",
    "InvalidFieldIdError",
    "InvalidFilterError",
    "InvalidNameError",
    "InvalidTypeError",
    "Mismatch",
    "MissingFieldIdError",
    "NestingDepthError",
    "NestingLevelMoveError",
    "NullInRequiredFieldError",
    "NullabilityTighteningError",
    "RequiredFieldWithoutDefaultError",
    "SchemaEvolutionError",
    "SchemaMismatchError",
    "TableError",
    "TypeChangeNotAllowedError",
    "UnknownFieldError",
    "closest_names",
]


class SchemaEvolutionError(ValueError):
    """Base of every schema-evolution refusal; subclasses say which rule refused and what to change."""


class UnknownFieldError(SchemaEvolutionError, KeyError):
    """A path names no field; the message lists the closest names at that level."""

    def __init__(self, path: str, candidates: Iterable[str] = ()) -> None:
        self.path = path
        close = closest_names(path.rsplit(".", 1)[-1], candidates)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        super().__init__(f"no field at path {path!r}.{hint}")

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class InvalidNameError(SchemaEvolutionError, KeyError):
    """An empty name, or a path string that cannot be split (an unclosed backtick, an empty part);
    a KeyError too, as a lookup by such a path finds nothing."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class InvalidFieldIdError(SchemaEvolutionError):
    """A field id that is not a positive integer (Iceberg ids start at 1; fieldshift reserves
    negative ids for file columns no id identifies)."""


class InvalidTypeError(SchemaEvolutionError):
    """A type no Parquet file can hold: decimal precision or scale out of range, a zero width, ..."""


class NestingDepthError(SchemaEvolutionError):
    """A type nested deeper than Parquet readers accept (refused up front, before anything is written)."""


class DuplicateFieldError(SchemaEvolutionError):
    """Two fields would share one name at the same nesting level."""


class RequiredFieldWithoutDefaultError(SchemaEvolutionError):
    """A required field is added (or read from an old file) with no value to fill old rows."""


class TypeChangeNotAllowedError(SchemaEvolutionError):
    """The cast policy in force forbids a type change."""


class NullabilityTighteningError(SchemaEvolutionError):
    """A nullable field cannot become required: old rows may hold nulls."""


class IdentifierFieldChangeError(SchemaEvolutionError):
    """Identifier (primary-key) fields cannot be dropped, renamed or retyped."""


class NestingLevelMoveError(SchemaEvolutionError):
    """A field can only move among its siblings, never to another struct."""


class NullInRequiredFieldError(SchemaEvolutionError):
    """A required read field over a column that may hold nulls (e.g. a Parquet column written optional
    by DuckDB or Spark) holds nulls: checked per batch, the one value-level refusal besides casts."""

    def __init__(self, path: str, nulls: int, row: int, fix: str = "") -> None:
        self.path, self.nulls, self.row = path, nulls, row
        fix = fix or "read it as optional (a schema where the field is nullable), or fill the nulls in the file"
        super().__init__(f"required column {path!r} holds {nulls} null(s) (first at row {row}); {fix}")


class BatchTypeError(SchemaEvolutionError):
    """A batch given to ``plan.apply`` has a column of another type than the plan was made for."""

    def __init__(self, column: str, expected: str, actual: str) -> None:
        self.column, self.expected, self.actual = column, expected, actual
        super().__init__(
            f"column {column!r} of the batch is {actual}, but the plan was made for {expected}; plan with "
            "the schema of this data (fs.plan(batch.schema, read_schema)) or fs.evolve(batch, read_schema)"
        )


class HistoryUnreadableError(SchemaEvolutionError):
    """A table commit would leave data files its snapshots reference unreadable under the table's policy."""


class InvalidDefaultError(SchemaEvolutionError):
    """A default value does not fit the field's type, or breaks Iceberg's default rules."""


class MissingFieldIdError(SchemaEvolutionError):
    """An Arrow field carries no ``PARQUET:field_id`` and the caller did not ask to assign ids."""


class IncompatibleTypeError(SchemaEvolutionError):
    """On-write evolution found no supertype of the incoming and the table type."""


class CastValueError(SchemaEvolutionError):
    """An explicit cast failed on a value and the policy says to raise."""

    def __init__(self, path: str, row: int, value: object, source: str, target: str) -> None:
        self.path, self.row, self.value = path, row, value
        super().__init__(
            f"cannot cast column {path!r} value {value!r} (row {row}) from {source} to {target}. "
            "Use CastPolicy.explicit(on_error='null') to read it as null, or split bad rows "
            "out with plan.apply_split()."
        )


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One row of a plan-time mismatch report."""

    path: str
    file_type: str
    read_type: str
    why: str
    fix: str


class SchemaMismatchError(SchemaEvolutionError):
    """All plan-time mismatches between a file schema and a read schema, reported together."""

    def __init__(self, mismatches: list[Mismatch], context: str = "") -> None:
        self.mismatches = mismatches
        header = ("path", "file type", "read type", "why", "what to change")
        rows = [header] + [(m.path, m.file_type, m.read_type, m.why, m.fix) for m in mismatches]
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        lines.insert(1, "-+-".join("-" * w for w in widths))
        where = f" {context}" if context else ""
        super().__init__(
            f"{len(mismatches)} column(s) cannot be read{where}:\n" + "\n".join(lines)
        )


def closest_names(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    return difflib.get_close_matches(name, list(candidates), n=n, cutoff=0.5)


class TableError(RuntimeError):
    """Base of table-store failures (catalog, files, commits); the table is left as it was."""


class CommitConflictError(TableError):
    """Another writer committed first and this change cannot be replayed on top of it."""


class DataFileError(TableError):
    """A data file the catalog references is missing or unreadable; the message names the file."""


class CatalogFormatError(TableError):
    """The catalog was written by a newer fieldshift (or is not a fieldshift catalog)."""


class InvalidFilterError(SchemaEvolutionError):
    """A scan filter is malformed, or its literal cannot be compared with its column's type."""
