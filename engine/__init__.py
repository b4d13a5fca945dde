"""fieldshift: evolve data written under old table schemas into the current schema, by field id."""

from fieldshift.errors import (
    BatchTypeError,
    CastValueError,
    CatalogFormatError,
    CommitConflictError,
    DataFileError,
    DuplicateFieldError,
    HistoryUnreadableError,
    IdentifierFieldChangeError,
    IncompatibleTypeError,
    InvalidDefaultError,
    InvalidFieldIdError,
    InvalidFilterError,
    InvalidNameError,
    InvalidTypeError,
    MissingFieldIdError,
    NestingDepthError,
    NestingLevelMoveError,
    NullabilityTighteningError,
    NullInRequiredFieldError,
    RequiredFieldWithoutDefaultError,
    SchemaEvolutionError,
    SchemaMismatchError,
    TableError,
    TypeChangeNotAllowedError,
    UnknownFieldError,
)
from fieldshift.evolution_plan import CastReport, EvolutionPlan
from fieldshift.field import Field
from fieldshift.front_door import evolve, plan
from fieldshift.kernels.threads import get_threads, set_threads
from fieldshift.name_mapping import NameMapping
from fieldshift.policy import CastKind, CastPolicy
from fieldshift.schema import Schema
from fieldshift.schema_update import SchemaUpdate
from fieldshift.table import AppendResult, Table
from fieldshift.types import ListType, MapType, StructType
from fieldshift.widening import supertype

__version__ = "0.1.0"

__all__ = [
    "AppendResult",
    "BatchTypeError",
    "CastKind",
    "CastPolicy",
    "CastReport",
    "CastValueError",
    "CatalogFormatError",
    "CommitConflictError",
    "DataFileError",
    "DuplicateFieldError",
    "EvolutionPlan",
    "Field",
    "HistoryUnreadableError",
    "IdentifierFieldChangeError",
    "IncompatibleTypeError",
    "InvalidDefaultError",
    "InvalidFieldIdError",
    "InvalidFilterError",
    "InvalidNameError",
    "InvalidTypeError",
    "ListType",
    "MapType",
    "MissingFieldIdError",
    "NameMapping",
    "NestingDepthError",
    "NestingLevelMoveError",
    "NullInRequiredFieldError",
    "NullabilityTighteningError",
    "RequiredFieldWithoutDefaultError",
    "Schema",
    "SchemaEvolutionError",
    "SchemaMismatchError",
    "SchemaUpdate",
    "StructType",
    "Table",
    "TableError",
    "TypeChangeNotAllowedError",
    "UnknownFieldError",
    "evolve",
    "get_threads",
    "plan",
    "set_threads",
    "supertype",
]
