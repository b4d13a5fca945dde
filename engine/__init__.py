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
    MergeMatchError,
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
    PrecombineLoweredError,
    ReadOnlyTableError,
    RequiredFieldWithoutDefaultError,
    RowChangeError,
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
    from fieldshift.kernels.threads import get_threads, set_threads
    from fieldshift.kernels.warm import warm_up
    from fieldshift.planner import CastReport, EvolutionPlan, evolve, plan
    from fieldshift.schema.field import Field
    from fieldshift.schema.model import Schema
    from fieldshift.schema.name_mapping import NameMapping
    from fieldshift.schema.policy import CastKind, CastPolicy
    from fieldshift.schema.schema_update import SchemaUpdate
    from fieldshift.schema.types import ListType, MapType, StructType
    from fieldshift.schema.widening import supertype
    from fieldshift.table import AppendResult, Table
    from fieldshift.table.expressions.filters import parse_filter
    from fieldshift.table.expressions.references import col
    from fieldshift.table.expressions.tree import AlwaysFalse, AlwaysTrue, And, Expression, Not, Or, Predicate
    from fieldshift.table.files.parquet_read import read_parquet
    from fieldshift.table.open_table import OpenTable, open_table
    from fieldshift.table.streams.capture import CaptureProgress, capture
    from fieldshift.table.streams.capture_read import read_file

__version__ = "0.1.0"

# The public names that live in heavier modules (pyarrow, numba, the table layer), imported on first
# use (PEP 562): ``import fieldshift`` — and so every ``fieldshift`` command — does not pay for them up front.
_LAZY: dict[str, str] = {
    "Field": "fieldshift.schema.field",
    "get_threads": "fieldshift.kernels.threads",
    "set_threads": "fieldshift.kernels.threads",
    "warm_up": "fieldshift.kernels.warm",
    "NameMapping": "fieldshift.schema.name_mapping",
    "CastReport": "fieldshift.planner",
    "EvolutionPlan": "fieldshift.planner",
    "evolve": "fieldshift.planner",
    "plan": "fieldshift.planner",
    "CastKind": "fieldshift.schema.policy",
    "CastPolicy": "fieldshift.schema.policy",
    "Schema": "fieldshift.schema.model",
    "SchemaUpdate": "fieldshift.schema.schema_update",
    "AppendResult": "fieldshift.table",
    "Table": "fieldshift.table",
    "CaptureProgress": "fieldshift.table.streams.capture",
    "capture": "fieldshift.table.streams.capture",
    "read_file": "fieldshift.table.streams.capture_read",
    "AlwaysFalse": "fieldshift.table.expressions.tree",
    "AlwaysTrue": "fieldshift.table.expressions.tree",
    "And": "fieldshift.table.expressions.tree",
    "Expression": "fieldshift.table.expressions.tree",
    "Not": "fieldshift.table.expressions.tree",
    "Or": "fieldshift.table.expressions.tree",
    "Predicate": "fieldshift.table.expressions.tree",
    "parse_filter": "fieldshift.table.expressions.filters",
    "OpenTable": "fieldshift.table.open_table",
    "open_table": "fieldshift.table.open_table",
    "read_parquet": "fieldshift.table.files.parquet_read",
    "col": "fieldshift.table.expressions.references",
    "ListType": "fieldshift.schema.types",
    "MapType": "fieldshift.schema.types",
    "StructType": "fieldshift.schema.types",
    "supertype": "fieldshift.schema.widening",
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
    "MergeMatchError",
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
    "PrecombineLoweredError",
    "Predicate",
    "ReadOnlyTableError",
    "RequiredFieldWithoutDefaultError",
    "RowChangeError",
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
