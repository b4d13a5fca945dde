"""Every refusal fieldshift makes, each its own class, each saying what to do.

One root, ``FieldshiftError``, with two branches: ``SchemaEvolutionError`` (a schema, type, value or
statement that cannot be used as given; also a ValueError) and ``TableError`` (the table store: catalog,
files, commits; also a RuntimeError). Catching ``FieldshiftError`` catches every refusal.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "AlreadyCommittedError",
    "AvroSchemaError",
    "BatchTypeError",
    "CaptureFileError",
    "CastValueError",
    "CatalogConnectionError",
    "CatalogFormatError",
    "CommitConflictError",
    "CommitOutcomeUnknownError",
    "DDLSyntaxError",
    "DataFileError",
    "DuplicateFieldError",
    "DuplicateKeyError",
    "FieldshiftError",
    "FilterSyntaxError",
    "HistoryUnreadableError",
    "IdentifierFieldChangeError",
    "IncompatibleTypeError",
    "InvalidDefaultError",
    "InvalidFieldIdError",
    "InvalidFilterError",
    "InvalidNameError",
    "InvalidOptionError",
    "InvalidTypeError",
    "JavaNotFoundError",
    "KeyDeclarationError",
    "MergeMatchError",
    "Mismatch",
    "MissingDependencyError",
    "MissingFieldIdError",
    "NameMappingError",
    "NestingDepthError",
    "NestingLevelMoveError",
    "NotKeyedError",
    "NullInRequiredFieldError",
    "NullabilityTighteningError",
    "PartitionKeyChangeError",
    "PartitionSpecError",
    "PrecombineLoweredError",
    "ReadOnlyTableError",
    "RequiredFieldWithoutDefaultError",
    "RowChangeError",
    "SchemaEvolutionError",
    "SchemaJSONError",
    "SchemaMismatchError",
    "SnapshotExpiredError",
    "SnapshotNotFoundError",
    "SparkNotInstalledError",
    "StorageLocationError",
    "StreamChangeCommitError",
    "StreamOffsetExpiredError",
    "TableError",
    "TableExistsError",
    "TypeChangeNotAllowedError",
    "TypeSyntaxError",
    "UnknownFieldError",
    "UnpublishableError",
    "UnsupportedFormatFeatureError",
    "UnsupportedSparkTypeError",
    "closest_names",
    "pointer",
]


class FieldshiftError(Exception):
    """The root of every error fieldshift raises on purpose."""


class SchemaEvolutionError(FieldshiftError, ValueError):
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
    """A field id that is not a whole number from 0 to 2**31 - 1 (Iceberg numbers from 1, Paimon from 0;
    fieldshift reserves negative ids for file columns no id identifies)."""


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

    def __init__(self, path: str, row: int, value: object, source: str, target: str, fix: str = "") -> None:
        self.path, self.row, self.value, self.source, self.target = path, row, value, source, target
        fix = fix or ("Use CastPolicy.explicit(on_error='null') to read it as null, or split bad rows "
                      "out with plan.apply_split().")
        super().__init__(f"cannot cast column {path!r} value {value!r} (row {row}) from {source} to {target}. {fix}")


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


class TableError(FieldshiftError, RuntimeError):
    """Base of table-store failures (catalog, files, commits); the table is left as it was."""


class TableExistsError(TableError):
    """A create where a table already lives; ``location`` is that table's directory."""

    def __init__(self, message: str, location: object = None) -> None:
        super().__init__(message)
        self.location = location


class CommitConflictError(TableError):
    """Another writer committed first and this change cannot be replayed on top of it."""


class KeyDeclarationError(SchemaEvolutionError):
    """Primary-key columns, the precombine column or the bucket count of a keyed table cannot be used as
    declared (a nullable, nested or floating key; a precombine that is no orderable primitive), or a
    schema change would alter them."""


