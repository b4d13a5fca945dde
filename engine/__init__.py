"""fieldshift: evolve data written under old table schemas into the current schema, by field id."""

import importlib
from typing import TYPE_CHECKING, Any

from fieldshift.errors import (
    AlreadyCommittedError,
    AvroSchemaError,
    BatchTypeError,
    CaptureFileError,
    CastValueError,
    CatalogConnectionError,
    CatalogFormatError,
    CommitConflictError,
    CommitOutcomeUnknownError,
    DataFileError,
    DDLSyntaxError,
    DuplicateFieldError,
    DuplicateKeyError,
    FieldshiftError,
    FilterSyntaxError,
    HistoryUnreadableError,
    IdentifierFieldChangeError,
    IncompatibleTypeError,
    InvalidDefaultError,
    InvalidFieldIdError,
    InvalidFilterError,
    InvalidNameError,
    InvalidOptionError,
    InvalidTypeError,
    JavaNotFoundError,
    KeyDeclarationError,
    MissingDependencyError,
    MissingFieldIdError,
    NameMappingError,
    NestingDepthError,
    NestingLevelMoveError,
    NotKeyedError,
    NullabilityTighteningError,
    NullInRequiredFieldError,
    PartitionKeyChangeError,
    PartitionSpecError,
    ReadOnlyTableError,
    RequiredFieldWithoutDefaultError,
    SchemaEvolutionError,
    SchemaJSONError,
    SchemaMismatchError,
    SnapshotExpiredError,
    SnapshotNotFoundError,
    SparkNotInstalledError,
    SparkWorkerImportError,
    StorageLocationError,
    StreamChangeCommitError,
    StreamOffsetExpiredError,
    TableError,
    TableExistsError,
    TypeChangeNotAllowedError,
    TypeSyntaxError,
    UnknownFieldError,
    UnpublishableError,
    UnsupportedFormatFeatureError,
    UnsupportedSparkTypeError,
)

if TYPE_CHECKING:  # what type checkers and readers see; at run time each name is imported on first use
    from fieldshift.field import Field
    from fieldshift.kernels.threads import get_threads, set_threads
    from fieldshift.kernels.warm import warm_up
    from fieldshift.name_mapping import NameMapping
    from fieldshift.planner import CastReport, EvolutionPlan, evolve, plan
    from fieldshift.policy import CastKind, CastPolicy
    from fieldshift.schema import Schema
    from fieldshift.schema_update import SchemaUpdate
    from fieldshift.table import AppendResult, Table
    from fieldshift.table.capture import CaptureProgress, capture
    from fieldshift.table.capture_read import read_file
    from fieldshift.table.expressions import AlwaysFalse, AlwaysTrue, And, Expression, Not, Or, Predicate
    from fieldshift.table.filters import parse_filter
    from fieldshift.table.open_table import OpenTable, open_table
    from fieldshift.table.parquet_read import read_parquet
    from fieldshift.table.references import col
    from fieldshift.types import ListType, MapType, StructType
    from fieldshift.widening import supertype

__version__ = "0.1.0"

# The public names that live in heavier modules (pyarrow, numba, the table layer), imported on first
# use (PEP 562): ``import fieldshift`` — and so every ``fieldshift`` command — does not pay for them up front.
_LAZY: dict[str, str] = {
    "Field": "fieldshift.field",
    "get_threads": "fieldshift.kernels.threads",
    "set_threads": "fieldshift.kernels.threads",
    "warm_up": "fieldshift.kernels.warm",
    "NameMapping": "fieldshift.name_mapping",
    "CastReport": "fieldshift.planner",
    "EvolutionPlan": "fieldshift.planner",
    "evolve": "fieldshift.planner",
    "plan": "fieldshift.planner",
    "CastKind": "fieldshift.policy",
    "CastPolicy": "fieldshift.policy",
    "Schema": "fieldshift.schema",
    "SchemaUpdate": "fieldshift.schema_update",
    "AppendResult": "fieldshift.table",
    "Table": "fieldshift.table",
    "CaptureProgress": "fieldshift.table.capture",
    "capture": "fieldshift.table.capture",
    "read_file": "fieldshift.table.capture_read",
    "AlwaysFalse": "fieldshift.table.expressions",
    "AlwaysTrue": "fieldshift.table.expressions",
    "And": "fieldshift.table.expressions",
    "Expression": "fieldshift.table.expressions",
    "Not": "fieldshift.table.expressions",
    "Or": "fieldshift.table.expressions",
    "Predicate": "fieldshift.table.expressions",
    "parse_filter": "fieldshift.table.filters",
    "OpenTable": "fieldshift.table.open_table",
    "open_table": "fieldshift.table.open_table",
    "read_parquet": "fieldshift.table.parquet_read",
    "col": "fieldshift.table.references",
    "ListType": "fieldshift.types",
    "MapType": "fieldshift.types",
    "StructType": "fieldshift.types",
    "supertype": "fieldshift.widening",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:  # ``fs.table`` after a bare ``import fieldshift``: the eager imports made it an attribute
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
        raise AttributeError(f"module 'fieldshift' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups do not come back here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "AlreadyCommittedError",
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "AppendResult",
    "AvroSchemaError",
    "BatchTypeError",
    "CaptureFileError",
    "CaptureProgress",
    "CastKind",
    "CastPolicy",
    "CastReport",
    "CastValueError",
    "CatalogConnectionError",
    "CatalogFormatError",
    "CommitConflictError",
    "CommitOutcomeUnknownError",
    "DDLSyntaxError",
    "DataFileError",
    "DuplicateFieldError",
    "DuplicateKeyError",
    "EvolutionPlan",
    "Expression",
    "Field",
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
    "ListType",
    "MapType",
    "MissingDependencyError",
    "MissingFieldIdError",
    "NameMapping",
    "NameMappingError",
    "NestingDepthError",
    "NestingLevelMoveError",
    "Not",
    "NotKeyedError",
    "NullInRequiredFieldError",
    "NullabilityTighteningError",
    "OpenTable",
    "Or",
    "PartitionKeyChangeError",
    "PartitionSpecError",
    "Predicate",
    "ReadOnlyTableError",
    "RequiredFieldWithoutDefaultError",
    "Schema",
    "SchemaEvolutionError",
    "SchemaJSONError",
    "SchemaMismatchError",
    "SchemaUpdate",
    "SnapshotExpiredError",
    "SnapshotNotFoundError",
    "SparkNotInstalledError",
    "SparkWorkerImportError",
    "StorageLocationError",
    "StreamChangeCommitError",
    "StreamOffsetExpiredError",
    "StructType",
    "Table",
    "TableError",
    "TableExistsError",
    "TypeChangeNotAllowedError",
    "TypeSyntaxError",
    "UnknownFieldError",
    "UnpublishableError",
    "UnsupportedFormatFeatureError",
    "UnsupportedSparkTypeError",
    "capture",
    "col",
    "evolve",
    "get_threads",
    "open_table",
    "parse_filter",
    "plan",
    "read_file",
    "read_parquet",
    "set_threads",
    "supertype",
    "warm_up",
]
