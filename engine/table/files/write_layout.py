"""How data files are laid out: rows per file, rows per Parquet row group, the codec; set by table properties.

The defaults come from measurements (benchmarks/README.md, issue 35): a 2M-row, 20-column table scanned
in 0.67× the CPU with 1M-row groups as with 131,072-row groups (a reader pays per column chunk, and
pyarrow.dataset, PyIceberg and delta-rs all write 1M-row groups), with most of the gain from 256k rows
on. A row group is also what a reader holds decoded, so wide rows get fewer of them: a group holds at
most ``row-group-bytes`` of Arrow data (256 MiB by default), and a file's groups are split evenly so no
file ends in a sliver of a group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from fieldshift.errors import InvalidOptionError

__all__ = [
    "CODECS",
    "CODEC_PROPERTY",
    "DEFAULT_LAYOUT",
    "DICTIONARY_CHOICES",
    "DICTIONARY_CHOICE_ROWS",
    "DICTIONARY_PROPERTY",
    "FILE_ROWS_PROPERTY",
    "LAYOUT_PROPERTIES",
    "ROW_GROUP_BYTES_PROPERTY",
    "ROW_GROUP_ROWS_PROPERTY",
    "SMALL_CHUNK_BYTES",
    "UNCOMPRESSED_FILE_BYTES",
    "WriteLayout",
    "write_layout",
]

FILE_ROWS_PROPERTY = "fieldshift.write.file-rows"
ROW_GROUP_ROWS_PROPERTY = "fieldshift.write.row-group-rows"
ROW_GROUP_BYTES_PROPERTY = "fieldshift.write.row-group-bytes"
CODEC_PROPERTY = "fieldshift.write.codec"
DICTIONARY_PROPERTY = "fieldshift.write.dictionary"
LAYOUT_PROPERTIES = (FILE_ROWS_PROPERTY, ROW_GROUP_ROWS_PROPERTY, ROW_GROUP_BYTES_PROPERTY, CODEC_PROPERTY,
                     DICTIONARY_PROPERTY)
CODECS = ("auto", "zstd", "snappy", "lz4", "gzip", "none")
DICTIONARY_CHOICES = ("auto", "all", "none")
SMALL_CHUNK_BYTES = 64 * 1024
UNCOMPRESSED_FILE_BYTES = 256 * 1024
"""Files of at most this much Arrow data are written uncompressed by the ``auto`` codec (``codec_for``)."""
DICTIONARY_SAMPLE = 8192
DICTIONARY_CHOICE_ROWS = 1024
"""Tables of fewer rows keep a dictionary on every column: too few values to count against the cost of counting."""


@dataclass(frozen=True)
class WriteLayout:
    """Rows per file, the cap on rows and Arrow bytes per row group, the codec (``auto``: zstd, snappy when
    the column chunks average under 64 KiB, none for a file of at most 256 KiB) and which columns are
    dictionary-encoded (``auto``: those whose values repeat; ``all``; ``none``)."""

    file_rows: int = 1_048_576
    row_group_rows: int = 1_048_576
    row_group_bytes: int = 256 * 1024 * 1024
    codec: str = "auto"
    dictionary: str = "auto"

    def group_rows(self, table: pa.Table) -> int:
        """Rows per row group for ``table`` (one file's rows): the fewest groups within both caps, of even size."""
        n = table.num_rows
        if n == 0:
            return 1
        per_row = max(1.0, table.nbytes / n)
        cap = max(1, min(self.row_group_rows, int(self.row_group_bytes // per_row)))
        groups = -(-n // cap)
        return -(-n // groups)

    def codec_for(self, table: pa.Table, group_rows: int) -> str:
        """The codec ``table`` is written with.

        ``auto``: zstd, unless the column chunks average under 64 KiB: then snappy. A reader sets zstd up anew
        for every column chunk (tens of microseconds each), which outweighs the smaller bytes on small chunks (a
        2-row file of 10,000 columns read in 0.54 s as zstd, 0.35 s as snappy). On large chunks snappy saved no
        scan CPU (10M rows, 20 columns: 1.267 vs 1.271 s) and made the files 2.5x the size (474 vs 192 MB); it
        writes ~11% faster (``codec=snappy`` for a write-bound table). Every Parquet reader reads both.

        A file of at most ``UNCOMPRESSED_FILE_BYTES`` of Arrow data (a keyed upsert's bucket, a micro-batch) is not
        compressed: decompressing a small chunk costs the reader more than its bytes save, on every scan until
        ``compact()`` rewrites the file, for at most a few hundred KiB a file (benchmarks/README, issue 35's
        fourth part)."""
        if self.codec != "auto":
            return self.codec
        if table.nbytes <= UNCOMPRESSED_FILE_BYTES:
            return "none"
        groups = max(1, -(-table.num_rows // max(1, group_rows)))
        per_chunk = table.nbytes / max(1, table.num_columns) / groups
        return "snappy" if per_chunk < SMALL_CHUNK_BYTES else "zstd"

    def dictionary_columns(self, table: pa.Table) -> bool | list[str]:
        """Which columns are dictionary-encoded (True: all): those whose first ``DICTIONARY_SAMPLE`` rows repeat
        values (at most half distinct). Parquet writers try a dictionary on every column and give up only after
        a page of it; on unique keys, ids and measurements that try cost a third of the write (a 4-column,
        500k-row file: 58 -> 37 ms of CPU) and saves no byte. It costs the reader too, where a dictionary of unique
        values stays on a small file, and makes it bigger. Tables under ``DICTIONARY_CHOICE_ROWS`` rows or with nested
        columns keep every dictionary."""
        if self.dictionary != "auto" or table.num_rows < DICTIONARY_CHOICE_ROWS:
            return self.dictionary != "none"
        if any(not _flat(f.type) or "." in f.name for f in table.schema):
            return True  # pyarrow names nested and dotted columns by path: leave them all to the writer
        sample = table.slice(0, DICTIONARY_SAMPLE)
        keep = [f.name for f, column in zip(table.schema, sample.columns, strict=True)
                if pa.types.is_boolean(f.type) or pc.count_distinct(column, mode="all").as_py() * 2 <= len(column)]
        return True if len(keep) == table.num_columns else keep


def _flat(t: pa.DataType) -> bool:
    return not (pa.types.is_nested(t) or pa.types.is_dictionary(t) or pa.types.is_null(t))


DEFAULT_LAYOUT = WriteLayout()
_MAX_COUNT = (1 << 63) - 1


def _positive(properties: Mapping[str, str], key: str, default: int) -> int:
    text = properties.get(key)
    if text is None:
        return default
    try:
        value = int(str(text).replace("_", ""))
    except ValueError:
        value = 0
    if not 1 <= value <= _MAX_COUNT:  # above int64, pyarrow's slices and row groups cannot take it
        raise InvalidOptionError(f"table property {key}={text!r} must be a positive whole number up to "
                                 f"{_MAX_COUNT} (default {default})")
    return value


def write_layout(properties: Mapping[str, str]) -> WriteLayout:
    """The layout a table's properties ask for (the defaults for any not set); a bad value is an
    InvalidOptionError naming the property."""
    if not any(k in properties for k in LAYOUT_PROPERTIES):
        return DEFAULT_LAYOUT
    codec = str(properties.get(CODEC_PROPERTY, "auto")).lower()
    if codec not in CODECS:
        raise InvalidOptionError(f"table property {CODEC_PROPERTY}={properties[CODEC_PROPERTY]!r} must be one of "
                                 f"{', '.join(CODECS)}")
    dictionary = str(properties.get(DICTIONARY_PROPERTY, "auto")).lower()
    if dictionary not in DICTIONARY_CHOICES:
        raise InvalidOptionError(f"table property {DICTIONARY_PROPERTY}={properties[DICTIONARY_PROPERTY]!r} must be "
                                 f"one of {', '.join(DICTIONARY_CHOICES)}")
    d = DEFAULT_LAYOUT
    return WriteLayout(_positive(properties, FILE_ROWS_PROPERTY, d.file_rows),
                       _positive(properties, ROW_GROUP_ROWS_PROPERTY, d.row_group_rows),
                       _positive(properties, ROW_GROUP_BYTES_PROPERTY, d.row_group_bytes), codec, dictionary)