class DuplicateKeyError(SchemaEvolutionError):
    """An insert-only write (``append``) to a keyed table holds a key twice or a key the table has;
    the message names the key. Use ``upsert`` to replace rows by key."""


class NotKeyedError(TableError):
    """``upsert`` or ``delete`` on a table created without primary-key (identifier) fields."""


class SnapshotNotFoundError(TableError):
    """Time travel to a snapshot the table does not have: an unknown snapshot id, or a time before the
    table's first snapshot (the message says which snapshots there are)."""


class SnapshotExpiredError(SnapshotNotFoundError):
    """Time travel to a snapshot that ``expire_snapshots`` removed."""


class DataFileError(TableError):
    """A data file the catalog references is missing or unreadable; the message names the file."""


class StorageLocationError(TableError):
    """A table location that cannot be used as given: an object-store location without a catalog
    elsewhere, or a URI whose filesystem cannot be opened (the message says what to pass)."""


class CatalogFormatError(TableError):
    """The catalog was written by a newer fieldshift (or is not a fieldshift catalog)."""


class CatalogConnectionError(TableError):
    """The catalog's database server could not be reached, or dropped the connection before the
    commit was made: nothing was committed, so the same write may simply run again."""


class CommitOutcomeUnknownError(CatalogConnectionError):
    """The connection dropped while the server was committing and could not be asked afterwards:
    the commit may have happened, so its data files are kept (vacuum removes them if it did not)."""


class InvalidFilterError(SchemaEvolutionError):
    """A scan filter is malformed, or its literal cannot be compared with its column's type."""


class NameMappingError(SchemaEvolutionError):
    """A name mapping that is not valid Iceberg name-mapping JSON, or that maps one name twice."""


class AvroSchemaError(SchemaEvolutionError):
    """An Avro schema that has no table-schema equivalent, or that is not valid Avro."""


class SchemaJSONError(InvalidTypeError):
    """Iceberg schema JSON that describes no table schema (an unknown nested type, a non-struct root)."""


class TypeSyntaxError(SchemaEvolutionError):
    """A type string that does not parse; ``position`` points at the offending character."""

    def __init__(self, text: str, position: int, expected: str) -> None:
        self.text, self.position = text, position
        marker = " " * position + "^"
        super().__init__(f"cannot parse type {text!r}: expected {expected} at position {position}\n"
                         f"  {text}\n  {marker}")


