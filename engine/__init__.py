"""fieldshift: evolve data written under old table schemas into the current schema, by field id."""

from fieldshift.errors import (
    AvroSchemaError,
    BatchTypeError,
    CastValueError,
    CatalogFormatError,
    CommitConflictError,
    DataFileError,
    DDLSyntaxError,
    DuplicateFieldError,
    FieldshiftError,
    HistoryUnreadableError,
    IdentifierFieldChangeError,
    IncompatibleTypeError,
    InvalidDefaultError,
    InvalidFieldIdError,
    InvalidFilterError,
    InvalidNameError,
    InvalidTypeError,
    JavaNotFoundError,
    MissingFieldIdError,
    NameMappingError,
    NestingDepthError,
    NestingLevelMoveError,
    NullabilityTighteningError,
    NullInRequiredFieldError,
    RequiredFieldWithoutDefaultError,
    SchemaEvolutionError,
    SchemaJSONError,
    SchemaMismatchError,
    TableError,
    TypeChangeNotAllowedError,
    TypeSyntaxError,
    UnknownFieldError,
    UnsupportedSparkTypeError,
)
from fieldshift.evolve import evolve, plan
from fieldshift.field import Field
from fieldshift.kernels.threads import get_threads, set_threads
from fieldshift.name_mapping import NameMapping
from fieldshift.plan import CastReport, EvolutionPlan
from fieldshift.policy import CastKind, CastPolicy
from fieldshift.schema import Schema
from fieldshift.schema_update import SchemaUpdate
from fieldshift.supertype import supertype
from fieldshift.table import AppendResult, Table
from fieldshift.types import ListType, MapType, StructType

__version__ = "0.1.0"

__all__ = [
    "AppendResult",
    "AvroSchemaError",
    "BatchTypeError",
    "CastKind",
    "CastPolicy",
    "CastReport",
    "CastValueError",
    "CatalogFormatError",
    "CommitConflictError",
    "DDLSyntaxError",
    "DataFileError",
    "DuplicateFieldError",
    "EvolutionPlan",
    "Field",
    "FieldshiftError",
    "HistoryUnreadableError",
    "IdentifierFieldChangeError",
    "IncompatibleTypeError",
    "InvalidDefaultError",
    "InvalidFieldIdError",
    "InvalidFilterError",
    "InvalidNameError",
    "InvalidTypeError",
    "JavaNotFoundError",
    "ListType",
    "MapType",
    "MissingFieldIdError",
    "NameMapping",
    "NameMappingError",
    "NestingDepthError",
    "NestingLevelMoveError",
    "NullInRequiredFieldError",
    "NullabilityTighteningError",
    "RequiredFieldWithoutDefaultError",
    "Schema",
    "SchemaEvolutionError",
    "SchemaJSONError",
    "SchemaMismatchError",
    "SchemaUpdate",
    "StructType",
    "Table",
    "TableError",
    "TypeChangeNotAllowedError",
    "TypeSyntaxError",
    "UnknownFieldError",
    "UnsupportedSparkTypeError",
    "evolve",
    "get_threads",
    "plan",
    "set_threads",
    "supertype",
]
