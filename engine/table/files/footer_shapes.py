"""Data files whose footers describe the same columns, converted and checked once per scan.

Before reading a data file, a scan asks pyarrow for the file's Arrow schema (a conversion of the footer's Parquet
schema and its stored ``ARROW:schema``), compares it with the columns the catalog recorded for the file's
schema version (``check_file_columns``) and works out which leaf columns to read. For a file of a few
thousand rows that is a tenth of its cost, and every file one writer wrote under one schema version has the same
footer schema. Arrow's conversion is a function of the Parquet schema (names, physical and logical types,
repetition, field ids, nesting: ``ParquetSchema.equals`` compares all of them, and cheaply), the footer's key-value
metadata and the reader's options, so a file whose Parquet schema and key-value metadata equal those of a file
already converted and checked, read with the same options, has the same Arrow schema and passes the same check.
Anything else (another writer, a file replaced by one with other columns, even one nested field apart) is
converted and checked as before.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from fieldshift.table.files.data_files import check_file_columns, leaf_indices

__all__ = ["MAX_SHAPES", "FileShape", "FileShapes"]

MAX_SHAPES = 4
"""Footer shapes kept per key (a schema version's files from a few writers); past it the oldest is forgotten."""
MAX_KEYS = 64
"""Keys whose shapes a scan keeps; past it the oldest key's are forgotten. A shape holds its file's parsed footer
(what ``ParquetSchema.equals`` compares), and a scan of 200 schema versions holding 200 footers of 200 columns
each fragmented the C heap enough to cost more than the shapes saved (benchmarks/README, issue 35's fifth part);
a key's shape is also kept only from its second file on (the first may be the only one: one file per version)."""


@dataclass(frozen=True, slots=True)
class FileShape:
    """What one footer shape decides: the file's columns as Arrow (``ParquetFile.schema_arrow``, already checked
    against the recorded columns), the leaf columns to read, and the recorded types to restore (None: the file's
    types are the recorded ones, nothing to restore)."""

    parquet: pq.ParquetSchema
    key_values: dict[bytes, bytes] | None
    found: pa.Schema
    indices: tuple[int, ...]
    restore: pa.Schema | None


class FileShapes:
    """The footer shapes a scan has checked, per key (the schema version and the reader's options)."""

    def __init__(self) -> None:
        self._known: dict[Hashable, tuple[FileShape, ...]] = {}
        self._seen: set[Hashable] = set()  # keys whose first file was converted and checked (its shape not kept)
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[type[FileShapes], tuple[()]]:
        """A scan shipped to an executor starts with no shapes (footers are its own files' business)."""
        return FileShapes, ()

    def shape(self, key: Hashable, path: str, pf: pq.ParquetFile, expected: pa.Schema) -> FileShape:
        """``pf``'s shape: a known one when its footer matches, else converted and checked
        (``check_file_columns``: a ``DataFileError`` when the file's columns are not ``expected``'s) and kept."""
        metadata = pf.metadata
        schema, key_values = metadata.schema, metadata.metadata
        known = self._known.get(key, ())
        for shape in known:
            if schema.equals(shape.parquet) and key_values == shape.key_values:
                return shape
        found = pf.schema_arrow
        check_file_columns(path, found, expected)
        restore = None if found.equals(expected, check_metadata=True) else expected
        shape = FileShape(schema, key_values, found, tuple(leaf_indices(found, expected.names, metadata.num_columns)),
                          restore)
        if key not in self._seen:
            self._seen.add(key)
            return shape
        with self._lock:  # a scan's tasks run on threads: the oldest key is found and dropped in one step
            if not known and len(self._known) >= MAX_KEYS:
                self._known.pop(next(iter(self._known)), None)  # the oldest key (dicts keep insertion order)
            self._known[key] = (*known, shape)[-MAX_SHAPES:]  # one assignment: readers see either tuple
        return shape