def pointer(text: str, start: int, end: int | None = None) -> str:
    """The line of ``text`` holding ``start``, with carets under ``start:end`` (indented two spaces)."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line_end = len(text) if line_end == -1 else line_end
    line = text[line_start:line_end]
    col = start - line_start
    width = max(1, min(line_end, end if end is not None else start + 1) - start)
    return f"  {line}\n  {' ' * col}{'^' * width}"


class DDLSyntaxError(SchemaEvolutionError):
    """A statement that does not parse: ``position`` is where, ``expected`` says what would fit."""

    def __init__(self, statement: str, position: int, expected: str, found: str | None = None,
                 end: int | None = None) -> None:
        self.statement, self.position, self.expected, self.found = statement, position, expected, found
        line = statement.count("\n", 0, position) + 1
        col = position - (statement.rfind("\n", 0, position) + 1) + 1
        where = f"line {line}, column {col}" if "\n" in statement.strip() else f"column {col}"
        shown = "the end of the statement" if found is None else repr(found)
        super().__init__(f"syntax error at {where}: expected {expected}, found {shown}\n"
                         f"{pointer(statement, position, end)}")


class FilterSyntaxError(DDLSyntaxError, InvalidFilterError):
    """Filter text (``Table.scan(filter="...")``, the CLI's ``--where``) that does not parse, or whose
    column or literal does not fit the table: the caret points at the token."""

    def __init__(self, statement: str, position: int, expected: str, found: str | None = None,
                 end: int | None = None) -> None:
        super().__init__(statement, position, expected, found, end)
        if found is None:
            self.args = (str(self).replace("the end of the statement", "the end of the filter", 1),)


class UnsupportedSparkTypeError(SchemaEvolutionError, TypeError):
    """A fieldshift/Arrow type (or a Spark type) with no counterpart on the other side."""


class MissingDependencyError(FieldshiftError, ImportError):
    """An optional library a call needs (pandas, polars, DuckDB, PySpark, ...) is not installed; the message
    names the fieldshift extra that installs it (``pip install 'fieldshift[EXTRA]'``)."""


class SparkNotInstalledError(MissingDependencyError):
    """``fieldshift.spark`` used where PySpark is not installed; the message names the extra to install."""


class SparkWorkerImportError(FieldshiftError, RuntimeError):
    """Spark's Python workers (a Spark Connect server's, or a cluster's executors) cannot import fieldshift;
    the message says how to start them with it (``PYSPARK_PYTHON``)."""


class JavaNotFoundError(FieldshiftError, RuntimeError):
    """No Java runtime to start Spark's JVM with (the environment, neither a schema nor a table)."""


class InvalidOptionError(SchemaEvolutionError):
    """A string option (``on_error``, ``match``, ``on_incompatible``, ``route``, ...) outside its values."""


class PartitionSpecError(SchemaEvolutionError):
    """A partition spec, term or transform that cannot be used as given (unknown transform, a type the
    transform is not defined for, a field that does not exist or is there already)."""


class PartitionKeyChangeError(PartitionSpecError):
    """A schema change to a column the table's current partition spec uses (drop, or a type change its
    transforms would map differently)."""
class AlreadyCommittedError(TableError):
    """A stream's micro-batch (stream id, batch id) or a captured source file was committed before:
    this commit records nothing (exactly once); ``snapshot_id`` is the earlier commit's snapshot."""

    def __init__(self, message: str, snapshot_id: int) -> None:
        self.snapshot_id = snapshot_id
        super().__init__(message)


class StreamChangeCommitError(TableError):
    """A streaming read met a snapshot that changes or removes rows (overwrite, upsert, delete), which
    an append-only stream cannot express; the message names the option that skips such snapshots."""


class StreamOffsetExpiredError(TableError):
    """A streaming read's offset points at a snapshot the table no longer has (expired); the message
    says how to restart the query."""


class CaptureFileError(SchemaEvolutionError):
    """A landing-directory file a capture cannot take (with ``on_incompatible='fail'``): names the file
    and why (the underlying refusal is the ``__cause__``); nothing of its commit group was written."""


class ReadOnlyTableError(TableError):
    """A write (append, upsert, delete, schema change, ...) on a table another format wrote, opened with
    ``fs.open_table``: fieldshift reads such tables; the message names the tool that writes them."""


class UnsupportedFormatFeatureError(TableError):
    """A feature of another format's table that fieldshift does not read (an encrypted file, an unknown type,
    a newer specification version, a kind of delete it does not apply): the message names the feature
    and where it is, and no rows are read as if it were absent."""


class UnpublishableError(TableError):
    """Publishing a table in another format (Iceberg) met a type or a history that format cannot express (an
    unsigned integer, a cast its readers do not make that old files still need): the message lists each
    column and what to do (``compact()`` rewrites old files into the current schema); nothing was written."""


class RowChangeError(SchemaEvolutionError):
    """An ``update`` (or another row change) that cannot be applied as asked: a key column set on a keyed
    table, a precombine value set lower than a row's own, a column it names that the table lacks. The
    message names the column and the row; nothing was written."""


class MergeMatchError(RowChangeError):
    """A ``merge`` found one target row matched by several source rows (SQL's MERGE refuses the ambiguity):
    the message names the ``on`` columns and a key; nothing was written."""


class PrecombineLoweredError(RowChangeError):
    """An ``update`` or ``merge`` would write a keyed row with a lower precombine value than the version it
    replaces (that version would keep winning the merge on read): nothing was written."""
