"""Every refusal fieldshift makes, each its own class under one base, each saying what to do."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "CastValueError",
    "CatalogFormatError",
    "CommitConflictError",
    "DataFileError",
    "DuplicateFieldError",
    "HistoryUnreadableError",
    "IdentifierFieldChangeError",
    "IncompatibleTypeError",
    "InvalidDefaultError",
    "Mismatch",
    "MissingFieldIdError",
    "NestingLevelMoveError",
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
