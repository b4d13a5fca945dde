"""Tables other formats wrote, read through fieldshift's engine (``fieldshift.open_tables``).

``source`` is the read-source interface: the facts a scan needs from any format. Each format's source
turns its metadata into them (``ducklake``: a DuckLake catalog in DuckDB, SQLite or PostgreSQL;
``iceberg``: an Iceberg table's metadata, found and parsed by PyIceberg, its manifests planned here);
``position_deletes`` reads the delete files formats share. The scan itself is the table layer's
(``fieldshift.table.scan.open_scan``), so every format reads through one pipeline.
"""

from fieldshift.open_tables.source import (
    ColumnStats,
    DataFileEntry,
    DeleteFile,
    EqualityDeletes,
    InlinedRows,
    MergeMode,
    PartitionRange,
    PartitionValue,
    ReaderRows,
    ReadSource,
    SnapshotContent,
    SnapshotId,
    SourcePartitionField,
    SourcePartitionSpec,
    SourceSnapshot,
)

__all__ = [
    "ColumnStats",
    "DataFileEntry",
    "DeleteFile",
    "EqualityDeletes",
    "InlinedRows",
    "MergeMode",
    "PartitionRange",
    "PartitionValue",
    "ReadSource",
    "ReaderRows",
    "SnapshotContent",
    "SnapshotId",
    "SourcePartitionField",
    "SourcePartitionSpec",
    "SourceSnapshot",
]
